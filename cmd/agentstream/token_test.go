package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/store"
)

// TestTokenCommands makes, lists and revokes tokens and share links with
// the commands, and uses them on a real agentstream serve over the same
// database, on SQLite and, when a server is at hand, on PostgreSQL.
func TestTokenCommands(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { tokenCommands(t, filepath.Join(t.TempDir(), "t.db")) })
	t.Run("postgres", func(t *testing.T) {
		db := postgresSchema(t)
		if code, out, errs := runCmd(t, "migrate", "--db", db); code != 0 {
			t.Fatalf("migrate: %d %s %s", code, out, errs)
		}
		tokenCommands(t, db)
	})
}

func tokenCommands(t *testing.T, db string) {
	// Two stored sessions to read.
	ctx := context.Background()
	var e env
	e.getenv = func(string) string { return "" }
	st, _, err := openStore(ctx, &e, db)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s_one", "s_two"} {
		w, err := st.Create(ctx, store.NewSession{ID: id, Harness: "jsonl", Protocol: "jsonl"})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Line(ctx, store.Line{Stream: store.Stdout, N: 1, Data: []byte("{}"), Size: 2}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	for _, bad := range [][]string{
		{"token", "create", "--db", db},
		{"token", "create", "--scope", "read,admin", "--db", db},
		{"token", "create", "--scope", "read", "--expires", "soon", "--db", db},
		{"token", "frobnicate"},
		{"share", "--db", db},
		{"share", "s_one", "--expires", "0", "--db", db},
	} {
		if code, _, _ := runCmd(t, bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", bad, code, exitUsage)
		}
	}

	code, reader, errs := runCmd(t, "token", "create", "--scope", "read,lines", "--name", "reader", "--expires", "720h", "--db", db)
	if code != 0 {
		t.Fatalf("token create: %d %s", code, errs)
	}
	reader = strings.TrimSpace(reader)
	if !regexp.MustCompile(`^agst_[A-Za-z0-9_-]{43}$`).MatchString(reader) {
		t.Errorf("token create printed %q, want agst_ and 43 base64url characters", reader)
	}
	if code, _, errs := runCmd(t, "token", "create", "--scope", "read", "--name", "reader", "--db", db); code != exitError || !strings.Contains(errs, "exists") {
		t.Errorf("a second token named reader: %d %s, want a failure saying it exists", code, errs)
	}
	code, runner, errs := runCmd(t, "token", "create", "--scope", "ingest", "--name", "runner", "--db", db)
	if code != 0 {
		t.Fatalf("token create: %d %s", code, errs)
	}
	runner = strings.TrimSpace(runner)
	code, link, errs := runCmd(t, "share", "s_one", "--expires", "2h", "--url", "http://example.test/", "--db", db)
	if code != 0 {
		t.Fatalf("share: %d %s", code, errs)
	}
	m := regexp.MustCompile(`^http://example\.test/sessions/s_one#token=(agsl_[A-Za-z0-9_-]{43})\n$`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("share printed %q, want the session page's URL with the secret in its fragment", link)
	}
	shareSecret := m[1]
	shareID := regexp.MustCompile(`--revoke (shr_\S+)`).FindStringSubmatch(errs)
	if shareID == nil {
		t.Fatalf("share told no id to revoke: %s", errs)
	}

	code, out, errs := runCmd(t, "token", "list", "--json", "--db", db)
	if code != 0 {
		t.Fatalf("token list: %d %s", code, errs)
	}
	for _, secret := range []string{reader, runner, shareSecret} {
		if strings.Contains(out, secret) || strings.Contains(out, secret[5:20]) {
			t.Errorf("token list shows a secret: %s", out)
		}
	}
	var list []tokenView
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range list {
		name := v.ID
		if v.Name != nil {
			name = *v.Name
		}
		got[name] = v.Kind + " " + strings.Join(v.Scopes, ",") + " " + v.State
	}
	want := map[string]string{"reader": "token read,lines active", "runner": "token ingest active", shareID[1]: "share read active"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("token list: %s is %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	if code, out, _ := runCmd(t, "token", "list", "--db", db); code != 0 || !strings.Contains(out, "LAST USED") || !strings.Contains(out, "reader") {
		t.Errorf("token list as a table: %d %s", code, out)
	}

	base, stop := serveFor(t, db, "--require-token")
	get := func(path, secret string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	for _, c := range []struct {
		path, who, secret string
		want              int
	}{
		{"/api/sessions", "nobody", "", 401},
		{"/api/sessions", "reader", reader, 200},
		{"/api/sessions/s_one/lines/1", "reader", reader, 200},
		{"/api/sessions", "runner", runner, 403},
		{"/api/sessions/s_one/events", "the share link", shareSecret, 200},
		{"/api/sessions/s_two/events", "the share link", shareSecret, 403},
		{"/api/sessions/s_one/lines/1", "the share link", shareSecret, 403},
	} {
		if code := get(c.path, c.secret); code != c.want {
			t.Errorf("GET %s as %s: %d, want %d", c.path, c.who, code, c.want)
		}
	}
	if code, _, errs := runCmd(t, "token", "revoke", "reader", "--db", db); code != 0 {
		t.Errorf("token revoke: %d %s", code, errs)
	}
	if code, _, errs := runCmd(t, "share", "--revoke", shareID[1], "--db", db); code != 0 {
		t.Errorf("share --revoke: %d %s", code, errs)
	}
	if code, _, _ := runCmd(t, "share", "--revoke", "shr_nothing", "--db", db); code != exitError {
		t.Errorf("share --revoke of an unknown link: %d, want %d", code, exitError)
	}
	if code := get("/api/sessions", reader); code != 401 {
		t.Errorf("the revoked token: %d, want 401", code)
	}
	if code := get("/api/sessions/s_one/events", shareSecret); code != 401 {
		t.Errorf("the revoked share link: %d, want 401", code)
	}
	stop()

	code, out, _ = runCmd(t, "token", "list", "--json", "--db", db)
	list = nil
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil {
		t.Fatalf("token list: %d %v", code, err)
	}
	for _, v := range list {
		if v.Name != nil && *v.Name == "reader" && (v.State != "revoked" || v.LastUsed == nil) {
			t.Errorf("reader after use and revocation: %+v, want revoked with a last use", v)
		}
	}
}

// serveFor runs agentstream serve on a free loopback port over db until
// stop, and returns its base URL.
func serveFor(t *testing.T, db string, args ...string) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, args...), strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- code
	}()
	sc := bufio.NewScanner(pr)
	addr := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	deadline := time.AfterFunc(30*time.Second, func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
	for sc.Scan() {
		if m := addr.FindString(sc.Text()); m != "" {
			base = m
			break
		}
	}
	deadline.Stop()
	if base == "" {
		cancel()
		t.Fatalf("serve printed no address: %v", sc.Err())
	}
	go io.Copy(io.Discard, pr)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	}
	t.Cleanup(stop)
	return base, stop
}
