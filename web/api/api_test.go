package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

type testServer struct {
	st  *sqlite.Store
	hub *hub.Hub
	srv *httptest.Server
}

func newServer(t *testing.T, opts api.Options, hopts hub.Options) *testServer {
	t.Helper()
	st, err := sqlite.OpenOptions(filepath.Join(t.TempDir(), "api.db"), sqlite.Options{BatchSize: 8, FlushInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	h := hub.New(hopts)
	ctx, cancel := context.WithCancel(context.Background())
	done := follow(t, ctx, st, h)
	srv := httptest.NewServer(api.New(st, h, opts))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		cancel()
		<-done
		st.Close()
	})
	return &testServer{st: st, hub: h, srv: srv}
}

// follow runs st.Follow into h until ctx is done, and returns once it
// runs: before, what the writers commit reaches no subscriber. The channel
// is closed when Follow returns.
func follow(t *testing.T, ctx context.Context, st *sqlite.Store, h *hub.Hub) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() { st.Follow(ctx, h, 10*time.Millisecond); close(done) }()
	for !st.Following() {
		select {
		case <-done:
			t.Fatal("Follow returned at once")
		case <-time.After(time.Millisecond):
		}
	}
	return done
}

// fill writes a closed session of n message events.
func (ts *testServer) fill(t *testing.T, id string, n int) {
	t.Helper()
	ctx := context.Background()
	w, err := ts.st.Create(ctx, store.NewSession{ID: id, Harness: "jsonl", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		var p agentstream.Payload = &agentstream.Message{Role: "assistant", Text: fmt.Sprint("m", i)}
		if i%4 == 0 {
			p = &agentstream.Thinking{Text: "t"}
		}
		if err := w.Handle(ctx, agentstream.Envelope{Session: id, Seq: int64(i), Turn: 1, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func (ts *testServer) get(t *testing.T, path string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.srv.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func eventSeqs(t *testing.T, body []byte) []int64 {
	t.Helper()
	var evs []struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(body, &evs); err != nil {
		t.Fatalf("%v in %.200s", err, body)
	}
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func rangeSeq(lo, hi int64) []int64 {
	out := []int64{}
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestEventsPaging(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ts.fill(t, "s1", 1200)
	tests := []struct {
		query string
		want  []int64
	}{
		{"", rangeSeq(1, 500)},
		{"?after=1190&limit=20", rangeSeq(1191, 1200)},
		{"?before=101&limit=5", rangeSeq(96, 100)},
		{"?tail=3", rangeSeq(1198, 1200)},
		{"?tail=3&limit=3", rangeSeq(1198, 1200)},
		{"?after=0&limit=4&types=thinking", []int64{4, 8, 12, 16}},
		{"?before=20&limit=2&types=thinking,session.ended", []int64{12, 16}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, hdr, body := ts.get(t, "/api/sessions/s1/events"+tt.query)
			if code != 200 || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, type %q: %s", code, hdr.Get("Content-Type"), body)
			}
			if diff := cmp.Diff(tt.want, eventSeqs(t, body)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
		})
	}
	// Walking the whole session backwards, then forwards, page by page.
	var back []int64
	before := int64(1201)
	for {
		_, _, body := ts.get(t, "/api/sessions/s1/events?limit=333&before="+strconv.FormatInt(before, 10))
		page := eventSeqs(t, body)
		if len(page) == 0 {
			break
		}
		back = append(page, back...)
		before = page[0]
	}
	var fwd []int64
	var after int64
	for {
		_, _, body := ts.get(t, "/api/sessions/s1/events?limit=333&after="+strconv.FormatInt(after, 10))
		page := eventSeqs(t, body)
		if len(page) == 0 {
			break
		}
		fwd = append(fwd, page...)
		after = page[len(page)-1]
	}
	if diff := cmp.Diff(rangeSeq(1, 1200), back); diff != "" {
		t.Errorf("backwards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rangeSeq(1, 1200), fwd); diff != "" {
		t.Errorf("forwards (-want +got):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ts.fill(t, "s1", 3)
	tests := []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/sessions/nope", 404},
		{"GET", "/api/sessions/nope/events", 404},
		{"GET", "/api/sessions/nope/stream", 404},
		{"GET", "/api/sessions/s1/lines/1", 404},
		{"GET", "/api/nothing", 404},
		{"GET", "/api/sessions/s1/events?after=-1", 400},
		{"GET", "/api/sessions/s1/events?after=x", 400},
		{"GET", "/api/sessions/s1/events?before=0", 400},
		{"GET", "/api/sessions/s1/events?tail=0", 400},
		{"GET", "/api/sessions/s1/events?tail=100000", 400},
		{"GET", "/api/sessions/s1/events?limit=0", 400},
		{"GET", "/api/sessions/s1/events?after=1&before=3", 400},
		{"GET", "/api/sessions/s1/events?tail=2&limit=5", 400},
		{"GET", "/api/sessions/s1/events?types=,", 400},
		{"GET", "/api/sessions/s1/lines/0", 400},
		{"GET", "/api/sessions/s1/lines/x", 400},
		{"GET", "/api/sessions/s1/lines/1?stream=stdin", 400},
		{"GET", "/api/sessions/s1/stream?after=-3", 400},
		{"GET", "/api/sessions?limit=0", 400},
		{"GET", "/api/sessions?limit=x", 400},
		{"GET", "/api/sessions?status=done", 400},
		{"GET", "/api/sessions?cursor=zzz", 400},
		{"GET", "/api/sessions?since=yesterday", 400},
		{"DELETE", "/api/sessions/s1", 405},
		{"PUT", "/api/sessions", 405},
		{"POST", "/api/sessions/s1/lines", 400}, // empty body
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.srv.URL+tt.path, nil)
			if tt.method != "GET" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error string `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error == "" {
				t.Errorf("body is not a JSON error: %v", err)
			}
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tt.code, body.Error)
			}
		})
	}
}

func TestSessionsAPI(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	for i := range 5 {
		ts.fill(t, fmt.Sprint("s", i), 2)
	}
	var ids []string
	cursor := ""
	for {
		_, _, body := ts.get(t, "/api/sessions?limit=2&cursor="+cursor)
		var page struct {
			Sessions []json.RawMessage `json:"sessions"`
			Next     *string           `json:"next"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Sessions {
			var s map[string]any
			json.Unmarshal(raw, &s)
			for _, k := range []string{"id", "harness", "protocol", "version", "model", "title", "cwd", "command",
				"status", "reason", "error", "startedAt", "endedAt", "durationMs", "lastSeq", "usage", "parent", "labels"} {
				if _, ok := s[k]; !ok {
					t.Errorf("session JSON lacks %q: %s", k, raw)
				}
			}
			ids = append(ids, s["id"].(string))
		}
		if page.Next == nil {
			break
		}
		cursor = *page.Next
	}
	if diff := cmp.Diff([]string{"s4", "s3", "s2", "s1", "s0"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	code, _, body := ts.get(t, "/api/sessions/s2")
	var s store.Session
	if err := json.Unmarshal(body, &s); err != nil || code != 200 || s.ID != "s2" || s.LastSeq != 2 || s.Status != "interrupted" {
		t.Errorf("GET session: %d %s", code, body)
	}
}

func TestAuth(t *testing.T) {
	ts := newServer(t, api.Options{Token: "sekrit"}, hub.Options{})
	ts.fill(t, "s1", 1)
	tests := []struct {
		name string
		path string
		hdr  []string
		code int
	}{
		{"none", "/api/sessions", nil, 401},
		{"wrong", "/api/sessions", []string{"Authorization", "Bearer nope"}, 401},
		{"not bearer", "/api/sessions", []string{"Authorization", "Basic sekrit"}, 401},
		{"bearer", "/api/sessions", []string{"Authorization", "Bearer sekrit"}, 200},
		// A token is never taken from the URL, even the right one.
		{"query", "/api/sessions/s1?access_token=sekrit", nil, 400},
		{"query with header", "/api/sessions/s1?token=sekrit", []string{"Authorization", "Bearer sekrit"}, 400},
		{"wrong query", "/api/sessions/s1?access_token=x", nil, 400},
		{"unknown path", "/api/x", nil, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, hdr, body := ts.get(t, tt.path, tt.hdr...)
			if code != tt.code {
				t.Errorf("status %d, want %d: %s", code, tt.code, body)
			}
			if code == 401 && (hdr.Get("WWW-Authenticate") == "" || !bytes.Contains(body, []byte(`"error"`))) {
				t.Errorf("401 without a challenge or a JSON error: %s", body)
			}
		})
	}
}

func TestLineEndpoint(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ctx := context.Background()
	w, _ := ts.st.Create(ctx, store.NewSession{ID: "l"})
	w.Line(ctx, store.Line{Stream: "stdout", N: 1, Data: []byte("{\"a\":\"\xff\"}")})
	w.Line(ctx, store.Line{Stream: "stderr", N: 1, Data: []byte("err")})
	w.Line(ctx, store.Line{Stream: "stdout", N: 2, Data: []byte("head"), Size: 1 << 30, SHA256: bytes.Repeat([]byte{0xab}, 32)})
	w.Close(ctx)
	code, hdr, body := ts.get(t, "/api/sessions/l/lines/1")
	if code != 200 || string(body) != "{\"a\":\"\xff\"}" || hdr.Get("X-Line-Size") != "9" {
		t.Errorf("stdout 1: %d %q %v", code, body, hdr)
	}
	if _, _, body := ts.get(t, "/api/sessions/l/lines/1?stream=stderr"); string(body) != "err" {
		t.Errorf("stderr 1: %q", body)
	}
	code, hdr, body = ts.get(t, "/api/sessions/l/lines/2")
	if code != 200 || string(body) != "head" || hdr.Get("X-Line-Size") != strconv.Itoa(1<<30) ||
		hdr.Get("X-Line-SHA256") != strings.Repeat("ab", 32) {
		t.Errorf("oversized: %d %q %v", code, body, hdr)
	}
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	id    string
	event string
	data  string
}

// readSSE reads events from r into ch until r ends.
func readSSE(r io.Reader, ch chan<- sseEvent) {
	defer close(ch)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.data != "" || ev.event != "" {
				ch <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			ev.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.data += line[6:]
		}
	}
}

func openStream(t *testing.T, ctx context.Context, url string, lastID string) <-chan sseEvent {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 64)
	go func() {
		readSSE(resp.Body, ch)
		resp.Body.Close()
	}()
	return ch
}

// TestStreamResume follows a session while it is written, drops the
// connection at random seqs and resumes with Last-Event-ID (or ?after=):
// every stored event arrives exactly once, in order, then "end".
func TestStreamResume(t *testing.T) {
	for _, opt := range []api.Options{{}, {Coalesce: -1}} {
		t.Run(fmt.Sprint("coalesce ", opt.Coalesce), func(t *testing.T) {
			ts := newServer(t, opt, hub.Options{})
			ctx := context.Background()
			const n = 2000
			w, err := ts.st.Create(ctx, store.NewSession{ID: "live"})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for i := 1; i <= n; i++ {
					p := agentstream.Payload(&agentstream.Message{Role: "assistant", Text: fmt.Sprint("m", i)})
					w.Handle(ctx, agentstream.Envelope{Session: "live", Seq: int64(i), Payload: p})
					if i%10 == 0 {
						w.Handle(ctx, agentstream.Envelope{Session: "live", Payload: &agentstream.MessageDelta{Role: "assistant", Text: "d"}})
					}
					if i%100 == 0 {
						time.Sleep(2 * time.Millisecond)
					}
				}
				w.Close(ctx)
			}()
			r := rand.New(rand.NewPCG(1, 2))
			var got []int64
			var last int64
			ended := false
			for round := 0; !ended; round++ {
				cctx, cancel := context.WithCancel(ctx)
				url := ts.srv.URL + "/api/sessions/live/stream"
				lastID := ""
				if round%2 == 1 {
					url += "?after=" + strconv.FormatInt(last, 10)
				} else if last > 0 {
					lastID = strconv.FormatInt(last, 10)
				}
				ch := openStream(t, cctx, url, lastID)
				drop := last + 1 + int64(r.IntN(400))
				for ev := range ch {
					if ev.event == "end" {
						ended = true
						break
					}
					if ev.id == "" {
						if !strings.Contains(ev.data, `"seq":null`) {
							t.Fatalf("event without id: %+v", ev)
						}
						continue
					}
					seq, _ := strconv.ParseInt(ev.id, 10, 64)
					if !strings.Contains(ev.data, `"seq":`+ev.id+",") {
						t.Fatalf("id %s with data %s", ev.id, ev.data)
					}
					got = append(got, seq)
					last = seq
					if seq >= drop {
						break
					}
				}
				cancel()
				if round > 1000 {
					t.Fatal("no end")
				}
			}
			if diff := cmp.Diff(rangeSeq(1, n), got); diff != "" {
				t.Errorf("seqs received (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamResync makes a subscriber fall behind a tiny hub buffer: it
// gets "resync" with the last seq it was sent, never a silent gap.
func TestStreamResync(t *testing.T) {
	ts := newServer(t, api.Options{Coalesce: 300 * time.Millisecond}, hub.Options{Buffer: 4})
	ctx := context.Background()
	w, _ := ts.st.Create(ctx, store.NewSession{ID: "r"})
	w.Handle(ctx, agentstream.Envelope{Seq: 1, Payload: &agentstream.Message{Role: "assistant", Text: "x"}})
	w.Flush(ctx)
	ch := openStream(t, ctx, ts.srv.URL+"/api/sessions/r/stream", "")
	first := <-ch
	if first.id != "1" {
		t.Fatalf("first event %+v", first)
	}
	// A live delta wakes the subscriber, which sends it, then pauses 300 ms
	// while 50 events overflow its 4 slots.
	w.Handle(ctx, agentstream.Envelope{Payload: &agentstream.MessageDelta{Role: "assistant", Text: "x"}})
	if ev := <-ch; ev.event != "message.delta" {
		t.Fatalf("after the delta: event %+v, want the delta", ev)
	}
	for i := 2; i <= 51; i++ {
		w.Handle(ctx, agentstream.Envelope{Seq: int64(i), Payload: &agentstream.Message{Role: "assistant", Text: "x"}})
		w.Flush(ctx)
	}
	var evs []sseEvent
	for ev := range ch {
		evs = append(evs, ev)
	}
	lastEv := evs[len(evs)-1]
	if lastEv.event != "resync" {
		t.Fatalf("last event %+v, want resync", lastEv)
	}
	var after struct{ After int64 }
	json.Unmarshal([]byte(lastEv.data), &after)
	var lastID int64
	for _, ev := range evs {
		if ev.id != "" {
			lastID, _ = strconv.ParseInt(ev.id, 10, 64)
		}
	}
	if after.After != max(lastID, 1) {
		t.Errorf("resync after %d, last id sent %d", after.After, lastID)
	}
	w.Close(ctx)
}

// flaky drops the answer of every other request after the server handled
// it, so that the client must retry a request that took effect.
type flaky struct {
	n atomic.Int64
}

func (f *flaky) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if f.n.Add(1)%2 == 1 {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset (test)")
	}
	return resp, nil
}

func corpusFile(t testing.TB) []byte {
	t.Helper()
	matches, _ := filepath.Glob("testdata/*.jsonl")
	if len(matches) == 0 {
		t.Fatal("no testdata")
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIngest(t *testing.T) {
	ts := newServer(t, api.Options{Token: "tok"}, hub.Options{})
	ctx := context.Background()
	c := &api.Client{URL: ts.srv.URL, Token: "tok", HTTP: &http.Client{Transport: &flaky{}}, Backoff: time.Millisecond}
	sess, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "claude-json", Command: []string{"claude", "-p"}, Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Status != "running" || sess.Harness != "claude-code" {
		t.Errorf("created %+v", sess)
	}
	input := corpusFile(t)
	var lines []api.LineIn
	sp := &store.LineSplitter{Stream: "stdout", Fn: func(l store.Line) error {
		lines = append(lines, api.NewLineIn(l))
		return nil
	}}
	sp.Write(input)
	sp.Close()
	// Batches overlap: every line is sent twice or more.
	for i := 0; i < len(lines); i += 3 {
		if _, err := c.PostLines(ctx, sess.ID, lines[max(0, i-2):min(len(lines), i+3)], nil); err != nil {
			t.Fatal(err)
		}
	}
	// A gap is refused with the line expected.
	_, err = c.PostLines(ctx, sess.ID, []api.LineIn{{Stream: "stderr", N: 5, Text: "x"}}, nil)
	var ae *api.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Expected["stderr"] != 1 {
		t.Errorf("gap: %v", err)
	}
	code := 0
	resp, err := c.PostLines(ctx, sess.ID, []api.LineIn{{Stream: "stderr", N: 1, Text: "bye"}}, &api.End{ExitCode: &code})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status == "running" || resp.LastLine["stdout"] != int64(len(lines)) {
		t.Errorf("end: %+v", resp)
	}
	// The stored events are what normalizing the file gives (ts aside),
	// plus the stderr line.
	a, _ := adapter.Lookup("claude-json")
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: sess.ID, Harness: a.Harness})
	var want []string
	lr := agentstream.NewLineReader(bytes.NewReader(input))
	var envs []agentstream.Envelope
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		envs = n.Line(envs, l, time.Time{})
	}
	envs = n.Stderr(envs, agentstream.Line{N: 1, Bytes: []byte("bye"), Size: 3}, time.Time{})
	envs = n.End(envs, time.Time{})
	for _, e := range envs {
		if e.Seq > 0 {
			want = append(want, fmt.Sprintf("%d %s %s", e.Seq, e.Type(), e.Payload.AppendJSON(nil)))
		}
	}
	evs, err := ts.st.Events(ctx, sess.ID, store.EventQuery{Limit: 5000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		e, _ := ev.Envelope()
		got = append(got, fmt.Sprintf("%d %s %s", e.Seq, e.Type(), e.Payload.AppendJSON(nil)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ingested events (-want +got):\n%s", diff)
	}
	if _, err := c.PostLines(ctx, sess.ID, nil, nil); err == nil {
		t.Error("posting to an ended session succeeded")
	}
	var native []byte
	ts.st.Lines(ctx, sess.ID, func(l store.Line) error {
		if l.Stream == "stdout" {
			native = append(append(native, l.Data...), '\n')
		}
		return nil
	})
	if !bytes.Equal(native, input) {
		t.Error("stored native lines differ from the input")
	}
}

// TestUploaderResume sends a session from a spool, through a server that is
// replaced midway (the session is interrupted, then resumed by the new
// server from its stored lines): the second uploader starts again from the
// start of the spool (its cursor is gone), and the server ignores the lines
// it has.
func TestUploaderResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "u.db")
	input := corpusFile(t)
	var lines []store.Line
	sp := &store.LineSplitter{Stream: "stdout", Fn: func(l store.Line) error {
		l.Data = append([]byte(nil), l.Data...)
		lines = append(lines, l)
		return nil
	}}
	sp.Write(input)
	sp.Close()
	half := len(lines) / 2
	ctx := context.Background()

	serve := func() (*sqlite.Store, *httptest.Server) {
		st, err := sqlite.OpenOptions(path, sqlite.Options{StaleAfter: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return st, httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{}))
	}
	upload := func(c *api.Client, spoolPath, id string, lines []store.Line, end bool, opts api.UploaderOptions) {
		t.Helper()
		var s *api.Spool
		var err error
		if _, serr := os.Stat(spoolPath); serr == nil {
			s, err = api.OpenSpool(spoolPath)
		} else {
			s, err = api.CreateSpool(spoolPath, api.SpoolHeader{Server: c.URL, Session: api.CreateRequest{ID: id, Protocol: "claude-json"}})
		}
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, l := range lines {
			if err := s.Line(l); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		code := 0
		if end {
			if err := s.End(api.End{ExitCode: &code}); err != nil {
				t.Fatal(err)
			}
		}
		u := c.NewUploader(s, opts)
		defer u.Stop()
		if end {
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := u.Wait(wctx); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(spoolPath); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the finished spool is still there: %v", err)
			}
			return
		}
		for deadline := time.Now().Add(30 * time.Second); u.Acked() < s.Size(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("acked %d of %d bytes", u.Acked(), s.Size())
			}
		}
	}
	st1, srv1 := serve()
	spoolPath := filepath.Join(dir, "s.spool")
	const id = "s_resumed"
	upload(&api.Client{URL: srv1.URL}, spoolPath, id, lines[:half], false, api.UploaderOptions{BatchLines: 7})
	srv1.Close()
	st1.Close() // the first server goes away without closing the session
	if err := os.Remove(spoolPath + ".cursor"); err != nil {
		t.Fatal(err)
	}

	st2, srv2 := serve()
	defer func() { srv2.Close(); st2.Close() }()
	upload(&api.Client{URL: srv2.URL}, spoolPath, id, lines[half:], true, api.UploaderOptions{BatchLines: 5})
	got, err := st2.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The same file ingested in one go gives the same events.
	st3, srv3 := serve()
	defer func() { srv3.Close(); st3.Close() }()
	upload(&api.Client{URL: srv3.URL}, filepath.Join(dir, "ref.spool"), "s_ref", lines, true, api.UploaderOptions{})
	want, _ := st3.Session(ctx, "s_ref")
	if got.LastSeq != want.LastSeq || got.Status != want.Status {
		t.Errorf("resumed session: %d events, %s; in one go: %d, %s", got.LastSeq, got.Status, want.LastSeq, want.Status)
	}
	a, _ := st3.Events(ctx, "s_ref", store.EventQuery{Limit: 5000})
	b, _ := st3.Events(ctx, id, store.EventQuery{Limit: 5000})
	typesOf := func(evs []store.Event) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Type)
		}
		return out
	}
	if diff := cmp.Diff(typesOf(a), typesOf(b)); diff != "" {
		t.Errorf("event types (-one go +resumed):\n%s", diff)
	}
	var n int64
	st3.Lines(ctx, id, func(l store.Line) error {
		n++
		if l.N != n || !bytes.Equal(l.Data, lines[n-1].Data) {
			t.Errorf("stored line %d is %s line %d %q, want %q", n, l.Stream, l.N, l.Data, lines[n-1].Data)
		}
		return nil
	})
	if n != int64(len(lines)) {
		t.Errorf("%d lines stored, want %d", n, len(lines))
	}
}

func TestAllStream(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := openStream(t, ctx, ts.srv.URL+"/api/events/stream", "")
	// The stream's headers come once the server has subscribed, but the
	// store publishes only what is committed after its Follow (started by
	// newServer, reading the database) began, which gives no signal.
	time.Sleep(20 * time.Millisecond)
	ts.fill(t, "a", 2)
	var got []string
	for ev := range ch {
		got = append(got, ev.event)
		if ev.event == "closed" {
			if !strings.Contains(ev.data, `"session":"a"`) {
				t.Errorf("closed: %s", ev.data)
			}
			break
		}
	}
	if diff := cmp.Diff([]string{"message", "message", "closed"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestIngestEndEarly sends a session's end before lines it says the run
// printed, as a message delivered again after a later one brings it: the
// end is refused with the first line missing, and the session stays
// running until the lines came; an end that names no lines closes the
// session whatever it holds.
func TestIngestEndEarly(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	ctx := context.Background()
	c := &api.Client{URL: ts.srv.URL, Backoff: time.Millisecond}
	line := func(stream string, n int64) api.LineIn {
		return api.LineIn{Stream: stream, N: n, Text: fmt.Sprintf("%s %d", stream, n)}
	}
	code := 0
	end := &api.End{ExitCode: &code, Lines: map[string]int64{"stdout": 4, "stderr": 1}}
	sess, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	early := func(lines []api.LineIn, stream string, want int64) {
		t.Helper()
		_, err := c.PostLines(ctx, sess.ID, lines, end)
		var ae *api.APIError
		if !errors.As(err, &ae) || ae.Status != 409 || len(ae.Expected) != 1 || ae.Expected[stream] != want {
			t.Fatalf("an end before %s line %d: %v, want a 409 expecting it", stream, want, err)
		}
		if s, err := ts.st.Session(ctx, sess.ID); err != nil || s.Status != store.StatusRunning {
			t.Fatalf("after an early end the session is %q (%v), want running", s.Status, err)
		}
	}
	early([]api.LineIn{line("stdout", 1), line("stdout", 2)}, "stdout", 3)
	early([]api.LineIn{line("stdout", 3), line("stdout", 4)}, "stderr", 1)
	resp, err := c.PostLines(ctx, sess.ID, []api.LineIn{line("stderr", 1)}, end)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != store.StatusSucceeded || resp.LastLine["stdout"] != 4 || resp.LastLine["stderr"] != 1 {
		t.Errorf("the end after every line: %+v, want succeeded with stdout 4 and stderr 1", resp)
	}
	var got []string
	ts.st.Lines(ctx, sess.ID, func(l store.Line) error {
		got = append(got, string(l.Data))
		return nil
	})
	if want := []string{"stdout 1", "stdout 2", "stdout 3", "stdout 4", "stderr 1"}; !slices.Equal(got, want) {
		t.Errorf("stored lines %q, want %q", got, want)
	}

	// An end that names no lines (a runner of an earlier release).
	old, err := c.CreateSession(ctx, api.CreateRequest{Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = c.PostLines(ctx, old.ID, []api.LineIn{line("stdout", 1)}, &api.End{ExitCode: &code})
	if err != nil || resp.Status != store.StatusSucceeded {
		t.Errorf("an end without lines: %+v, %v; want succeeded", resp, err)
	}
}
