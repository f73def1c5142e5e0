// Package browser_test drives the web timeline in Debian's chromium with
// chromedp, against a real server: a store in a temporary directory, the
// HTTP API and the embedded UI, wired as `agentstream serve` wires them.
// Only the test build uses it.
//
// Without chromium on PATH the tests are skipped, unless $CI is set: CI
// installs it (.ci/run), so there a missing browser is a failure.
// Screenshots of the sessions list and of a session page are saved to
// $ARTIFACTS, or to artifacts/ at the repository root.
package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/internal/demo"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
	"github.com/agentstream/agentstream/web/ui"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromeFlags are the launch flags CI uses for chromium.
var chromeFlags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-background-networking",
	"disable-component-update", "disable-sync", "no-first-run",
}

// bigEvents is the size of the generated session of the paging test.
const bigEvents = 100_000

// maxRows is the most stored events the session page keeps (MAX_ROWS in
// session.js), and rowSlack what one page more may add before the page
// drops as many at its other end.
const (
	maxRows  = 1000
	rowSlack = 200
)

// findChromium returns the path of chromium, or skips the test (fails it in
// CI) when there is none.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser tests, which CI runs")
	}
	t.Fatal("chromium is not on PATH, and $CI is set: .ci/run installs it with apt-get install -y chromium")
	return ""
}

// server is a running agentstream server over a temporary store.
type server struct {
	st  *sqlite.Store
	url string // with no final slash
}

// startServer serves a new store on a free loopback port until the test
// ends: the store publishes to a hub that feeds the API's event streams,
// and the UI is mounted beside the API, as in `agentstream serve`.
func startServer(t *testing.T) *server {
	t.Helper()
	return startServerWith(t, func(*sqlite.Store) api.Options { return api.Options{} })
}

// startServerWith is startServer with the API options opts gives for the
// store.
func startServerWith(t *testing.T, opts func(*sqlite.Store) api.Options) *server {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "browser.db"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := hub.New(hub.Options{})
	var wg sync.WaitGroup
	wg.Go(func() { _ = st.Follow(ctx, h, 0) })
	// Before Follow runs, what the writers commit reaches no page.
	for deadline := time.Now().Add(10 * time.Second); !st.Following(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Follow does not run")
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", api.New(st, h, opts(st)))
	mux.Handle("/", ui.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	wg.Go(func() { _ = srv.Serve(ln) })
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		wg.Wait()
		st.Close()
	})
	return &server{st: st, url: "http://" + ln.Addr().String()}
}

// importRecording stores a recorded native stream as a finished session, as
// `agentstream import` does: its lines kept, its events normalized, its
// start and end the times its events carry (else mtime). It returns the
// session id and the stored envelopes.
func importRecording(ctx context.Context, st *sqlite.Store, data []byte, mtime time.Time) (string, []agentstream.Envelope, error) {
	return importRecordingAs(ctx, st, data, demo.Protocol(data), mtime)
}

// importRecordingAs is importRecording with the recording's protocol given.
func importRecordingAs(ctx context.Context, st *sqlite.Store, data []byte, protocol string, mtime time.Time) (string, []agentstream.Envelope, error) {
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return "", nil, err
	}
	id := store.NewID(mtime)
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	var (
		lines []store.Line
		envs  []agentstream.Envelope
		num   int64
	)
	keep := func(es []agentstream.Envelope) {
		for _, e := range es {
			if !agentstream.IsLive(e.Type()) {
				envs = append(envs, e)
			}
		}
	}
	for line := range bytes.Lines(data) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		num++
		lines = append(lines, store.Line{Stream: store.Stdout, N: num, Data: body, Size: int64(len(body))})
		keep(n.Line(nil, agentstream.Line{N: num, Bytes: body, Size: int64(len(body))}, time.Time{}))
	}
	keep(n.End(nil, time.Time{}))
	start, end := mtime, mtime
	timed := false
	for _, e := range envs {
		if !e.TS.IsZero() {
			if !timed {
				start, timed = e.TS, true
			}
			end = e.TS
		}
	}
	w, err := st.CreateWriter(ctx, store.NewSession{ID: id, Protocol: a.Name, Harness: a.Harness, StartedAt: start})
	if err != nil {
		return "", nil, err
	}
	for _, l := range lines {
		if err := w.Line(ctx, l); err != nil {
			w.Close(ctx)
			return "", nil, err
		}
	}
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			w.Close(ctx)
			return "", nil, err
		}
	}
	return id, envs, w.CloseAt(ctx, end)
}

