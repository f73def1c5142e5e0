package opencodestore_test

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/opencodestore"
	_ "github.com/agentstream/agentstream/store/sqlite" // the "sqlite" driver
)

// TestRecords: a session's records from a database of opencode's tables
// are its info from its row, then each message (by creation time, then
// id, whatever the order of the rows) with its parts (by id), each row's
// data with its ids put first, an empty data object included; another
// session's rows are not read.
func TestRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, model text, cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL, tokens_output integer DEFAULT 0 NOT NULL, tokens_reasoning integer DEFAULT 0 NOT NULL, tokens_cache_read integer DEFAULT 0 NOT NULL, tokens_cache_write integer DEFAULT 0 NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL)",
		"CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)",
		"CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)",
		`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, model, cost, tokens_input, tokens_output, tokens_cache_read, time_created, time_updated) VALUES
			('ses_b', 'global', 'ses_a', 'quiet-owl', '/w', 'Fix it', '1.18.33', '{"id":"m","providerID":"p"}', 0.5, 10, 2, 3, 1000, 2000),
			('ses_c', 'global', NULL, 'other', '/x', 'Other', '1.18.33', NULL, 0, 0, 0, 0, 1, 1)`,
		`INSERT INTO message VALUES ('msg_2', 'ses_b', 20, 20, '{"role":"assistant"}'), ('msg_1', 'ses_b', 10, 10, '{"role":"user"}'), ('msg_9', 'ses_c', 5, 5, '{"role":"user"}')`,
		`INSERT INTO part VALUES ('prt_2', 'msg_1', 'ses_b', 11, 11, '{"type":"text","text":"b"}'), ('prt_1', 'msg_1', 'ses_b', 11, 11, '{}'), ('prt_3', 'msg_2', 'ses_b', 21, 21, '{"type":"step-start"}'), ('prt_9', 'msg_9', 'ses_c', 6, 6, '{"type":"text"}')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ss, err := opencodestore.Sessions(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].ID != "ses_b" || ss[0].Updated.UnixMilli() != 2000 || ss[1].ID != "ses_c" {
		t.Fatalf("sessions %+v, want ses_b (updated 2000) and ses_c", ss)
	}
	var b bytes.Buffer
	if err := opencodestore.Records(context.Background(), db, "ses_b", &b); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"ses_b","slug":"quiet-owl","projectID":"global","parentID":"ses_a","directory":"/w","title":"Fix it","version":"1.18.33","model":{"id":"m","providerID":"p"},"cost":0.5,"tokens":{"input":10,"output":2,"reasoning":0,"cache":{"read":3,"write":0}},"time":{"created":1000,"updated":2000}}`,
		`{"id":"msg_1","sessionID":"ses_b","role":"user"}`,
		`{"id":"prt_1","sessionID":"ses_b","messageID":"msg_1"}`,
		`{"id":"prt_2","sessionID":"ses_b","messageID":"msg_1","type":"text","text":"b"}`,
		`{"id":"msg_2","sessionID":"ses_b","role":"assistant"}`,
		`{"id":"prt_3","sessionID":"ses_b","messageID":"msg_2","type":"step-start"}`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if err := opencodestore.Records(context.Background(), db, "ses_none", &b); err == nil {
		t.Error("records of a session the database lacks: no error")
	}
}

// TestFileRecords: a session of the JSON layout is its info file, then
// each message's file (by time.created, then id) with its parts' files (by
// id), each compacted to one line, the ids the files hold kept once and
// those only their paths give put first.
func TestFileRecords(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, "storage", filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("session/global/ses_b.json", "{\n  \"id\": \"ses_b\",\n  \"slug\": \"quiet-owl\",\n  \"projectID\": \"global\"\n}")
	write("message/ses_b/msg_2.json", `{"id":"msg_2","sessionID":"ses_b","role":"assistant","time":{"created":10}}`)
	write("message/ses_b/msg_1.json", `{"role":"user","time":{"created":20}}`)
	write("part/msg_2/prt_1.json", `{"id":"prt_1","type":"text","text":"a"}`)
	write("part/msg_1/prt_2.json", `{"type":"text","text":"b"}`)
	ss, err := opencodestore.FileSessions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].ID != "ses_b" || ss[0].Updated.IsZero() {
		t.Fatalf("sessions %+v, want ses_b with a time", ss)
	}
	var b bytes.Buffer
	if err := opencodestore.FileRecords(dir, ss[0], &b); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"ses_b","slug":"quiet-owl","projectID":"global"}`,
		`{"id":"msg_2","sessionID":"ses_b","role":"assistant","time":{"created":10}}`,
		`{"sessionID":"ses_b","messageID":"msg_2","id":"prt_1","type":"text","text":"a"}`,
		`{"id":"msg_1","sessionID":"ses_b","role":"user","time":{"created":20}}`,
		`{"id":"prt_2","sessionID":"ses_b","messageID":"msg_1","type":"text","text":"b"}`,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}
