// Package opencodestore reads the sessions opencode keeps on disk as the
// records protocol opencode-storage reads, one JSON object a line: the
// session's info, then each message's info followed by its parts, in the
// order opencode wrote them. Two layouts exist: the SQLite database of
// opencode 1.x ($XDG_DATA_HOME/opencode/opencode.db: tables session,
// message and part, read through a database/sql handle the caller opens),
// and the JSON files of older builds (storage/session/<project>/<id>.json,
// storage/message/<session>/<id>.json, storage/part/<message>/<id>.json).
//
// The records are opencode's own JSON, each with the ids its row or path
// gives put first; nothing is decoded or rewritten beyond that, so that
// the records of a session that did not change are the same bytes.
package opencodestore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A Session is one session of a store.
type Session struct {
	// ID is opencode's session id (ses_…).
	ID string
	// Updated is when opencode last changed it.
	Updated time.Time
	// Path is the session's info file, in the JSON layout; empty in a
	// database.
	Path string
}

// Sessions lists the sessions of an opencode database, in the order of
// their ids (the order opencode created them).
func Sessions(ctx context.Context, db *sql.DB) ([]Session, error) {
	rows, err := db.QueryContext(ctx, "SELECT id, time_updated FROM session ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("opencodestore: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		var ms int64
		if err := rows.Scan(&s.ID, &ms); err != nil {
			return nil, fmt.Errorf("opencodestore: %w", err)
		}
		s.Updated = time.UnixMilli(ms).UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("opencodestore: %w", err)
	}
	return out, nil
}

// Records writes the records of the session id of an opencode database to
// w: the session's info, built from its row as opencode's Session.Info
// (id, slug, projectID, workspaceID, parentID, directory, title, version,
// model, cost, tokens, time), then each message (ordered by creation time
// and id) and its parts (ordered by id), each row's data with its ids put
// first. It reads in one transaction, so that a session opencode is
// writing is read as it stood at one moment.
func Records(ctx context.Context, db *sql.DB, id string, w io.Writer) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	defer tx.Rollback()
	if err := sessionRecord(ctx, tx, id, w); err != nil {
		return err
	}
	msgs, err := tx.QueryContext(ctx, "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", id)
	if err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	type row struct{ id, data string }
	var ms []row
	for msgs.Next() {
		var r row
		if err := msgs.Scan(&r.id, &r.data); err != nil {
			msgs.Close()
			return fmt.Errorf("opencodestore: %w", err)
		}
		ms = append(ms, r)
	}
	msgs.Close()
	if err := msgs.Err(); err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	parts := map[string][]row{}
	ps, err := tx.QueryContext(ctx, "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id", id)
	if err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	for ps.Next() {
		var r row
		var msg string
		if err := ps.Scan(&r.id, &msg, &r.data); err != nil {
			ps.Close()
			return fmt.Errorf("opencodestore: %w", err)
		}
		parts[msg] = append(parts[msg], r)
	}
	ps.Close()
	if err := ps.Err(); err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	for _, m := range ms {
		if err := writeRecord(w, []byte(m.data), "id", m.id, "sessionID", id); err != nil {
			return err
		}
		for _, p := range parts[m.id] {
			if err := writeRecord(w, []byte(p.data), "id", p.id, "sessionID", id, "messageID", m.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionRecord writes the info of the session id from its row.
func sessionRecord(ctx context.Context, tx *sql.Tx, id string, w io.Writer) error {
	var (
		slug, project, directory, title, version string
		workspace, parent, model                 sql.NullString
		cost                                     float64
		in, out, reasoning, read, write          int64
		created, updated                         int64
	)
	err := tx.QueryRowContext(ctx, `SELECT slug, project_id, workspace_id, parent_id, directory, title, version, model,
		cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, time_created, time_updated
		FROM session WHERE id = ?`, id).Scan(&slug, &project, &workspace, &parent, &directory, &title, &version, &model,
		&cost, &in, &out, &reasoning, &read, &write, &created, &updated)
	if err != nil {
		return fmt.Errorf("opencodestore: session %s: %w", id, err)
	}
	type tokens struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	}
	info := struct {
		ID          string          `json:"id"`
		Slug        string          `json:"slug"`
		ProjectID   string          `json:"projectID"`
		WorkspaceID string          `json:"workspaceID,omitempty"`
		ParentID    string          `json:"parentID,omitempty"`
		Directory   string          `json:"directory"`
		Title       string          `json:"title"`
		Version     string          `json:"version"`
		Model       json.RawMessage `json:"model,omitempty"`
		Cost        float64         `json:"cost"`
		Tokens      tokens          `json:"tokens"`
		Time        struct {
			Created int64 `json:"created"`
			Updated int64 `json:"updated"`
		} `json:"time"`
	}{ID: id, Slug: slug, ProjectID: project, WorkspaceID: workspace.String, ParentID: parent.String,
		Directory: directory, Title: title, Version: version, Cost: cost}
	if model.Valid && json.Valid([]byte(model.String)) {
		info.Model = json.RawMessage(model.String)
	}
	info.Tokens.Input, info.Tokens.Output, info.Tokens.Reasoning = in, out, reasoning
	info.Tokens.Cache.Read, info.Tokens.Cache.Write = read, write
	info.Time.Created, info.Time.Updated = created, updated
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("opencodestore: session %s: %w", id, err)
	}
	return writeLine(w, b)
}

// writeRecord writes a row's data, a JSON object, with the members kv
// (name, value pairs of strings) put first, as one line. Data that is not
// an object is written as it is, so that its reader sees it.
func writeRecord(w io.Writer, data []byte, kv ...string) error {
	data = bytes.TrimSpace(data)
	var b bytes.Buffer
	if len(data) < 2 || data[0] != '{' || !json.Valid(data) {
		b.Write(bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n"), []byte(" ")))
		return writeLine(w, b.Bytes())
	}
	var has map[string]json.RawMessage
	json.Unmarshal(data, &has)
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if _, ok := has[kv[i]]; ok {
			continue // the data says it itself
		}
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		b.WriteByte(',')
	}
	rest := bytes.TrimSpace(data[1:])
	if len(rest) > 0 && rest[0] == '}' && b.Len() > 1 {
		b.Truncate(b.Len() - 1) // an empty object: no comma before its end
	}
	b.Write(rest)
	// The records are one a line: a data that spans lines (indented JSON
	// of the older files) is compacted.
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if err := json.Compact(&c, b.Bytes()); err == nil {
			return writeLine(w, c.Bytes())
		}
	}
	return writeLine(w, b.Bytes())
}

