package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// adminToken is the server's own token in these tests.
const adminToken = "admin-sekrit"

// authServer is a real server on 127.0.0.1 over a real SQLite store that
// keeps its tokens, with a clock the test moves.
type authServer struct {
	st   *sqlite.Store
	url  string
	path string
	now  atomic.Int64 // UnixMilli
}

func (a *authServer) clock() time.Time { return time.UnixMilli(a.now.Load()).UTC() }

func (a *authServer) advance(d time.Duration) { a.now.Add(d.Milliseconds()) }

func newAuthServer(t *testing.T, live api.Live) *authServer {
	t.Helper()
	a := &authServer{path: filepath.Join(t.TempDir(), "auth.db")}
	a.now.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	st, err := sqlite.OpenOptions(a.path, sqlite.Options{BatchSize: 8, FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a.st = st
	h := hub.New(hub.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := follow(t, ctx, st, h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(api.New(st, h, api.Options{Token: adminToken, Tokens: st, Now: a.clock, Live: live}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	a.url = srv.URL
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-done
		st.Close()
	})
	return a
}

// do sends a request with a bearer secret ("" for none) and returns the
// status and, unless the response is an event stream, the body.
func (a *authServer) do(t *testing.T, method, path, secret, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		// The server takes a state-changing request only as JSON.
		req.Header.Set("Content-Type", "application/json")
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return res.StatusCode, ""
	}
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// fillLines writes a closed session of n events and n native lines.
func (a *authServer) fillLines(t *testing.T, id string, n int) {
	t.Helper()
	ctx := context.Background()
	w, err := a.st.Create(ctx, store.NewSession{ID: id, Harness: "jsonl", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := w.Line(ctx, store.Line{Stream: store.Stdout, N: int64(i), Data: []byte(`{"line":` + string(rune('0'+i)) + `}`), Size: 10}); err != nil {
			t.Fatal(err)
		}
		if err := w.Handle(ctx, agentstream.Envelope{Session: id, Seq: int64(i), Turn: 1,
			Payload: &agentstream.Message{Role: "assistant", Text: "m"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// recordingLive is the Live of the scope tests: it accepts everything, so
// that a request it sees got past the scope check.
type recordingLive struct{ calls atomic.Int64 }

func (l *recordingLive) Profiles() []string { return []string{"p"} }
func (l *recordingLive) Open(context.Context, api.OpenRequest) (string, error) {
	l.calls.Add(1)
	return "s_live", nil
}
func (l *recordingLive) Send(context.Context, string, api.MessageRequest) (string, error) {
	l.calls.Add(1)
	return "m_1", nil
}
func (l *recordingLive) Interrupt(context.Context, string) error { l.calls.Add(1); return nil }
func (l *recordingLive) Answer(context.Context, string, string, api.AnswerRequest) error {
	l.calls.Add(1)
	return nil
}
func (l *recordingLive) Close(context.Context, string) error { l.calls.Add(1); return nil }
func (l *recordingLive) Info(string) (json.RawMessage, bool) { return nil, false }

// apiRoute is one route of the API, the scope the design gives it, and
// the status it answers when let through.
type apiRoute struct {
	name, method, path, body string
	pattern                  string // the pattern the API registers it with
	scope                    string
	share                    bool // a share link of session s1 may take it
	ok                       int
}

// scopeRoutes are the API's routes as the scope design lists them: read
// is the GETs of sessions, events, streams and usage; lines the native
// lines; ingest the runner's POSTs; control the live sessions and share
// links.
var scopeRoutes = []apiRoute{
	{"list", "GET", "/api/sessions", "", "GET /api/sessions", api.ScopeRead, false, 200},
	{"session", "GET", "/api/sessions/s1", "", "GET /api/sessions/{id}", api.ScopeRead, true, 200},
	{"events", "GET", "/api/sessions/s1/events", "", "GET /api/sessions/{id}/events", api.ScopeRead, true, 200},
	{"stream", "GET", "/api/sessions/s1/stream", "", "GET /api/sessions/{id}/stream", api.ScopeRead, true, 200},
	{"other session", "GET", "/api/sessions/s2", "", "GET /api/sessions/{id}", api.ScopeRead, false, 200},
	{"other events", "GET", "/api/sessions/s2/events", "", "GET /api/sessions/{id}/events", api.ScopeRead, false, 200},
	{"other stream", "GET", "/api/sessions/s2/stream", "", "GET /api/sessions/{id}/stream", api.ScopeRead, false, 200},
	{"usage", "GET", "/api/usage", "", "GET /api/usage", api.ScopeRead, false, 200},
	{"search", "GET", "/api/search?q=hello", "", "GET /api/search", api.ScopeRead, false, 200},
	{"health", "GET", "/api/health", "", "GET /api/health", api.ScopeRead, false, 200},
	{"all events", "GET", "/api/events/stream", "", "GET /api/events/stream", api.ScopeRead, false, 200},
	{"line", "GET", "/api/sessions/s1/lines/1", "", "GET /api/sessions/{id}/lines/{n}", api.ScopeLines, false, 200},
	{"stderr line", "GET", "/api/sessions/s1/lines/1?stream=stderr", "", "GET /api/sessions/{id}/lines/{n}", api.ScopeLines, false, 404},
	{"create", "POST", "/api/sessions", `{"protocol":"jsonl"}`, "POST /api/sessions", api.ScopeIngest, false, 201},
	{"post lines", "POST", "/api/sessions/r1/lines", `{"lines":[{"stream":"stdout","n":1,"text":"{}"}]}`, "POST /api/sessions/{id}/lines", api.ScopeIngest, false, 200},
	{"open", "POST", "/api/sessions", `{"profile":"p","prompt":"hi"}`, "POST /api/sessions", api.ScopeControl, false, 201},
	{"message", "POST", "/api/sessions/s1/messages", `{"text":"hi"}`, "POST /api/sessions/{id}/messages", api.ScopeControl, false, 202},
	{"interrupt", "POST", "/api/sessions/s1/interrupt", "", "POST /api/sessions/{id}/interrupt", api.ScopeControl, false, 202},
	{"answer", "POST", "/api/sessions/s1/requests/r1", `{"decision":"allow"}`, "POST /api/sessions/{id}/requests/{requestId}", api.ScopeControl, false, 200},
	{"close", "DELETE", "/api/sessions/s1", "", "DELETE /api/sessions/{id}", api.ScopeControl, false, 202},
	{"profiles", "GET", "/api/profiles", "", "GET /api/profiles", api.ScopeControl, false, 200},
	{"share", "POST", "/api/sessions/s1/share", `{"expires":"1h"}`, "POST /api/sessions/{id}/share", api.ScopeControl, false, 201},
	{"unshare", "DELETE", "/api/shares/shr_none", "", "DELETE /api/shares/{id}", api.ScopeControl, false, 404},
}

// TestScopes checks that each credential gets exactly the routes of its
// scopes and 403 naming the scope on the others, from the route table
// above; and that the API's own table agrees with it.
func TestScopes(t *testing.T) {
	a := newAuthServer(t, &recordingLive{})
	a.fillLines(t, "s1", 2)
	a.fillLines(t, "s2", 2)
	if code, body := a.do(t, "POST", "/api/sessions", adminToken, `{"id":"r1","protocol":"jsonl"}`); code != 201 {
		t.Fatalf("creating the ingested session: %d %s", code, body)
	}
	ctx := context.Background()
	type cred struct {
		name   string
		secret string
		scopes []string
		share  bool
	}
	creds := []cred{{name: "admin", secret: adminToken, scopes: api.AllScopes}}
	for _, sc := range api.AllScopes {
		secret, _, err := api.NewToken(ctx, a.st, "only-"+sc, []string{sc}, 0, a.clock())
		if err != nil {
			t.Fatal(err)
		}
		creds = append(creds, cred{name: sc, secret: secret, scopes: []string{sc}})
	}
	secret, _, err := api.NewToken(ctx, a.st, "every", api.AllScopes, time.Hour, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	creds = append(creds, cred{name: "every scope", secret: secret, scopes: api.AllScopes})
	secret, _, err = api.NewShare(ctx, a.st, "s1", time.Hour, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	creds = append(creds, cred{name: "share of s1", secret: secret, share: true})

	sharePatterns := []string{"GET /api/sessions/{id}", "GET /api/sessions/{id}/events", "GET /api/sessions/{id}/stream"}
	for _, r := range scopeRoutes {
		scope, share := api.RouteScope(r.pattern)
		if scope == "" {
			t.Errorf("%s: the API lists no scope for %s", r.name, r.pattern)
			continue
		}
		if r.pattern != "POST /api/sessions" && scope != r.scope {
			t.Errorf("%s: the API gives %s the scope %s, the design %s", r.name, r.pattern, scope, r.scope)
		}
		if want := slices.Contains(sharePatterns, r.pattern); share != want {
			t.Errorf("%s: the API lets a share link take %s: %v, the design %v", r.name, r.pattern, share, want)
		}
	}

	for _, c := range creds {
		for _, r := range scopeRoutes {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				allowed := slices.Contains(c.scopes, r.scope) || c.share && r.share
				code, body := a.do(t, r.method, r.path, c.secret, r.body)
				switch {
				case allowed && code != r.ok:
					t.Errorf("%s %s: %d %s, want %d", r.method, r.path, code, body, r.ok)
				case !allowed && code != http.StatusForbidden:
					t.Errorf("%s %s: %d %s, want 403", r.method, r.path, code, body)
				case !allowed && !c.share && !strings.Contains(body, "scope "+r.scope):
					t.Errorf("%s %s: 403 %s does not name the scope %s", r.method, r.path, body, r.scope)
				}
			})
		}
	}
	t.Run("none", func(t *testing.T) {
		for _, r := range scopeRoutes {
			if code, body := a.do(t, r.method, r.path, "", r.body); code != 401 || !strings.Contains(body, "missing token") {
				t.Errorf("%s %s without a token: %d %s, want 401 missing token", r.method, r.path, code, body)
			}
			if code, _ := a.do(t, r.method, r.path, api.TokenPrefix+"unknown", r.body); code != 401 {
				t.Errorf("%s %s with an unknown token: %d, want 401", r.method, r.path, code)
			}
		}
	})
}

// TestShareLink follows one share link through its life: it reads its
// session's events as the store holds them, not another session, not its
// native lines; it stops working when it expires, and another when it is
// revoked.
func TestShareLink(t *testing.T) {
	a := newAuthServer(t, nil)
	a.fillLines(t, "s1", 3)
	a.fillLines(t, "s2", 1)
	code, body := a.do(t, "POST", "/api/sessions/s1/share", adminToken, `{"expires":"2h"}`)
	if code != 201 {
		t.Fatalf("share: %d %s", code, body)
	}
	var sh api.ShareResponse
	if err := json.Unmarshal([]byte(body), &sh); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sh.Secret, api.SharePrefix) || sh.Path != "/sessions/s1#token="+sh.Secret {
		t.Errorf("share response %+v: want a %s secret and the session page's path", sh, api.SharePrefix)
	}
	if want := a.clock().Add(2 * time.Hour).Format(agentstream.TimeFormat); sh.ExpiresAt != want {
		t.Errorf("expiresAt %s, want %s", sh.ExpiresAt, want)
	}
	evs, err := a.st.Events(context.Background(), "s1", store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want []json.RawMessage
	for _, ev := range evs {
		want = append(want, ev.Data)
	}
	wantJSON, _ := json.Marshal(want)
	code, body = a.do(t, "GET", "/api/sessions/s1/events", sh.Secret, "")
	if code != 200 || strings.TrimSpace(body) != string(wantJSON) {
		t.Errorf("events with the share link: %d %s, want 200 %s", code, body, wantJSON)
	}
	for _, p := range []string{"/api/sessions/s2", "/api/sessions/s2/events", "/api/sessions/s1/lines/1", "/api/sessions", "/api/usage",
		"/api/sessions/s%31/lines/1", "/api/sessions/s1%2F..%2Fs2/events"} {
		if code, body := a.do(t, "GET", p, sh.Secret, ""); code != 403 {
			t.Errorf("GET %s with the share link of s1: %d %s, want 403", p, code, body)
		}
	}
	if code, _ := a.do(t, "POST", "/api/sessions/s1/share", sh.Secret, ""); code != 403 {
		t.Errorf("a share link made a share link: %d, want 403", code)
	}

	a.advance(2*time.Hour - time.Millisecond)
	if code, body := a.do(t, "GET", "/api/sessions/s1", sh.Secret, ""); code != 200 {
		t.Errorf("a millisecond before it expires: %d %s, want 200", code, body)
	}
	a.advance(time.Millisecond)
	if code, body := a.do(t, "GET", "/api/sessions/s1", sh.Secret, ""); code != 401 || !strings.Contains(body, "expired") {
		t.Errorf("once expired: %d %s, want 401 saying expired", code, body)
	}

	code, body = a.do(t, "POST", "/api/sessions/s1/share", adminToken, "")
	if code != 201 {
		t.Fatalf("share: %d %s", code, body)
	}
	var sh2 api.ShareResponse
	if err := json.Unmarshal([]byte(body), &sh2); err != nil {
		t.Fatal(err)
	}
	if code, body := a.do(t, "GET", "/api/sessions/s1/stream", sh2.Secret, ""); code != 200 {
		t.Errorf("stream with the second link: %d %s, want 200", code, body)
	}
	if code, body := a.do(t, "DELETE", "/api/shares/"+sh2.ID, adminToken, ""); code != 200 {
		t.Errorf("revoke: %d %s", code, body)
	}
	if code, body := a.do(t, "GET", "/api/sessions/s1/stream", sh2.Secret, ""); code != 401 || !strings.Contains(body, "revoked") {
		t.Errorf("once revoked: %d %s, want 401 saying revoked", code, body)
	}
	// A token is not a share link: DELETE /api/shares does not revoke it.
	secret, tok, err := api.NewToken(context.Background(), a.st, "reader", []string{api.ScopeRead}, 0, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := a.do(t, "DELETE", "/api/shares/"+tok.ID, adminToken, ""); code != 404 {
		t.Errorf("DELETE /api/shares of a token: %d, want 404", code)
	}
	if code, _ := a.do(t, "GET", "/api/sessions", secret, ""); code != 200 {
		t.Errorf("the token after DELETE /api/shares of it: %d, want 200", code)
	}
}

// TestTokenLifecycle checks a stored token's expiry, revocation and the
// record of its last use.
func TestTokenLifecycle(t *testing.T) {
	a := newAuthServer(t, nil)
	ctx := context.Background()
	secret, tok, err := api.NewToken(ctx, a.st, "ci", []string{api.ScopeRead}, time.Hour, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	a.advance(time.Minute)
	if code, body := a.do(t, "GET", "/api/sessions", secret, ""); code != 200 {
		t.Fatalf("GET with the token: %d %s", code, body)
	}
	list, err := a.st.ListTokens(ctx)
	if err != nil || len(list) != 1 || !list[0].LastUsed.Equal(a.clock()) {
		t.Errorf("ListTokens = %+v, %v; want ci last used at %v", list, err, a.clock())
	}
	a.advance(time.Hour)
	if code, body := a.do(t, "GET", "/api/sessions", secret, ""); code != 401 || !strings.Contains(body, "token ci expired") {
		t.Errorf("expired: %d %s, want 401 token ci expired", code, body)
	}
	secret2, _, err := api.NewToken(ctx, a.st, "ci2", []string{api.ScopeRead}, 0, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.RevokeToken(ctx, "ci2", a.clock()); err != nil {
		t.Fatal(err)
	}
	if code, body := a.do(t, "GET", "/api/sessions", secret2, ""); code != 401 || !strings.Contains(body, "token ci2 was revoked") {
		t.Errorf("revoked: %d %s, want 401 token ci2 was revoked", code, body)
	}
	if _, _, err := api.NewToken(ctx, a.st, "ci", []string{api.ScopeRead}, 0, a.clock()); err == nil {
		t.Errorf("a second token named ci while the first is not revoked")
	}
	_ = tok
}

// TestSecretsNotStored reads the database files and finds the hashes of
// the secrets there, never the secrets nor their random bytes, nor a
// part of them.
func TestSecretsNotStored(t *testing.T) {
	a := newAuthServer(t, nil)
	a.fillLines(t, "s1", 1)
	ctx := context.Background()
	tokSecret, _, err := api.NewToken(ctx, a.st, "ci", []string{api.ScopeRead, api.ScopeIngest}, 0, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	code, body := a.do(t, "POST", "/api/sessions/s1/share", adminToken, "")
	if code != 201 {
		t.Fatalf("share: %d %s", code, body)
	}
	var sh api.ShareResponse
	if err := json.Unmarshal([]byte(body), &sh); err != nil {
		t.Fatal(err)
	}
	var files []byte
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(a.path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		files = append(files, b...)
	}
	for _, secret := range []string{tokSecret, sh.Secret} {
		if !bytes.Contains(files, api.HashSecret(secret)) {
			t.Errorf("the hash of %s… is not in the database files: the test reads the wrong files", secret[:8])
		}
		raw, err := base64.RawURLEncoding.DecodeString(secret[len(api.TokenPrefix):])
		if err != nil || len(raw) != 32 {
			t.Fatalf("secret %s… holds %d random bytes (%v), want 32", secret[:8], len(raw), err)
		}
		// Not the secret, nor any 12 bytes of it or of its random bytes.
		for _, b := range [][]byte{[]byte(secret), raw} {
			for i := 0; i+12 <= len(b); i++ {
				if bytes.Contains(files, b[i:i+12]) {
					t.Fatalf("bytes %d to %d of the secret %s… are in the database files", i, i+12, secret[:8])
				}
			}
		}
	}
}

// TestOpenServer checks that a server without a token asks for none, and
// that RequireToken without one lets only stored credentials in.
func TestOpenServer(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "open.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := hub.New(hub.Options{})
	open := httptest.NewServer(api.New(st, h, api.Options{Tokens: st}))
	defer open.Close()
	res, err := http.Get(open.URL + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("open server: %d, want 200", res.StatusCode)
	}
	closed := httptest.NewServer(api.New(st, h, api.Options{Tokens: st, RequireToken: true}))
	defer closed.Close()
	secret, _, err := api.NewToken(context.Background(), st, "r", []string{api.ScopeRead}, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer " + secret, 200}, {"bearer   " + secret + " ", 200}, {"Basic " + secret, 401}, {"Bearer " + secret + "x", 401}} {
		req, _ := http.NewRequest("GET", closed.URL+"/api/sessions", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("RequireToken, Authorization %q: %d, want %d", tc.auth, res.StatusCode, tc.want)
		}
	}
}

// FuzzBearer checks the parsing of the Authorization header: it never
// panics, a token it returns is printable ASCII without spaces taken from
// the header, and it reads back what it is given.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer agst_abc", "bearer  x ", "Basic x", "Bearer", "Bearer ", "Bearer a b", "BEARER \x00", "Bearer \u00e9", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := api.Bearer(h)
		if !ok {
			if tok != "" {
				t.Errorf("bearer(%q) = %q, false", h, tok)
			}
			return
		}
		if tok == "" || !strings.Contains(h, tok) {
			t.Errorf("bearer(%q) = %q: not from the header", h, tok)
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] <= ' ' || tok[i] >= 0x7f {
				t.Fatalf("bearer(%q) = %q: byte %#x", h, tok, tok[i])
			}
		}
		if again, ok := api.Bearer("Bearer " + tok); !ok || again != tok {
			t.Errorf("bearer(Bearer %q) = %q, %v", tok, again, ok)
		}
	})
}

// TestIngestToken sends a session as a remote runner does, with the Client
// and a token of the ingest scope alone; a token of read is refused with
// a 403 the Client reports without retrying.
func TestIngestToken(t *testing.T) {
	a := newAuthServer(t, nil)
	ctx := context.Background()
	ingest, _, err := api.NewToken(ctx, a.st, "runner", []string{api.ScopeIngest}, 0, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	c := &api.Client{URL: a.url, Token: ingest}
	sess, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	lines := []api.LineIn{{Stream: store.Stdout, N: 1, Text: `{"type":"message","role":"assistant","text":"hi"}`}}
	if _, err := c.PostLines(ctx, sess.ID, lines, &api.End{}); err != nil {
		t.Fatal(err)
	}
	l, err := a.st.Line(ctx, sess.ID, store.Stdout, 1)
	if err != nil || string(l.Data) != lines[0].Text {
		t.Errorf("stored line %q, %v; want %q", l.Data, err, lines[0].Text)
	}
	// The runner's token cannot read what it sent.
	if code, _ := a.do(t, "GET", "/api/sessions/"+sess.ID+"/events", ingest, ""); code != 403 {
		t.Errorf("reading with the ingest token: %d, want 403", code)
	}
	read, _, err := api.NewToken(ctx, a.st, "reader", []string{api.ScopeRead}, 0, a.clock())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = (&api.Client{URL: a.url, Token: read}).CreateSession(ctx, api.CreateRequest{Protocol: "jsonl"})
	var apiErr *api.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 403 || !strings.Contains(apiErr.Message, "scope ingest") {
		t.Errorf("creating with a read token: %v, want a 403 naming the scope ingest", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the 403 took %v: retried", d)
	}
}
