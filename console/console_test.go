package console_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/console"
	"github.com/creack/pty"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The recorded Claude Code sessions rendered here live in the claude
// adapter's test data: its fixtures, and its other recordings in corpus/.
const (
	claudeFixtures = "../adapter/claude/testdata/"
	claudeCorpus   = claudeFixtures + "corpus/"
	turnTools      = claudeCorpus + "tandemtechnology-bb-stdout-turn-tools.jsonl"
	planMode       = claudeCorpus + "tandemtechnology-bb-stdout-plan-mode.jsonl"
	authFailure    = claudeFixtures + "tandemtechnology-bb-stdout-auth-failure.jsonl"
)

// envelopes normalizes a recorded native session, live deltas included, as
// the runner would hand it to a renderer.
func envelopes(t testing.TB, protocol, name string) []agentstream.Envelope {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := adapter.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: "s_test", Harness: a.Harness})
	lr := agentstream.NewLineReader(f)
	var envs []agentstream.Envelope
	for {
		l, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		envs = n.Line(envs, l, time.Time{})
	}
	return n.End(envs, time.Time{})
}

func render(t testing.TB, envs []agentstream.Envelope, opt console.Options) string {
	t.Helper()
	var b bytes.Buffer
	r := console.New(&b, opt)
	for _, e := range envs {
		if err := r.Handle(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

func TestGolden(t *testing.T) {
	for _, file := range []string{
		turnTools,
		claudeFixtures + "tandemtechnology-bb-stdout-subagent.jsonl",
		planMode,
		authFailure,
		claudeCorpus + "tandemtechnology-bb-stdout-steer-then-compact.jsonl",
		claudeCorpus + "tandemtechnology-bb-stdout-stop-interrupt.jsonl",
		claudeCorpus + "presmihaylov-ccagent-session-2.0.22-image-tool-result.jsonl",
	} {
		name := strings.TrimSuffix(filepath.Base(file), ".jsonl")
		t.Run(name, func(t *testing.T) {
			envs := envelopes(t, "claude-json", file)
			got := render(t, envs, console.Options{Width: 80})
			golden(t, filepath.Join("testdata", name+".golden"), got)
			checkWidth(t, got, 80)
			checkClean(t, got)
		})
	}
}

// TestGoldenGitHub renders a session in GitHub mode, with its step summary.
func TestGoldenGitHub(t *testing.T) {
	envs := envelopes(t, "claude-json", planMode)
	var summary bytes.Buffer
	got := render(t, envs, console.Options{Width: 80, CI: console.CIGitHub, StepSummary: &summary})
	golden(t, "testdata/plan-mode-github.golden", got)
	golden(t, "testdata/plan-mode-summary.golden", summary.String())
	checkCommands(t, got)
}

// TestStoredEnvelopes renders what a store keeps (no deltas): the text shows
// whole, once.
func TestStoredEnvelopes(t *testing.T) {
	var stored []agentstream.Envelope
	for _, e := range envelopes(t, "claude-json", turnTools) {
		if !agentstream.IsLive(e.Type()) {
			stored = append(stored, e)
		}
	}
	got := render(t, stored, console.Options{Width: 80})
	live := render(t, envelopes(t, "claude-json", turnTools), console.Options{Width: 80})
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("stored and live renderings differ (-live +stored):\n%s", diff)
	}
}

// checkWidth fails when a line is wider than w columns.
func checkWidth(t *testing.T, out string, w int) {
	t.Helper()
	for i, l := range strings.Split(out, "\n") {
		n := 0
		for _, r := range l {
			if r == '\u200b' || unicode.Is(unicode.Mn, r) {
				continue
			}
			n++
		}
		if n > w {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, l)
		}
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d ends with a space: %q", i+1, l)
		}
	}
}

// checkClean fails on escape sequences and control characters.
func checkClean(t *testing.T, out string) {
	t.Helper()
	for i, r := range out {
		switch {
		case r == '\n':
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			t.Fatalf("control character %U at byte %d: %q", r, i, around(out, i))
		}
	}
}

func around(s string, i int) string {
	return s[max(0, i-40):min(len(s), i+40)]
}

