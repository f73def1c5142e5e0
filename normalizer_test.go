package agentstream_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/google/go-cmp/cmp"
)

// scripted is a Decoder that maps each line to the events a test chose,
// and panics on the line "panic".
type scripted map[string][]agentstream.Event

func (s scripted) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	if string(line) == "panic" {
		// An event appended before the panic must not come out.
		dst = append(dst, agentstream.E(&agentstream.Warning{Message: "half done"}))
		panic(fmt.Sprintf("decoder bug after %d events", len(dst)))
	}
	return append(dst, s[string(line)]...)
}

func (s scripted) End(dst []agentstream.Event) []agentstream.Event { return append(dst, s["END"]...) }

type row struct {
	Seq  int64
	Turn int64
	Type string
	Line int64
}

func rows(envs []agentstream.Envelope) []row {
	var out []row
	for _, e := range envs {
		r := row{Seq: e.Seq, Turn: e.Turn, Type: e.Type()}
		if e.Source != nil {
			r.Line = e.Source.Line
		}
		out = append(out, r)
	}
	return out
}

func feed(n *agentstream.Normalizer, lines ...string) []agentstream.Envelope {
	var envs []agentstream.Envelope
	for i, l := range lines {
		envs = n.Line(envs, agentstream.Line{N: int64(i + 1), Bytes: []byte(l), Size: int64(len(l))}, time.Time{})
	}
	return n.End(envs, time.Time{})
}

var (
	msg     = agentstream.E(&agentstream.Message{Role: "assistant", Text: "hi"})
	delta   = agentstream.E(&agentstream.MessageDelta{Role: "assistant", Text: "hi"})
	ended   = agentstream.E(&agentstream.TurnEnded{Turn: 1, Reason: "ok"})
	sEnded  = agentstream.E(&agentstream.SessionEnded{Status: "succeeded", Reason: "completion"})
	started = agentstream.E(&agentstream.TurnStarted{Turn: 1})
)

