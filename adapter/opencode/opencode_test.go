package opencode_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/opencode"
	"github.com/agentstream/agentstream/agentstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "opencode-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "opencode-json", "testdata/*.jsonl") }

func decode(lines ...string) []agentstream.Event {
	d := opencode.NewDecoder()
	var evs []agentstream.Event
	for _, l := range lines {
		evs = d.Decode(evs, []byte(l))
	}
	return d.End(evs)
}

func render(evs []agentstream.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// TestOpencodePerStepSums: each step_finish is one model call, with input
// excluding cache and reasoning counted apart from output; each becomes
// call usage (reasoning added to output), and the recap sums them, cost
// included. Recorded runs: the lab's captures of opencode 1.18.33 (two
// steps with tokens.total, and a step with reasoning; the figures are the
// calls' usage in modelsim/scenarios/shell.json and text.json) and a
// January 2026 capture (two steps with costs). A cost of 0 for a step that
// spent tokens is opencode's for a model it has no price for, so none is
// given.
func TestOpencodePerStepSums(t *testing.T) {
	callUsage := func(evs []agentstream.Event) []string {
		var got []string
		for _, e := range evs {
			if u, ok := e.Payload.(*agentstream.Usage); ok {
				got = append(got, string(u.AppendJSON(nil)))
			}
		}
		return got
	}
	t.Run("1.18.33", func(t *testing.T) {
		evs := decode(readLines(t, "testdata/lab/opencode-1.18.33-shell.jsonl")...)
		// shell.json: 1500 in, 200 cache read, 30 out; then 1700 in,
		// 1500 cache read, 12 out; no reasoning.
		want := []string{
			`{"scope":"call","model":null,"inputTokens":1500,"outputTokens":30,"cacheReadTokens":200,"cacheCreationTokens":0,"contextTokens":1700,"reasoningTokens":0,"messageId":"msg_233a17e1f0016GX921ReN5FnJ7"}`,
			`{"scope":"call","model":null,"inputTokens":1700,"outputTokens":12,"cacheReadTokens":1500,"cacheCreationTokens":0,"contextTokens":3200,"reasoningTokens":0,"messageId":"msg_233a18cad00130ulWla3pIUoJy"}`,
		}
		if diff := cmp.Diff(want, callUsage(evs)); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
		r := agentstream.SummarizeUsage(evs)
		// tokens.total of the two lines: (1500+30+200) + (1700+12+1500).
		if r.TokensFrom != "calls" || r.Calls != 2 || r.TotalTokens() != 1730+3212 {
			t.Errorf("recap = %s (from %q, %d calls, %d tokens), want 2 calls, %d tokens", r.String(), r.TokensFrom, r.Calls, r.TotalTokens(), 1730+3212)
		}
		if *r.InputTokens != 1500+1700 || *r.CacheReadTokens != 200+1500 || *r.OutputTokens != 30+12 || *r.ReasoningTokens != 0 || *r.ContextTokens != 1700+1500 {
			t.Errorf("recap = %+v", r)
		}
	})
	t.Run("reasoning", func(t *testing.T) {
		evs := decode(readLines(t, "testdata/lab/opencode-1.18.33-text.jsonl")...)
		// text.json: 1200 in, 300 cache read, 19 out of which 5
		// reasoning (opencode prints output 14, reasoning 5).
		want := []string{
			`{"scope":"call","model":null,"inputTokens":1200,"outputTokens":19,"cacheReadTokens":300,"cacheCreationTokens":0,"contextTokens":1500,"reasoningTokens":5,"messageId":"msg_233aa4333001QL2ir1ovdw9mM6"}`,
		}
		if diff := cmp.Diff(want, callUsage(evs)); diff != "" {
			t.Errorf("usage (-want +got):\n%s", diff)
		}
		r := agentstream.SummarizeUsage(evs)
		if r.Calls != 1 || *r.OutputTokens != 19 || *r.ReasoningTokens != 5 {
			t.Errorf("recap = %s, want 1 call, 19 out of which 5 reasoning", r.String())
		}
	})
	t.Run("costs", func(t *testing.T) {
		evs := decode(readLines(t, "testdata/banteg-takopi-opencode-stream-success.jsonl")...)
		r := agentstream.SummarizeUsage(evs)
		if r.Calls != 2 || *r.InputTokens != 21772+671 || *r.CacheReadTokens != 21415 || *r.OutputTokens != 118 {
			t.Errorf("recap = %s, want 2 calls, 22443 in, 21415 cached, 118 out", r.String())
		}
		if r.CostUSD == nil || *r.CostUSD != 0.001 {
			t.Errorf("cost = %v, want 0.001 (the steps' costs summed)", r.CostUSD)
		}
	})
}

// TestOpencodeEnds: the final step (reason other than tool-calls) ends the
// run; a run whose step_finish was lost has no completion (the runner ends
// it); an error makes the final status failed.
func TestOpencodeEnds(t *testing.T) {
	ends := func(evs []agentstream.Event) []string {
		var out []string
		for _, e := range evs {
			switch e.Type() {
			case agentstream.TypeTurnEnded, agentstream.TypeSessionEnded:
				out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"stop", readLines(t, "testdata/sortie-ai-sortie-opencode-simple-turn.jsonl"), []string{
			`turn.ended {"turn":1,"reason":"ok"}`,
			`session.ended {"status":"succeeded","stopReason":"stop","summary":"Hello, world!","error":null,"reason":"completion"}`,
		}},
		{"tool-calls only", readLines(t, "testdata/lab/opencode-1.18.33-shell.jsonl")[:4], nil},
		{"missing step_finish", readLines(t, "testdata/lab-opencode-1.18.33-text-no-step-finish.jsonl"), nil},
		{"only step_start", readLines(t, "testdata/lab-opencode-1.18.33-text-only-step-start.jsonl"), nil},
		{"error then done", append(readLines(t, "testdata/sortie-ai-sortie-opencode-logical-failure-exit0.jsonl"),
			`{"type":"done","timestamp":1777197598300,"sessionID":"ses_fail123","reason":"idle","rejected":["bash"]}`), []string{
			`turn.ended {"turn":1,"reason":"error"}`,
			`session.ended {"status":"failed","stopReason":"idle","summary":null,"error":"invalid api key","reason":"completion"}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ends(decode(tc.lines...))); diff != "" {
				t.Errorf("ends (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpencodeToolUse: a completed tool part gives the call and its result
// together; a failed one an error result.
func TestOpencodeToolUse(t *testing.T) {
	got := render(decode(
		`{"type":"tool_use","timestamp":1767036061199,"sessionID":"ses_494719016ffe85dkDMj0FPRbHK","part":{"id":"prt_b6b8e85bb001CzBoN2dDlEZJnP","sessionID":"ses_494719016ffe85dkDMj0FPRbHK","messageID":"msg_b6b8e702b0012XuEC4bGe0XhKa","type":"tool","callID":"r9bQWsNLvOrJGIOz","tool":"bash","state":{"status":"completed","input":{"command":"echo hello","description":"Print hello to stdout"},"output":"hello\n","title":"Print hello to stdout","metadata":{"output":"hello\n","exit":0,"description":"Print hello to stdout"},"time":{"start":1767036061123,"end":1767036061173}}}}`,
		`{"type":"tool_use","timestamp":1767036061300,"sessionID":"ses_494719016ffe85dkDMj0FPRbHK","part":{"id":"prt_2","sessionID":"ses_494719016ffe85dkDMj0FPRbHK","messageID":"msg_b6b8e702b0012XuEC4bGe0XhKa","type":"tool","callID":"c2","tool":"read","state":{"status":"error","input":{"filePath":"/nope"},"error":"File not found: /nope","time":{"start":1,"end":2}}}}`,
	))
	want := []string{
		`session.started {"harness":"opencode","model":null,"contextWindow":null,"cwd":null,"sessionId":"ses_494719016ffe85dkDMj0FPRbHK","tools":null,"version":null,"permissionMode":null}`,
		`tool.call {"callId":"r9bQWsNLvOrJGIOz","name":"bash","input":"{\"command\":\"echo hello\",\"description\":\"Print hello to stdout\"}","truncated":false,"category":"execute","summary":"echo hello","displayName":"Shell"}`,
		`tool.result {"callId":"r9bQWsNLvOrJGIOz","isError":false,"output":"hello\n","truncated":false,"name":"bash","characters":6,"exitCode":0}`,
		`tool.call {"callId":"c2","name":"read","input":"{\"filePath\":\"/nope\"}","truncated":false,"category":"read","summary":"/nope","displayName":"Read"}`,
		`tool.result {"callId":"c2","isError":true,"output":"File not found: /nope","truncated":false,"name":"read","characters":21,"exitCode":null}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestOpencodeEdits checks the file.change of completed edit tools: the
// patch edit printed, the texts of multiedit, write as add when the file did
// not exist; none for a failed edit.
func TestOpencodeEdits(t *testing.T) {
	part := func(id, tool, state string) string {
		return `{"type":"tool_use","timestamp":1,"sessionID":"ses_1","part":{"id":"prt_` + id + `","sessionID":"ses_1","messageID":"msg_1","type":"tool","callID":"` + id + `","tool":"` + tool + `","state":` + state + `}}`
	}
	lines := []string{
		part("e1", "edit", `{"status":"completed","input":{"filePath":"/w/a.go","oldString":"x","newString":"y"},"output":"","metadata":{"diff":"Index: /w/a.go\n--- /w/a.go\n+++ /w/a.go\n@@ -1 +1 @@\n-x\n+y\n"},"time":{"start":1,"end":2}}`),
		part("e2", "multiedit", `{"status":"completed","input":{"filePath":"/w/b.go","edits":[{"filePath":"/w/b.go","oldString":"a","newString":"b"}]},"output":"","metadata":{},"time":{"start":1,"end":2}}`),
		part("e3", "write", `{"status":"completed","input":{"filePath":"/w/c.txt","content":"hi\n"},"output":"","metadata":{"exists":false},"time":{"start":1,"end":2}}`),
		part("e4", "edit", `{"status":"error","input":{"filePath":"/w/a.go","oldString":"q","newString":"r"},"error":"oldString not found","time":{"start":1,"end":2}}`),
	}
	var got []string
	for _, e := range render(decode(lines...)) {
		if strings.HasPrefix(e, "file.change") {
			got = append(got, e)
		}
	}
	want := []string{
		`file.change {"callId":"e1","changes":[{"path":"/w/a.go","kind":"modify","movePath":null,"diff":"Index: /w/a.go\n--- /w/a.go\n+++ /w/a.go\n@@ -1 +1 @@\n-x\n+y\n"}]}`,
		`file.change {"callId":"e2","changes":[{"path":"/w/b.go","kind":"modify","movePath":null,"diff":"--- a/w/b.go\n+++ b/w/b.go\n@@ -1 +1 @@\n-a\n+b\n"}]}`,
		`file.change {"callId":"e3","changes":[{"path":"/w/c.txt","kind":"add","movePath":null,"diff":"--- /dev/null\n+++ b/w/c.txt\n@@ -0,0 +1 @@\n+hi\n"}]}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOpencodeFailedCommand: opencode 1.18.33 says a bash call completed
// when its command exited 3 (metadata.exit); the result is an error with
// the exit code (line recorded by the lab).
func TestOpencodeFailedCommand(t *testing.T) {
	got := render(decode(`{"type":"tool_use","timestamp":1796161195393,"sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"echo lab-fail-out; exit 3"},"output":"lab-fail-out\n","metadata":{"output":"lab-fail-out\n","exit":3,"truncated":false},"title":"echo lab-fail-out; exit 3","time":{"start":1796161193826,"end":1796161194906}},"id":"prt_1","sessionID":"ses_1","messageID":"msg_1"}}`))
	want := `tool.result {"callId":"call_1","isError":true,"output":"lab-fail-out\n","truncated":false,"name":"bash","characters":13,"exitCode":3}`
	found := false
	for _, g := range got {
		found = found || g == want
	}
	if !found {
		t.Errorf("events %q lack %s", got, want)
	}
}
