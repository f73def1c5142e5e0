package cursor_test

import (
	"flag"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/cursor"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "cursor-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "cursor-json", "testdata/*.jsonl") }

// decode runs one decoder over lines and returns the payloads' JSON, type
// first, one per event.
func decode(lines ...string) []string {
	d := cursor.NewDecoder()
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

// TestCursorResultUsage: the run's one usage total is on result.usage, in
// camelCase, and becomes session usage (inputTokens already excludes cache
// reads), followed by turn.ended and session.ended.
func TestCursorResultUsage(t *testing.T) {
	got := decode(`{"type":"result","subtype":"success","duration_ms":9120,"duration_api_ms":9120,"is_error":false,"result":"done","session_id":"7f3c2a10","request_id":"c81e2f5a","usage":{"inputTokens":92,"outputTokens":611,"cacheReadTokens":35318,"cacheWriteTokens":1204}}`)
	want := []string{
		`usage {"scope":"session","inputTokens":92,"outputTokens":611,"cacheReadTokens":35318,"cacheCreationTokens":1204,"costUsd":null,"turns":null,"durationMs":9120,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":"done","error":null,"reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorResultWithoutUsage: 2025 builds print no usage; the result still
// gives the duration and ends the session.
func TestCursorResultWithoutUsage(t *testing.T) {
	got := decode(`{"type":"result","subtype":"success","duration_ms":4350,"duration_api_ms":4350,"is_error":false,"result":"10","session_id":"0c79b9f5-d4a6-433b-ab10-2212d47390af","request_id":"f3a09ba3-7d28-4516-9cb5-5645fd55f06b"}`)
	want := []string{
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":4350,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":"10","error":null,"reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorPartialOutputDuplicate: with --stream-partial-output the deltas
// are followed by the whole message, which completes the message instead of
// being shown twice.
func TestCursorPartialOutputDuplicate(t *testing.T) {
	got := decode(
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Code"}]},"session_id":"...","timestamp_ms":1761698920748}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":" flows like"}]},"session_id":"...","timestamp_ms":1761698920850}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Code flows like"}]},"session_id":"..."}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Next"}]},"session_id":"..."}`,
	)
	want := []string{
		`message.delta {"role":"assistant","text":"Code"}`,
		`message.delta {"role":"assistant","text":" flows like"}`,
		`message {"role":"assistant","text":"Code flows like","truncated":false}`,
		`message.delta {"role":"assistant","text":"Next"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorPartialCopyAfterTool: a whole-message copy printed after the
// line that completed the deltas is not shown twice.
func TestCursorPartialCopyAfterTool(t *testing.T) {
	got := decode(
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Running "}]},"session_id":"s","timestamp_ms":1786000000100}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"tests."}]},"session_id":"s","timestamp_ms":1786000000150}`,
		`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"go test"}}},"session_id":"s","timestamp_ms":1786000000200}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Running tests."}]},"session_id":"s"}`,
	)
	want := []string{
		`message.delta {"role":"assistant","text":"Running "}`,
		`message.delta {"role":"assistant","text":"tests."}`,
		`message {"role":"assistant","text":"Running tests.","truncated":false}`,
		`tool.call {"callId":"c1","name":"shell","input":"{\"command\":\"go test\"}","truncated":false,"category":"execute","summary":"go test","displayName":"Shell"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorMessageCompletedByNextLine: without partial output each
// assistant line is a whole message, completed when another line arrives.
func TestCursorMessageCompletedByNextLine(t *testing.T) {
	got := decode(
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"10"}]},"session_id":"0c79b9f5"}`,
		`{"type":"tool_call","subtype":"started","call_id":"toolu_1","tool_call":{"readToolCall":{"args":{"path":"/tmp/a.txt"}}}}`,
		`{"type":"tool_call","subtype":"completed","call_id":"toolu_1","tool_call":{"readToolCall":{"args":{"path":"/tmp/a.txt"},"result":{"error":{"errorMessage":"File not found"}}}}}`,
	)
	want := []string{
		`message.delta {"role":"assistant","text":"10"}`,
		`message {"role":"assistant","text":"10","truncated":false}`,
		`tool.call {"callId":"toolu_1","name":"read","input":"{\"path\":\"/tmp/a.txt\"}","truncated":false,"category":"read","summary":"/tmp/a.txt","displayName":"Read"}`,
		`tool.result {"callId":"toolu_1","isError":true,"output":"File not found","truncated":false,"name":"read","characters":14,"exitCode":null}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorCompletedWithoutStarted: a completed line whose started line was
// not seen announces the call first, so every result has its call.
func TestCursorCompletedWithoutStarted(t *testing.T) {
	got := decode(`{"type":"tool_call","subtype":"completed","call_id":"toolu_01RPsoaVjQ1cJj8AbL6BdXKN","tool_call":{"editToolCall":{"args":{"path":"/private/tmp/cursor-test/output.txt"},"result":{"success":{"path":"/private/tmp/cursor-test/output.txt","resultForModel":"Wrote contents to /private/tmp/cursor-test/output.txt","linesAdded":1,"linesRemoved":1,"diffString":"- \n+ Hello World from Cursor","afterFullFileContent":"Hello World from Cursor"}}}},"timestamp_ms":1761699020705}`)
	want := []string{
		`tool.call {"callId":"toolu_01RPsoaVjQ1cJj8AbL6BdXKN","name":"edit","input":"{\"path\":\"/private/tmp/cursor-test/output.txt\"}","truncated":false,"category":"edit","summary":"/private/tmp/cursor-test/output.txt","displayName":"Edit"}`,
		`tool.result {"callId":"toolu_01RPsoaVjQ1cJj8AbL6BdXKN","isError":false,"output":"Wrote contents to /private/tmp/cursor-test/output.txt","truncated":false,"name":"edit","characters":53,"exitCode":null}`,
		`file.change {"callId":"toolu_01RPsoaVjQ1cJj8AbL6BdXKN","changes":[{"path":"/private/tmp/cursor-test/output.txt","kind":"modify","movePath":null,"diff":"- \n+ Hello World from Cursor"}]}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorShellExitCode: a shell command that exits non-zero is still a
// "success" of the tool; the result carries the exit code and is an error.
func TestCursorShellExitCode(t *testing.T) {
	got := decode(`{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"args":{"command":"false"},"result":{"success":{"command":"false","exitCode":1,"stdout":"","stderr":"boom"}}}}}`)
	want := []string{
		`tool.call {"callId":"c1","name":"shell","input":"{\"command\":\"false\"}","truncated":false,"category":"execute","summary":"false","displayName":"Shell"}`,
		`tool.result {"callId":"c1","isError":true,"output":"boom","truncated":false,"name":"shell","characters":4,"exitCode":1}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorThinking: thinking deltas are live and complete as one thinking
// event at thinking/completed.
func TestCursorThinking(t *testing.T) {
	got := decode(
		`{"type":"thinking","subtype":"delta","text":"Let me ","session_id":"s","timestamp_ms":1786000000100}`,
		`{"type":"thinking","subtype":"delta","text":"look.","session_id":"s","timestamp_ms":1786000000180}`,
		`{"type":"thinking","subtype":"completed","session_id":"s","timestamp_ms":1786000000200}`,
	)
	want := []string{
		`thinking.delta {"text":"Let me "}`,
		`thinking.delta {"text":"look."}`,
		`thinking {"text":"Let me look.","truncated":false,"redacted":false}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCursorInit: the init line starts the session; Cursor's model is a
// display name, without a known context window.
func TestCursorInit(t *testing.T) {
	got := decode(
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/path/to/project","session_id":"0c79b9f5-d4a6-433b-ab10-2212d47390af","model":"Claude 4.5 Sonnet","permissionMode":"default"}`,
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/path/to/project","session_id":"0c79b9f5-d4a6-433b-ab10-2212d47390af","model":"GPT-5","permissionMode":"default"}`,
	)
	want := []string{
		`session.started {"harness":"cursor-agent","model":"Claude 4.5 Sonnet","contextWindow":null,"cwd":"/path/to/project","sessionId":"0c79b9f5-d4a6-433b-ab10-2212d47390af","tools":null,"version":null,"permissionMode":"default"}`,
		`session.updated {"model":"GPT-5","permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