// session writes a session made of payloads, one event each, a millisecond
// apart from start; the returned writer is still open (the session runs).
func session(ctx context.Context, st *sqlite.Store, id string, start time.Time, payloads ...agentstream.Payload) (*sqlite.Writer, error) {
	w, err := st.CreateWriter(ctx, store.NewSession{ID: id, Protocol: "jsonl", Harness: "claude-code", StartedAt: start})
	if err != nil {
		return nil, err
	}
	for i, p := range payloads {
		if err := w.Handle(ctx, envelope(id, start.Add(time.Duration(i)*time.Millisecond), p)); err != nil {
			w.Close(ctx)
			return nil, err
		}
	}
	return w, nil
}

func envelope(id string, ts time.Time, p agentstream.Payload) agentstream.Envelope {
	return agentstream.Envelope{Session: id, TS: ts, Harness: "claude-code", Turn: 1, Origin: agentstream.OriginLive, Payload: p}
}

// writeBig writes a finished session of n events through the store's
// writer: a start, then messages and tool calls with their results, then an
// end. Event seq k holds the text "event k".
func writeBig(ctx context.Context, st *sqlite.Store, id string, n int64) error {
	start := time.Now().Add(-2 * time.Hour)
	w, err := st.CreateWriter(ctx, store.NewSession{ID: id, Protocol: "jsonl", Harness: "claude-code", StartedAt: start})
	if err != nil {
		return err
	}
	env := agentstream.Envelope{Session: id, Harness: "claude-code", Origin: agentstream.OriginLive}
	for seq := int64(1); seq <= n; seq++ {
		text := "event " + strconv.FormatInt(seq, 10)
		call := "c" + strconv.FormatInt(seq-(seq-2)%3+1, 10)
		var p agentstream.Payload
		switch {
		case seq == 1:
			p = &agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", Cwd: "/work/big"}
		case seq == n:
			p = &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, Summary: text}
		case (seq-2)%3 == 0:
			p = &agentstream.Message{Role: "assistant", Text: text}
		case (seq-2)%3 == 1:
			p = &agentstream.ToolCall{CallID: call, Name: "Bash", Input: `{"command":"echo ` + text + `"}`, Category: agentstream.CategoryExecute, Summary: "echo " + text}
		default:
			p = &agentstream.ToolResult{CallID: call, Name: "Bash", Output: text, Characters: int64(len(text))}
		}
		env.Seq, env.TS, env.Turn, env.Payload = seq, start.Add(time.Duration(seq)*10*time.Millisecond), 1+seq/300, p
		if err := w.Handle(ctx, env); err != nil {
			w.Close(ctx)
			return err
		}
	}
	return w.CloseAt(ctx, start.Add(time.Duration(n)*10*time.Millisecond))
}

// artifactsDir is $ARTIFACTS, else artifacts/ at the repository root.
func artifactsDir(t *testing.T) string {
	if d := os.Getenv("ARTIFACTS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "artifacts")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, "artifacts")
		}
	}
}

// browser is a headless chromium shared by the subtests, one tab each.
type browser struct {
	ctx context.Context
}

func startBrowser(t *testing.T, path string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	for _, f := range chromeFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser, bound to ctx, which has no
	// deadline; a start that hangs is caught by the test's timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return &browser{ctx: ctx}
}

// tab is one browser tab for one subtest.
type tab struct {
	t   *testing.T
	ctx context.Context
}

func (b *browser) tab(t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	// Uncaught exceptions of the page go to the test log.
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() {
				t.Logf("page exception at %s:%d: %s", m.URL, m.Line+1, m)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &tab{t: t, ctx: ctx}
}

// do runs actions, failing the test on an error.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to path and waits for the page's script to have rendered
// what ready (a JavaScript expression) says.
func (tb *tab) open(path, ready string) {
	tb.t.Helper()
	tb.do("open "+path, chromedp.Navigate(path))
	tb.waitFor("the page "+path, ready, 20*time.Second)
}

// waitFor polls the JavaScript expression until it is truthy.
func (tb *tab) waitFor(what, expr string, d time.Duration) {
	tb.t.Helper()
	waitValue[chromedp.Void](tb, what, expr, d)
}

// waitValue polls the JavaScript expression until it is truthy and returns
// its value.
func waitValue[T any](tb *tab, what, expr string, d time.Duration) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d+5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Poll[T](expr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(d)))
	if err != nil {
		tb.t.Fatalf("waiting %v for %s (%s): %v", d, what, expr, err)
	}
	return v
}

// eval evaluates a JavaScript expression and decodes its value.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the viewport as name in the artifacts directory.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	dir := artifactsDir(tb.t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
}

// js quotes s as a JavaScript string literal.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// byID is the JavaScript expression of the element with the given id.
func byID(id string) string { return "document.getElementById(" + js(id) + ")" }

// visible is a JavaScript expression true when the element is rendered.
func visible(el string) string {
	return "((el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')(" + el + ")"
}

