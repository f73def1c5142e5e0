package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// fixture reads a recorded native stream under adapter/.
func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "adapter", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// nativeLine is line n (from 1) of a recorded stream.
func nativeLine(t *testing.T, data []byte, n int64) []byte {
	t.Helper()
	var i int64
	for l := range bytes.Lines(data) {
		if i++; i == n {
			return bytes.TrimSuffix(l, []byte("\n"))
		}
	}
	t.Fatalf("the recording has no line %d", n)
	return nil
}

// imported is a recorded session imported into the test's store.
type imported struct {
	id   string
	data []byte
	envs []agentstream.Envelope
}

func importFixture(t *testing.T, srv *server, rel string) imported {
	t.Helper()
	data := fixture(t, rel)
	id, envs, err := importRecording(context.Background(), srv.st, data, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatalf("import %s: %v", rel, err)
	}
	return imported{id: id, data: data, envs: envs}
}

// sel is the JavaScript expression of the first element CSS selector s
// matches.
func sel(s string) string { return "document.querySelector(" + js(s) + ")" }

// texts is the JavaScript expression of the text of every element the CSS
// selector matches.
func texts(s string) string {
	return "[...document.querySelectorAll(" + js(s) + ")].map((el) => el.textContent)"
}

func TestTimeline(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	edits := importFixture(t, srv, "claude/testdata/lab-claude-2.1.328-edits.jsonl")
	clipped := importFixture(t, srv, "claude/testdata/corpus/meawoppl-rust-claude-codes-captures-2026-01.jsonl")
	runs := importFixture(t, srv, "claude/testdata/synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl")
	plumbing := importFixture(t, srv, "claude/testdata/tandemtechnology-bb-stdout-approval-deny.jsonl")
	prompted := importFixture(t, srv, "gemini/testdata/lab/gemini-0.61.0-edit.jsonl")
	b := startBrowser(t, chrome)

	// The file.change of the recorded Edit, and the edit's old and new
	// strings as the native tool_use line gave them.
	var change *agentstream.Envelope
	var oldText, newText string
	for _, e := range edits.envs {
		tc, ok := e.Payload.(*agentstream.ToolCall)
		if !ok || tc.Name != "Edit" {
			continue
		}
		fc := firstWith(edits.envs, func(c *agentstream.Envelope) bool {
			p, ok := c.Payload.(*agentstream.FileChange)
			return ok && p.CallID == tc.CallID
		})
		if fc == nil {
			continue // the failed edit changed nothing
		}
		var in struct {
			Old string `json:"old_string"`
			New string `json:"new_string"`
		}
		var line struct {
			Message struct {
				Content []struct {
					ID    string          `json:"id"`
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(nativeLine(t, edits.data, e.Source.Line), &line); err != nil {
			t.Fatal(err)
		}
		for _, c := range line.Message.Content {
			if c.ID == tc.CallID {
				if err := json.Unmarshal(c.Input, &in); err != nil {
					t.Fatal(err)
				}
			}
		}
		change, oldText, newText = fc, in.Old, in.New
		break
	}
	if change == nil || oldText == "" || newText == "" {
		t.Fatal("the edits recording has no Edit with a file.change and its strings")
	}
	changeEl := "#e" + strconv.FormatInt(change.Seq, 10)
	diff := change.Payload.(*agentstream.FileChange).Changes[0].Diff

	t.Run("diff", func(t *testing.T) {
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+edits.id, sel(changeEl+" .diff"))
		prefixed := func(p string, s string) []string {
			var out []string
			for _, l := range strings.Split(s, "\n") {
				out = append(out, p+l)
			}
			return out
		}
		if got, want := eval[[]string](tb, texts(changeEl+" .diff .d-del")), prefixed("-", oldText); !equalLines(got, want) {
			t.Errorf("removed lines %q, want %q", got, want)
		}
		if got, want := eval[[]string](tb, texts(changeEl+" .diff .d-add")), prefixed("+", newText); !equalLines(got, want) {
			t.Errorf("added lines %q, want %q", got, want)
		}
		// Side by side: the old text on the left, the new on the right.
		tb.do("split the diff", chromedp.Click(chromedp.CSS(changeEl+" .split-btn")))
		tb.waitFor("the side-by-side diff", sel(changeEl+" table.diff-split"), 5*time.Second)
		if got, want := eval[[]string](tb, texts(changeEl+" .diff-split td.d-del")), strings.Split(oldText, "\n"); !equalLines(got, want) {
			t.Errorf("left side's removed lines %q, want %q", got, want)
		}
		if got, want := eval[[]string](tb, texts(changeEl+" .diff-split td.d-add")), strings.Split(newText, "\n"); !equalLines(got, want) {
			t.Errorf("right side's added lines %q, want %q", got, want)
		}
		tb.screenshot("timeline-diff-split.png")
		tb.do("back to unified", chromedp.Click(chromedp.CSS(changeEl+" .split-btn")))
		tb.waitFor("the unified diff", sel(changeEl+" pre.diff-unified"), 5*time.Second)
	})

	t.Run("copy", func(t *testing.T) {
		tb := b.tab(t)
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.Call(tb.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
				Setting:    cdpbrowser.PermissionSettingGranted, Origin: srv.url,
			}); err != nil {
				t.Fatalf("grant %s: %v", name, err)
			}
		}
		tb.open(srv.url+"/sessions/"+edits.id, sel(changeEl+" .copy-btn"))
		clipboard := func() string {
			ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
			defer cancel()
			v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("read the clipboard: %v", err)
			}
			return v
		}
		copyAndRead := func(what, button string) string {
			t.Helper()
			tb.do("clear the clipboard", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText('')`, chromedp.EvalAwaitPromise))
			tb.do("copy "+what, chromedp.Click(chromedp.CSS(button)))
			tb.waitFor(what+" copied", sel(button)+".dataset.copied === 'true' && "+sel(button)+".textContent === 'copied'", 5*time.Second)
			return clipboard()
		}
		if got := copyAndRead("the diff", changeEl+" .copy-btn"); got != diff {
			t.Errorf("the diff's copy button copied %q, want %q", got, diff)
		}
		msg := firstWith(edits.envs, func(e *agentstream.Envelope) bool { _, ok := e.Payload.(*agentstream.Message); return ok })
		msgEl := "#e" + strconv.FormatInt(msg.Seq, 10)
		if got, want := copyAndRead("the message", msgEl+" .copy-btn"), msg.Payload.(*agentstream.Message).Text; got != want {
			t.Errorf("the message's copy button copied %q, want %q", got, want)
		}
		// A tool's output, once its call is open.
		res := firstWith(edits.envs, func(e *agentstream.Envelope) bool {
			r, ok := e.Payload.(*agentstream.ToolResult)
			return ok && r.Output != ""
		})
		call := firstWith(edits.envs, func(e *agentstream.Envelope) bool {
			c, ok := e.Payload.(*agentstream.ToolCall)
			return ok && c.CallID == res.Payload.(*agentstream.ToolResult).CallID
		})
		callEl := "#e" + strconv.FormatInt(call.Seq, 10)
		tb.do("open the call", chromedp.Click(chromedp.CSS(callEl+" .tool-toggle")))
		resEl := "#e" + strconv.FormatInt(res.Seq, 10)
		if got, want := copyAndRead("the output", resEl+" > .section-label .copy-btn"), res.Payload.(*agentstream.ToolResult).Output; got != want {
			t.Errorf("the output's copy button copied %q, want %q", got, want)
		}
		var input map[string]any
		if err := json.Unmarshal([]byte(call.Payload.(*agentstream.ToolCall).Input), &input); err != nil {
			t.Fatal(err)
		}
		got := copyAndRead("the input", callEl+" .tool-input-section .copy-btn")
		var copied map[string]any
		if err := json.Unmarshal([]byte(got), &copied); err != nil || fmt.Sprint(copied) != fmt.Sprint(input) {
			t.Errorf("the input's copy button copied %q, want the call's input %s", got, call.Payload.(*agentstream.ToolCall).Input)
		}
		// A shell call's button copies its command.
		shell := firstWith(plumbing.envs, func(e *agentstream.Envelope) bool {
			c, ok := e.Payload.(*agentstream.ToolCall)
			return ok && c.Name == "Bash"
		})
		if shell == nil {
			t.Fatal("the approval recording has no Bash call")
		}
		var cmd struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(shell.Payload.(*agentstream.ToolCall).Input), &cmd); err != nil || cmd.Command == "" {
			t.Fatalf("the Bash call's input %s has no command: %v", shell.Payload.(*agentstream.ToolCall).Input, err)
		}
		shellEl := "#e" + strconv.FormatInt(shell.Seq, 10)
		tb.open(srv.url+"/sessions/"+plumbing.id, sel(shellEl+" .tool-toggle"))
		tb.do("open the shell call", chromedp.Click(chromedp.CSS(shellEl+" .tool-toggle")))
		if got := copyAndRead("the command", shellEl+" .tool-input-section .copy-btn"); got != cmd.Command {
			t.Errorf("the shell call's copy button copied %q, want its command %q", got, cmd.Command)
		}
	})

	t.Run("clipped output in full", func(t *testing.T) {
		res := firstWith(clipped.envs, func(e *agentstream.Envelope) bool {
			r, ok := e.Payload.(*agentstream.ToolResult)
			return ok && r.Truncated && e.Source != nil
		})
		if res == nil {
			t.Fatal("the recording has no clipped tool result")
		}
		r := res.Payload.(*agentstream.ToolResult)
		// The output in full, as the native line holds it: the text blocks
		// of the tool_result of the call, one a line.
		var line struct {
			Message struct {
				Content []struct {
					ToolUseID string `json:"tool_use_id"`
					Content   []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(nativeLine(t, clipped.data, res.Source.Line), &line); err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, c := range line.Message.Content {
			if c.ToolUseID == r.CallID {
				for _, x := range c.Content {
					parts = append(parts, x.Text)
				}
			}
		}
		want := strings.Join(parts, "\n")
		if utf8.RuneCountInString(want) <= utf8.RuneCountInString(r.Output) {
			t.Fatalf("the native output (%d characters) is no longer than the clipped one (%d)", utf8.RuneCountInString(want), utf8.RuneCountInString(r.Output))
		}
		call := firstWith(clipped.envs, func(e *agentstream.Envelope) bool {
			c, ok := e.Payload.(*agentstream.ToolCall)
			return ok && c.CallID == r.CallID
		})
		resEl := "#e" + strconv.FormatInt(res.Seq, 10)
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/"+clipped.id, sel(resEl))
		if call != nil {
			tb.do("open the call", chromedp.Click(chromedp.CSS("#e"+strconv.FormatInt(call.Seq, 10)+" .tool-toggle")))
		}
		label := eval[string](tb, sel(resEl+" .full-btn")+".textContent")
		if !strings.Contains(label, strconv.FormatInt(r.Characters, 10)) && !strings.Contains(label, fmtThousands(r.Characters)) {
			t.Errorf("the button says %q, want the %d characters", label, r.Characters)
		}
		tb.do("show all", chromedp.Click(chromedp.CSS(resEl+" .full-btn")))
		tb.waitFor("the output in full", sel(resEl+" .truncated-note.full"), 10*time.Second)
		got := eval[string](tb, sel(resEl+" .tool-output")+".textContent")
		if utf8.RuneCountInString(got) != utf8.RuneCountInString(want) || got != want {
			t.Errorf("shown in full: %d characters, want the native line's %d", utf8.RuneCountInString(got), utf8.RuneCountInString(want))
		}
		if n := eval[string](tb, sel(resEl+" .truncated-note")+".dataset.chars"); n != strconv.Itoa(utf8.RuneCountInString(want)) {
			t.Errorf("the note counts %s characters, want %d", n, utf8.RuneCountInString(want))
		}
	})

	t.Run("turn footers", func(t *testing.T) {
		for _, s := range []imported{edits, runs} {
			tb := b.tab(t)
			last := "e" + strconv.FormatInt(s.envs[len(s.envs)-1].Seq, 10)
			tb.open(srv.url+"/sessions/"+s.id, byID(last)+" && document.querySelector('.turn-foot') && !document.querySelector('.turn-foot .turn-figures').textContent.startsWith('usage…')")
			// What each turn spent, from its usage events, by the recap's
			// rules: where the turn has the harness's running totals, what
			// they grew by over the turn (the last of the turn less the
			// last before it, run by run), plus the calls after the
			// turn's last total; else the sum of its model calls.
			type sums struct{ in, out, calls int64 }
			val := func(p *int64) int64 {
				if p == nil {
					return 0
				}
				return *p
			}
			want := map[int64]*sums{}
			for turn := range turnsOf(s.envs) {
				w := &sums{}
				want[turn] = w
				before := map[int64]*agentstream.Usage{} // the run's latest total before the turn
				last := map[int64]*agentstream.Usage{}   // and in the turn
				var afterIn, afterOut int64
				seen := false
				for _, e := range s.envs {
					u, ok := e.Payload.(*agentstream.Usage)
					if !ok || e.Turn > turn {
						continue
					}
					seen = seen || e.Turn == turn
					switch {
					case u.Scope == "session" && e.Turn < turn:
						before[u.Run] = u
					case u.Scope == "session":
						last[u.Run] = u
						afterIn, afterOut = 0, 0
					case u.Scope == "call" && e.Turn == turn:
						w.calls++
						afterIn += val(u.InputTokens)
						afterOut += val(u.OutputTokens)
					}
				}
				if !seen {
					delete(want, turn)
					continue
				}
				for run, u := range last {
					w.in += val(u.InputTokens)
					w.out += val(u.OutputTokens)
					if b := before[run]; b != nil {
						w.in -= val(b.InputTokens)
						w.out -= val(b.OutputTokens)
					}
				}
				w.in += afterIn
				w.out += afterOut
			}
			type foot struct{ Turn, Input, Output, Calls, Cost, Text string }
			feet := eval[[]foot](tb, `[...document.querySelectorAll('.turn-foot')].map((el) => ({Turn: el.dataset.footTurn,
				Input: el.dataset.input, Output: el.dataset.output, Calls: el.dataset.calls, Cost: el.dataset.cost, Text: el.textContent}))`)
			ended := 0
			for _, e := range s.envs {
				if e.Type() == agentstream.TypeTurnEnded {
					ended++
				}
			}
			if len(feet) != ended {
				t.Errorf("%d turn footers, want one for each of the %d turn.ended", len(feet), ended)
			}
			for _, f := range feet {
				n, _ := strconv.ParseInt(f.Turn, 10, 64)
				w := want[n]
				if w == nil {
					if !strings.Contains(f.Text, "not reported") {
						t.Errorf("turn %s reported no usage, its footer says %q", f.Turn, f.Text)
					}
					continue
				}
				if f.Input != strconv.FormatInt(w.in, 10) || f.Output != strconv.FormatInt(w.out, 10) || f.Calls != strconv.FormatInt(w.calls, 10) {
					t.Errorf("turn %s footer: in %s out %s calls %s, want in %d out %d calls %d (%q)", f.Turn, f.Input, f.Output, f.Calls, w.in, w.out, w.calls, f.Text)
				}
				if f.Cost == "" && !strings.Contains(f.Text, "cost not reported") {
					t.Errorf("turn %s: no cost, and the footer does not say so: %q", f.Turn, f.Text)
				}
				if f.Cost != "" {
					if c, err := strconv.ParseFloat(f.Cost, 64); err != nil || math.IsNaN(c) || c < 0 {
						t.Errorf("turn %s: cost %q", f.Turn, f.Cost)
					}
				}
			}
			// Per-call usage rows are hidden until asked for.
			if n := eval[int](tb, `[...document.querySelectorAll('#timeline .event[data-type="usage"]')].filter((el) => el.getClientRects().length > 0).length`); n != 0 {
				t.Errorf("%d usage rows shown before the toggle", n)
			}
			tb.do("show usage rows", chromedp.Click(chromedp.ID("show-usage")))
			tb.waitFor("usage rows", `[...document.querySelectorAll('#timeline > .event[data-type="usage"]')].some((el) => el.getClientRects().length > 0)`, 5*time.Second)
			tb.do("hide usage rows", chromedp.Click(chromedp.ID("show-usage")))
		}
	})

	t.Run("turn header", func(t *testing.T) {
		prompt := firstWith(prompted.envs, func(e *agentstream.Envelope) bool {
			m, ok := e.Payload.(*agentstream.Message)
			return ok && m.Role == "user"
		})
		started := firstWith(prompted.envs, func(e *agentstream.Envelope) bool {
			return e.Type() == agentstream.TypeTurnStarted && e.Turn == prompt.Turn
		})
		if prompt == nil || started == nil {
			t.Fatal("the recording has no turn with a prompt")
		}
		first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(prompt.Payload.(*agentstream.Message).Text), "\n", 2)[0])
		tb := b.tab(t)
		head := "#e" + strconv.FormatInt(started.Seq, 10)
		tb.open(srv.url+"/sessions/"+prompted.id, sel(head+" .turn-prompt"))
		if got := eval[string](tb, sel(head+" .turn-prompt")+".textContent"); got != first {
			t.Errorf("turn %d is headed %q, want its prompt's first line %q", prompt.Turn, got, first)
		}
		if !eval[bool](tb, byID("e"+strconv.FormatInt(prompt.Seq, 10))+".classList.contains('prompt')") {
			t.Error("the prompt's message is not marked as the turn's prompt")
		}
		tb.screenshot("timeline-prompt.png")
	})

	t.Run("plumbing folded", func(t *testing.T) {
		tb := b.tab(t)
		last := "e" + strconv.FormatInt(plumbing.envs[len(plumbing.envs)-1].Seq, 10)
		tb.open(srv.url+"/sessions/"+plumbing.id, byID(last))
		folded := 0
		for _, e := range plumbing.envs {
			switch e.Type() {
			case "hook", "session.updated", "session.state", "message.status", "message.accepted", "message.started", "message.completed":
			default:
				continue
			}
			if e.ParentCallID != "" {
				continue
			}
			folded++
			el := byID("e" + strconv.FormatInt(e.Seq, 10))
			if !eval[bool](tb, el+" && !!"+el+".closest('details.fold')") {
				t.Errorf("%s %d is not folded", e.Type(), e.Seq)
			} else if eval[bool](tb, el+".checkVisibility()") {
				t.Errorf("%s %d is shown before its fold is opened", e.Type(), e.Seq)
			}
		}
		if folded == 0 {
			t.Fatal("the recording has no plumbing")
		}
		type fold struct {
			Count   int
			Summary string
		}
		folds := eval[[]fold](tb, `[...document.querySelectorAll('details.fold')].map((d) => ({Count: +d.dataset.count, Summary: d.querySelector('summary').textContent}))`)
		sum := 0
		for _, f := range folds {
			sum += f.Count
			if !strings.Contains(f.Summary, strconv.Itoa(f.Count)+" session event") {
				t.Errorf("a fold of %d says %q", f.Count, f.Summary)
			}
		}
		if sum != folded || len(folds) >= folded {
			t.Errorf("%d folds hold %d events, want fewer folds holding the %d plumbing events", len(folds), sum, folded)
		}
		tb.screenshot("timeline-folded.png")
		// A fold opens with the keyboard.
		tb.do("open a fold", chromedp.Focus(chromedp.CSS("details.fold > summary")), chromedp.KeyEvent("\r"))
		tb.waitFor("the fold open", `document.querySelector('details.fold').open && [...document.querySelectorAll('details.fold')[0].querySelectorAll('.event')].some((el) => el.checkVisibility())`, 5*time.Second)
		// The event number and source appear on hover or focus only (a
		// touch screen shows them always).
		if eval[float64](tb, `+getComputedStyle(document.querySelector('#timeline > .event .seq-link')).opacity`) != 0 {
			t.Error("the event number shows without hover or focus")
		}
		tb.do("focus an event number", chromedp.Focus(chromedp.CSS("#timeline > .event .seq-link")))
		tb.waitFor("the event number on focus", `+getComputedStyle(document.activeElement).opacity === 1`, 5*time.Second)
	})

	t.Run("not found", func(t *testing.T) {
		tb := b.tab(t)
		tb.open(srv.url+"/sessions/s_no_such_session", sel("#not-found a.back-link"))
		if got := eval[string](tb, sel("#not-found")+".textContent"); !strings.Contains(got, "s_no_such_session") {
			t.Errorf("the page does not name the session: %q", got)
		}
		if eval[bool](tb, visible(byID("session-header"))) {
			t.Error("the empty session header is shown")
		}
		tb.screenshot("session-not-found.png")
		cctx, ccancel := context.WithTimeout(tb.ctx, 30*time.Second)
		_, err := chromedp.Run(cctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS("#not-found a.back-link"))))
		ccancel()
		if err != nil {
			t.Fatalf("follow the link back: %v", err)
		}
		tb.waitFor("the sessions list", "location.pathname === '/' && document.querySelectorAll('tr.session').length > 0", 10*time.Second)
		tb.open(srv.url+"/no/such/page", sel("#not-found a.back-link[href='/']"))
		tb.screenshot("page-not-found.png")
	})

	t.Run("screenshots", func(t *testing.T) {
		for _, scheme := range []string{"light", "dark"} {
			tb := b.tab(t)
			if _, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
			}); err != nil {
				t.Fatal(err)
			}
			tb.open(srv.url+"/sessions/"+edits.id, sel(changeEl+" .diff")+" && !document.querySelector('.turn-foot .turn-figures').textContent.startsWith('usage…')")
			tb.do("open a call", chromedp.Click(chromedp.CSS(".tool .tool-toggle")))
			ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
			buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			dir := artifactsDir(t)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "timeline-"+scheme+".png")
			if err := os.WriteFile(p, buf, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", p)
			tb.do("scroll to the end", chromedp.Evaluate[chromedp.Void](`document.getElementById('timeline').scrollTop = 1e9`))
			tb.screenshot("timeline-" + scheme + "-end.png")
		}
	})
}

// turnsOf is the set of turns of envs.
func turnsOf(envs []agentstream.Envelope) map[int64]bool {
	turns := map[int64]bool{}
	for _, e := range envs {
		turns[e.Turn] = true
	}
	return turns
}

// equalLines reports whether got are the lines of want, each shown with
// or without its newline.
func equalLines(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if strings.TrimSuffix(got[i], "\n") != want[i] {
			return false
		}
	}
	return true
}

// fmtThousands writes n with commas, as the page does.
func fmtThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
