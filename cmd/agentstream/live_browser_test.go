package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/session"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The live page is driven in Debian's chromium, as web/browser_test drives
// the timeline: without chromium the test is skipped, unless $CI is set.

func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "" {
		t.Skip("chromium is not installed (apt-get install -y chromium): skipping the browser test, which CI runs")
	}
	t.Fatal("chromium is not on PATH, and $CI is set")
	return ""
}

// browserTab is one tab of a headless chromium.
type browserTab struct {
	t   *testing.T
	ctx context.Context
}

// startChromium starts a browser for the test and returns a function that
// opens a tab.
func startChromium(t *testing.T) func() *browserTab {
	t.Helper()
	path := findChromium(t)
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900)}
	for _, f := range []string{"headless", "no-sandbox", "disable-gpu", "disable-background-networking", "disable-component-update", "disable-sync", "no-first-run"} {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return func() *browserTab {
		ctx, cancel := chromedp.NewContext(bctx)
		if err := chromedp.Do(ctx); err != nil {
			cancel()
			t.Fatal(err)
		}
		// Uncaught exceptions of the page fail the test.
		messages := chromedp.Console(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for m, err := range messages {
				if err != nil {
					return
				}
				if m.IsException() {
					t.Errorf("page exception at %s:%d: %s", m.URL, m.Line+1, m)
				}
			}
		}()
		t.Cleanup(func() {
			cancel()
			<-done
		})
		return &browserTab{t: t, ctx: ctx}
	}
}