// headerReady is a JavaScript expression true once a session page has
// rendered the session's record (its events may come first).
const headerReady = "!!document.getElementById('status').dataset.status"

// firstWith returns the first envelope that ok accepts.
func firstWith(envs []agentstream.Envelope, ok func(*agentstream.Envelope) bool) *agentstream.Envelope {
	for i := range envs {
		if ok(&envs[i]) {
			return &envs[i]
		}
	}
	return nil
}

// The untrusted text of the XSS session.
const (
	xssImg    = `<img src=x onerror=alert(1)>`
	xssScript = `<script>alert(1)</script>`
)

func TestBrowser(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()

	// The big session is written while the browser starts.
	bigID := "s_big_paging"
	bigDone := make(chan error, 1)
	go func() {
		t0 := time.Now()
		err := writeBig(ctx, srv.st, bigID, bigEvents)
		if err == nil {
			t.Logf("wrote %d events through the store writer in %v", bigEvents, time.Since(t0).Round(time.Millisecond))
		}
		bigDone <- err
	}()
	t.Cleanup(func() { <-bigDone })

	// The recorded sessions the demo ships, imported.
	recorded := map[string][]agentstream.Envelope{} // recording name -> events
	ids := map[string]string{}                      // recording name -> session id
	now := time.Now()
	for i, name := range demo.Names() {
		data, err := demo.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		id, envs, err := importRecording(ctx, srv.st, data, now.Add(-time.Duration(i+1)*7*time.Minute))
		if err != nil {
			t.Fatalf("import %s: %v", name, err)
		}
		ids[name], recorded[name] = id, envs
	}

	b := startBrowser(t, chrome)

	t.Run("list", func(t *testing.T) {
		tb := b.tab(t)
		tb.open(srv.url+"/", "document.querySelectorAll('tr.session').length >= "+strconv.Itoa(len(ids)))
		type row struct{ ID, Status, Reason, Text string }
		rows := eval[[]row](tb, `[...document.querySelectorAll('#sessions tr.session')].map((tr) => ({
			ID: tr.dataset.id, Status: tr.dataset.status, Reason: tr.dataset.reason || '', Text: tr.textContent}))`)
		byID := map[string]row{}
		for _, r := range rows {
			byID[r.ID] = r
		}
		for name, id := range ids {
			r, ok := byID[id]
			if !ok {
				t.Errorf("no row for session %s (%s)", id, name)
				continue
			}
			var ended *agentstream.SessionEnded
			for _, e := range recorded[name] {
				if se, ok := e.Payload.(*agentstream.SessionEnded); ok {
					ended = se
				}
			}
			if ended == nil {
				t.Fatalf("recording %s has no session.ended", name)
			}
			if r.Status != ended.Status || r.Reason != ended.Reason {
				t.Errorf("row of %s: status %q reason %q, want %q %q", name, r.Status, r.Reason, ended.Status, ended.Reason)
			}
		}
		failed := byID[ids["tandemtechnology-bb-stdout-auth-failure"]]
		if failed.Status != "failed" || !strings.Contains(failed.Text, "claude-code") {
			t.Errorf("failed Claude Code session's row: %+v", failed)
		}
		// The link opens the session page.
		sub := ids["tandemtechnology-bb-stdout-subagent"]
		cctx, ccancel := context.WithTimeout(tb.ctx, 30*time.Second)
		_, err := chromedp.Run(cctx, chromedp.WaitEvent(page.LoadEventFired, nil,
			chromedp.Click(chromedp.CSS(`tr.session[data-id="`+sub+`"] a.session-link`))))
		ccancel()
		if err != nil {
			t.Fatalf("click the session link: %v", err)
		}
		tb.waitFor("the session page", "location.pathname === "+js("/sessions/"+sub)+" && !!document.querySelector('#timeline .event[data-seq]')", 20*time.Second)
		tb.open(srv.url+"/", "document.querySelectorAll('tr.session').length >= "+strconv.Itoa(len(ids)))
		tb.screenshot("sessions-list.png")
	})

	t.Run("session", func(t *testing.T) {
		name := "tandemtechnology-bb-stdout-subagent"
		id, envs := ids[name], recorded[name]
		last := envs[len(envs)-1].Seq
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+id, byID("e"+strconv.FormatInt(last, 10))+" && "+headerReady)
		got := eval[map[string]string](tb, `({status: document.getElementById('status').dataset.status || '',
			harness: document.getElementById('harness').textContent, model: document.getElementById('model').textContent})`)
		if got["status"] != "succeeded" || got["harness"] == "" || !strings.Contains(got["harness"], "claude-code") {
			t.Errorf("session header: %v", got)
		}
		// Every stored event is on the page (the session is one page long),
		// and the subagent's events are nested in the call that spawned it.
		n := eval[int](tb, `document.querySelectorAll('#timeline .event[data-seq]').length`)
		if n != len(envs) {
			t.Errorf("%d events on the page, want %d", n, len(envs))
		}
		sub := firstWith(envs, func(e *agentstream.Envelope) bool { return e.ParentCallID != "" && e.Type() != agentstream.TypeRaw })
		if sub == nil {
			t.Fatal("the subagent recording has no subagent event")
		}
		nested := eval[bool](tb, fmt.Sprintf(`!!document.querySelector('details.children #e%d')`, sub.Seq))
		if !nested {
			t.Errorf("subagent event %d (%s) is not nested in its call", sub.Seq, sub.Type())
		}
	})

	t.Run("tool expands", func(t *testing.T) {
		name := "tandemtechnology-bb-stdout-subagent"
		id, envs := ids[name], recorded[name]
		// The first top-level call whose result has output.
		var call *agentstream.Envelope
		var output string
		for _, e := range envs {
			r, ok := e.Payload.(*agentstream.ToolResult)
			if !ok || r.Output == "" || e.ParentCallID != "" {
				continue
			}
			call = firstWith(envs, func(c *agentstream.Envelope) bool {
				tc, ok := c.Payload.(*agentstream.ToolCall)
				return ok && tc.CallID == r.CallID
			})
			output = r.Output
			break
		}
		if call == nil {
			t.Fatal("no tool call with output in the recording")
		}
		el := "e" + strconv.FormatInt(call.Seq, 10)
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+id, byID(el)+" && "+byID(el)+".classList.contains('done')")
		if eval[bool](tb, visible(`document.querySelector('#`+el+` > .tool-body .tool-output')`)) {
			t.Error("the tool output is visible before the call is expanded")
		}
		tb.do("expand the tool call", chromedp.Click(chromedp.CSS("#"+el+" > .tool-head .tool-toggle")))
		tb.waitFor("the tool output", byID(el)+".classList.contains('expanded') && "+visible(`document.querySelector('#`+el+` > .tool-body .tool-output')`), 10*time.Second)
		got := eval[string](tb, `document.querySelector('#`+el+` > .tool-body .tool-output').textContent`)
		if got != output {
			t.Errorf("tool output shown:\n%q\nwant:\n%q", got, output)
		}
		input := eval[string](tb, `document.querySelector('#`+el+` .tool-input').textContent`)
		if input == "" {
			t.Error("the expanded call shows no input")
		}
		tb.do("scroll to the call", chromedp.Evaluate[chromedp.Void](byID(el)+".scrollIntoView({block: 'start'})"))
		tb.screenshot("session-page.png")
	})

	t.Run("raw toggle", func(t *testing.T) {
		name := "tandemtechnology-bb-stdout-subagent"
		id, envs := ids[name], recorded[name]
		raw := firstWith(envs, func(e *agentstream.Envelope) bool {
			r, ok := e.Payload.(*agentstream.Raw)
			return ok && e.ParentCallID == "" && r.JSON != nil
		})
		if raw == nil {
			t.Fatal("no top-level raw event in the recording")
		}
		el := "e" + strconv.FormatInt(raw.Seq, 10)
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+id, byID(el))
		if eval[bool](tb, `document.getElementById('show-raw').checked`) || eval[bool](tb, visible(byID(el))) {
			t.Fatal("raw events are shown before the toggle")
		}
		tb.do("show raw", chromedp.Click(chromedp.ID("show-raw")))
		tb.waitFor("the raw event", visible(byID(el)), 10*time.Second)
		shown := eval[string](tb, byID(el)+".querySelector('.raw-body').textContent")
		var gotJSON, wantJSON any
		if err := json.Unmarshal([]byte(shown), &gotJSON); err != nil {
			t.Fatalf("raw body is not the line's JSON: %v\n%s", err, shown)
		}
		if err := json.Unmarshal(raw.Payload.(*agentstream.Raw).JSON, &wantJSON); err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprint(gotJSON), fmt.Sprint(wantJSON); g != w {
			t.Errorf("raw body shows %s, want %s", g, w)
		}
		n := eval[int](tb, `[...document.querySelectorAll('#timeline .event[data-type="raw"]')].filter((el) => el.getClientRects().length > 0).length`)
		t.Logf("%d raw events visible with the toggle on", n)
		tb.do("hide raw", chromedp.Click(chromedp.ID("show-raw")))
		tb.waitFor("the raw event to hide", "!"+visible(byID(el)), 10*time.Second)
	})

	t.Run("xss", func(t *testing.T) {
		id := "s_xss_browser"
		message := "Here it is: " + xssImg + " and " + xssScript + " done"
		w, err := session(ctx, srv.st, id, time.Now().Add(-time.Minute),
			&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", Cwd: "/tmp/" + xssImg},
			&agentstream.SessionTitle{Title: "title " + xssScript + xssImg},
			&agentstream.Message{Role: "user", Text: "print " + xssImg},
			&agentstream.Message{Role: "assistant", Text: message + "\n\n**bold** `" + xssImg + "` [link](javascript:alert(1)) ![pic](x onerror=alert(1))\n\n<div onmouseover=alert(1)>hover</div>"},
			&agentstream.ToolCall{CallID: "x1", Name: "Bash", Input: `{"command":"echo '` + xssImg + `'"}`, Category: agentstream.CategoryExecute, Summary: "echo '" + xssImg + "'"},
			&agentstream.ToolResult{CallID: "x1", Name: "Bash", Output: xssImg + xssScript, Characters: int64(len(xssImg + xssScript))},
			&agentstream.Raw{Reason: agentstream.RawUnmapped, JSON: []byte(`{"type":"` + xssScript + `"}`), Bytes: 40},
			&agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, Summary: xssImg},
		)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		tb := b.tab(t)
		var mu sync.Mutex
		var dialogs []string
		dctx, dcancel := context.WithCancel(tb.ctx)
		events := chromedp.Events(dctx, page.JavascriptDialogOpening)
		ddone := make(chan struct{})
		go func() {
			defer close(ddone)
			for ev, err := range events {
				if err != nil || dctx.Err() != nil {
					return
				}
				mu.Lock()
				dialogs = append(dialogs, ev.Message)
				mu.Unlock()
				// Dismiss it, so that the page goes on and the test reports.
				_, _ = chromedp.Call(dctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}
		}()
		defer func() {
			dcancel()
			<-ddone
		}()

		tb.open(srv.url+"/sessions/"+id, byID("e8")+" && "+headerReady)
		// Render every piece of untrusted text: the tool's input and output, the raw event.
		tb.do("expand and show raw",
			chromedp.Click(chromedp.CSS("#e5 .tool-toggle")),
			chromedp.Click(chromedp.ID("show-raw")))
		tb.waitFor("the tool output and the raw event", visible(`document.querySelector('#e5 .tool-output')`)+" && "+visible(byID("e7")), 10*time.Second)
		type check struct {
			Message, Title, Output, Raw, Cwd string
			Images, Inline                   int
			Scripts                          []string
		}
		c := eval[check](tb, `({
			Message: document.getElementById('e4').textContent,
			Title: document.getElementById('title').textContent,
			Output: document.querySelector('#e5 .tool-output').textContent,
			Raw: document.querySelector('#e7 .raw-body').textContent,
			Cwd: document.getElementById('cwd').textContent,
			Images: document.querySelectorAll('img, iframe, object, embed').length,
			Inline: document.querySelectorAll('[onerror], [onload], [onmouseover], a[href^="javascript:"]').length,
			Scripts: [...document.scripts].map((s) => s.src || 'inline: ' + s.textContent),
		})`)
		for _, want := range []string{xssImg, xssScript, "Here it is:", "done"} {
			if !strings.Contains(c.Message, want) {
				t.Errorf("the message does not show %q as text: %q", want, c.Message)
			}
		}
		if !strings.Contains(c.Title, xssScript+xssImg) {
			t.Errorf("title shows %q", c.Title)
		}
		if c.Output != xssImg+xssScript {
			t.Errorf("tool output shows %q", c.Output)
		}
		if !strings.Contains(c.Raw, xssScript) {
			t.Errorf("raw event shows %q", c.Raw)
		}
		if !strings.Contains(c.Cwd, xssImg) {
			t.Errorf("cwd shows %q", c.Cwd)
		}
		if c.Images != 0 || c.Inline != 0 {
			t.Errorf("the page has %d images or frames and %d inline handlers or javascript: links, want none", c.Images, c.Inline)
		}
		for _, s := range c.Scripts {
			if !strings.HasPrefix(s, srv.url+"/static/") {
				t.Errorf("a script that is not the UI's own: %q", s)
			}
		}
		// The list shows the title as text too.
		tb.open(srv.url+"/", `document.querySelector('tr.session[data-id="`+id+`"]')`)
		row := eval[string](tb, `document.querySelector('tr.session[data-id="`+id+`"]').textContent`)
		if !strings.Contains(row, xssScript+xssImg) {
			t.Errorf("list row shows %q", row)
		}
		if n := eval[int](tb, `document.querySelectorAll('img, iframe, object, embed, [onerror]').length`); n != 0 {
			t.Errorf("the list has %d images, frames or handlers", n)
		}
		// A round trip after everything rendered: a dialog would have opened by now.
		eval[chromedp.Void](tb, `0`)
		mu.Lock()
		defer mu.Unlock()
		if len(dialogs) > 0 {
			t.Errorf("agent text opened dialogs: %q", dialogs)
		}
	})

	t.Run("tail-first paging", func(t *testing.T) {
		if err := <-bigDone; err != nil {
			bigDone <- err
			t.Fatal(err)
		}
		bigDone <- nil
		last := "e" + strconv.FormatInt(bigEvents, 10)
		tb := b.tab(t)
		t0 := time.Now()
		tb.do("open the big session", chromedp.Navigate(srv.url+"/sessions/"+bigID))
		inPage := waitValue[float64](tb, "the last event", byID(last)+" && performance.now()", 20*time.Second)
		wall := time.Since(t0)
		t.Logf("%d-event session: last event rendered %.0f ms after navigation started (in the page), %v from the test's navigate",
			bigEvents, inPage, wall.Round(time.Millisecond))
		// Where the time went: the page's requests to the API.
		type entry struct {
			Name                  string
			Start, Duration, TTFB float64
		}
		for _, e := range eval[[]entry](tb, `performance.getEntriesByType('resource').concat(performance.getEntriesByType('navigation'))
			.filter((e) => e.responseEnd > 0 && e.startTime <= `+strconv.FormatFloat(inPage, 'f', 0, 64)+`)
			.map((e) => ({Name: e.name.replace(location.origin, ''), Start: e.startTime, Duration: e.duration, TTFB: e.responseStart - e.requestStart}))`) {
			t.Logf("  %-60s at %4.0f ms, %4.0f ms (first byte after %4.0f ms)", e.Name, e.Start, e.Duration, e.TTFB)
		}
		type window struct {
			Min, Max, Count int
			First           bool
		}
		type anchor struct {
			ID string
			Y  float64
		}
		state := func() window {
			return eval[window](tb, `(() => {
				const seqs = [...document.querySelectorAll('#timeline .event[data-seq]')].map((el) => +el.dataset.seq);
				return {Min: Math.min(...seqs), Max: Math.max(...seqs), Count: seqs.length, First: !!document.getElementById('e1')};
			})()`)
		}
		w0 := state()
		t.Logf("opened with events %d–%d (%d elements)", w0.Min, w0.Max, w0.Count)
		if w0.Max != bigEvents || w0.First || w0.Count > 2000 {
			t.Errorf("opened with events %d–%d (%d elements, e1 present: %v), want the tail only", w0.Min, w0.Max, w0.Count, w0.First)
		}
		if !eval[bool](tb, visible(byID(last))) {
			t.Error("the last event is not shown")
		}
		// Scrolling to the top prepends earlier events, twice.
		for i := range 2 {
			before := state()
			t0 := time.Now()
			tb.do("scroll to the top", chromedp.Evaluate[chromedp.Void](`document.getElementById('timeline').scrollTop = 0`))
			tb.waitFor("earlier events", fmt.Sprintf(`!!document.getElementById('e%d')`, before.Min-1), 10*time.Second)
			took := time.Since(t0)
			after := state()
			t.Logf("scroll %d: events %d–%d (%d elements), the earlier page on the page %v after the scroll", i+1, after.Min, after.Max, after.Count, took.Round(time.Millisecond))
			if after.Min >= before.Min || after.Max != bigEvents || after.Count <= before.Count {
				t.Errorf("after scrolling up: events %d–%d (%d), before %d–%d (%d)", after.Min, after.Max, after.Count, before.Min, before.Max, before.Count)
			}
			// The earlier events went above: what was at the top is still in view.
			text := eval[string](tb, fmt.Sprintf(`document.getElementById('e%d').textContent`, after.Min+1))
			if !strings.Contains(text, "event ") {
				t.Errorf("event %d shows %q", after.Min+1, text)
			}
		}
		// Twenty pages more: the page keeps a bounded window, dropping the
		// end of the session as earlier pages come, and each earlier page
		// is inserted without moving what is in view.
		// The main thread's long tasks (over 50 ms) while the pages come:
		// rendering and layout, apart from the server's time.
		tb.do("observe long tasks", chromedp.Evaluate[chromedp.Void](`window.__long = [];
			new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({type: 'longtask'});`))
		var total, worst time.Duration
		var drift float64
		const pages = 20
		for range pages {
			before := state()
			t0 := time.Now()
			// The first message of the view: a result at the top can move
			// into its call, which the earlier page brings.
			top := eval[anchor](tb, `(() => {
				const tl = document.getElementById('timeline');
				tl.scrollTop = 0;
				const el = tl.querySelector(':scope > .event[data-type="message"]');
				return {ID: el.id, Y: el.getBoundingClientRect().top};
			})()`)
			tb.waitFor("earlier events", fmt.Sprintf(`!!document.getElementById('e%d')`, before.Min-1), 10*time.Second)
			took := time.Since(t0)
			total += took
			worst = max(worst, took)
			y2 := eval[float64](tb, byID(top.ID)+".getBoundingClientRect().top")
			drift = max(drift, math.Abs(y2-top.Y))
			if w := state(); w.Count > maxRows+rowSlack {
				t.Fatalf("after a page up: %d events on the page (%d–%d), want at most %d", w.Count, w.Min, w.Max, maxRows+rowSlack)
			}
		}
		w1 := state()
		type cost struct {
			Fetches         int
			FetchAvg, Tasks float64
			LongestTask     float64
		}
		c := eval[cost](tb, `(() => {
			const f = performance.getEntriesByType('resource').filter((e) => e.name.includes('before=')).map((e) => e.duration);
			const l = window.__long;
			return {Fetches: f.length, FetchAvg: f.reduce((a, b) => a + b, 0) / f.length,
				Tasks: l.reduce((a, b) => a + b, 0), LongestTask: Math.max(0, ...l)};
		})()`)
		t.Logf("in the page: %d earlier pages fetched in %.0f ms on average; long tasks %.0f ms in all (%.0f ms a page), the longest %.0f ms",
			c.Fetches, c.FetchAvg, c.Tasks, c.Tasks/pages, c.LongestTask)
		t.Logf("%d more pages up: %v each on average, %v at worst; now events %d–%d (%d elements); what was at the top moved %.0f px at most",
			pages, (total / pages).Round(time.Millisecond), worst.Round(time.Millisecond), w1.Min, w1.Max, w1.Count, drift)
		if w1.Max >= bigEvents || eval[bool](tb, `!!document.getElementById('`+last+`')`) {
			t.Errorf("after %d pages up the page still holds the end of the session (events %d–%d)", pages+2, w1.Min, w1.Max)
		}
		tb.screenshot("big-session-window.png")
		if drift > 2 {
			t.Errorf("an earlier page moved what was at the top of the view by %.0f px", drift)
		}
		sctx, scancel := context.WithTimeout(tb.ctx, 30*time.Second)
		frames, err := chromedp.Run(sctx, chromedp.Evaluate[[]float64](`new Promise((done) => {
			const tl = document.getElementById('timeline');
			tl.scrollTop = tl.scrollHeight;
			const times = [];
			let last = performance.now();
			const step = () => {
				const now = performance.now();
				times.push(now - last);
				last = now;
				if (times.length > 120) { done(times.slice(1)); return; }
				tl.scrollTop -= 120;
				requestAnimationFrame(step);
			};
			requestAnimationFrame(step);
		})`, chromedp.EvalAwaitPromise))
		scancel()
		if err != nil {
			t.Fatal(err)
		}
		var sum, longest float64
		for _, f := range frames {
			sum += f
			longest = max(longest, f)
		}
		t.Logf("scrolling up 120 px a frame through %d elements: %.1f ms a frame on average, %.1f ms the longest", w1.Count, sum/float64(len(frames)), longest)

		// Scrolling down again brings back the events dropped at the end,
		// and drops those at the start, what is in view staying put.
		tb.waitFor("the loads to settle", `!document.getElementById('timeline-start').textContent.startsWith('loading') && !document.getElementById('timeline-end').textContent.startsWith('loading')`, 10*time.Second)
		down := state()
		bottom := eval[anchor](tb, `(() => {
			const tl = document.getElementById('timeline');
			tl.scrollTop = tl.scrollHeight - tl.clientHeight;
			const all = tl.querySelectorAll(':scope > .event[data-type="message"]');
			const el = all[all.length - 1];
			return {ID: el.id, Y: el.getBoundingClientRect().top};
		})()`)
		tb.waitFor("later events", fmt.Sprintf(`!!document.getElementById('e%d')`, down.Max+1), 10*time.Second)
		if y2 := eval[float64](tb, byID(bottom.ID)+".getBoundingClientRect().top"); math.Abs(y2-bottom.Y) > 2 {
			t.Errorf("a later page moved the event at the bottom of the view by %.0f px", y2-bottom.Y)
		}
		if w := state(); w.Min <= down.Min {
			t.Errorf("after a page down the page still starts at event %d (before: %d–%d)", w.Min, down.Min, down.Max)
		}
		if w := state(); w.Count > maxRows+rowSlack {
			t.Errorf("after a page down: %d events on the page, want at most %d", w.Count, maxRows+rowSlack)
		}

		// The first event, by its link, and back to the end with G.
		t0 = time.Now()
		tb.do("go to event 1", chromedp.Evaluate[chromedp.Void](`location.hash = '#1'`))
		tb.waitFor("event 1", visible(byID("e1"))+" && document.activeElement === "+byID("e1"), 10*time.Second)
		w2 := state()
		t.Logf("#1: event 1 shown %v after the link, events %d–%d (%d elements)", time.Since(t0).Round(time.Millisecond), w2.Min, w2.Max, w2.Count)
		if w2.Min != 1 || w2.Count > maxRows+rowSlack {
			t.Errorf("at event 1: events %d–%d (%d elements)", w2.Min, w2.Max, w2.Count)
		}
		if text := eval[string](tb, byID("e2")+".textContent"); !strings.Contains(text, "event 2") {
			t.Errorf("event 2 shows %q, want its text %q", text, "event 2")
		}
		t0 = time.Now()
		tb.do("press G", chromedp.KeyEvent("G"))
		tb.waitFor("the last event", visible(byID(last)), 10*time.Second)
		w3 := state()
		t.Logf("G: the last event shown %v after the key, events %d–%d (%d elements)", time.Since(t0).Round(time.Millisecond), w3.Min, w3.Max, w3.Count)
		if w3.Max != bigEvents || w3.First || w3.Count > maxRows+rowSlack {
			t.Errorf("after G: events %d–%d (%d elements, e1 present: %v)", w3.Min, w3.Max, w3.Count, w3.First)
		}
		if !eval[bool](tb, `(() => { const tl = document.getElementById('timeline'); return tl.scrollHeight - tl.scrollTop - tl.clientHeight < 48; })()`) {
			t.Error("after G the timeline is not at its bottom")
		}
	})
	t.Run("live", func(t *testing.T) {
		id := "s_live_browser"
		start := time.Now()
		w, err := session(ctx, srv.st, id, start,
			&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", Cwd: "/work/live"},
			&agentstream.Message{Role: "user", Text: "count to three"})
		if err != nil {
			t.Fatal(err)
		}
		closed := false
		defer func() {
			if !closed {
				w.Close(ctx)
			}
		}()
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+id, byID("e2")+" && document.getElementById('timeline-end').classList.contains('following')")
		// Record when each event element is inserted, in the page.
		tb.do("observe", chromedp.Evaluate[chromedp.Void](`window.__seen = {};
			new MutationObserver(() => {
				for (const el of document.querySelectorAll('#timeline .event[data-seq]')) {
					const s = el.dataset.seq;
					if (!(s in window.__seen)) window.__seen[s] = Date.now();
				}
			}).observe(document.getElementById('timeline'), {childList: true, subtree: true});
			for (const el of document.querySelectorAll('#timeline .event[data-seq]')) window.__seen[el.dataset.seq] = 0;`))
		appends := []agentstream.Payload{
			&agentstream.Message{Role: "assistant", Text: "one"},
			&agentstream.ToolCall{CallID: "live1", Name: "Bash", Input: `{"command":"echo two"}`, Category: agentstream.CategoryExecute, Summary: "echo two"},
			&agentstream.ToolResult{CallID: "live1", Name: "Bash", Output: "two", Characters: 3},
		}
		for i, p := range appends {
			seq := int64(3 + i)
			appended := time.Now()
			if err := w.Handle(ctx, envelope(id, appended, p)); err != nil {
				t.Fatal(err)
			}
			seen := waitValue[int64](tb, fmt.Sprintf("live event %d", seq), fmt.Sprintf("window.__seen[%d]", seq), 10*time.Second)
			latency := time.UnixMilli(seen).Sub(appended)
			t.Logf("live %s (seq %d) on the page %v after it was appended", p.Type(), seq, latency)
			// The page has no other way to an event than the live stream
			// (no polling): the bound tells a pushed event from none, with
			// room for a loaded CI machine, where the commit can wait
			// for the indexer of the backlog above (1.5 s seen once). The
			// latencies are logged; speed is the benchmarks' business.
			if latency > 3*time.Second {
				t.Errorf("live event %d appeared %v after it was appended, want under 3s", seq, latency)
			}
		}
		tb.waitFor("the result in its call", "document.querySelector('#e4.done #e5')", 5*time.Second)

		// The list follows a running session to its end.
		tb.open(srv.url+"/", `document.querySelector('tr.session[data-id="`+id+`"]')`)
		if st := eval[string](tb, `document.querySelector('tr.session[data-id="`+id+`"]').dataset.status`); st != "running" {
			t.Errorf("list shows the live session as %q, want running", st)
		}
		if err := w.Handle(ctx, envelope(id, time.Now(), &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion})); err != nil {
			t.Fatal(err)
		}
		closed = true
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		tb.waitFor("the list to show the session ended", `document.querySelector('tr.session[data-id="`+id+`"]').dataset.status === 'succeeded'`, 10*time.Second)
	})
}