// checkCommands reads the output as the GitHub Actions runner does (a line
// ends at "\n", "\r" or "\r\n"; leading whitespace is trimmed; "::" at the
// start is a command; "##[" anywhere is a command of the older form) and
// fails on any command but the renderer's own.
func checkCommands(t *testing.T, out string) (errors, warnings int) {
	t.Helper()
	lines := strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' })
	for _, l := range lines {
		if strings.Contains(l, "##[") || strings.Contains(l, "##vso[") {
			t.Errorf("line holds an old-form command: %q", l)
		}
		trimmed := strings.TrimLeftFunc(l, unicode.IsSpace)
		if !strings.HasPrefix(trimmed, "::") {
			continue
		}
		switch {
		case trimmed != l:
			t.Errorf("command after whitespace: %q", l)
		case strings.HasPrefix(l, "::group::Turn "), l == "::endgroup::":
		case strings.HasPrefix(l, "::error::"):
			errors++
		case strings.HasPrefix(l, "::warning::"):
			warnings++
		default:
			t.Errorf("foreign workflow command: %q", l)
		}
	}
	return errors, warnings
}

func TestInjection(t *testing.T) {
	envs := envelopes(t, "claude-json", "testdata/claude-inject-synthetic.jsonl")
	for _, opt := range []console.Options{
		{Width: 80, CI: console.CIGitHub},
		{Width: 80},
		{Width: 40, CI: console.CIGitHub, Color: true},
	} {
		var summary bytes.Buffer
		opt.StepSummary = &summary
		got := render(t, envs, opt)
		if !opt.Color {
			checkClean(t, got)
		} else {
			checkSGROnly(t, got)
		}
		errs, warns := checkCommands(t, got)
		if opt.CI == console.CIGitHub && (errs != 2 || warns != 2) {
			t.Errorf("width %d: %d ::error:: and %d ::warning:: lines, want 2 and 2:\n%s", opt.Width, errs, warns, got)
		}
		if strings.Contains(got, "TOKEN=abc123") {
			t.Errorf("the arguments of an unknown tool were shown")
		}
		checkClean(t, summary.String())
		checkCommands(t, summary.String())
		for _, bad := range []string{"](", "<", "|\n|"} {
			if strings.Contains(summary.String(), bad) && bad != "|\n|" {
				t.Errorf("step summary holds %q:\n%s", bad, summary.String())
			}
		}
	}
}

// checkSGROnly fails on any escape sequence but SGR.
func checkSGROnly(t *testing.T, out string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if out[i] != 0x1b {
			continue
		}
		j := i + 1
		if j >= len(out) || out[j] != '[' {
			t.Fatalf("escape that is not CSI at %d: %q", i, around(out, i))
		}
		for j++; j < len(out) && (out[j] >= '0' && out[j] <= '9' || out[j] == ';'); j++ {
		}
		if j >= len(out) || out[j] != 'm' {
			t.Fatalf("CSI that is not SGR at %d: %q", i, around(out, i))
		}
	}
	checkClean(t, stripSGR(out))
}

