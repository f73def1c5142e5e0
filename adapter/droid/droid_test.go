package droid_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/droid"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "droid-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "droid-json", "testdata/*.jsonl") }

func decode(lines ...string) []string {
	d := droid.NewDecoder()
	var evs []agentstream.Event
	for _, l := range lines {
		evs = d.Decode(evs, []byte(l))
	}
	evs = d.End(evs)
	var out []string
	for _, e := range evs {
		out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	return out
}

func check(t *testing.T, want, got []string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestDroidCompletionUsage: the run's one usage total is on completion, in
// snake_case like Anthropic's (input excludes cache reads): session usage
// with the turns and duration.
func TestDroidCompletionUsage(t *testing.T) {
	got := decode(`{"type":"completion","finalText":"done","numTurns":3,"durationMs":6000,"session_id":"2f8d0c4e","timestamp":1764600006100,"usage":{"input_tokens":1532,"output_tokens":412,"cache_read_input_tokens":20480,"cache_creation_input_tokens":3071}}`)
	check(t, []string{
		`message {"role":"assistant","text":"done","truncated":false}`,
		`usage {"scope":"session","inputTokens":1532,"outputTokens":412,"cacheReadTokens":20480,"cacheCreationTokens":3071,"costUsd":null,"turns":3,"durationMs":6000,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":"done","error":null,"reason":"completion"}`,
	}, got)
}

// TestDroidCompletionBeforeMessage: 0.27.4 printed the completion before
// the last assistant message: the completion's final text is the message,
// inside the turn, and the late copy is not shown again.
func TestDroidCompletionBeforeMessage(t *testing.T) {
	got := decode(
		`{"type":"completion","finalText":"4","numTurns":1,"durationMs":6172,"session_id":"d0","timestamp":1764591787039}`,
		`{"type":"message","role":"assistant","id":"f7","text":"4","timestamp":1764591787028,"session_id":"d0"}`,
	)
	check(t, []string{
		`message {"role":"assistant","text":"4","truncated":false}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":1,"durationMs":6172,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":"4","error":null,"reason":"completion"}`,
	}, got)
}

// TestDroidResultWithoutID: a tool_result that lost its id answers the
// oldest call of the same tool.
func TestDroidResultWithoutID(t *testing.T) {
	got := decode(
		`{"type":"tool_call","id":"c1","messageId":"m1","toolId":"Read","toolName":"Read","parameters":{"file_path":"a.txt"},"timestamp":1764600001100,"session_id":"s"}`,
		`{"type":"tool_call","id":"c2","messageId":"m1","toolId":"Execute","toolName":"Execute","parameters":{"command":"ls"},"timestamp":1764600001100,"session_id":"s"}`,
		`{"type":"tool_result","messageId":"m2","toolId":"Execute","isError":false,"value":"a.txt\n[Process exited with code 0]","timestamp":1764600001200,"session_id":"s"}`,
	)
	check(t, []string{
		`tool.call {"callId":"c1","name":"Read","input":"{\"file_path\":\"a.txt\"}","truncated":false,"category":"read","summary":"a.txt","displayName":"Read"}`,
		`tool.call {"callId":"c2","name":"Execute","input":"{\"command\":\"ls\"}","truncated":false,"category":"execute","summary":"ls","displayName":"Shell"}`,
		`tool.result {"callId":"c2","isError":false,"output":"a.txt\n[Process exited with code 0]","truncated":false,"name":"Execute","characters":34,"exitCode":0}`,
	}, got)
}

// TestDroidJSONResult: --output-format json prints one Claude-shaped result.
func TestDroidJSONResult(t *testing.T) {
	got := decode(`{"type":"result","subtype":"success","is_error":false,"duration_ms":5642,"num_turns":1,"result":"Hello!","session_id":"7719f871-23f8-41ac-b004-60dfa547ed54"}`)
	check(t, []string{
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":1,"durationMs":5642,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":"Hello!","error":null,"reason":"completion"}`,
	}, got)
}

// TestDroidEdits checks that Edit and Create give their file.change once
// their result succeeded, and a failed edit none.
func TestDroidEdits(t *testing.T) {
	got := decode(
		`{"type":"tool_call","id":"c1","messageId":"m1","toolId":"Edit","toolName":"Edit","parameters":{"file_path":"/w/a.txt","old_str":"foo","new_str":"bar"},"timestamp":1,"session_id":"s"}`,
		`{"type":"tool_result","id":"c1","messageId":"m1","toolId":"Edit","isError":false,"value":"ok","timestamp":2,"session_id":"s"}`,
		`{"type":"tool_call","id":"c2","messageId":"m1","toolId":"Create","toolName":"Create","parameters":{"file_path":"/w/n.txt","content":"hi\n"},"timestamp":3,"session_id":"s"}`,
		`{"type":"tool_result","id":"c2","messageId":"m1","toolId":"Create","isError":false,"value":"ok","timestamp":4,"session_id":"s"}`,
		`{"type":"tool_call","id":"c3","messageId":"m1","toolId":"Edit","toolName":"Edit","parameters":{"file_path":"/w/a.txt","old_str":"x","new_str":"y"},"timestamp":5,"session_id":"s"}`,
		`{"type":"tool_result","id":"c3","messageId":"m1","toolId":"Edit","isError":true,"error":{"type":"tool","message":"not found"},"timestamp":6,"session_id":"s"}`,
	)
	var changes []string
	for _, e := range got {
		if strings.HasPrefix(e, "file.change") {
			changes = append(changes, e)
		}
	}
	want := []string{
		`file.change {"callId":"c1","changes":[{"path":"/w/a.txt","kind":"modify","movePath":null,"diff":"--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-foo\n+bar\n"}]}`,
		`file.change {"callId":"c2","changes":[{"path":"/w/n.txt","kind":"add","movePath":null,"diff":"--- /dev/null\n+++ b/w/n.txt\n@@ -0,0 +1 @@\n+hi\n"}]}`,
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestReasoning: droid 0.225.2 prints the model's reasoning as a line of its
// own (recorded by the lab against the model simulator).
func TestReasoning(t *testing.T) {
	got := decode(`{"type":"reasoning","id":"839500a3-7271-48b2-bcf0-b6e8bd2228fd","text":"The lab wants its greeting.","timestamp":1796159972910,"session_id":"9772d748-e5cb-4be6-b09d-200900781046"}`)
	check(t, []string{`thinking {"text":"The lab wants its greeting.","truncated":false,"redacted":false}`}, got)
}
