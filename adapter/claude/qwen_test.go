package claude_test

import (
	"testing"

	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/google/go-cmp/cmp"
)

// TestQwenTools: Qwen Code's tools have Gemini CLI's names; each gets its
// category and summary (lines recorded by the lab from Qwen Code 0.24.4).
func TestQwenTools(t *testing.T) {
	line := `{"type":"assistant","uuid":"u1","session_id":"s1","parent_tool_use_id":null,"message":{"id":"m1","type":"message","role":"assistant","model":"modelsim","content":[` +
		`{"type":"tool_use","id":"call_1","name":"run_shell_command","input":{"command":"echo lab-shell-ok","description":"Run the lab command"}},` +
		`{"type":"tool_use","id":"call_2","name":"read_file","input":{"file_path":"/w/a.txt"}},` +
		`{"type":"tool_use","id":"call_3","name":"agent","input":{"description":"Lab subagent","prompt":"p","subagent_type":"general-purpose"}}` +
		`],"stop_reason":null,"usage":{"input_tokens":0,"output_tokens":0}}}`
	got := decode(t, claude.Qwen, line)
	want := []string{
		`tool.call {"callId":"call_1","name":"run_shell_command","input":"{\"command\":\"echo lab-shell-ok\",\"description\":\"Run the lab command\"}","truncated":false,"category":"execute","summary":"echo lab-shell-ok"}`,
		`tool.call {"callId":"call_2","name":"read_file","input":"{\"file_path\":\"/w/a.txt\"}","truncated":false,"category":"read","summary":"/w/a.txt"}`,
		`tool.call {"callId":"call_3","name":"agent","input":"{\"description\":\"Lab subagent\",\"prompt\":\"p\",\"subagent_type\":\"general-purpose\"}","truncated":false,"category":"delegate","summary":"Lab subagent"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
