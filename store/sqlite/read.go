package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

const sessionCols = `sid, id, harness, protocol, version, model, title, cwd, command, status, reason, error,
	started_at, ended_at, last_seq, usage, parent, labels`

type rowScanner interface{ Scan(dest ...any) error }

func scanSession(r rowScanner) (int64, store.Session, error) {
	var (
		sid                                                    int64
		s                                                      store.Session
		harness, protocol, version, model, title, cwd, command sql.NullString
		reason, errMsg, usage, parent, labels                  sql.NullString
		started                                                int64
		ended                                                  sql.NullInt64
	)
	err := r.Scan(&sid, &s.ID, &harness, &protocol, &version, &model, &title, &cwd, &command, &s.Status,
		&reason, &errMsg, &started, &ended, &s.LastSeq, &usage, &parent, &labels)
	if err != nil {
		return 0, s, err
	}
	s.Harness, s.Protocol, s.Version, s.Model = harness.String, protocol.String, version.String, model.String
	s.Title, s.Cwd, s.Reason, s.Error, s.Parent = title.String, cwd.String, reason.String, errMsg.String, parent.String
	s.StartedAt = time.UnixMilli(started).UTC()
	s.EndedAt = fromMs(ended)
	if command.Valid {
		_ = json.Unmarshal([]byte(command.String), &s.Command)
	}
	if labels.Valid {
		_ = json.Unmarshal([]byte(labels.String), &s.Labels)
	}
	if usage.Valid {
		_ = json.Unmarshal([]byte(usage.String), &s.Usage)
	} else {
		s.Usage = (&agentstream.UsageFolder{}).Recap()
	}
	if s.Usage.Missing == nil {
		s.Usage.Missing = []string{}
	}
	return sid, s, nil
}

// Session returns one session, or store.ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	_, sess, err := scanSession(s.read.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sess, store.ErrNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("sqlite: session %s: %w", id, err)
	}
	return sess, nil
}

// sid returns the internal number of a session, or store.ErrNotFound.
func (s *Store) sid(ctx context.Context, id string) (int64, error) {
	var sid int64
	err := s.read.QueryRowContext(ctx, `SELECT sid FROM sessions WHERE id = ?`, id).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: session %s: %w", id, err)
	}
	return sid, nil
}

// DefaultSessionLimit is the page size of Sessions when the query has none.
const DefaultSessionLimit = 50

// Sessions returns a page of sessions, newest first (by start time, then by
// creation order).
func (s *Store) Sessions(ctx context.Context, q store.SessionQuery) (store.SessionPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultSessionLimit
	}
	var where []string
	var args []any
	if q.Status != "" {
		where = append(where, "status = ?")
		args = append(args, q.Status)
	}
	if q.Harness != "" {
		where = append(where, "harness = ?")
		args = append(args, q.Harness)
	}
	if q.Q != "" {
		where = append(where, `title LIKE ? ESCAPE '\'`)
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		args = append(args, "%"+r.Replace(q.Q)+"%")
	}
	if !q.Since.IsZero() {
		where = append(where, "started_at >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if q.IDPrefix != "" {
		// A range over the index, in SQLite's byte order; ids are ASCII.
		where = append(where, "id >= ? AND id < ?")
		args = append(args, q.IDPrefix, q.IDPrefix+"\x7f")
	}
	if q.Cursor != "" {
		ms, sid, ok := parseCursor(q.Cursor)
		if !ok {
			return store.SessionPage{}, store.ErrBadCursor
		}
		where = append(where, "(started_at < ? OR (started_at = ? AND sid < ?))")
		args = append(args, ms, ms, sid)
	}
	query := `SELECT ` + sessionCols + ` FROM sessions`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started_at DESC, sid DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, query, args...)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("sqlite: sessions: %w", err)
	}
	defer rows.Close()
	page := store.SessionPage{Sessions: []store.Session{}}
	var lastSid int64
	for rows.Next() {
		sid, sess, err := scanSession(rows)
		if err != nil {
			return store.SessionPage{}, fmt.Errorf("sqlite: sessions: %w", err)
		}
		if len(page.Sessions) == limit {
			last := page.Sessions[limit-1]
			page.Next = strconv.FormatInt(last.StartedAt.UnixMilli(), 10) + "." + strconv.FormatInt(lastSid, 10)
			break
		}
		page.Sessions = append(page.Sessions, sess)
		lastSid = sid
	}
	if err := rows.Err(); err != nil {
		return store.SessionPage{}, fmt.Errorf("sqlite: sessions: %w", err)
	}
	return page, nil
}

func parseCursor(c string) (ms, sid int64, ok bool) {
	a, b, found := strings.Cut(c, ".")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseInt(a, 10, 64)
	sid, err2 := strconv.ParseInt(b, 10, 64)
	return ms, sid, err1 == nil && err2 == nil && sid > 0
}

