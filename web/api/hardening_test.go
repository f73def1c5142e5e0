package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// call sends one request; hdr are header name, value pairs ("Host" sets
// the request's host).
func (ts *testServer) call(t *testing.T, method, path, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	// A stream that should have been refused must not hang the test.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (ts *testServer) sessionCount(t *testing.T) int {
	t.Helper()
	page, err := ts.st.Sessions(context.Background(), store.SessionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Sessions)
}

const createBody = `{"protocol":"claude-json"}`

// TestBrowserCannotReachServer holds that a page of another site can
// neither write to the server (a no-cors POST of text/plain, a form, a
// JSON POST from its origin) nor read it through DNS rebinding (a Host
// that is not the server's).
func TestBrowserCannotReachServer(t *testing.T) {
	ts := newServer(t, api.Options{Hosts: []string{"agents.example.org", "proxy.internal:8443"}}, hub.Options{})
	self := strings.TrimPrefix(ts.srv.URL, "http://")
	tests := []struct {
		name, method, body string
		hdr                []string
		code               int
	}{
		{"rebound host", "GET", "", []string{"Host", "attacker.example"}, 403},
		{"rebound host with the port", "GET", "", []string{"Host", "attacker.example:" + strings.Split(self, ":")[1]}, 403},
		{"a loopback name", "GET", "", []string{"Host", "localhost:9"}, 200},
		{"the IPv6 loopback", "GET", "", []string{"Host", "[::1]:9"}, 200},
		{"an allowed name", "GET", "", []string{"Host", "agents.example.org"}, 200},
		{"an allowed name on its port", "GET", "", []string{"Host", "proxy.internal:8443"}, 200},
		{"an allowed name on another port", "GET", "", []string{"Host", "proxy.internal:80"}, 403},
		{"text/plain", "POST", createBody, []string{"Content-Type", "text/plain"}, 415},
		{"a form", "POST", "protocol=claude-json", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"no content type", "POST", createBody, nil, 415},
		{"another origin", "POST", createBody, []string{"Content-Type", "application/json", "Origin", "http://attacker.example"}, 403},
		{"a null origin", "POST", createBody, []string{"Content-Type", "application/json", "Origin", "null"}, 403},
		{"a rebound host with its origin", "POST", createBody, []string{"Content-Type", "application/json", "Host", "attacker.example", "Origin", "http://attacker.example"}, 403},
		{"its own origin", "POST", createBody, []string{"Content-Type", "application/json; charset=utf-8", "Origin", ts.srv.URL}, 201},
		{"no origin (not a browser)", "POST", createBody, []string{"Content-Type", "application/json"}, 201},
	}
	created := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api/sessions"
			before := ts.sessionCount(t)
			code, _, body := ts.call(t, tt.method, path, tt.body, tt.hdr...)
			if code != tt.code {
				t.Errorf("status %d, want %d: %s", code, tt.code, body)
			}
			if code >= 400 && !strings.Contains(body, `"error":`) {
				t.Errorf("no JSON error: %s", body)
			}
			if code == 201 {
				created++
			}
			if n := ts.sessionCount(t); tt.method == "POST" && tt.code != 201 && n != before {
				t.Errorf("a refused request created a session (%d, was %d)", n, before)
			}
		})
	}
	if created != 2 {
		t.Errorf("created %d sessions, want 2", created)
	}
}