func (tb *browserTab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor polls the JavaScript expression until it is truthy.
func (tb *browserTab) waitFor(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 40*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		tb.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

func evalIn[T any](tb *browserTab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// screenshot saves the whole page as name in dir.
func (tb *browserTab) screenshot(dir, name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// request is the CSS selector of the rendered permission request of a tool
// call whose input has text.
func requestOf(tool, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.event[data-type="permission.request"]')].find((el) => el.textContent.includes(%s) && el.textContent.includes(%s))`, jsString("requested for "+tool), jsString(text))
}

var (
	fakeClaudeOnce sync.Once
	fakeClaudeBin  string
	fakeClaudeErr  error
)

// fakeClaude builds testdata/fakeclaude, a scripted Claude Code in
// stream-json mode that asks for permission over the control protocol.
func fakeClaude(t *testing.T) string {
	t.Helper()
	fakeClaudeOnce.Do(func() {
		fakeClaudeBin = filepath.Join(filepath.Dir(binary), "fakeclaude")
		out, err := exec.Command("go", "build", "-o", fakeClaudeBin, "./testdata/fakeclaude").CombinedOutput()
		if err != nil {
			fakeClaudeErr = fmt.Errorf("go build fakeclaude: %v\n%s", err, out)
		}
	})
	if fakeClaudeErr != nil {
		t.Fatal(fakeClaudeErr)
	}
	return fakeClaudeBin
}

// TestLiveBrowser drives a live session from the web UI alone, in chromium,
// against serve's handler with a profile whose harness is a real child
// process (testdata/fakeclaude, scripted by the messages): the session is
// started from the list's form, a tool is allowed and another denied by
// clicking (with a message), one is allowed by the profile's policy, a
// question is answered by clicking its option, a request answered by
// another client gives "already answered" on a second page, a turn is
// interrupted and the session closed. What the page showed is checked
// against the events the API then holds.
func TestLiveBrowser(t *testing.T) {
	newTab := startChromium(t)
	harness := fakeClaude(t)
	work := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"profiles": map[string]any{
		"fake": map[string]any{"command": []string{harness}, "protocol": "claude-stream", "cwd": work,
			"policy": map[string]any{"default": "ask", "rules": []any{map[string]any{"tool": "Read", "decision": "allow"}}}},
		"other":  map[string]any{"command": []string{harness}, "protocol": "claude-stream", "cwd": work},
		"broken": map[string]any{"command": []string{filepath.Join(work, "no-such-harness")}, "protocol": "claude-stream", "cwd": work},
	}})
	profiles, err := session.ParseProfiles(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(context.Background(), st, ln, api.Options{}, profiles, func(err error) { t.Errorf("observer: %v", err) })
	t.Cleanup(func() {
		srv.stop()
		st.Close()
	})
	base := "http://" + ln.Addr().String()
	shots := os.Getenv("ARTIFACTS")
	if shots == "" {
		if shots, err = os.MkdirTemp("", "agentstream-live-ui-"); err != nil {
			t.Fatal(err)
		}
	}

	const (
		first    = "run: echo allowed"
		second   = "read: notes.txt; run: rm -rf build"
		denial   = "not the build directory"
		third    = "ask: Which colour? | red | blue; ask: Which name? | Ann | Bob"
		fourth   = "run: touch elsewhere; wait"
		fifth    = "wait"
		sixth    = "after the interrupt"
		choice   = "blue"
		question = "Which colour?"
		named    = "Which name?"
		ownName  = "Zed"
	)

	// The list offers the server's profiles; a profile that cannot start
	// says why on the form; the form starts a session and opens its page.
	a := newTab()
	a.do("open the list", chromedp.Navigate(base+"/"))
	a.waitFor("the new-session form", `!document.getElementById('new-session').hidden && document.getElementById('new-profile').options.length > 0`)
	if got := evalIn[[]string](a, `[...document.getElementById('new-profile').options].map((o) => o.value)`); !slices.Equal(got, profiles.Names()) {
		t.Errorf("the form offers the profiles %q, want %q", got, profiles.Names())
	}
	a.do("start the broken profile",
		chromedp.SetValue(chromedp.ID("new-profile"), "broken"),
		chromedp.Click(chromedp.ID("new-submit")))
	a.waitFor("the form's error", `!document.getElementById('new-error').hidden && document.getElementById('new-error').textContent.includes('broken')`)
	t.Logf("a profile that cannot start: %s", evalIn[string](a, `document.getElementById('new-error').textContent`))
	if !evalIn[bool](a, `location.pathname === '/' && !document.getElementById('new-submit').disabled`) {
		t.Error("the form left the list, or stayed disabled, after an error")
	}
	// Enter in the prompt starts it too, and leaves the prompt as typed.
	a.do("start it again with Enter",
		chromedp.Evaluate[chromedp.Void](`document.getElementById('new-error').hidden = true`),
		chromedp.SendKeys(chromedp.ID("new-prompt"), "hello"+kb.Enter))
	a.waitFor("the form's error again", `!document.getElementById('new-error').hidden && document.getElementById('new-error').textContent.includes('broken')`)
	if got := evalIn[string](a, `document.getElementById('new-prompt').value`); got != "hello" {
		t.Errorf("after Enter the prompt holds %q, want %q", got, "hello")
	}
	a.screenshot(shots, "live-new-session.png")
	path := startFromForm(t, a, "fake", first)
	id := strings.TrimPrefix(path, "/sessions/")
	sessURL := base + "/api/sessions/" + id

	// The page records each state it shows.
	a.do("record the states", chromedp.Evaluate[chromedp.Void](`window.__states = [document.getElementById('live-state').dataset.state];
		new MutationObserver(() => {
			const s = document.getElementById('live-state').dataset.state;
			if (window.__states[window.__states.length - 1] !== s) window.__states.push(s);
		}).observe(document.getElementById('live-state'), {attributes: true});`))

	// From now until the first turn ended, the page's requests for the
	// session's record are held back: the state it shows comes from the
	// event stream alone.
	heldInfo := make(chan fetch.RequestID, 64)
	go func() {
		for ev, err := range chromedp.Events(a.ctx, fetch.RequestPaused) {
			if err != nil {
				return
			}
			heldInfo <- ev.RequestID
		}
	}()
	if _, err := chromedp.Call(a.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/sessions/" + id}}}); err != nil {
		t.Fatal(err)
	}

	// The first message's Bash call waits for an answer: running.
	echo := requestOf("Bash", "echo allowed")
	a.waitFor("the first request's buttons", echo+`?.querySelector('button[data-decision="allow"]')`)
	a.waitFor("state running", `document.getElementById('live-state').dataset.state === 'running'`)
	if !evalIn[bool](a, visible(`document.getElementById('interrupt')`)) {
		t.Error("no Interrupt button while the turn runs")
	}
	info := send(t, "GET", sessURL, nil, http.StatusOK)
	if pend, _ := info["pending"].([]any); info["state"] != "running" || len(pend) != 1 {
		t.Errorf("the API says state %v, pending %v; want running with one request", info["state"], info["pending"])
	}
	a.do("allow", chromedp.Click(chromedp.CSS(`.event[data-type="permission.request"][data-answer="pending"] button[data-decision="allow"]`)))
	a.waitFor("the request allowed, by this page", echo+`?.dataset.outcome === 'allowed' && `+echo+`.textContent.includes('by you')`)
	a.waitFor("state idle", `document.getElementById('live-state').dataset.state === 'idle'`)
	// The page may have opened before the first message started its turn.
	if states := evalIn[[]string](a, `window.__states`); !slices.Equal(strings.Fields(strings.TrimPrefix(strings.Join(states, " "), "idle ")), []string{"running", "idle"}) {
		t.Errorf("the page showed the states %q, want running then idle", states)
	}
	if evalIn[bool](a, visible(`document.getElementById('interrupt')`)) {
		t.Error("an Interrupt button while no turn runs")
	}
	if _, err := chromedp.Call(a.ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	for len(heldInfo) > 0 {
		// Disabling lets them through; continue them all the same.
		_, _ = chromedp.Call(a.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: <-heldInfo})
	}

	// The second message, from the composer: the Read call is allowed by
	// the policy, the Bash call denied with a message.
	// Enter in the empty composer sends nothing and leaves no line break.
	a.do("Enter in the empty composer", chromedp.SendKeys(chromedp.ID("composer-text"), kb.Enter))
	if got := evalIn[string](a, `document.getElementById('composer-text').value`); got != "" {
		t.Errorf("Enter in the empty composer left %q in it, want nothing", got)
	}
	a.do("type the second message", chromedp.SendKeys(chromedp.ID("composer-text"), second))
	a.do("send it with Enter", chromedp.SendKeys(chromedp.ID("composer-text"), kb.Enter))
	rm := requestOf("Bash", "rm -rf build")
	read := requestOf("Read", "notes.txt")
	a.waitFor("the rm request's buttons", rm+`?.querySelector('button[data-decision="deny"]')`)
	a.waitFor("the Read request allowed by the policy", read+`?.dataset.outcome === 'allowed' && `+read+`.dataset.by === 'policy' && `+read+`.querySelector('.answer').textContent.includes('by the policy')`)
	if evalIn[string](a, `document.getElementById('composer-text').value`) != "" {
		t.Error("the composer kept the text it sent")
	}
	a.screenshot(shots, "live-session-pending.png")
	if _, err := chromedp.Call(a.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	a.screenshot(shots, "live-session-pending-dark.png")
	if _, err := chromedp.Call(a.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}
	a.do("type the denial's message", chromedp.SendKeys(chromedp.CSS(`.event[data-answer="pending"] .answer-message`), denial))
	a.do("deny", chromedp.Click(chromedp.CSS(`.event[data-answer="pending"] button[data-decision="deny"]`)))
	a.waitFor("the rm request denied", rm+`?.dataset.outcome === 'denied' && `+rm+`.textContent.includes(`+jsString(denial)+`)`)
	a.waitFor("state idle after m2", `document.querySelector('.event[data-type="message.completed"][data-message-id="m2"]') && document.getElementById('live-state').dataset.state === 'idle'`)

	// The third asks a question: its options are buttons.
	a.do("send the third message", chromedp.SendKeys(chromedp.ID("composer-text"), third+kb.Enter))
	q := `document.querySelector('.event[data-type="question"][data-answer="pending"]')`
	a.waitFor("the question's options", q+`?.querySelector('.option-btn')`)
	if got := evalIn[[]string](a, `[...`+q+`.querySelectorAll('.option-btn')].map((b) => b.textContent)`); !slices.Equal(got, []string{"red", "blue"}) {
		t.Errorf("the question offers %q, want red and blue", got)
	}
	a.screenshot(shots, "live-session-question.png")
	a.do("choose", chromedp.Click(chromedp.CSS(`.event[data-type="question"][data-answer="pending"] .option-btn:nth-of-type(2)`)))
	a.waitFor("the question answered", `document.querySelector('.event[data-type="question"]').dataset.outcome === 'answered'`)
	// The second question is answered with text of one's own.
	a.waitFor("the second question", `document.querySelectorAll('.event[data-type="question"]').length === 2 && `+q+`?.querySelector('.answer-free')`)
	a.do("answer in words", chromedp.SendKeys(chromedp.CSS(`.event[data-type="question"][data-answer="pending"] .answer-free`), ownName+kb.Enter))
	a.waitFor("the second question answered", `document.querySelectorAll('.event[data-type="question"]')[1].dataset.outcome === 'answered'`)
	a.waitFor("state idle after m3", `document.querySelector('.event[data-type="message.completed"][data-message-id="m3"]') && document.getElementById('live-state').dataset.state === 'idle'`)
	if got := evalIn[[]string](a, `[...document.querySelectorAll('.event[data-type="question"] .answer')].map((el) => el.textContent)`); len(got) != 2 ||
		!strings.Contains(got[0], "by you") || !strings.Contains(got[0], choice) || !strings.Contains(got[1], "by you") || !strings.Contains(got[1], ownName) {
		t.Errorf("the questions show %q, want each answered by you with its answer", got)
	}

	// The fourth: a request that another client answers while a second
	// page, whose stream is held back, still shows its buttons; its click
	// is told "already answered".
	a.do("send the fourth message", chromedp.SendKeys(chromedp.ID("composer-text"), fourth+kb.Enter))
	touch := requestOf("Bash", "touch elsewhere")
	a.waitFor("the touch request", touch+`?.dataset.answer === 'pending'`)
	b := newTab()
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	held := make(chan fetch.RequestID, 16)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			held <- ev.RequestID
		}
	}()
	if _, err := chromedp.Call(b.ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/stream*"}}}); err != nil {
		t.Fatal(err)
	}
	b.do("open the second page", chromedp.Navigate(base+path))
	b.waitFor("the second page's buttons", touch+`?.querySelector('button[data-decision="allow"]')`)
	var rid string
	for _, r := range send(t, "GET", sessURL, nil, http.StatusOK)["pending"].([]any) {
		if m, _ := r.(map[string]any); m["tool"] == "Bash" {
			rid, _ = m["requestId"].(string)
		}
	}
	post(t, sessURL+"/requests/"+rid, map[string]any{"decision": "allow"}, http.StatusOK)
	a.waitFor("the first page to show it answered elsewhere", touch+`?.dataset.outcome === 'allowed' && `+touch+`.textContent.includes('elsewhere')`)
	b.do("allow on the second page", chromedp.Click(chromedp.CSS(`.event[data-request-id="`+rid+`"] button[data-decision="allow"]`)))
	b.waitFor("already answered", touch+`?.querySelector('.answer-error')?.textContent.startsWith('Already answered')`)
	// The second page's stream was asked for when its events were loaded:
	// let it through now.
	select {
	case rid := <-held:
		if _, err := chromedp.Call(b.ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: rid}); err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the second page never asked for its event stream")
	}
	if _, err := chromedp.Call(b.ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	b.waitFor("the second page to follow again", touch+`?.dataset.outcome === 'allowed' && `+touch+`.textContent.includes('elsewhere') && `+touch+`.textContent.includes('Already answered')`)

	// Its wait runs until the Interrupt button ends the turn.
	wait := requestOf("Bash", "sleep 600")
	a.waitFor("the wait request", wait+`?.dataset.answer === 'pending'`)
	a.do("allow the wait from the keyboard",
		chromedp.Focus(chromedp.CSS(`.event[data-request-id][data-answer="pending"] button[data-decision="allow"]`)),
		chromedp.KeyEvent(kb.Enter))
	a.waitFor("the wait allowed", wait+`?.dataset.outcome === 'allowed'`)
	a.do("interrupt", chromedp.Click(chromedp.ID("interrupt")))
	a.waitFor("m4 cancelled", `document.querySelector('.event[data-type="message.completed"][data-message-id="m4"]')?.dataset.status === 'cancelled'`)
	a.waitFor("state idle after the interrupt", `document.getElementById('live-state').dataset.state === 'idle'`)
	a.screenshot(shots, "live-session.png")

	// A message sent with the mode interrupt stops the running turn first.
	a.do("send the fifth message", chromedp.SendKeys(chromedp.ID("composer-text"), fifth+kb.Enter))
	a.waitFor("the fifth's wait request", `[...document.querySelectorAll('.event[data-type="permission.request"][data-answer="pending"]')].some((el) => el.textContent.includes('sleep 600'))`)
	a.do("allow it", chromedp.Click(chromedp.CSS(`.event[data-answer="pending"] button[data-decision="allow"]`)))
	a.waitFor("its call running", `document.getElementById('live-state').dataset.state === 'running' && !document.querySelector('.event[data-answer="pending"]')`)
	a.do("send with the mode interrupt",
		chromedp.SetValue(chromedp.ID("composer-mode"), "interrupt"),
		chromedp.SendKeys(chromedp.ID("composer-text"), sixth+kb.Enter))
	a.waitFor("m5 cancelled, m6 done", `document.querySelector('.event[data-type="message.completed"][data-message-id="m5"]')?.dataset.status === 'cancelled' &&
		document.querySelector('.event[data-type="message.completed"][data-message-id="m6"]')?.dataset.status === 'succeeded' &&
		document.getElementById('live-state').dataset.state === 'idle'`)
	if got := evalIn[string](a, `document.querySelector('.event[data-type="message.accepted"][data-message-id="m6"]').textContent`); !strings.Contains(got, "interrupt") {
		t.Errorf("m6's acceptance shows %q, want its mode interrupt", got)
	}

	// Close: the composer is disabled and says why.
	a.do("close", chromedp.Click(chromedp.ID("close-session")))
	a.waitFor("state closed", `document.getElementById('live-state').dataset.state === 'closed'`)
	a.waitFor("the composer disabled", `document.getElementById('composer-text').disabled && document.getElementById('composer-send').disabled &&
		document.getElementById('composer-note').textContent.includes('closed')`)
	if evalIn[bool](a, visible(`document.getElementById('close-session')`)+` || `+visible(`document.getElementById('interrupt')`)) {
		t.Error("Close session or Interrupt still offered on a closed session")
	}
	a.screenshot(shots, "live-session-closed.png")

	// What the API holds is what was clicked.
	var envs []agentstream.Envelope
	resp, err := http.Get(sessURL + "/events?limit=5000")
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, r := range raw {
		e, err := agentstream.ParseEnvelope(r)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, e)
	}
	calls := map[string]string{} // callId -> summary or command
	asked := map[string]string{} // requestId -> callId
	results := map[string]*agentstream.ToolResult{}
	type res struct{ outcome, by, answer string }
	resolved := map[string]res{} // callId -> resolution
	var completed, sent, states []string
	for _, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.ToolCall:
			calls[p.CallID] = p.Input
		case *agentstream.PermissionRequest:
			asked[p.RequestID] = p.CallID
		case *agentstream.Question:
			asked[p.RequestID] = p.CallID
		case *agentstream.RequestResolved:
			if p.By == "" {
				// A question's tool result also resolves it, for the
				// harness: the session's resolution says who answered.
				continue
			}
			if _, ok := resolved[asked[p.RequestID]]; ok {
				t.Errorf("request %s resolved twice: %+v, then %+v", p.RequestID, resolved[asked[p.RequestID]], p)
			}
			resolved[asked[p.RequestID]] = res{p.Outcome, p.By, p.Answer}
		case *agentstream.ToolResult:
			results[p.CallID] = p
		case *agentstream.SentCompleted:
			completed = append(completed, p.MessageID+" "+p.Status)
		case *agentstream.Message:
			if p.Role == agentstream.RoleUser {
				sent = append(sent, p.Text)
			}
		case *agentstream.SessionState:
			states = append(states, p.State)
		}
	}
	callWith := func(text string) string {
		for id, in := range calls {
			if strings.Contains(in, text) {
				return id
			}
		}
		t.Errorf("no tool call with %q", text)
		return ""
	}
	check := func(text string, want res) {
		t.Helper()
		c := callWith(text)
		got := resolved[c]
		if want.answer == "" {
			got.answer = ""
		}
		if got != want {
			t.Errorf("the call with %q was resolved %+v, want %+v", text, got, want)
		}
	}
	check("echo allowed", res{agentstream.OutcomeAllowed, agentstream.ResolvedByPerson, ""})
	check("notes.txt", res{agentstream.OutcomeAllowed, agentstream.ResolvedByPolicy, ""})
	check("rm -rf build", res{agentstream.OutcomeDenied, agentstream.ResolvedByPerson, denial})
	check("touch elsewhere", res{agentstream.OutcomeAllowed, agentstream.ResolvedByPerson, ""})
	waits := 0
	for c, in := range calls {
		if strings.Contains(in, "sleep 600") {
			waits++
			if got := resolved[c]; got.outcome != agentstream.OutcomeAllowed || got.by != agentstream.ResolvedByPerson {
				t.Errorf("a wait was resolved %+v, want allowed by a person", got)
			}
		}
	}
	if waits != 2 {
		t.Errorf("%d waits, want the fourth's and the fifth's", waits)
	}
	if c := callWith(question); !strings.Contains(resolved[c].answer, choice) || resolved[c].outcome != agentstream.OutcomeAnswered {
		t.Errorf("the question was resolved %+v, want answered %q", resolved[c], choice)
	}
	if r := results[callWith("echo allowed")]; r == nil || r.IsError || r.Output != "ran echo allowed" {
		t.Errorf("the allowed call's result: %+v", r)
	}
	if r := results[callWith("rm -rf build")]; r == nil || !r.IsError || r.Output != denial {
		t.Errorf("the denied call's result: %+v, want an error saying %q", r, denial)
	}
	if r := results[callWith(question)]; r == nil || !strings.Contains(r.Output, `"`+question+`":"`+choice+`"`) {
		t.Errorf("the question's result: %+v, want the answer %q", r, choice)
	}
	if r := results[callWith(named)]; r == nil || !strings.Contains(r.Output, `"`+named+`":"`+ownName+`"`) {
		t.Errorf("the second question's result: %+v, want the answer %q", r, ownName)
	}
	if want := []string{first, second, third, fourth, fifth, sixth}; !slices.Equal(sent, want) {
		t.Errorf("the user messages %q, want %q", sent, want)
	}
	if want := []string{"m1 succeeded", "m2 succeeded", "m3 succeeded", "m4 cancelled", "m5 cancelled", "m6 succeeded"}; !slices.Equal(completed, want) {
		t.Errorf("messages completed %q, want %q", completed, want)
	}
	if len(states) < 2 || states[len(states)-1] != agentstream.StateClosed || !slices.Contains(states, agentstream.StateInterrupting) {
		t.Errorf("states %q: want an interrupting and closed at the end", states)
	}
	post(t, sessURL+"/messages", map[string]any{"text": "late"}, http.StatusConflict)
}

