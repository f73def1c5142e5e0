package claude_test

import (
	"testing"

	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/google/go-cmp/cmp"
)

// TestLineMappings checks the lines that carry something besides the
// conversation: each becomes the event it means, its values taken from the
// line.
func TestLineMappings(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"stream error",
			[]string{`{"type":"stream_event","event":{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}}`},
			[]string{`error {"message":"Overloaded","errorType":"overloaded_error","recoverable":null}`}},
		{"status requesting",
			[]string{`{"type":"system","subtype":"status","status":"requesting","uuid":"u","session_id":"s"}`},
			[]string{`progress {"activity":"requesting","tokens":null,"message":null}`}},
		{"status with the permission mode",
			[]string{`{"type":"system","subtype":"status","status":null,"permissionMode":"acceptEdits","uuid":"u","session_id":"s"}`},
			[]string{`session.updated {"model":null,"permissionMode":"acceptEdits","mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`}},
		{"compaction failed",
			[]string{`{"type":"system","subtype":"status","status":null,"compact_result":"failed","compact_error":"Not enough messages to compact."}`},
			[]string{`error {"message":"Not enough messages to compact.","errorType":"compaction","recoverable":null}`}},
		{"thinking tokens",
			[]string{`{"type":"system","subtype":"thinking_tokens","estimated_tokens":43,"estimated_tokens_delta":38,"uuid":"u","session_id":"s"}`},
			[]string{`progress {"activity":"thinking","tokens":43,"message":null}`}},
		{"background tasks",
			[]string{`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"ab07","task_type":"local_agent","subagent_type":"general-purpose","description":"Count files"}]}`,
				`{"type":"system","subtype":"background_tasks_changed","tasks":[]}`},
			[]string{
				`session.updated {"model":null,"permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":[{"taskId":"ab07","kind":"subagent","description":"Count files"}]}`,
				`session.updated {"model":null,"permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":[]}`,
			}},
		{"refusal fallback",
			[]string{`{"type":"system","subtype":"model_refusal_fallback","original_model":"claude-a[1m]","fallback_model":"claude-opus-4-8","content":"Switched to Opus 4.8.","api_refusal_category":"cyber"}`},
			[]string{`fallback {"from":{"index":null,"harness":"claude-code","model":"claude-a[1m]"},"to":{"index":null,"harness":"claude-code","model":"claude-opus-4-8"},"failure":"refusal: cyber","message":"Switched to Opus 4.8.","resetAt":null}`}},
		{"conversation reset",
			[]string{`{"type":"conversation_reset","new_conversation_id":"c2","session_id":"c1"}`},
			[]string{`session.updated {"model":null,"permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":"c2","mcpServers":null,"skills":null,"backgroundTasks":null}`}},
		{"command lifecycle",
			[]string{`{"type":"command_lifecycle","command_uuid":"c51b","state":"queued","uuid":"u","session_id":"s"}`},
			[]string{`message.status {"messageId":"c51b","status":"queued"}`}},
		{"hook call and its answer",
			[]string{`{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback","callback_id":"hook_4","input":{"hook_event_name":"PreToolUse","tool_name":"Bash"},"tool_use_id":"toolu_1"}}`,
				`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"continue":true}}}`},
			[]string{
				`hook {"event":"PreToolUse","name":"hook_4","status":"started","outcome":null,"output":null,"truncated":false}`,
				`hook {"event":"PreToolUse","name":"hook_4","status":"finished","outcome":"success","output":null,"truncated":false}`,
			}},
		{"the commands and mode the CLI reports",
			[]string{`{"type":"control_response","response":{"subtype":"success","request_id":"x","response":{"commands":["compact",{"name":"review"}],"models":[]}}}`,
				`{"type":"control_response","response":{"subtype":"success","request_id":"y","response":{"mode":"acceptEdits"}}}`},
			[]string{
				`session.updated {"model":null,"permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":["compact","review"],"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`,
				`session.updated {"model":null,"permissionMode":"acceptEdits","mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decode(t, claude.Claude, tt.lines...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolEffects checks that a call's effect follows its result: a file
// change or a plan only when the call succeeded, a background subagent's
// end only when its task ended.
func TestToolEffects(t *testing.T) {
	initWith := func(tools string) string {
		return `{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[` + tools + `]}`
	}
	call := func(id, name, input string) string {
		return `{"type":"assistant","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}]}}`
	}
	result := func(id, content string, isError bool, tur string) string {
		e := "false"
		if isError {
			e = "true"
		}
		l := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `","content":` + content + `,"is_error":` + e + `}]}`
		if tur != "" {
			l += `,"tool_use_result":` + tur
		}
		return l + `}`
	}
	tests := []struct {
		name  string
		lines []string
		want  []string // the events after the first tool.call, tool.result and init
	}{
		{"edit without a structured result",
			[]string{initWith(`"Edit"`), call("e1", "Edit", `{"file_path":"/w/a.txt","old_string":"beta","new_string":"BETA"}`), result("e1", `"ok"`, false, "")},
			[]string{`file.change {"callId":"e1","changes":[{"path":"/w/a.txt","kind":"modify","movePath":null,"diff":"--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-beta\n+BETA\n"}]}`}},
		{"edit that failed",
			[]string{initWith(`"Edit"`), call("e1", "Edit", `{"file_path":"/w/a.txt","old_string":"x","new_string":"y"}`), result("e1", `"String to replace not found"`, true, `"Error: String to replace not found"`)},
			nil},
		{"multi edit",
			[]string{initWith(`"MultiEdit"`), call("e1", "MultiEdit", `{"file_path":"/w/a.txt","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c\n","new_string":"d\n"}]}`), result("e1", `"ok"`, false, "")},
			[]string{`file.change {"callId":"e1","changes":[{"path":"/w/a.txt","kind":"modify","movePath":null,"diff":"--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-a\n+b\n@@ -1 +1 @@\n-c\n+d\n"}]}`}},
		{"write of a new file, said in the result text",
			[]string{initWith(`"Write"`), call("w1", "Write", `{"file_path":"/w/n.txt","content":"hi\n"}`), result("w1", `"File created successfully at: /w/n.txt"`, false, "")},
			[]string{`file.change {"callId":"w1","changes":[{"path":"/w/n.txt","kind":"add","movePath":null,"diff":"--- /dev/null\n+++ b/w/n.txt\n@@ -0,0 +1 @@\n+hi\n"}]}`}},
		{"todo list the session does not offer",
			[]string{initWith(`"Bash"`), call("t1", "TodoWrite", `{"todos":[{"content":"a","status":"pending"}]}`), result("t1", `"<tool_use_error>Error: No such tool available: TodoWrite.</tool_use_error>"`, true, "")},
			nil},
		{"todo list the session does not offer, accepted",
			[]string{initWith(`"Bash"`), call("t1", "TodoWrite", `{"todos":[{"content":"a","status":"pending"}]}`), result("t1", `"Todos have been modified successfully."`, false, "")},
			[]string{`plan {"steps":[{"text":"a","status":"pending"}]}`}},
		{"task tools",
			[]string{initWith(`"TaskCreate","TaskUpdate"`),
				call("c1", "TaskCreate", `{"subject":"Read","description":"d"}`), result("c1", `"Task #7 created successfully: Read"`, false, `{"task":{"id":"7","subject":"Read"}}`),
				call("c2", "TaskCreate", `{"subject":"Write","description":"d"}`), result("c2", `"Task #8 created successfully: Write"`, false, ""),
				call("c3", "TaskUpdate", `{"taskId":"7","status":"in_progress"}`), result("c3", `"Updated task #7 status"`, false, ""),
				call("c4", "TaskUpdate", `{"taskId":"8","status":"completed"}`), result("c4", `"<tool_use_error>no</tool_use_error>"`, true, ""),
				call("c5", "TaskUpdate", `{"taskId":"8","status":"deleted"}`), result("c5", `"Updated task #8 deleted"`, false, "")},
			[]string{
				`plan {"steps":[{"text":"Read","status":"pending"}]}`,
				`plan {"steps":[{"text":"Read","status":"pending"},{"text":"Write","status":"pending"}]}`,
				`plan {"steps":[{"text":"Read","status":"in_progress"},{"text":"Write","status":"pending"}]}`,
				`plan {"steps":[{"text":"Read","status":"in_progress"}]}`,
			}},
		{"background subagent",
			[]string{initWith(`"Agent"`), call("a1", "Agent", `{"description":"Count","prompt":"p","subagent_type":"general-purpose"}`),
				`{"type":"system","subtype":"task_started","task_id":"t9","tool_use_id":"a1","description":"Count","task_type":"local_agent"}`,
				result("a1", `[{"type":"text","text":"Async agent launched successfully."}]`, false, `{"isAsync":true,"status":"async_launched","agentId":"t9"}`),
				`{"type":"system","subtype":"task_notification","task_id":"t9","tool_use_id":"a1","status":"completed","summary":"done"}`},
			[]string{
				`session.background {"taskId":"t9","kind":"subagent","status":"started","description":"Count","summary":null,"callId":"a1"}`,
				`session.background {"taskId":"t9","kind":null,"status":"completed","description":null,"summary":"done","callId":"a1"}`,
				`subagent {"id":"a1","callId":"a1","name":null,"status":"finished","description":null}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(t, claude.Claude, tt.lines...)
			got = effects(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("amp edit_file", func(t *testing.T) {
		got := effects(decode(t, claude.Amp,
			`{"type":"tool_use","id":"t2","name":"edit_file","input":{"path":"/tmp/work/README.md","old_str":"foo","new_str":"bar"}}`,
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t2","content":"done"}]}}`))
		want := []string{`file.change {"callId":"t2","changes":[{"path":"/tmp/work/README.md","kind":"modify","movePath":null,"diff":"--- a/tmp/work/README.md\n+++ b/tmp/work/README.md\n@@ -1 +1 @@\n-foo\n+bar\n"}]}`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// effects keeps what follows the calls: the events that are not the init,
// a call, its result, or the start of the first subagent.
func effects(evs []string) []string {
	var out []string
	for _, e := range evs {
		typ := e
		for i := range e {
			if e[i] == ' ' {
				typ = e[:i]
				break
			}
		}
		switch typ {
		case "session.started", "tool.call":
			continue
		case "subagent":
			if len(out) == 0 {
				continue
			}
		case "tool.result":
			continue
		}
		out = append(out, e)
	}
	return out
}
