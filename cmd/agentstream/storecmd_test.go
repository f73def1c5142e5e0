package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/store/postgres"
)

// runCmd runs the program with args and returns its exit code and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestStoreCommands runs the commands that read and write sessions on an
// SQLite file and, when a server is at hand, on a PostgreSQL database.
func TestStoreCommands(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { storeCommands(t, filepath.Join(t.TempDir(), "s.db")) })
	t.Run("postgres", func(t *testing.T) {
		db := postgresSchema(t)
		code, _, errs := runCmd(t, "sessions", "--db", db)
		if code == 0 || !strings.Contains(errs, "agentstream migrate --db") {
			t.Errorf("sessions on a database without the schema: %d %q, want a failure that says to migrate", code, errs)
		}
		code, out, errs := runCmd(t, "migrate", "--db", db)
		if code != 0 || !strings.Contains(out, "schema version 0 → ") {
			t.Fatalf("migrate: %d %q %s", code, out, errs)
		}
		code, out, _ = runCmd(t, "migrate", "--db", db)
		if code != 0 || !strings.Contains(out, "up to date") {
			t.Errorf("migrate again: %d %q", code, out)
		}
		storeCommands(t, db)
	})
}

// postgresSchema returns the URL of a fresh schema on the server
// AGENTSTREAM_TEST_POSTGRES names, dropped at the end of the test, or skips
// the test.
func postgresSchema(t *testing.T) string {
	base := os.Getenv("AGENTSTREAM_TEST_POSTGRES")
	if base == "" {
		t.Skip("no PostgreSQL server: set AGENTSTREAM_TEST_POSTGRES=postgres://… (scripts/test starts one)")
	}
	u, drop, err := postgres.NewSchema(context.Background(), base, "cmd_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return u
}

func storeCommands(t *testing.T, db string) {
	input := filepath.Join("..", "..", "web", "api", "testdata", "claude-turn-tools.jsonl")
	want, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "import", "--db", db, "--id", "s_one", input)
	if code != 0 || strings.TrimSpace(out) != "s_one" {
		t.Fatalf("import: %d %q %s", code, out, errs)
	}
	code, out, _ = runCmd(t, "export", "s_one", "--db", db, "--format", "native")
	if code != 0 || out != string(want) {
		t.Errorf("export native: %d, identical %v", code, out == string(want))
	}
	code, out, _ = runCmd(t, "export", "--db", db, "s_one")
	if n := strings.Count(out, "\n"); code != 0 || n < 10 || !strings.HasPrefix(out, `{"v":1,"session":"s_one","seq":1,`) {
		t.Errorf("export events: %d, %d lines", code, n)
	}
	code, out, _ = runCmd(t, "sessions", "--db", db, "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0]["status"] != "succeeded" {
		t.Errorf("sessions --json: %d %v %s", code, err, out)
	}
	code, out, _ = runCmd(t, "renormalize", "--db", db, "s_one")
	if code != 0 || !strings.Contains(out, "no change") {
		t.Errorf("renormalize: %d %s", code, out)
	}
	code, out, _ = runCmd(t, "show", "--db", db, "--json", "s_one")
	if code != 0 || strings.Count(out, "\n") != int(list[0]["lastSeq"].(float64)) {
		t.Errorf("show --json: %d %d lines", code, strings.Count(out, "\n"))
	}
	for _, args := range [][]string{
		{"show", "--db", db, "nope"},
		{"export", "--db", db, "--format", "xml", "s_one"},
		{"sessions", "--db", db, "--status", "done"},
		{"serve", "--db", db, "--addr", "0.0.0.0:0"},
	} {
		if code, _, _ := runCmd(t, args...); code == 0 {
			t.Errorf("%v succeeded", args)
		}
	}

	code, out, _ = runCmd(t, "usage", "--db", db, "--json", "s_one")
	var recap struct {
		OutputTokens *int64 `json:"outputTokens"`
	}
	if err := json.Unmarshal([]byte(out), &recap); code != 0 || err != nil || recap.OutputTokens == nil {
		t.Errorf("usage SESSION: %d %v", code, err)
	}
	code, out, _ = runCmd(t, "usage", "--db", db, "--since", "100000d", "--by", "harness", "--json")
	var rep struct {
		Rows []struct {
			Key      string `json:"key"`
			Sessions int    `json:"sessions"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Rows) != 1 || rep.Rows[0].Key != "claude-code" || rep.Rows[0].Sessions != 1 {
		t.Errorf("usage --by harness: %d %v %+v", code, err, rep)
	}
	if code, out, _ = runCmd(t, "usage", input); code != 0 || !strings.HasPrefix(out, "tokens: ") {
		t.Errorf("usage FILE: %d %s", code, out)
	}
}

func TestParseSinceAndLoopback(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"36h", now.Add(-36 * time.Hour)},
		{"7d", now.Add(-7 * 24 * time.Hour)},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{"2026-11-01T10:00:00Z", time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, %v", tt.in, got, err)
		}
	}
	if _, err := parseSince("soon", now); err == nil {
		t.Error("parseSince(soon) succeeded")
	}
	var got []bool
	for _, a := range []string{"127.0.0.1:8377", "[::1]:1", "localhost:1", "0.0.0.0:1", ":8377", "10.0.0.1:1"} {
		got = append(got, isLoopback(a))
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false, false}, got); diff != "" {
		t.Errorf("isLoopback (-want +got):\n%s", diff)
	}
}