// DefaultEventLimit is the window size of Events when the query has none.
const DefaultEventLimit = 500

// Events returns a window of a session's stored events in ascending seq
// order, or store.ErrNotFound for an unknown session.
func (s *Store) Events(ctx context.Context, id string, q store.EventQuery) ([]store.Event, error) {
	sid, err := s.sid(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.events(ctx, sid, id, q)
}

func (s *Store) events(ctx context.Context, sid int64, id string, q store.EventQuery) ([]store.Event, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	lo, hi := eventKey(sid, 0), eventKey(sid, maxSeq)
	var query strings.Builder
	query.WriteString(`SELECT key, ts, type, body FROM events WHERE key > ? AND key <= ?`)
	desc := false
	args := []any{lo, hi}
	switch {
	case q.Tail:
		desc = true
	case q.Before > 0:
		desc = true
		args[1] = eventKey(sid, min(q.Before, maxSeq+1)) - 1
	default:
		if q.After > 0 {
			args[0] = eventKey(sid, min(q.After, maxSeq))
		}
	}
	if len(q.Types) > 0 {
		query.WriteString(" AND type IN (")
		for i, t := range q.Types {
			if i > 0 {
				query.WriteByte(',')
			}
			query.WriteByte('?')
			args = append(args, t)
		}
		query.WriteByte(')')
	}
	if desc {
		query.WriteString(" ORDER BY key DESC LIMIT ?")
	} else {
		query.WriteString(" ORDER BY key LIMIT ?")
	}
	args = append(args, limit)
	rows, err := s.read.QueryContext(ctx, query.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events of %s: %w", id, err)
	}
	defer rows.Close()
	out := make([]store.Event, 0, min(limit, 1024))
	var (
		key    int64
		ts     sql.NullInt64
		typ    sql.RawBytes
		stored sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&key, &ts, &typ, &stored); err != nil {
			return nil, fmt.Errorf("sqlite: events of %s: %w", id, err)
		}
		body, err := decodeBody(stored)
		if err != nil {
			return nil, fmt.Errorf("sqlite: events of %s: %w", id, err)
		}
		seq := key & maxSeq
		data := store.AppendEnvelope(make([]byte, 0, len(body)+len(id)+64), id, seq, fromMs(ts), body)
		out = append(out, store.Event{Session: id, Seq: seq, Type: string(typ), Data: data})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: events of %s: %w", id, err)
	}
	if desc {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// Line returns one native line, or store.ErrNotFound.
func (s *Store) Line(ctx context.Context, id, stream string, n int64) (store.Line, error) {
	sid, err := s.sid(ctx, id)
	if err != nil {
		return store.Line{}, err
	}
	return s.line(ctx, s.read, sid, id, stream, n)
}

// querier is a database, a connection or a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) line(ctx context.Context, q querier, sid int64, id, stream string, n int64) (store.Line, error) {
	l := store.Line{Stream: stream, N: n}
	var ts, codec sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT size, sha256, ts, data, codec FROM lines WHERE sid = ? AND stream = ? AND n = ?`,
		sid, stream, n).Scan(&l.Size, &l.SHA256, &ts, &l.Data, &codec)
	if errors.Is(err, sql.ErrNoRows) {
		return l, store.ErrNotFound
	}
	if err == nil {
		l.Data, err = decodeData(l.Data, codec.Int64, l.Size)
	}
	if err != nil {
		return l, fmt.Errorf("sqlite: line %s:%d of %s: %w", stream, n, id, err)
	}
	l.TS = fromMs(ts)
	if l.Data == nil {
		l.Data = []byte{}
	}
	return l, nil
}

// Lines calls fn with every native line of a session in the order they were
// kept (which interleaves stdout and stderr as they were read), stopping at
// the first error fn returns.
func (s *Store) Lines(ctx context.Context, id string, fn func(store.Line) error) error {
	sid, err := s.sid(ctx, id)
	if err != nil {
		return err
	}
	var after int64
	for {
		rows, err := s.read.QueryContext(ctx, `SELECT id, stream, n, size, sha256, ts, data, codec FROM lines
			WHERE sid = ? AND id > ? ORDER BY id LIMIT 1000`, sid, after)
		if err != nil {
			return fmt.Errorf("sqlite: lines of %s: %w", id, err)
		}
		var page []store.Line
		for rows.Next() {
			var l store.Line
			var ts, codec sql.NullInt64
			err := rows.Scan(&after, &l.Stream, &l.N, &l.Size, &l.SHA256, &ts, &l.Data, &codec)
			if err == nil {
				l.Data, err = decodeData(l.Data, codec.Int64, l.Size)
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: lines of %s: %w", id, err)
			}
			l.TS = fromMs(ts)
			page = append(page, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: lines of %s: %w", id, err)
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
	}
}