func writeLine(w io.Writer, b []byte) error {
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	return nil
}

// FileSessions lists the sessions of the JSON layout under dir (the
// directory holding storage/): each storage/session/<project>/<id>.json,
// in the order of their ids. Updated is the newest modification time of
// the session's files.
func FileSessions(dir string) ([]Session, error) {
	infos, err := filepath.Glob(filepath.Join(dir, "storage", "session", "*", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("opencodestore: %w", err)
	}
	var out []Session
	for _, p := range infos {
		out = append(out, FileSession(dir, p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// FileSession returns the session of the JSON layout under dir whose info
// file is at path (storage/session/<project>/<id>.json).
func FileSession(dir, path string) Session {
	s := Session{ID: strings.TrimSuffix(filepath.Base(path), ".json"), Path: path}
	for _, f := range sessionFiles(dir, s.ID, path) {
		if fi, err := os.Stat(f); err == nil && fi.ModTime().After(s.Updated) {
			s.Updated = fi.ModTime().UTC()
		}
	}
	return s
}

// sessionFiles returns the files of a session in the JSON layout: its
// info, then its messages' files and their parts' files.
func sessionFiles(dir, id, info string) []string {
	files := []string{info}
	msgs, _ := filepath.Glob(filepath.Join(dir, "storage", "message", id, "*.json"))
	sort.Strings(msgs)
	for _, m := range msgs {
		files = append(files, m)
		parts, _ := filepath.Glob(filepath.Join(dir, "storage", "part", strings.TrimSuffix(filepath.Base(m), ".json"), "*.json"))
		sort.Strings(parts)
		files = append(files, parts...)
	}
	return files
}

// FileRecords writes the records of a session of the JSON layout under
// dir to w: its info file, then each message's file (ordered by its
// time.created and id) followed by its parts' files (ordered by id), each
// compacted to one line with the ids its path gives put first.
func FileRecords(dir string, s Session, w io.Writer) error {
	info, err := os.ReadFile(s.Path)
	if err != nil {
		return fmt.Errorf("opencodestore: %w", err)
	}
	if err := writeRecord(w, info, "id", s.ID); err != nil {
		return err
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "storage", "message", s.ID, "*.json"))
	type msg struct {
		id      string
		data    []byte
		created int64
	}
	var ms []msg
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("opencodestore: %w", err)
		}
		var t struct {
			Time struct {
				Created int64 `json:"created"`
			} `json:"time"`
		}
		json.Unmarshal(data, &t)
		ms = append(ms, msg{strings.TrimSuffix(filepath.Base(p), ".json"), data, t.Time.Created})
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].created != ms[j].created {
			return ms[i].created < ms[j].created
		}
		return ms[i].id < ms[j].id
	})
	for _, m := range ms {
		if err := writeRecord(w, m.data, "id", m.id, "sessionID", s.ID); err != nil {
			return err
		}
		parts, _ := filepath.Glob(filepath.Join(dir, "storage", "part", m.id, "*.json"))
		sort.Strings(parts)
		for _, p := range parts {
			data, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("opencodestore: %w", err)
			}
			if err := writeRecord(w, data, "id", strings.TrimSuffix(filepath.Base(p), ".json"), "sessionID", s.ID, "messageID", m.id); err != nil {
				return err
			}
		}
	}
	return nil
}
