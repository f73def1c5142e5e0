package acp_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestToolInputLater: ACP agents announce a call before its input. The
// Claude agent (claude-agent-acp 0.23.1) sends tool_call with rawInput {}
// and the input in a tool_call_update; the tool.call waits for it (lines
// recorded by the lab).
func TestToolInputLater(t *testing.T) {
	const up = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`
	got := decode(
		up+`{"_meta":{"claudeCode":{"toolName":"Bash"}},"toolCallId":"toolu_1","sessionUpdate":"tool_call","rawInput":{},"status":"pending","title":"Terminal","kind":"execute","content":[]}}}`,
		up+`{"_meta":{"claudeCode":{"toolName":"Bash"}},"toolCallId":"toolu_1","sessionUpdate":"tool_call_update","rawInput":{"command":"echo lab-shell-ok","description":"Run the lab command"},"title":"echo lab-shell-ok","kind":"execute","content":[{"type":"content","content":{"type":"text","text":"Run the lab command"}}]}}}`,
		up+`{"_meta":{"claudeCode":{"toolName":"Bash"}},"toolCallId":"toolu_1","sessionUpdate":"tool_call_update","status":"completed","rawOutput":"lab-shell-ok","content":[{"type":"content","content":{"type":"text","text":"lab-shell-ok"}}]}}}`,
	)
	check(t, []string{
		`session.started {"harness":"acp","model":null,"contextWindow":null,"cwd":null,"sessionId":"s1","tools":null,"version":null,"permissionMode":null}`,
		`turn.started {"turn":1}`,
		`tool.call {"callId":"toolu_1","name":"Bash","input":"{\"command\":\"echo lab-shell-ok\",\"description\":\"Run the lab command\"}","truncated":false,"category":"execute","summary":"echo lab-shell-ok","displayName":"Shell"}`,
		`tool.output {"callId":"toolu_1","channel":"stdout","text":"Run the lab command","truncated":false}`,
		`tool.result {"callId":"toolu_1","isError":false,"output":"lab-shell-ok","truncated":false,"name":"Bash","characters":12,"exitCode":null}`,
	}, got)
}

// TestToolNeverInput: a call whose input never comes is announced before
// its turn ends, as the agent described it.
func TestToolNeverInput(t *testing.T) {
	const up = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`
	got := decode(
		up+`{"toolCallId":"c1","sessionUpdate":"tool_call","status":"pending","title":"Thinking","kind":"think"}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
	)
	want := `tool.call {"callId":"c1","name":"think","input":"null","truncated":false,"category":"think","summary":"Thinking","displayName":"Think"}`
	if len(got) < 3 || got[2] != want {
		t.Errorf("events %q: want the call third, %s", got, want)
	}
}

// TestTurnUsageSummed: claude-agent-acp 0.23.1 reports each turn's usage in
// its prompt response; the session's total is their sum.
func TestTurnUsageSummed(t *testing.T) {
	got := decode(
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":1200,"outputTokens":8,"cachedReadTokens":300,"cachedWriteTokens":0,"totalTokens":1508}}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn","usage":{"inputTokens":1300,"outputTokens":8,"cachedReadTokens":1200,"cachedWriteTokens":0,"totalTokens":2508}}}`,
	)
	want := `usage {"scope":"session","inputTokens":2500,"outputTokens":16,"cacheReadTokens":1500,"cacheCreationTokens":0,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":null}`
	var last string
	for _, g := range got {
		if len(g) > 6 && g[:6] == "usage " {
			last = g
		}
	}
	if last != want {
		t.Errorf("last usage\n%s\nwant\n%s", last, want)
	}
}

// TestMetaUsage: Gemini CLI and Qwen Code report usage in _meta only: Qwen a
// call's on its last message chunk, Gemini the turn's prompt size and
// output on the prompt response (lines recorded by the lab).
func TestMetaUsage(t *testing.T) {
	const up = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`
	got := decode(
		up+`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""},"_meta":{"usage":{"inputTokens":1500,"outputTokens":19,"totalTokens":1519,"thoughtTokens":5,"cachedReadTokens":300},"durationMs":496}}}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":1500,"output_tokens":14},"model_usage":[{"model":"gemini-3.8-flash","token_count":{"input_tokens":1500,"output_tokens":14}}]}}}}`,
	)
	for _, want := range []string{
		`usage {"scope":"call","model":null,"inputTokens":1200,"outputTokens":19,"cacheReadTokens":300,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":5,"messageId":null}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":14,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":null,"contextTokens":1500}`,
	} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Errorf("events lack %s; got %q", want, got)
		}
	}
}

// TestLabCaptures replays the lab's captures of the real ACP agents
// (SOURCES.md in testdata/lab): their goldens, every invariant, and no
// method raw unless the adapter lists it as deliberately raw.
func TestLabCaptures(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "acp", Fixtures: []string{"testdata/lab/*.jsonl"}, Update: *update,
	})
	agentstreamtest.CheckCaptures(t, "acp", "testdata/lab/*.jsonl", nil)
}