// TestSessionMetadataBounded holds that what a request says of a session
// is clipped as the format clips agent texts, and that a body over the
// limit is refused.
func TestSessionMetadataBounded(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	long := strings.Repeat("d", 200_000)
	labels := map[string]string{}
	for i := range agentstream.MaxItems + 50 {
		labels[fmt.Sprintf("k%05d", i)] = "v"
	}
	labels["big"] = long
	cmd := make([]string, agentstream.MaxItems+10)
	for i := range cmd {
		cmd[i] = "x"
	}
	cmd[0] = long
	b, _ := json.Marshal(api.CreateRequest{Protocol: "claude-json", Cwd: long, Harness: long, Command: cmd, Labels: labels})
	code, _, body := ts.call(t, "POST", "/api/sessions", string(b), "Content-Type", "application/json")
	if code != 201 {
		t.Fatalf("status %d: %.300s", code, body)
	}
	if len(body) > 200_000 {
		t.Errorf("the answer holds %d bytes: the metadata was not clipped", len(body))
	}
	page, err := ts.st.Sessions(context.Background(), store.SessionQuery{})
	if err != nil || len(page.Sessions) != 1 {
		t.Fatal(err, len(page.Sessions))
	}
	s := page.Sessions[0]
	if len(s.Cwd) != agentstream.MaxName || len(s.Harness) != agentstream.MaxName {
		t.Errorf("cwd %d bytes, harness %d: want %d", len(s.Cwd), len(s.Harness), agentstream.MaxName)
	}
	if len(s.Command) != agentstream.MaxItems || len(s.Command[0]) != agentstream.MaxText {
		t.Errorf("command: %d arguments, the first of %d bytes; want %d and %d", len(s.Command), len(s.Command[0]), agentstream.MaxItems, agentstream.MaxText)
	}
	if len(s.Labels) != agentstream.MaxItems || len(s.Labels["big"]) != agentstream.MaxName {
		t.Errorf("labels: %d, big of %d bytes", len(s.Labels), len(s.Labels["big"]))
	}

	// A 60 MB cwd is refused before it is read whole.
	huge := `{"protocol":"claude-json","cwd":"` + strings.Repeat("d", 60<<20) + `"}`
	if code, _, body := ts.call(t, "POST", "/api/sessions", huge, "Content-Type", "application/json"); code != 413 {
		t.Errorf("60 MB cwd: status %d, want 413: %.200s", code, body)
	}
	if n := ts.sessionCount(t); n != 1 {
		t.Errorf("%d sessions after the refused one, want 1", n)
	}
}

// TestBodyIsOneJSONValue holds that data after a JSON body is refused.
func TestBodyIsOneJSONValue(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	_, _, body := ts.call(t, "POST", "/api/sessions", `{"protocol":"claude-json","id":"s1"}`, "Content-Type", "application/json")
	for _, tt := range []struct{ path, body string }{
		{"/api/sessions", `{"protocol":"claude-json","id":"s2"} {"protocol":"claude-json"}`},
		{"/api/sessions", `{"protocol":"claude-json","id":"s3"}}`},
		{"/api/sessions", `{"protocol":"claude-json","id":"s4"} x`},
		{"/api/sessions/s1/lines", `{"lines":[{"stream":"stdout","n":1,"text":"{}"}]} trailing`},
		{"/api/sessions/s1/lines", `{"lines":[]}]`},
	} {
		code, _, got := ts.call(t, "POST", tt.path, tt.body, "Content-Type", "application/json")
		if code != 400 || !strings.Contains(got, "after the JSON value") {
			t.Errorf("%s %q: status %d %s, want 400", tt.path, tt.body, code, got)
		}
	}
	if n := ts.sessionCount(t); n != 1 {
		t.Errorf("%d sessions, want 1 (%s)", n, body)
	}
	if _, err := ts.st.Line(context.Background(), "s1", store.Stdout, 1); err == nil {
		t.Errorf("a refused body's line was stored")
	}
}

// TestQueryWithNUL holds that ?q=%00 matches nothing rather than every
// titled session.
func TestQueryWithNUL(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ts.record(t, "s1", "claude-code", "/w", time.Now(), &agentstream.SessionTitle{Title: "fix the build"})
	if code, _, body := ts.call(t, "GET", "/api/sessions?q=build", ""); code != 200 || !strings.Contains(body, `"s1"`) {
		t.Fatalf("q=build: %d %s", code, body)
	}
	code, _, body := ts.call(t, "GET", "/api/sessions?q=%00", "")
	if code != 400 || strings.Contains(body, `"s1"`) {
		t.Errorf("q=%%00: status %d %s, want 400", code, body)
	}
}

