package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// secretsFile is a recorded Claude session whose tool result is an .env
// file with a password and a GitHub token, and whose answer holds a URL
// with a password.
const secretsFile = "../../runner/testdata/claude-secrets.jsonl"

var secrets = []string{"s3cr3t-pw", "R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO", "Xk9pL2vQzR"}

func holdsSecret(s string) bool {
	for _, x := range secrets {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// maskedFile returns the recording as the store of db masks it, with the
// store's own key.
func maskedFile(t *testing.T, db string) string {
	t.Helper()
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, err := st.Key(context.Background(), store.RedactKey)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(secretsFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(redact.New(redact.Options{Key: key}).Line(data))
}

// TestRedactCommands holds that what run, import and normalize take in is
// masked before it is kept, that an export refuses a session holding a
// secret the masking let through, and that --no-redact and --allow-secrets
// do what they say.
func TestRedactCommands(t *testing.T) {
	file, _ := filepath.Abs(secretsFile)
	db := filepath.Join(t.TempDir(), "s.db")
	export := func(id string, args ...string) (string, string, int) {
		return runCLI(t, "", append([]string{"export", "--db", db, id}, args...)...)
	}
	t.Run("run", func(t *testing.T) {
		_, stderr, code := runCLI(t, "", "run", "--db", db, "--session", "", "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+file+"; echo 'PASSWORD=s3cr3t-pw' >&2")
		if code != 0 {
			t.Fatalf("run exit %d: %s", code, stderr)
		}
		st, err := sqlite.Open(db)
		if err != nil {
			t.Fatal(err)
		}
		page, err := st.Sessions(context.Background(), store.SessionQuery{})
		st.Close()
		if err != nil || len(page.Sessions) != 1 {
			t.Fatalf("sessions: %v %d", err, len(page.Sessions))
		}
		id := page.Sessions[0].ID
		native, _, code := export(id, "--format", "native")
		if code != 0 || native != maskedFile(t, db) {
			t.Errorf("export native (exit %d) is not the recording masked with the store's key:\n%s", code, native)
		}
		stderrLines, _, _ := export(id, "--format", "native", "--stream", "stderr")
		events, _, code := export(id)
		if code != 0 || holdsSecret(events) || holdsSecret(stderrLines) || !strings.Contains(stderrLines, "PASSWORD=*") {
			t.Errorf("export events (exit %d) or stderr lines hold a secret:\n%s\n%s", code, events, stderrLines)
		}
	})
	t.Run("import", func(t *testing.T) {
		out, stderr, code := runCLI(t, "", "import", "--db", db, "--id", "s_imported", file)
		if code != 0 {
			t.Fatalf("import exit %d: %s", code, stderr)
		}
		if strings.TrimSpace(out) != "s_imported" {
			t.Errorf("import printed %q", out)
		}
		native, _, code := export("s_imported", "--format", "native")
		if code != 0 || native != maskedFile(t, db) {
			t.Errorf("export native (exit %d) is not the recording masked with the store's key", code)
		}
	})
	t.Run("export refuses", func(t *testing.T) {
		if _, stderr, code := runCLI(t, "", "import", "--db", db, "--no-redact", "--id", "s_raw", file); code != 0 {
			t.Fatalf("import --no-redact exit %d: %s", code, stderr)
		}
		for _, format := range []string{"native", "events"} {
			out, stderr, code := export("s_raw", "--format", format)
			if code != exitSecret || out != "" || !strings.Contains(stderr, "github-pat") || !strings.Contains(stderr, "nothing written") {
				t.Errorf("export --format %s of unmasked secrets: exit %d, %d bytes out, %s", format, code, len(out), stderr)
			}
			if holdsSecret(stderr) {
				t.Errorf("the refusal shows the secret: %s", stderr)
			}
		}
		out, _, code := export("s_raw", "--format", "native", "--allow-secrets")
		if data, _ := os.ReadFile(file); code != 0 || out != string(data) {
			t.Errorf("export --allow-secrets: exit %d, not the recording byte for byte", code)
		}
	})
	t.Run("normalize", func(t *testing.T) {
		t.Setenv("AGENTSTREAM_REDACT_KEY", "000102030405060708090a0b0c0d0e0f")
		a, _, code := runCLI(t, "", "normalize", file)
		b, _, _ := runCLI(t, "", "normalize", file)
		if code != 0 || a != b || holdsSecret(a) || !strings.Contains(a, "ghp_*") {
			t.Errorf("normalize with a key: exit %d, deterministic %v, secret %v", code, a == b, holdsSecret(a))
		}
		raw, _, _ := runCLI(t, "", "normalize", "--no-redact", file)
		if !holdsSecret(raw) || len(raw) != len(a) {
			t.Errorf("normalize --no-redact: secret %v, %d bytes for %d masked", holdsSecret(raw), len(raw), len(a))
		}
		t.Setenv("AGENTSTREAM_REDACT", "off")
		if off, _, _ := runCLI(t, "", "normalize", file); off != raw {
			t.Errorf("AGENTSTREAM_REDACT=off masked")
		}
	})
	t.Run("rules", func(t *testing.T) {
		rules := filepath.Join(t.TempDir(), "rules")
		os.WriteFile(rules, []byte("# the session ids\npattern sid 5e0c1f2a-[0-9a-f-]+\n"), 0o644)
		out, _, code := runCLI(t, "", "normalize", "--redact-rules", rules, file)
		if code != 0 || strings.Contains(out, "5e0c1f2a-7b3d") || !strings.Contains(out, `"sessionId":"*`) {
			t.Errorf("a rule's pattern: exit %d, the session id kept:\n%s", code, out)
		}
		os.WriteFile(rules, []byte("frobnicate x\n"), 0o644)
		if _, stderr, code := runCLI(t, "", "normalize", "--redact-rules", rules, file); code != exitUsage || !strings.Contains(stderr, "unknown rule") {
			t.Errorf("a bad rules file: exit %d, %s", code, stderr)
		}
	})
	t.Run("serve ingest", func(t *testing.T) {
		// run --server masks before it sends; the server masks again what
		// a runner let through.
		sdb := filepath.Join(t.TempDir(), "server.db")
		st, err := sqlite.Open(sdb)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		srv := httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{}))
		defer srv.Close()
		if _, stderr, code := runCLI(t, "", "run", "--server", srv.URL, "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+file); code != 0 {
			t.Fatalf("run --server: exit %d: %s", code, stderr)
		}
		page, _ := st.Sessions(context.Background(), store.SessionQuery{})
		var all bytes.Buffer
		st.Lines(context.Background(), page.Sessions[0].ID, func(l store.Line) error { all.Write(l.Data); return nil })
		if holdsSecret(all.String()) || all.Len() == 0 {
			t.Errorf("the server got secrets from run --server: %s", all.String())
		}
	})
}