// startFromForm starts a session of profile from the list's form, with a
// first message, and returns the path of the page it opens.
func startFromForm(t *testing.T, a *browserTab, profile, prompt string) string {
	t.Helper()
	a.do("fill the form",
		chromedp.SetValue(chromedp.ID("new-profile"), profile),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('new-prompt').value = ''`),
		chromedp.SendKeys(chromedp.ID("new-prompt"), prompt))
	ctx, cancel := context.WithTimeout(a.ctx, 60*time.Second)
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID("new-submit"))))
	cancel()
	if err != nil {
		t.Fatalf("start the session: %v", err)
	}
	a.waitFor("the session page", `location.pathname.startsWith('/sessions/') && document.getElementById('live-state').dataset.state !== ''`)
	return evalIn[string](a, `location.pathname`)
}

// visible is a JavaScript expression true when the element is rendered.
func visible(el string) string {
	return "((el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')(" + el + ")"
}

// TestLiveBrowserLab drives real Claude Code (the lab's, against the
// simulator playing session/testdata/permissions.json) from the web UI: the
// session started from the form, its first command allowed and its second
// denied by clicking, a second message sent from the composer, the session
// closed. It is skipped without $AGENTSTREAM_LAB.
func TestLiveBrowserLab(t *testing.T) {
	base, run := liveServer(t, "claude-stream", "../../session/testdata/permissions.json", "claude-stream", []string{"claude", "-p"})
	newTab := startChromium(t)
	a := newTab()
	a.do("open the list", chromedp.Navigate(base+"/"))
	a.waitFor("the new-session form", `!document.getElementById('new-session').hidden && document.getElementById('new-profile').options.length > 0`)
	path := startFromForm(t, a, "lab", "Run the two lab commands.")
	sessURL := base + "/api/sessions/" + strings.TrimPrefix(path, "/sessions/")
	const denial = "lab: not this one"
	pending := func(text string) string {
		return fmt.Sprintf(`[...document.querySelectorAll('.event[data-type="permission.request"][data-answer="pending"]')].find((el) => el.textContent.includes(%s))`, jsString(text))
	}
	a.waitFor("the allowed command's request", pending("touch lab-allowed.txt")+`?.querySelector('button[data-decision="allow"]')`)
	a.do("allow", chromedp.Click(chromedp.CSS(`.event[data-answer="pending"] button[data-decision="allow"]`)))
	a.waitFor("the denied command's request", pending("rm -f lab-denied.txt")+`?.querySelector('button[data-decision="deny"]')`)
	a.do("deny with a message",
		chromedp.SendKeys(chromedp.CSS(`.event[data-answer="pending"] .answer-message`), denial),
		chromedp.Click(chromedp.CSS(`.event[data-answer="pending"] button[data-decision="deny"]`)))
	a.waitFor("m1 done, idle", `document.querySelector('.event[data-type="message.completed"][data-message-id="m1"]') && document.getElementById('live-state').dataset.state === 'idle'`)
	a.do("send the second message", chromedp.SendKeys(chromedp.ID("composer-text"), "Second lab message."+kb.Enter))
	a.waitFor("m2 done, idle", `document.querySelector('.event[data-type="message.completed"][data-message-id="m2"]')?.dataset.status === 'succeeded' && document.getElementById('live-state').dataset.state === 'idle'`)
	a.do("close", chromedp.Click(chromedp.ID("close-session")))
	a.waitFor("closed", `document.getElementById('live-state').dataset.state === 'closed' && document.getElementById('composer-text').disabled`)
	if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	resp, err := http.Get(sessURL + "/events?types=request.resolved")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []struct {
		Payload agentstream.RequestResolved `json:"payload"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, r := range got {
		outcomes = append(outcomes, r.Payload.Outcome+" by "+r.Payload.By)
	}
	if want := []string{"allowed by person", "denied by person"}; !slices.Equal(outcomes, want) {
		t.Errorf("requests resolved %q, want %q", outcomes, want)
	}
}
