package acp_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/acp"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "acp",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "acp", "testdata/*.jsonl") }

// events runs one decoder over lines.
func events(lines ...string) []agentstream.Event {
	d := acp.NewDecoder()
	var evs []agentstream.Event
	for _, l := range lines {
		evs = d.Decode(evs, []byte(l))
	}
	return d.End(evs)
}

// decode returns the payloads' JSON, type first, one per event; replayed
// events are marked "(replay)".
func decode(lines ...string) []string {
	var out []string
	for _, e := range events(lines...) {
		s := e.Type() + " " + string(e.Payload.AppendJSON(nil))
		if e.Replay {
			s += " (replay)"
		}
		out = append(out, s)
	}
	return out
}

func check(t *testing.T, want, got []string) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestACPUsageUpdateNeverSummed: usage_update is context occupancy plus a
// cumulative cost: each one is a session usage restating the latest
// figures, and the recap takes the latest, never a sum.
func TestACPUsageUpdateNeverSummed(t *testing.T) {
	evs := events(
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_abc123def456","update":{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_abc123def456","update":{"sessionUpdate":"usage_update","used":61000,"size":200000,"cost":{"amount":0.052,"currency":"USD"}}}}`,
	)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	check(t, []string{
		`session.started {"harness":"acp","model":null,"contextWindow":null,"cwd":null,"sessionId":"sess_abc123def456","tools":null,"version":null,"permissionMode":null}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":0.045,"turns":null,"durationMs":null,"reasoningTokens":null,"contextTokens":53000,"contextWindow":200000}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":0.052,"turns":null,"durationMs":null,"reasoningTokens":null,"contextTokens":61000,"contextWindow":200000}`,
	}, got)
	r := agentstream.SummarizeUsage(evs)
	if r.CostUSD == nil || *r.CostUSD != 0.052 || r.ContextTokens == nil || *r.ContextTokens != 61000 || r.ContextWindow == nil || *r.ContextWindow != 200000 {
		t.Errorf("recap = %s", r.String())
	}
}

// TestACPUsageUpdateOtherCurrency: a cost in another currency is not a cost
// in dollars.
func TestACPUsageUpdateOtherCurrency(t *testing.T) {
	got := decode(`{"sessionUpdate":"usage_update","used":1000,"size":8000,"cost":{"amount":3.5,"currency":"EUR"}}`)
	check(t, []string{
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":null,"contextTokens":1000,"contextWindow":8000}`,
	}, got)
}

// TestACPPromptResponseUsage: PromptResponse.usage becomes session usage
// too, with the latest context and cost; a total that counted the cache
// reads inside the input has them taken out.
func TestACPPromptResponseUsage(t *testing.T) {
	got := decode(
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":41250,"size":1048576,"cost":{"amount":0.0213,"currency":"USD"}}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"totalTokens":47511,"inputTokens":46210,"outputTokens":1301,"thoughtTokens":412,"cachedReadTokens":40960}}}`,
	)
	check(t, []string{
		`session.started {"harness":"acp","model":null,"contextWindow":null,"cwd":null,"sessionId":"s1","tools":null,"version":null,"permissionMode":null}`,
		`usage {"scope":"session","inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":0.0213,"turns":null,"durationMs":null,"reasoningTokens":null,"contextTokens":41250,"contextWindow":1048576}`,
		`usage {"scope":"session","inputTokens":5250,"outputTokens":1301,"cacheReadTokens":40960,"cacheCreationTokens":null,"costUsd":0.0213,"turns":null,"durationMs":null,"reasoningTokens":412,"contextTokens":41250,"contextWindow":1048576}`,
		`turn.started {"turn":1}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":"end_turn","summary":null,"error":null,"reason":"completion"}`,
	}, got)
	// A total that adds the cache counters separately: input is kept.
	got = decode(`{"stopReason":"end_turn","usage":{"totalTokens":1600,"inputTokens":100,"outputTokens":200,"cachedReadTokens":1000,"cachedWriteTokens":300}}`)
	check(t, []string{
		`usage {"scope":"session","inputTokens":100,"outputTokens":200,"cacheReadTokens":1000,"cacheCreationTokens":300,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":null}`,
		`turn.started {"turn":1}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":"end_turn","summary":null,"error":null,"reason":"completion"}`,
	}, got)
}

// TestACPBridgeRepeatsWholeText: the Codex bridge ends its chunks with the
// whole text again; it is shown once.
func TestACPBridgeRepeatsWholeText(t *testing.T) {
	data, err := os.ReadFile("testdata/lwyBZss8924d-ACPLazyBridge-codex-cli-acp-output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		lines = append(lines, string(l))
	}
	got := decode(lines...)
	check(t, []string{
		`session.started {"harness":"acp","model":null,"contextWindow":null,"cwd":null,"sessionId":"session-bd635d62-6c93-42bc-838e-4fdd4833daa3","tools":null,"version":null,"permissionMode":null}`,
		`session.updated {"model":null,"permissionMode":null,"mode":"gpt-5-codex","cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`,
		`turn.started {"turn":1}`,
		`message.delta {"role":"assistant","text":"Hello"}`,
		`message.delta {"role":"assistant","text":"!"}`,
		`message {"role":"assistant","text":"Hello!","truncated":false}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":"end_turn","summary":"Hello!","error":null,"reason":"completion"}`,
	}, got)
}

// TestACPLoadReplay: updates between the initialize result and the
// session/load response replay history: origin replay, no turn.
func TestACPLoadReplay(t *testing.T) {
	got := decode(
		`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"name":"my-agent","title":"My Agent","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_789xyz","update":{"sessionUpdate":"user_message_chunk","messageId":"msg_user_8f7a1","content":{"type":"text","text":"What's the capital of France?"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_789xyz","update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_agent_c42b9","content":{"type":"text","text":"The capital of France is Paris."}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
	)
	check(t, []string{
		`session.started {"harness":"acp:my-agent","model":null,"contextWindow":null,"cwd":null,"sessionId":"sess_789xyz","tools":null,"version":"1.0.0","permissionMode":null}`,
		`message.delta {"role":"user","text":"What's the capital of France?"} (replay)`,
		`message {"role":"user","text":"What's the capital of France?","truncated":false} (replay)`,
		`message.delta {"role":"assistant","text":"The capital of France is Paris."} (replay)`,
		`message {"role":"assistant","text":"The capital of France is Paris.","truncated":false} (replay)`,
		`raw {"reason":"unmapped","json":{"jsonrpc":"2.0","id":1,"result":null},"text":null,"bytes":38,"truncated":false}`,
	}, got)
}

// TestACPPermission: session/request_permission is a permission.request
// with the offered options.
func TestACPPermission(t *testing.T) {
	got := decode(`{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"sess_abc123def456","toolCall":{"toolCallId":"call_001"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}}`)
	check(t, []string{
		`session.started {"harness":"acp","model":null,"contextWindow":null,"cwd":null,"sessionId":"sess_abc123def456","tools":null,"version":null,"permissionMode":null}`,
		`turn.started {"turn":1}`,
		`permission.request {"requestId":"5","callId":"call_001","name":"other","input":null,"options":[{"id":"allow-once","label":"Allow once","kind":"allow_once"},{"id":"reject-once","label":"Reject","kind":"reject_once"}]}`,
	}, got)
}

// TestACPStopReasons: end_turn succeeds, cancelled is cancelled, the others
// fail with the stop reason.
func TestACPStopReasons(t *testing.T) {
	for stop, want := range map[string]string{
		"end_turn":          `{"status":"succeeded","stopReason":"end_turn","summary":null,"error":null,"reason":"completion"}`,
		"cancelled":         `{"status":"cancelled","stopReason":"cancelled","summary":null,"error":null,"reason":"completion"}`,
		"refusal":           `{"status":"failed","stopReason":"refusal","summary":null,"error":"refusal","reason":"completion"}`,
		"max_tokens":        `{"status":"failed","stopReason":"max_tokens","summary":null,"error":"max_tokens","reason":"completion"}`,
		"max_turn_requests": `{"status":"failed","stopReason":"max_turn_requests","summary":null,"error":"max_turn_requests","reason":"completion"}`,
	} {
		got := decode(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"` + stop + `"}}`)
		if got[len(got)-1] != "session.ended "+want {
			t.Errorf("%s: got %s", stop, got[len(got)-1])
		}
	}
}

// TestACPToolDiff: a completed edit's diff content becomes a file.change
// with a unified diff, three lines of context around each change.
func TestACPToolDiff(t *testing.T) {
	got := decode(`{"sessionUpdate":"tool_call","toolCallId":"e1","title":"Edit parse.go","kind":"edit","status":"completed","content":[{"type":"diff","path":"/w/parse.go","oldText":"a\nb\nc\n","newText":"a\nB\nc\n"}]}`)
	check(t, []string{
		`turn.started {"turn":1}`,
		`tool.call {"callId":"e1","name":"edit","input":"null","truncated":false,"category":"edit","summary":"Edit parse.go","displayName":"Edit"}`,
		`tool.result {"callId":"e1","isError":false,"output":"","truncated":false,"name":"edit","characters":0,"exitCode":null}`,
		`file.change {"callId":"e1","changes":[{"path":"/w/parse.go","kind":"modify","movePath":null,"diff":"--- a/w/parse.go\n+++ b/w/parse.go\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"}]}`,
	}, got)
}
