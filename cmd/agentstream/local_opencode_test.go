package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/store/sqlite"
)

// opencodeStorage holds the records opencode 1.18.33 kept of the lab's
// sessions (adapter/opencode/testdata/storage/SOURCES.md).
const opencodeStorage = "../../adapter/opencode/testdata/storage/"

// ocRecord is what the tests read of an opencode record.
type ocRecord struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID"`
	Role      string `json:"role"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Slug      string `json:"slug"`
	ProjectID string `json:"projectID"`
	Directory string `json:"directory"`
	Version   string `json:"version"`
	Time      struct {
		Created int64 `json:"created"`
		Updated int64 `json:"updated"`
	} `json:"time"`
	Tokens struct {
		Input  int64 `json:"input"`
		Output int64 `json:"output"`
		Cache  struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	raw map[string]json.RawMessage
}

// ocRecords reads a fixture's records.
func ocRecords(t *testing.T, name string) []ocRecord {
	t.Helper()
	var out []ocRecord
	for _, l := range strings.Split(strings.TrimSpace(readString(t, opencodeStorage+name)), "\n") {
		var r ocRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		json.Unmarshal([]byte(l), &r.raw)
		out = append(out, r)
	}
	return out
}

// data is a record without the ids its row holds in columns.
func (r ocRecord) data(t *testing.T) string {
	m := map[string]json.RawMessage{}
	for k, v := range r.raw {
		if k != "id" && k != "sessionID" && k != "messageID" {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ocSteps sums the tokens of a session's step-finish parts.
func ocSteps(recs []ocRecord) tokenTotals {
	var tok tokenTotals
	for _, r := range recs {
		if r.Type == "step-finish" {
			tok.Input += r.Tokens.Input
			tok.Output += r.Tokens.Output
			tok.CacheRead += r.Tokens.Cache.Read
			tok.CacheWrite += r.Tokens.Cache.Write
		}
	}
	return tok
}

// ocDatabase writes the sessions' records into a database of opencode's
// tables (the columns the reader reads, as opencode 1.18.33 declares
// them) at path.
func ocDatabase(t *testing.T, path string, sessions ...[]ocRecord) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL, `model` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL)",
		"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
		"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, recs := range sessions {
		s := recs[0]
		model := string(s.raw["model"])
		if _, err := db.Exec("INSERT INTO session (id, project_id, slug, directory, title, version, model, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, time_created, time_updated) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
			s.ID, s.ProjectID, s.Slug, s.Directory, s.Title, s.Version, model, s.Tokens.Input, s.Tokens.Output, s.Tokens.Cache.Read, s.Tokens.Cache.Write, s.Time.Created, s.Time.Updated); err != nil {
			t.Fatal(err)
		}
		var created int64
		for _, r := range recs[1:] {
			if r.Role != "" {
				created = r.Time.Created
				if _, err := db.Exec("INSERT INTO message VALUES (?,?,?,?,?)", r.ID, r.SessionID, created, created, r.data(t)); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if _, err := db.Exec("INSERT INTO part VALUES (?,?,?,?,?,?)", r.ID, r.MessageID, r.SessionID, created, created, r.data(t)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ocFiles writes a session's records as an older build's storage/ files
// under data.
func ocFiles(t *testing.T, data string, recs []ocRecord) {
	t.Helper()
	write := func(p string, r ocRecord) {
		os.MkdirAll(filepath.Dir(p), 0o755)
		b, _ := json.MarshalIndent(r.raw, "", "  ")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := recs[0]
	write(filepath.Join(data, "storage", "session", s.ProjectID, s.ID+".json"), s)
	for _, r := range recs[1:] {
		if r.Role != "" {
			write(filepath.Join(data, "storage", "message", s.ID, r.ID+".json"), r)
		} else {
			write(filepath.Join(data, "storage", "part", r.MessageID, r.ID+".json"), r)
		}
	}
}

// TestImportLocalOpencode: import --local imports each session of
// opencode's database (~/.local/share/opencode/opencode.db) and each
// session of an older build's storage/ files, as opencode sessions of the
// opencode-storage protocol with their title, a line per record and the
// tokens of their steps; a session the database holds is not read again
// from the files; a second import skips them all, and a session that
// changed is updated.
func TestImportLocalOpencode(t *testing.T) {
	home := t.TempDir()
	localHome(t, home)
	shell := ocRecords(t, "opencode-1.18.33-shell-storage.jsonl")
	fail := ocRecords(t, "opencode-1.18.33-toolfail-storage.jsonl")
	data := filepath.Join(home, ".local", "share", "opencode")
	dbPath := filepath.Join(data, "opencode.db")
	ocDatabase(t, dbPath, shell)
	// The toolfail session only in files; the shell one in both, as
	// opencode leaves the files it copied into its database.
	ocFiles(t, data, fail)
	ocFiles(t, data, shell)

	want := ocSteps(shell)
	w2 := ocSteps(fail)
	want.Input += w2.Input
	want.Output += w2.Output
	want.CacheRead += w2.CacheRead
	want.CacheWrite += w2.CacheWrite
	for _, recs := range [][]ocRecord{shell, fail} {
		// The session's own totals say the same as its steps.
		s, st := recs[0], ocSteps(recs)
		if s.Tokens.Input != st.Input || s.Tokens.Output != st.Output || s.Tokens.Cache.Read != st.CacheRead || st.Input == 0 {
			t.Fatalf("%s: the session's tokens %+v are not its steps' %+v", s.ID, s.Tokens, st)
		}
	}

	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || strings.Count(out, "\topencode\timported\t") != 2 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 imported", code, out, stderr)
	}
	if got := usageTotals(t, db); got != want {
		t.Errorf("usage totals %+v, want %+v from the step-finish parts", got, want)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]ocRecord{
		localID("opencode", dbPath+"#"+shell[0].ID):                                                           shell,
		localID("opencode", filepath.Join(data, "storage", "session", fail[0].ProjectID, fail[0].ID+".json")): fail,
	}
	for id, recs := range ids {
		sess, err := st.Session(context.Background(), id)
		if err != nil {
			t.Fatalf("%s: %v", recs[0].ID, err)
		}
		if sess.Harness != "opencode" || sess.Protocol != "opencode-storage" || sess.Title != recs[0].Title || sess.Title == "" {
			t.Errorf("%s: session %s/%s titled %q; want opencode/opencode-storage titled %q", recs[0].ID, sess.Harness, sess.Protocol, sess.Title, recs[0].Title)
		}
		if !sess.StartedAt.Equal(time.UnixMilli(recs[0].Time.Created)) {
			t.Errorf("%s: started %v, want %v from the session's time.created", recs[0].ID, sess.StartedAt, time.UnixMilli(recs[0].Time.Created))
		}
	}
	st.Close()
	for id, recs := range ids {
		if n := storedLines(t, db, id); n != len(recs) {
			t.Errorf("%s: %d lines stored, want %d records", recs[0].ID, n, len(recs))
		}
	}

	out, stderr, code = runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK || out != "" || !strings.Contains(stderr, "0 imported or updated, 2 unchanged, 0 failed") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q; want both unchanged", code, out, stderr)
	}

	// opencode adds a part to the database's session: it is read again.
	h, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	last := shell[len(shell)-1]
	if _, err := h.Exec("INSERT INTO part VALUES (?,?,?,?,?,?)", last.ID+"x", last.MessageID, last.SessionID, 1, 1, `{"type":"text","text":"One more thing."}`); err != nil {
		t.Fatal(err)
	}
	h.Close()
	out, stderr, code = runCLI(t, "", "import", "--local", "--harness", "opencode", "--db", db)
	if code != exitOK || strings.Count(out, "\topencode\tupdated\t") != 1 || !strings.Contains(out, "#"+shell[0].ID) {
		t.Errorf("after a new part: exit %d, stdout %q, stderr %q; want the database's session updated", code, out, stderr)
	}
	for id, recs := range ids {
		if want := len(recs); recs[0].ID == shell[0].ID {
			if n := storedLines(t, db, id); n != want+1 {
				t.Errorf("%s: %d lines stored after the new part, want %d", recs[0].ID, n, want+1)
			}
		}
	}
}