// TestAgentFieldsAndCountsBounded holds that what an agent reports in its
// lines (model, cwd, tools) is clipped, and that a negative token count is
// stored as null with the native line kept as the agent printed it.
func TestAgentFieldsAndCountsBounded(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ctx := context.Background()
	c := &api.Client{URL: ts.srv.URL}
	sess, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "claude-json"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("m", 100_000)
	tools, _ := json.Marshal([]string{long, "Bash"})
	initLine := `{"type":"system","subtype":"init","cwd":"` + long + `","session_id":"x","tools":` + string(tools) +
		`,"model":"` + long + `","permissionMode":"default","uuid":"u1"}`
	resultLine := `{"type":"result","subtype":"success","is_error":false,"duration_ms":-5,"num_turns":1,"result":"4","session_id":"x",` +
		`"total_cost_usd":-3,"usage":{"input_tokens":-10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":25}}`
	lines := []api.LineIn{{Stream: "stdout", N: 1, Text: initLine}, {Stream: "stdout", N: 2, Text: resultLine}}
	zero := 0
	if _, err := c.PostLines(ctx, sess.ID, lines, &api.End{ExitCode: &zero}); err != nil {
		t.Fatal(err)
	}
	got, err := ts.st.Session(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Model) != agentstream.MaxName {
		t.Errorf("stored model of %d bytes, want %d", len(got.Model), agentstream.MaxName)
	}
	evs, err := ts.st.Events(ctx, sess.ID, store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var sawStart, sawUsage bool
	for _, ev := range evs {
		switch ev.Type {
		case agentstream.TypeSessionStarted:
			sawStart = true
			if len(ev.Data) > 20_000 {
				t.Errorf("session.started event of %d bytes: cwd, model or tools not clipped", len(ev.Data))
			}
		case agentstream.TypeUsage:
			var e struct {
				Payload map[string]any `json:"payload"`
			}
			json.Unmarshal(ev.Data, &e)
			if e.Payload["scope"] != "session" {
				continue
			}
			sawUsage = true
			if e.Payload["inputTokens"] != nil || e.Payload["costUsd"] != nil || e.Payload["durationMs"] != nil {
				t.Errorf("negative figures kept: %s", ev.Data)
			}
			if e.Payload["outputTokens"] != float64(25) {
				t.Errorf("outputTokens lost: %s", ev.Data)
			}
		}
	}
	if !sawStart || !sawUsage {
		t.Fatalf("no session.started (%v) or session usage (%v) among %d events", sawStart, sawUsage, len(evs))
	}
	if l, err := ts.st.Line(ctx, sess.ID, store.Stdout, 2); err != nil || string(l.Data) != resultLine {
		t.Errorf("the native line is not kept as printed: %v", err)
	}
}

// rawStream opens an event stream on a bare connection and reads only its
// status line: a reader that then stops reading.
func rawStream(t *testing.T, addr, path string) (net.Conn, int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", path, addr)
	status, err := bufio.NewReaderSize(conn, 64).ReadString('\n')
	if err != nil {
		conn.Close()
		t.Fatalf("stream %s: %v", path, err)
	}
	var code int
	fmt.Sscanf(status, "HTTP/1.1 %d", &code)
	return conn, code
}

// TestStreamLimits holds that event streams are limited per client
// address and in all, with 429 and Retry-After beyond.
func TestStreamLimits(t *testing.T) {
	ts := newServer(t, api.Options{MaxStreams: 3, MaxStreamsPerClient: 2}, hub.Options{})
	ts.fill(t, "s1", 1)
	addr := strings.TrimPrefix(ts.srv.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 2 {
		c, code := rawStream(t, addr, "/api/events/stream")
		conns = append(conns, c)
		if code != 200 {
			t.Fatalf("stream %d: status %d", i, code)
		}
	}
	code, hdr, body := ts.call(t, "GET", "/api/events/stream", "")
	if code != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "127.0.0.1") {
		t.Errorf("third stream from one client: %d (Retry-After %q) %s, want 429", code, hdr.Get("Retry-After"), body)
	}
	// A closed stream gives its place back.
	conns[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, code := rawStream(t, addr, "/api/events/stream")
		conns = append(conns, c)
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed stream's place was never given back (%d)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStalledReaderCut holds that a stream whose reader stops reading is
// cut once a write blocks past the write timeout, giving its place back,
// and that the client then resumes exactly where it was.
func TestStalledReaderCut(t *testing.T) {
	ts := newServer(t, api.Options{MaxStreams: 1, StreamWriteTimeout: 200 * time.Millisecond, Coalesce: -1}, hub.Options{})
	// Far more than the socket buffers hold.
	ctx := context.Background()
	w, err := ts.st.Create(ctx, store.NewSession{ID: "big", Harness: "jsonl", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("x", agentstream.MaxText)
	for i := 1; i <= 3000; i++ {
		if err := w.Handle(ctx, agentstream.Envelope{Session: "big", Seq: int64(i), Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: text}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(ts.srv.URL, "http://")
	c, code := rawStream(t, addr, "/api/sessions/big/stream")
	defer c.Close()
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	if code, _, _ := ts.call(t, "GET", "/api/sessions/big/stream", ""); code != 429 {
		t.Fatalf("second stream with MaxStreams 1: %d, want 429", code)
	}
	// The stalled stream is cut within a few write timeouts.
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, _, body := ts.call(t, "GET", "/api/sessions/big/stream?after=2990", "")
		if code == 200 {
			if !strings.Contains(body, "id: 3000\n") || strings.Contains(body, "id: 2990\n") || !strings.Contains(body, "event: end") {
				t.Errorf("resumed stream: %.300s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled stream still holds its place (%d)", code)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHeartbeatTimeout holds that a remote session whose runner went
// silent ends interrupted, with the reason stored and sent to its live
// stream, while a runner that sends heartbeats keeps its session; and that
// the runner that comes back goes on with the session.
func TestHeartbeatTimeout(t *testing.T) {
	const timeout = 400 * time.Millisecond
	ts := newServer(t, api.Options{HeartbeatTimeout: timeout}, hub.Options{})
	ctx := context.Background()
	c := &api.Client{URL: ts.srv.URL}

	// The runner with heartbeats uploads from its spool: one line, then
	// nothing but heartbeats.
	alive := api.CreateRequest{ID: "s_alive", Protocol: "claude-json"}
	sp, err := api.CreateSpool(filepath.Join(t.TempDir(), alive.ID+".spool"), api.SpoolHeader{Server: c.URL, Session: alive})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if err := sp.Line(store.Line{Stream: store.Stdout, N: 1, Data: []byte(`{"type":"system","subtype":"init","cwd":"/w","session_id":"y","tools":[],"model":"m","uuid":"u"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := sp.Flush(); err != nil {
		t.Fatal(err)
	}
	up := c.NewUploader(sp, api.UploaderOptions{Heartbeat: timeout / 4})
	defer up.Stop()
	for up.Acked() == 0 {
		time.Sleep(10 * time.Millisecond)
	}

	dead, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "claude-json"})
	if err != nil {
		t.Fatal(err)
	}
	line := api.LineIn{Stream: "stdout", N: 1, Text: `{"type":"system","subtype":"init","cwd":"/w","session_id":"x","tools":[],"model":"m","uuid":"u"}`}
	if _, err := c.PostLines(ctx, dead.ID, []api.LineIn{line}, nil); err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	events := openStream(t, sctx, ts.srv.URL+"/api/sessions/"+dead.ID+"/stream", "")
	start := time.Now()
	var ended, end string
	for ev := range events {
		switch ev.event {
		case agentstream.TypeSessionEnded:
			ended = ev.data
		case "end":
			end = ev.data
		}
		if end != "" {
			break
		}
	}
	if waited := time.Since(start); end == "" || waited < timeout/2 {
		t.Fatalf("the stream ended after %v with %q", waited, end)
	}
	if !strings.Contains(ended, `"status":"interrupted"`) || !strings.Contains(ended, `"reason":"heartbeat-timeout"`) {
		t.Errorf("session.ended %s", ended)
	}
	if !strings.Contains(end, `"status":"interrupted"`) || !strings.Contains(end, `"reason":"heartbeat-timeout"`) {
		t.Errorf("end %s", end)
	}
	got, err := ts.st.Session(ctx, dead.ID)
	if err != nil || got.Status != store.StatusInterrupted || got.Reason != agentstream.ReasonHeartbeatTimeout {
		t.Errorf("stored %+v %v", got, err)
	}

	// The heartbeats kept the other session running all along.
	if got, err := ts.st.Session(ctx, alive.ID); err != nil || got.Status != store.StatusRunning {
		t.Errorf("the session with heartbeats: %+v %v", got, err)
	}

	// The runner that comes back goes on.
	zero := 0
	resp, err := c.PostLines(ctx, dead.ID, []api.LineIn{{Stream: "stdout", N: 2, Text: `{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"x"}`}}, &api.End{ExitCode: &zero})
	if err != nil || resp.Status != store.StatusSucceeded {
		t.Errorf("the runner back: %+v %v", resp, err)
	}
}

// TestStreamOutlivesReadTimeout holds that the server's read and write
// timeouts, which serve sets for requests and answers, do not cut an event
// stream.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	st := ts.st
	srv := httptest.NewUnstartedServer(api.New(st, ts.hub, api.Options{KeepAlive: 50 * time.Millisecond}))
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()
	ctx := context.Background()
	w, err := st.Create(ctx, store.NewSession{ID: "s", Harness: "jsonl", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	events := openStream(t, sctx, srv.URL+"/api/sessions/s/stream", "")
	time.Sleep(time.Second)
	if err := w.Handle(ctx, agentstream.Envelope{Session: "s", Seq: 1, Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: "late"}}); err != nil {
		t.Fatal(err)
	}
	w.Flush(ctx)
	for ev := range events {
		if ev.id == "1" {
			return
		}
	}
	t.Fatal("the stream ended before the event a second later")
}
