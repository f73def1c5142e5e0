package copilot_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/copilot"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "copilot-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "copilot-json", "testdata/*.jsonl") }

// decode runs one decoder over lines and returns the payloads' JSON, type
// first, one per event.
func decode(lines ...string) []string {
	d := copilot.NewDecoder()
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

// TestCopilotOutputTokensPerMessage: assistant.message.outputTokens is the
// output of one model call: call usage with the input fields null.
func TestCopilotOutputTokensPerMessage(t *testing.T) {
	got := decode(`{"type":"assistant.message","data":{"messageId":"96620e44-0001-4000-8000-000000000001","content":"\n\nhello world","toolRequests":[],"interactionId":"bac81e5a-0001-4000-8000-000000000001","outputTokens":6},"id":"e1a1b2c3-0006-4000-8000-000000000006","timestamp":"2026-03-30T22:19:22.000Z","parentId":"e1a1b2c3-0004-4000-8000-000000000004"}`)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":null,"tools":null,"version":null,"permissionMode":null}`,
		`message {"role":"assistant","text":"\n\nhello world","truncated":false}`,
		`usage {"scope":"call","model":null,"inputTokens":null,"outputTokens":6,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"96620e44-0001-4000-8000-000000000001"}`,
	}, got)
}

// TestCopilotModelMessageUsageOnce: newer versions put outputTokens on the
// ephemeral model.message and not on assistant.message; the API call id
// links them and the call is counted once.
func TestCopilotModelMessageUsageOnce(t *testing.T) {
	data, err := os.ReadFile("testdata/sortie-ai-sortie-copilot-model-message-session-excerpt.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	d := copilot.NewDecoder()
	var evs []agentstream.Event
	for _, l := range bytes.Split(data, []byte("\n")) {
		evs = d.Decode(evs, l)
	}
	var got []string
	for _, e := range evs {
		if u, ok := e.Payload.(*agentstream.Usage); ok {
			got = append(got, string(u.AppendJSON(nil)))
		}
	}
	check(t, []string{
		`{"scope":"call","model":"claude-sonnet-5","inputTokens":null,"outputTokens":119,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"msg_011CeYoAq9ZzxG8wsYtHNNqG"}`,
		`{"scope":"call","model":"claude-sonnet-5","inputTokens":null,"outputTokens":107,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"msg_011CeYoB6Q6Mg8r8GgoEmSUw"}`,
		`{"scope":"call","model":"claude-sonnet-5","inputTokens":null,"outputTokens":84,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"msg_011CeYoBGFvc68MdH1iUtnTm"}`,
		`{"scope":"call","model":"claude-sonnet-5","inputTokens":null,"outputTokens":68,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"msg_011CeYoBUJUAA3H9ZAQFZdhu"}`,
		`{"scope":"call","model":"claude-sonnet-5","inputTokens":null,"outputTokens":70,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":null,"reasoningTokens":null,"messageId":"msg_011CeYoBckUMQMbFhUJCpV5g"}`,
		`{"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":14039,"reasoningTokens":null,"premiumRequests":1}`,
	}, got)
	r := agentstream.SummarizeUsage(evs)
	if r.OutputTokens == nil || *r.OutputTokens != 119+107+84+68+70 || r.PremiumRequests == nil || *r.PremiumRequests != 1 {
		t.Errorf("recap = %s", r.String())
	}
}

// TestCopilotResultPremiumRequests: the final result carries the run's
// premium requests in the session usage and ends the session, succeeded
// exactly when the exit code is 0. The session id is named here only, and
// the session was announced at the first line: it is not announced twice.
func TestCopilotResultPremiumRequests(t *testing.T) {
	got := decode(
		`{"type":"assistant.turn_end","data":{"turnId":"1"},"id":"e4a1b2c3-0004-4000-8000-000000000004","timestamp":"2026-03-30T22:22:01.100Z","parentId":"e4a1b2c3-0002-4000-8000-000000000002"}`,
		`{"type":"result","timestamp":"2026-03-30T22:22:02.000Z","sessionId":"aa778ea0-6eab-4ce9-b87e-11d6d33dab4f","exitCode":0,"usage":{"premiumRequests":2,"totalApiDurationMs":1500,"sessionDurationMs":2000,"codeChanges":{"linesAdded":0,"linesRemoved":0,"filesModified":[]}}}`,
	)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":null,"tools":null,"version":null,"permissionMode":null}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":2000,"reasoningTokens":null,"premiumRequests":2}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":null,"error":null,"reason":"completion"}`,
	}, got)
	got = decode(`{"type":"result","timestamp":"2026-08-03T09:00:03.400Z","sessionId":"cc","exitCode":1,"usage":{"premiumRequests":1.5}}`)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":"cc","tools":null,"version":null,"permissionMode":null}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":null,"premiumRequests":1.5}`,
		`turn.ended {"turn":1,"reason":"error"}`,
		`session.ended {"status":"failed","stopReason":null,"summary":null,"error":"exit code 1","reason":"completion"}`,
	}, got)
}

// TestCopilotDenied: a tool the CLI's permission policy refused gives an
// error result and tool.denied.
func TestCopilotDenied(t *testing.T) {
	got := decode(
		`{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"t1","name":"bash","arguments":{"command":"rm -rf build\nmake"},"type":"function","intentionSummary":"Rebuild"}]},"id":"e1","timestamp":"2026-08-03T09:00:02.000Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":false,"error":{"message":"Permission denied","code":"denied"}},"id":"e2","timestamp":"2026-08-03T09:00:02.200Z"}`,
	)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":null,"tools":null,"version":null,"permissionMode":null}`,
		`tool.call {"callId":"t1","name":"bash","input":"{\"command\":\"rm -rf build\\nmake\"}","truncated":false,"category":"execute","summary":"rm -rf build","displayName":"Shell"}`,
		`tool.result {"callId":"t1","isError":true,"output":"Permission denied","truncated":false,"name":"bash","characters":17,"exitCode":null}`,
		`tool.denied {"callId":"t1","name":"bash","reason":"Permission denied"}`,
	}, got)
}