func TestNormalizerImplicitTurns(t *testing.T) {
	dec := scripted{"m": {msg}, "d": {delta}, "end": {ended, sEnded}}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	got := rows(feed(n, "m", "d", "m", "end", "m", "end"))
	want := []row{
		{1, 1, "turn.started", 1}, {2, 1, "message", 1}, {0, 1, "message.delta", 2}, {3, 1, "message", 3},
		{4, 1, "turn.ended", 4}, {5, 1, "session.ended", 4},
		{6, 2, "turn.started", 5}, {7, 2, "message", 5}, {8, 2, "turn.ended", 6}, {9, 2, "session.ended", 6},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNormalizerExplicitTurns(t *testing.T) {
	dec := scripted{"m": {msg}, "start": {started}, "end": {ended}}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s", ExplicitTurns: true})
	got := rows(feed(n, "m", "start", "m", "end", "m", "start", "m"))
	want := []row{
		{1, 0, "message", 1}, {2, 1, "turn.started", 2}, {3, 1, "message", 3}, {4, 1, "turn.ended", 4},
		{5, 1, "message", 5}, {6, 2, "turn.started", 6}, {7, 2, "message", 7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestNormalizerTurnRules checks the turn rules where a dialect does not
// mark its turns: work beside the turns (a subagent's events, background
// tasks) starts none; a dialect's own turn.started starts the next one (a
// turn the harness started by itself); a session.ended in an open turn ends
// it first; and the turn in a payload is the envelope's.
func TestNormalizerTurnRules(t *testing.T) {
	sub := agentstream.Event{Payload: &agentstream.Message{Role: "assistant", Text: "sub"}, ParentCallID: "toolu_1"}
	bg := agentstream.E(&agentstream.SessionBackground{TaskID: "t1", Status: "completed"})
	failed := agentstream.E(&agentstream.SessionEnded{Status: "failed", Reason: "exit"})
	dec := scripted{
		"m": {msg}, "sub": {sub}, "bg": {bg}, "end": {ended, sEnded},
		"wake": {agentstream.E(&agentstream.TurnEnded{Turn: 7, Reason: "ok"}), agentstream.E(&agentstream.TurnStarted{Turn: 9})},
		"fail": {failed},
	}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	envs := feed(n, "m", "end", "sub", "bg", "m", "wake", "m", "fail")
	want := []row{
		{1, 1, "turn.started", 1}, {2, 1, "message", 1}, {3, 1, "turn.ended", 2}, {4, 1, "session.ended", 2},
		{5, 1, "message", 3}, {6, 1, "session.background", 4},
		{7, 2, "turn.started", 5}, {8, 2, "message", 5},
		{9, 2, "turn.ended", 6}, {10, 3, "turn.started", 6}, {11, 3, "message", 7},
		{12, 3, "turn.ended", 8}, {13, 3, "session.ended", 8},
	}
	if diff := cmp.Diff(want, rows(envs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, e := range envs {
		var turn int64 = -1
		switch p := e.Payload.(type) {
		case *agentstream.TurnStarted:
			turn = p.Turn
		case *agentstream.TurnEnded:
			turn = p.Turn
			if e.Seq == 12 && p.Reason != agentstream.TurnError {
				t.Errorf("turn.ended before a failed session.ended has reason %q, want error", p.Reason)
			}
		default:
			continue
		}
		if turn != e.Turn {
			t.Errorf("seq %d: %s payload turn %d, envelope turn %d", e.Seq, e.Type(), turn, e.Turn)
		}
	}
}

func TestNormalizerPanicCostsTheLine(t *testing.T) {
	dec := scripted{"m": {msg}}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	envs := feed(n, "m", "panic", "m")
	got := rows(envs)
	want := []row{{1, 1, "turn.started", 1}, {2, 1, "message", 1}, {3, 1, "raw", 2}, {4, 1, "message", 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if r := envs[2].Payload.(*agentstream.Raw); r.Reason != agentstream.RawAdapterError || r.Text != "panic" {
		t.Errorf("raw = %+v, want adapter-error with the line", r)
	}
}

func TestNormalizerFlushesPartials(t *testing.T) {
	d1 := agentstream.E(&agentstream.MessageDelta{Role: "assistant", Text: "Hel"})
	d2 := agentstream.E(&agentstream.MessageDelta{Role: "assistant", Text: "lo"})
	th := agentstream.E(&agentstream.ThinkingDelta{Text: "hmm"})
	sub := agentstream.Event{Payload: &agentstream.MessageDelta{Role: "assistant", Text: "sub"}, ParentCallID: "toolu_1"}
	dec := scripted{"a": {d1}, "b": {d2}, "t": {th}, "s": {sub}, "m": {msg}}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	envs := feed(n, "t", "a", "s", "b")
	var got []string
	for _, e := range envs[5:] {
		got = append(got, e.Type()+" "+e.ParentCallID+" "+string(e.Payload.AppendJSON(nil)))
	}
	want := []string{
		`thinking  {"text":"hmm","truncated":false,"redacted":false,"partial":true}`,
		`message  {"role":"assistant","text":"Hello","truncated":false,"partial":true}`,
		`message toolu_1 {"role":"assistant","text":"sub","truncated":false,"partial":true}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A complete message clears what its deltas accumulated.
	n = agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	if envs := feed(n, "a", "b", "m"); len(envs) != 4 {
		t.Errorf("got %d envelopes after a complete message, want 4: turn.started, two deltas and the message (no partial flush)", len(envs))
	}
}

func TestNormalizerOversizedAndStderr(t *testing.T) {
	n := agentstream.NewNormalizer(scripted{}, agentstream.NormalizerConfig{Session: "s", Harness: "h"})
	envs := n.Line(nil, agentstream.Line{N: 1, Size: 500 << 20, Oversized: true, Head: []byte(`{"type":"user"`)}, time.Time{})
	envs = n.Stderr(envs, agentstream.Line{N: 1, Bytes: []byte("warning: x"), Size: 10}, time.Time{})
	want := []string{
		`{"v":1,"session":"s","seq":1,"ts":null,"harness":"h","turn":1,"origin":"live","type":"turn.started","payload":{"turn":1},"source":{"stream":"stdout","line":1}}`,
		`{"v":1,"session":"s","seq":2,"ts":null,"harness":"h","turn":1,"origin":"live","type":"raw","payload":{"reason":"oversized","json":null,"text":"{\"type\":\"user\"","bytes":524288000,"truncated":true},"source":{"stream":"stdout","line":1}}`,
		`{"v":1,"session":"s","seq":3,"ts":null,"harness":"h","turn":1,"origin":"live","type":"stderr","payload":{"text":"warning: x","truncated":false},"source":{"stream":"stderr","line":1}}`,
	}
	var got []string
	for _, e := range envs {
		got = append(got, string(e.AppendJSON(nil)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestContextWindow(t *testing.T) {
	tests := map[string]int64{
		"claude-opus-5[1m]": 1_000_000, "claude-sonnet-4-5[1m]": 1_000_000, "claude-sonnet-5": 1_000_000,
		"claude-opus-5-20261101": 1_000_000, "claude-sonnet-4-20250514": 200_000, "claude-3-5-sonnet-20241022": 200_000,
		"claude-haiku-4-5": 200_000, "us.anthropic.claude-opus-4-1": 200_000, "gemini-2.5-pro": 1_048_576,
		"gemini-2.5-flash": 1_048_576, "gpt-5-codex": 0, "": 0, "<synthetic>": 0,
	}
	for model, want := range tests {
		got, ok := agentstream.ContextWindow(model)
		if got != want || ok != (want != 0) {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d", model, got, ok, want)
		}
	}
}

func TestApplyProtocol(t *testing.T) {
	tests := []struct {
		cmd      []string
		protocol string
		want     []string
	}{
		{[]string{"claude", "-p"}, "claude-json", []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}},
		{[]string{"claude", "-p", "--output-format=json"}, "claude-json", []string{"claude", "-p", "--output-format=json"}},
		{[]string{"claude"}, "claude-stream", []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}},
		{[]string{"codex", "exec"}, "codex-json", []string{"codex", "exec", "--json"}},
		{[]string{"codex", "exec", "--json"}, "codex-json", []string{"codex", "exec", "--json"}},
		{[]string{"opencode", "run"}, "opencode-json", []string{"opencode", "run", "--format", "json"}},
		{[]string{"copilot", "-p"}, "copilot-json", []string{"copilot", "--output-format", "json", "-p"}},
		{[]string{"copilot"}, "copilot-json", []string{"copilot", "--output-format", "json"}},
		{[]string{"./agent"}, "none", []string{"./agent"}},
		{[]string{"./agent"}, "no-such-protocol", []string{"./agent"}},
	}
	for _, tt := range tests {
		if got := agentstream.ApplyProtocol(tt.cmd, tt.protocol); !cmp.Equal(got, tt.want) {
			t.Errorf("ApplyProtocol(%q, %s) = %q, want %q", tt.cmd, tt.protocol, got, tt.want)
		}
	}
}

func TestAppendPrompt(t *testing.T) {
	tests := []struct {
		args     []string
		protocol string
		want     []string
	}{
		{[]string{"copilot", "--output-format", "json"}, "copilot-json", []string{"copilot", "--output-format", "json", "-p", "fix it"}},
		{[]string{"copilot", "--output-format", "json", "-p"}, "copilot-json", []string{"copilot", "--output-format", "json", "-p", "fix it"}},
		{[]string{"opencode", "run"}, "opencode-json", []string{"opencode", "run", "fix it"}},
		{[]string{"claude", "-p"}, "claude-json", []string{"claude", "-p"}},
	}
	for _, tt := range tests {
		if got := agentstream.AppendPrompt(tt.args, tt.protocol, "fix it"); !cmp.Equal(got, tt.want) {
			t.Errorf("AppendPrompt(%q, %s) = %q, want %q", tt.args, tt.protocol, got, tt.want)
		}
	}
}

func TestSessionTitle(t *testing.T) {
	if p := agentstream.SessionTitleProbe("claude-json", "ef45799e-d353-4d47"); !strings.Contains(p, "ef45799e-d353-4d47.jsonl") {
		t.Errorf("probe %q lacks the transcript path", p)
	}
	for _, bad := range []string{"", "x; rm -rf /", "$(id)", "a/b"} {
		if p := agentstream.SessionTitleProbe("claude-json", bad); p != "" {
			t.Errorf("probe for session id %q = %q, want none", bad, p)
		}
	}
	if p := agentstream.SessionTitleProbe("codex-json", "abc"); p != "" {
		t.Errorf("probe for codex = %q, want none", p)
	}
	out := `{"type":"ai-title","aiTitle":"First idea","sessionId":"x"}
{"type":"custom-title","customTitle":"Named by me","sessionId":"x"}
{"type":"ai-title","aiTitle":"Later idea","sessionId":"x"}
not json`
	if got, ok := agentstream.ParseSessionTitle(out); !ok || got != "Named by me" {
		t.Errorf("ParseSessionTitle = %q, %v; want the custom title", got, ok)
	}
	if got, ok := agentstream.ParseSessionTitle(`{"type": "ai-title", "aiTitle": "Only AI"}`); !ok || got != "Only AI" {
		t.Errorf("ParseSessionTitle = %q, %v; want the ai title", got, ok)
	}
	if _, ok := agentstream.ParseSessionTitle(""); ok {
		t.Error("ParseSessionTitle of nothing found a title")
	}
}

func TestSummarizeUsageOfJSONL(t *testing.T) {
	r := agentstream.SummarizeUsage([]agentstream.Event{
		agentstream.E(&agentstream.Passthrough{EventType: "usage", JSON: []byte(`{"scope":"call","inputTokens":3,"outputTokens":4}`)}),
		agentstream.E(&agentstream.Passthrough{EventType: "usage", JSON: []byte(`{"scope":"session","costUsd":0.5}`)}),
	})
	if r.InputTokens == nil || *r.InputTokens != 3 || r.CostUSD == nil || *r.CostUSD != 0.5 {
		t.Errorf("recap of jsonl usage: %+v", r)
	}
}

// TestNormalizerPromptTitle checks that the first prompt gives the session
// its title when the harness gave none before it: the prompt's first
// non-blank line, marked with source prompt; a subagent's prompt, a later
// prompt or a session already titled give none.
func TestNormalizerPromptTitle(t *testing.T) {
	user := func(text string) agentstream.Event {
		return agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text})
	}
	long := strings.Repeat("é", 250)
	tests := []struct {
		name  string
		lines map[string][]agentstream.Event
		feed  []string
		want  []string
	}{
		{"first line of the first prompt",
			map[string][]agentstream.Event{"p": {user("\n  fix the failing test  \nin pkg/a")}, "q": {user("and then?")}},
			[]string{"p", "q"},
			[]string{`{"title":"fix the failing test","source":"prompt"}`}},
		{"a subagent's prompt is not the session's",
			map[string][]agentstream.Event{"s": {{Payload: &agentstream.Message{Role: agentstream.RoleUser, Text: "sub task"}, ParentCallID: "toolu_1"}}, "p": {user("the task")}},
			[]string{"s", "p"},
			[]string{`{"title":"the task","source":"prompt"}`}},
		{"the harness titled it first",
			map[string][]agentstream.Event{"t": {agentstream.E(&agentstream.SessionTitle{Title: "Named"})}, "p": {user("the task")}},
			[]string{"t", "p"},
			[]string{`{"title":"Named"}`}},
		{"a long line is cut",
			map[string][]agentstream.Event{"p": {user(long)}},
			[]string{"p"},
			[]string{`{"title":"` + strings.Repeat("é", 200) + `…","source":"prompt"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := agentstream.NewNormalizer(scripted(tt.lines), agentstream.NormalizerConfig{Session: "s"})
			var got []string
			for _, e := range feed(n, tt.feed...) {
				if e.Type() == agentstream.TypeSessionTitle {
					got = append(got, string(e.Payload.AppendJSON(nil)))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
