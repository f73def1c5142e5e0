package claude_test

import (
	"strings"
	"testing"

	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/google/go-cmp/cmp"
)

// TestQwenTools: Qwen Code's tools have Gemini CLI's names; each gets its
// category, summary and display name, and the agent tool starts a subagent
// (lines recorded by the lab from Qwen Code 0.24.4).
func TestQwenTools(t *testing.T) {
	line := `{"type":"assistant","uuid":"u1","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m1","type":"message","role":"assistant","model":"modelsim","content":[` +
		`{"type":"tool_use","id":"call_1","name":"run_shell_command","input":{"command":"echo lab-shell-ok","description":"Run the lab command"}},` +
		`{"type":"tool_use","id":"call_2","name":"read_file","input":{"file_path":"/w/a.txt"}},` +
		`{"type":"tool_use","id":"call_3","name":"agent","input":{"description":"Lab subagent","prompt":"p","subagent_type":"general-purpose"}}` +
		`],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`
	got := decode(t, claude.Qwen, line)
	want := []string{
		`tool.call {"callId":"call_1","name":"run_shell_command","input":"{\"command\":\"echo lab-shell-ok\",\"description\":\"Run the lab command\"}","truncated":false,"category":"execute","summary":"echo lab-shell-ok","displayName":"Shell"}`,
		`tool.call {"callId":"call_2","name":"read_file","input":"{\"file_path\":\"/w/a.txt\"}","truncated":false,"category":"read","summary":"/w/a.txt","displayName":"Read"}`,
		`tool.call {"callId":"call_3","name":"agent","input":"{\"description\":\"Lab subagent\",\"prompt\":\"p\",\"subagent_type\":\"general-purpose\"}","truncated":false,"category":"delegate","summary":"Lab subagent","displayName":"Agent"}`,
		`subagent {"id":"call_3","callId":"call_3","name":"general-purpose","status":"started","description":"Lab subagent"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestQwenFailures: a failed shell command's exit code (from its text), a
// retry, and the API's message of a failed run (Qwen Code 0.24.4 lines
// recorded by the lab).
func TestQwenFailures(t *testing.T) {
	got := decode(t, claude.Qwen,
		`{"type":"assistant","uuid":"u1","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m1","type":"message","role":"assistant","model":"modelsim","content":[{"type":"tool_use","id":"call_1","name":"run_shell_command","input":{"command":"exit 3"}}],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"user","uuid":"u2","session_id":"s1","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","is_error":true,"content":"Command: exit 3\nDirectory: (root)\nOutput: lab-fail-out\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: 11330"}]}}`,
		`{"type":"system","subtype":"retry","uuid":"u3","session_id":"s1","parent_tool_use_id":null,"data":{"reason":"retry","attempt":1,"maxRetries":10,"delayMs":60000,"discardedToolCalls":0,"preserveText":false}}`,
		`{"type":"result","subtype":"error_during_execution","uuid":"u4","session_id":"s1","is_error":true,"duration_ms":737,"duration_api_ms":0,"num_turns":1,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0},"permission_denials":[],"error":{"message":"[API Error: 400 modelsim: invalid request (lab-400)]"}}`,
	)
	want := []string{
		`tool.result {"callId":"call_1","isError":true,"output":"Command: exit 3\nDirectory: (root)\nOutput: lab-fail-out\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: 11330","truncated":false,"name":"run_shell_command","characters":122,"exitCode":3}`,
		`retry {"attempt":1,"maxRetries":10,"delayMs":60000,"error":"retry","status":null}`,
		`session.ended {"status":"failed","stopReason":null,"summary":null,"error":"[API Error: 400 modelsim: invalid request (lab-400)]","reason":"completion"}`,
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("events lack\n%s\ngot:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestQwenWokenTurn: Qwen Code 0.24.4 runs an agent in the background; the
// main agent's reply without a tool call ends its turn, and the message
// Qwen Code writes when the agent finished starts the next turn, which its
// one result ends (lines shortened from the lab's capture).
func TestQwenWokenTurn(t *testing.T) {
	got := decode(t, claude.Qwen,
		`{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m1","role":"assistant","model":"modelsim","content":[{"type":"tool_use","id":"call_1","name":"agent","input":{"description":"Run the lab task","prompt":"p","subagent_type":"general-purpose"}}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"user","session_id":"s1","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","is_error":false,"content":"Background agent launched successfully."}]}}`,
		`{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m2","role":"assistant","model":"modelsim","content":[{"type":"text","text":"The subagent is running."}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"user","session_id":"s1","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"text","text":"Background agent \"general-purpose: Run the lab task\" completed."}]}}`,
		`{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m3","role":"assistant","model":"modelsim","content":[{"type":"text","text":"The subagent reported lab-sub-ok."}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
		`{"type":"result","subtype":"success","session_id":"s1","is_error":false,"num_turns":3,"result":"The subagent reported lab-sub-ok."}`,
	)
	var turns []string
	for _, g := range got {
		if strings.HasPrefix(g, "turn.") || strings.HasPrefix(g, "message ") {
			turns = append(turns, g)
		}
	}
	want := []string{
		`message {"role":"assistant","text":"The subagent is running.","truncated":false}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`turn.started {"turn":2}`,
		`message {"role":"user","text":"Background agent \"general-purpose: Run the lab task\" completed.","truncated":false}`,
		`message {"role":"assistant","text":"The subagent reported lab-sub-ok.","truncated":false}`,
		`turn.ended {"turn":2,"reason":"ok"}`,
	}
	if diff := cmp.Diff(want, turns); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestClaudeBashExitCode: Claude Code 2.1.328 starts a failed Bash result
// with its exit code (line recorded by the lab); a successful one gives
// none.
func TestClaudeBashExitCode(t *testing.T) {
	got := decode(t, claude.Claude,
		`{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo lab-fail-out; exit 3"}},{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"echo ok"}}]}}`,
		`{"type":"user","session_id":"s1","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","content":"Exit code 3\nlab-fail-out\nlab-fail-err","is_error":true,"tool_use_id":"toolu_1"},{"type":"tool_result","content":"ok","is_error":false,"tool_use_id":"toolu_2"}]}}`,
	)
	want := []string{
		`tool.result {"callId":"toolu_1","isError":true,"output":"Exit code 3\nlab-fail-out\nlab-fail-err","truncated":false,"name":"Bash","characters":37,"exitCode":3}`,
		`tool.result {"callId":"toolu_2","isError":false,"output":"ok","truncated":false,"name":"Bash","characters":2,"exitCode":null}`,
	}
	var results []string
	for _, g := range got {
		if strings.HasPrefix(g, "tool.result") {
			results = append(results, g)
		}
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