// TestCopilotPlainText: an auth failure printed as text is raw, malformed.
func TestCopilotPlainText(t *testing.T) {
	evs := copilot.NewDecoder().Decode(nil, []byte("Error: Not authenticated. Please run `copilot login`."))
	if len(evs) != 1 || evs[0].Payload.(*agentstream.Raw).Reason != agentstream.RawMalformed {
		t.Errorf("got %v", evs)
	}
}

// TestCopilotLab: lines of Copilot CLI 1.0.102 recorded by the lab: the
// shell's exit code, its output as it comes, a failed model call as an error,
// and the retry after it with the API's status and message.
func TestCopilotLab(t *testing.T) {
	got := decode(
		`{"type":"tool.execution_start","data":{"toolCallId":"call_1","toolName":"bash","arguments":{"command":"echo lab-fail-out; exit 3","description":"Run the lab command"}},"id":"a1","timestamp":"2026-12-01T21:00:44.430Z","parentId":"p"}`,
		`{"type":"tool.shell_output","data":{"toolCallId":"call_1","stream":"stdout","text":"lab-fail-out\n","sequence":0},"ephemeral":true,"id":"a2","timestamp":"2026-12-01T21:00:44.483Z","parentId":"p"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"call_1","model":"gpt-4.1","turnId":"0","rte":false,"shellExecution":{"exitCode":3},"success":true,"result":{"content":"lab-fail-out\n<shellId: 0 completed with exit code 3>","detailedContent":"lab-fail-out"}},"id":"a3","timestamp":"2026-12-01T21:00:44.490Z","parentId":"p"}`,
		`{"type":"model.call_failure","data":{"model":"gpt-4.1","statusCode":429,"durationMs":81,"retryAttempt":0,"failureKind":"api","errorMessage":"{\"code\":\"rate_limit_exceeded\",\"message\":\"modelsim: rate limited (lab-429)\",\"param\":null,\"type\":\"rate_limit_error\"}"},"ephemeral":true,"id":"a4","timestamp":"2026-12-01T21:31:22.600Z","parentId":"p"}`,
		`{"type":"assistant.turn_retry","data":{"turnId":"0","model":"gpt-4.1","reason":"rate_limit"},"ephemeral":true,"id":"a5","timestamp":"2026-12-01T21:31:22.602Z","parentId":"p"}`,
	)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":null,"tools":null,"version":null,"permissionMode":null}`,
		`tool.call {"callId":"call_1","name":"bash","input":"{\"command\":\"echo lab-fail-out; exit 3\",\"description\":\"Run the lab command\"}","truncated":false,"category":"execute","summary":"echo lab-fail-out; exit 3","displayName":"Shell"}`,
		`tool.output {"callId":"call_1","channel":"stdout","text":"lab-fail-out\n","truncated":false}`,
		`tool.result {"callId":"call_1","isError":true,"output":"lab-fail-out\n<shellId: 0 completed with exit code 3>","truncated":false,"name":"bash","characters":52,"exitCode":3}`,
		`error {"message":"modelsim: rate limited (lab-429) (HTTP 429)","errorType":"api","recoverable":null}`,
		`retry {"attempt":1,"maxRetries":null,"delayMs":null,"error":"modelsim: rate limited (lab-429)","status":429}`,
	}, got)
}

// TestCopilotSubagent: Copilot CLI 1.0.102 announces a subagent and its end
// (lines recorded by the lab).
func TestCopilotSubagent(t *testing.T) {
	got := decode(
		`{"type":"subagent.started","data":{"toolCallId":"call_1","agentName":"general-purpose","agentDisplayName":"lab-subagent","agentDescription":"Run the lab task","model":"gpt-4.1","agentType":"general-purpose","executionMode":"sync"},"agentId":"1bff2ea9","id":"a1","timestamp":"2026-12-01T21:38:30.102Z","parentId":"p"}`,
		`{"type":"subagent.completed","data":{"toolCallId":"call_1","agentName":"general-purpose","agentDisplayName":"lab-subagent","model":"gpt-4.1","totalToolCalls":1,"totalTokens":2832,"durationMs":147},"agentId":"1bff2ea9","id":"a2","timestamp":"2026-12-01T21:38:30.251Z","parentId":"p"}`,
	)
	check(t, []string{
		`session.started {"harness":"copilot-cli","model":null,"contextWindow":null,"cwd":null,"sessionId":null,"tools":null,"version":null,"permissionMode":null}`,
		`subagent {"id":"1bff2ea9","callId":"call_1","name":"general-purpose","status":"started","description":"Run the lab task"}`,
		`subagent {"id":"1bff2ea9","callId":"call_1","name":"general-purpose","status":"finished","description":null}`,
	}, got)
}
