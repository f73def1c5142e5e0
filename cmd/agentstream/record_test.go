package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// TestRunRecordsTheSession runs a harness (a shell replaying a recorded
// Claude session, with a line on stderr) and checks that the store keeps the
// session: its events as normalize writes them, every native line, and its
// status.
func TestRunRecordsTheSession(t *testing.T) {
	file, _ := filepath.Abs(turnTools)
	db := filepath.Join(t.TempDir(), "s.db")
	_, stderr, code := runCLI(t, "", "run", "--db", db, "--quiet", "--protocol", "auto", "--", "sh", "-c", "cat "+file+"; echo 'a warning' >&2")
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	page, err := st.Sessions(ctx, store.SessionQuery{})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("sessions: %v, %d", err, len(page.Sessions))
	}
	s := page.Sessions[0]
	if s.Status != "succeeded" || s.Protocol != "claude-json" || s.Harness != "claude-code" {
		t.Errorf("session %+v", s)
	}
	data, _ := os.ReadFile(file)
	var lines []store.Line
	if err := st.Lines(ctx, s.ID, func(l store.Line) error { lines = append(lines, l); return nil }); err != nil {
		t.Fatal(err)
	}
	stdout := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var got []string
	var errLines []string
	for _, l := range lines {
		if l.Stream == store.Stdout {
			got = append(got, string(l.Data))
		} else {
			errLines = append(errLines, string(l.Data))
		}
	}
	if strings.Join(got, "\n") != strings.Join(stdout, "\n") {
		t.Errorf("stored %d stdout lines, want the %d lines of the file byte for byte", len(got), len(stdout))
	}
	if len(errLines) != 1 || errLines[0] != "a warning" {
		t.Errorf("stderr lines %q", errLines)
	}
	exported, _, code := runCLI(t, "", "export", "--db", db, s.ID, "--format", "native")
	if code != 0 || exported != string(data) {
		t.Errorf("export --format native differs from the recorded stdout (exit %d)", code)
	}
}

// TestRunSendsToServer runs a harness with --server against a real API
// server on loopback and checks the server stored the session.
func TestRunSendsToServer(t *testing.T) {
	db := filepath.Join(t.TempDir(), "server.db")
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{Token: "tok"}))
	defer srv.Close()
	file, _ := filepath.Abs(basicQuery)
	out, stderr, code := runCLI(t, "", "run", "--server", srv.URL, "--token", "tok", "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+file)
	if code != 0 {
		t.Fatalf("run exit %d: %s%s", code, out, stderr)
	}
	page, err := st.Sessions(context.Background(), store.SessionQuery{})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatalf("server sessions: %v, %d", err, len(page.Sessions))
	}
	if s := page.Sessions[0]; s.Status != "succeeded" || s.LastSeq != 7 {
		t.Errorf("server session %+v", s)
	}
	if _, _, code := runCLI(t, "", "run", "--server", srv.URL, "--", "cat", file); code != exitUsage {
		t.Errorf("--server without --protocol: exit %d, want %d", code, exitUsage)
	}
}

// TestRunSessionID holds that run --session ID names the stored session,
// in the local store and on a server (it used to be ignored there).
func TestRunSessionID(t *testing.T) {
	file, _ := filepath.Abs(basicQuery)
	db := filepath.Join(t.TempDir(), "s.db")
	if _, stderr, code := runCLI(t, "", "run", "--db", db, "--session", "mine-1", "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+file); code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	srvDB := filepath.Join(t.TempDir(), "server.db")
	sst, err := sqlite.Open(srvDB)
	if err != nil {
		t.Fatal(err)
	}
	defer sst.Close()
	srv := httptest.NewServer(api.New(sst, hub.New(hub.Options{}), api.Options{}))
	defer srv.Close()
	if _, stderr, code := runCLI(t, "", "run", "--server", srv.URL, "--session", "mine-2", "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+file); code != 0 {
		t.Fatalf("run --server exit %d: %s", code, stderr)
	}
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		st *sqlite.Store
		id string
	}{{st, "mine-1"}, {sst, "mine-2"}} {
		if s, err := c.st.Session(context.Background(), c.id); err != nil || s.Status != "succeeded" {
			t.Errorf("session %s: %+v, %v", c.id, s, err)
		}
	}
	if _, _, code := runCLI(t, "", "run", "--db", db, "--session", "bad id", "--", "cat", file); code != exitUsage {
		t.Errorf("--session with a space: exit %d, want %d", code, exitUsage)
	}
}