func stripSGR(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestInjectionSplit feeds injection attempts as deltas cut at every
// position: no piece boundary lets a command through.
func TestInjectionSplit(t *testing.T) {
	texts := []string{
		"intro\n::set-output name=x::y\nend",
		"a\n  ::add-mask::secret",
		"##[error]old form",
		"x\r::warning::cr",
		"x\u2028::notice::ls",
		"\x1b]0;title\x07\x1b[31m::error::after escapes",
	}
	for _, text := range texts {
		for cut := 0; cut <= len(text); cut++ {
			envs := []agentstream.Envelope{
				{Turn: 1, Payload: &agentstream.MessageDelta{Role: "assistant", Text: text[:cut]}},
				{Turn: 1, Payload: &agentstream.MessageDelta{Role: "assistant", Text: text[cut:]}},
				{Turn: 1, Payload: &agentstream.Stderr{Text: text}},
			}
			got := render(t, envs, console.Options{Width: 80, CI: console.CIGitHub})
			checkClean(t, got)
			if errs, warns := checkCommands(t, got); errs+warns != 0 {
				t.Fatalf("cut %d of %q: agent text became a command:\n%s", cut, text, got)
			}
		}
	}
}

func FuzzRenderText(f *testing.F) {
	f.Add("::set-output name=a::b", 3)
	f.Add("x\n\t::error::y\n##[z]", 9)
	f.Add("\x1b]8;;http://e\x1b\\l\x1b]8;;\x1b\\", 4)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if cut < 0 || cut > len(text) {
			cut = len(text) / 2
		}
		envs := []agentstream.Envelope{
			{Turn: 1, Payload: &agentstream.ThinkingDelta{Text: text[:cut]}},
			{Turn: 1, Payload: &agentstream.ThinkingDelta{Text: text[cut:]}},
			{Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: text}},
			{Turn: 1, Payload: &agentstream.ToolCall{CallID: "c", Name: text, Summary: text}},
			{Turn: 1, Payload: &agentstream.ToolResult{CallID: "c", IsError: true, Output: text}},
			{Turn: 1, Payload: &agentstream.Error{Message: text}},
			{Turn: 1, Payload: &agentstream.SessionEnded{Status: "failed", Error: text}},
		}
		var summary bytes.Buffer
		got := render(t, envs, console.Options{Width: 30, CI: console.CIGitHub, StepSummary: &summary})
		checkClean(t, got)
		checkCommands(t, got)
		checkClean(t, summary.String())
		checkCommands(t, summary.String())
		s := console.Sanitize(text)
		checkClean(t, strings.ReplaceAll(s, "\t", " "))
		checkCommands(t, s)
	})
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello world", "hello world"},
		{"keeps newline and tab", "a\n\tb", "a\n\tb"},
		{"csi", "\x1b[31mred\x1b[0m", "red"},
		{"osc title bel", "\x1b]0;title\x07text", "text"},
		{"osc hyperlink st", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"unterminated osc ends at newline", "\x1b]0;never\nnext", "\nnext"},
		{"8-bit csi", "\u009b31mred", "red"},
		{"8-bit osc", "\u009d0;t\u009ctext", "text"},
		{"charset designation", "\x1b(Babc", "abc"},
		{"carriage return", "a\rb", "ab"},
		{"other controls", "a\x00b\x07c\x7fd", "abcd"},
		{"bidi override", "a\u202eb\u2066c", "abc"},
		{"line separator", "a\u2028b", "a\nb"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
		{"command at start", "::set-output name=a::b", ":\u200b:set-output name=a::b"},
		{"command after spaces", "  ::error::x", "  :\u200b:error::x"},
		{"command on a later line", "ok\n::add-mask::x", "ok\n:\u200b:add-mask::x"},
		{"carriage return joins the lines", "ok\r::add-mask::x", "ok::add-mask::x"},
		{"colons inside a line", "a::b", "a::b"},
		{"old form", "x ##[error]y", "x #\u200b#[error]y"},
		{"heading", "## Title", "#\u200b# Title"},
		{"unicode", "é — 日本", "é — 日本"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := console.Sanitize(tc.in); got != tc.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestUnknownToolShowsNoArguments(t *testing.T) {
	envs := []agentstream.Envelope{
		{Turn: 1, Payload: &agentstream.ToolCall{CallID: "c1", Name: "mystery", Input: `{"token":"s3cr3t"}`, Category: "other"}},
		{Turn: 1, Payload: &agentstream.ToolResult{CallID: "c1", IsError: true, Output: "s3cr3t leaked", Characters: 13}},
	}
	got := render(t, envs, console.Options{Width: 80})
	if strings.Contains(got, "s3cr3t") {
		t.Errorf("unknown tool's arguments or output shown:\n%s", got)
	}
	want := "• mystery  ✗ 13 chars\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestToolLines(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exit2 := int64(2)
	for _, tc := range []struct {
		name string
		envs []agentstream.Envelope
		want string
	}{
		{
			name: "result on the call's line",
			envs: []agentstream.Envelope{
				{Turn: 1, TS: t0, Payload: &agentstream.ToolCall{CallID: "a", Name: "Bash", Category: "execute", Summary: "go test ./..."}},
				{Turn: 1, TS: t0.Add(1500 * time.Millisecond), Payload: &agentstream.ToolResult{CallID: "a", Output: "ok", Characters: 2}},
			},
			want: "❯ Bash  go test ./...  ✓ 2 chars · 1.5s\n",
		},
		{
			name: "failed result of a known tool shows its first line",
			envs: []agentstream.Envelope{
				{Turn: 1, Payload: &agentstream.ToolCall{CallID: "a", Name: "Bash", Category: "execute", Summary: "make"}},
				{Turn: 1, Payload: &agentstream.ToolResult{CallID: "a", IsError: true, Output: "\nmake: *** no rule\nmore", Characters: 22, ExitCode: &exit2}},
			},
			want: "❯ Bash  make  ✗ exit 2 · 22 chars\n  make: *** no rule\n",
		},
		{
			name: "interleaved results get lines of their own",
			envs: []agentstream.Envelope{
				{Turn: 1, Payload: &agentstream.ToolCall{CallID: "a", Name: "Read", Category: "read", Summary: "a.go"}},
				{Turn: 1, Payload: &agentstream.ToolCall{CallID: "b", Name: "Read", Category: "read", Summary: "b.go"}},
				{Turn: 1, Payload: &agentstream.ToolResult{CallID: "a", Characters: 10000}},
				{Turn: 1, Payload: &agentstream.ToolResult{CallID: "b", Characters: 1234567}},
			},
			want: "▤ Read  a.go\n▤ Read  b.go\n✓ Read  10.0k chars\n✓ Read  1.2M chars\n",
		},
		{
			name: "subagent work is indented under its call",
			envs: []agentstream.Envelope{
				{Turn: 1, Payload: &agentstream.ToolCall{CallID: "t", Name: "Task", Category: "delegate", Summary: "explore"}},
				{Turn: 1, ParentCallID: "t", Payload: &agentstream.ToolCall{CallID: "g", Name: "Grep", Category: "search", Summary: "TODO"}},
				{Turn: 1, ParentCallID: "t", Payload: &agentstream.ToolResult{CallID: "g", Output: "x", Characters: 1}},
				{Turn: 1, ParentCallID: "t", Payload: &agentstream.Message{Role: "assistant", Text: "found it"}},
				{Turn: 1, Payload: &agentstream.ToolResult{CallID: "t", Output: "done", Characters: 4}},
			},
			want: "↳ Task  explore\n  ⌕ Grep  TODO  ✓ 1 chars\n  found it\n✓ Task  4 chars\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.envs, console.Options{Width: 80})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func usageEnv(in, out int64) agentstream.Envelope {
	return agentstream.Envelope{Turn: 1, Payload: &agentstream.Usage{Scope: agentstream.ScopeCall, InputTokens: &in, OutputTokens: &out}}
}

func TestTokenFigures(t *testing.T) {
	envs := []agentstream.Envelope{
		usageEnv(1000, 100), // 1,100: nothing yet
		usageEnv(3000, 500), // 4,600
		usageEnv(400, 100),  // 5,100: crosses 5,000
		usageEnv(100, 100),  // 5,300
		{Turn: 1, Payload: &agentstream.MessageDelta{Text: "streaming"}},
		usageEnv(6000, 0), // 11,300: crosses 10,000, waits for the text to end
		{Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: "streaming"}},
	}
	got := render(t, envs, console.Options{Width: 80})
	// No session end came: the recap of the whole input closes it.
	want := "◆ 5,100 tokens · out 700 · context 400\nstreaming\n◆ 11,300 tokens · out 800 · context 6,000\n" +
		"── end of input ────────────────────────────────────────────────────────────────\n" +
		"1 turn · 5 model calls · in 10,500 · out 800 · cost not reported · context 6,000\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRecap(t *testing.T) {
	cost := 0.0123
	in, out, turns, dur := int64(1200), int64(345), int64(3), int64(65000)
	window := int64(200000)
	ctxTok := int64(50000)
	for _, tc := range []struct {
		name string
		envs []agentstream.Envelope
		want string
	}{
		{
			name: "everything reported",
			envs: []agentstream.Envelope{
				{Payload: &agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", ContextWindow: &window}},
				{Payload: &agentstream.Usage{Scope: "call", InputTokens: &in, OutputTokens: &out, ContextTokens: &ctxTok}},
				{Payload: &agentstream.Usage{Scope: "session", CostUSD: &cost, Turns: &turns, DurationMs: &dur}},
				{Payload: &agentstream.SessionEnded{Status: "succeeded", Reason: "completion"}},
			},
			want: "▶ claude-code · claude-sonnet-4-5\n" +
				"── succeeded · completion ──────────\n" +
				"3 model calls · 1m05s · in 1,200\n" +
				"out 345 · cost $0.01\n" +
				"context 50,000 of 200,000 (25%)\n",
		},
		{
			name: "nothing reported is never zero",
			envs: []agentstream.Envelope{
				{Turn: 1, Payload: &agentstream.SessionEnded{Status: "failed", Reason: "exit", Error: "exit status 3"}},
			},
			want: "── failed · exit ───────────────────\n" +
				"1 turn · tokens not reported\n" +
				"cost not reported\n" +
				"error: exit status 3\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(t, tc.envs, console.Options{Width: 36})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestQuiet(t *testing.T) {
	envs := envelopes(t, "claude-json", authFailure)
	got := render(t, envs, console.Options{Width: 80, Quiet: true})
	want := "✗ error: Not logged in · Please run /login\n" +
		"── failed · completion · stop_sequence ─────────────────────────────────────────\n" +
		"error: api_error\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := render(t, envelopes(t, "claude-json", turnTools), console.Options{Quiet: true}); got != "" {
		t.Errorf("a quiet successful session rendered %q", got)
	}
}

func TestWorkflowGroups(t *testing.T) {
	envs := []agentstream.Envelope{
		{Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: "one"}},
		{Turn: 1, Payload: &agentstream.Retry{Error: "overloaded"}},
		{Turn: 2, Payload: &agentstream.Message{Role: "assistant", Text: "two"}},
		{Turn: 2, Payload: &agentstream.Error{Message: "boom\nsecond line 100%"}},
		{Turn: 2, Payload: &agentstream.SessionEnded{Status: "failed", Reason: "exit", Error: "exit status 1"}},
	}
	got := render(t, envs, console.Options{Width: 80, CI: console.CIGitHub})
	want := "::group::Turn 1\none\n::warning::retry: overloaded\n::endgroup::\n" +
		"::group::Turn 2\ntwo\n::error::boom%0Asecond line 100%25\n::endgroup::\n" +
		"── failed · exit ───────────────────────────────────────────────────────────────\n" +
		"2 turns · tokens not reported · cost not reported\n" +
		"error: exit status 1\n" +
		"::error::session failed (exit): exit status 1\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestColor(t *testing.T) {
	envs := envelopes(t, "claude-json", planMode)
	got := render(t, envs, console.Options{Width: 80, Color: true})
	for _, want := range []string{"\x1b[2;3m∴", "\x1b[32m✓", "\x1b[31m✗", "\x1b[1m"} {
		if !strings.Contains(got, want) {
			t.Errorf("colour output lacks %q", want)
		}
	}
	checkSGROnly(t, got)
	if plain := render(t, envs, console.Options{Width: 80}); stripSGR(got) != plain {
		t.Errorf("colour output is not the plain output with SGR codes added")
	}
}

func TestUseColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var buf bytes.Buffer
	for _, tc := range []struct {
		mode string
		env  func(string) string
		want bool
	}{
		{"auto", env(), false}, // not a terminal
		{"always", env("NO_COLOR", "1"), true},
		{"never", env(), false},
	} {
		if got := console.UseColor(tc.mode, &buf, tc.env); got != tc.want {
			t.Errorf("UseColor(%q) = %v, want %v", tc.mode, got, tc.want)
		}
	}
	if got := console.Width(&buf, env("COLUMNS", "120")); got != 120 {
		t.Errorf("Width with COLUMNS=120 = %d", got)
	}
	if got := console.Width(&buf, env()); got != 80 {
		t.Errorf("Width = %d, want 80", got)
	}
}

// TestDeltasRetainNothing renders many deltas and checks that the heap does
// not grow with them.
func TestDeltasRetainNothing(t *testing.T) {
	r := console.New(io.Discard, console.Options{Width: 80})
	ctx := context.Background()
	e := agentstream.Envelope{Turn: 1, Payload: &agentstream.MessageDelta{Role: "assistant", Text: "tok "}}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := 0; i < 1000; i++ {
		r.Handle(ctx, e)
	}
	before := heap()
	for i := 0; i < 200_000; i++ {
		r.Handle(ctx, e)
	}
	after := heap()
	if after > before && after-before > 256<<10 {
		t.Errorf("heap grew by %d bytes over 200,000 deltas", after-before)
	}
	runtime.KeepAlive(r)
}

// TestTerminal checks the terminal detection on a real pseudo-terminal: its
// width is read, colour is on, and NO_COLOR turns it off.
func TestTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 57}); err != nil {
		t.Fatal(err)
	}
	if w, ok := console.Terminal(tty); !ok || w != 57 {
		t.Errorf("Terminal = %d, %v; want 57, true", w, ok)
	}
	if w := console.Width(tty, nil); w != 57 {
		t.Errorf("Width = %d, want 57", w)
	}
	noColor := func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	if !console.UseColor("auto", tty, nil) || console.UseColor("auto", tty, noColor) || !console.UseColor("always", tty, noColor) {
		t.Errorf("UseColor on a terminal: auto %v, auto with NO_COLOR %v, always with NO_COLOR %v",
			console.UseColor("auto", tty, nil), console.UseColor("auto", tty, noColor), console.UseColor("always", tty, noColor))
	}
	// Render on the terminal and read what it shows.
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(ptmx)
		got <- string(b)
	}()
	r := console.New(tty, console.Options{Color: console.UseColor("auto", tty, nil), Width: console.Width(tty, nil)})
	for _, e := range envelopes(t, "claude-json", turnTools) {
		r.Handle(context.Background(), e)
	}
	r.Close()
	tty.Close()
	out := <-got
	if !strings.Contains(out, "\x1b[32m✓") || !strings.Contains(out, "\x1b[1m") {
		t.Errorf("no colour on the terminal: %q", out)
	}
}
