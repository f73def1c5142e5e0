package codex_test

import (
	"flag"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/codex"
	"github.com/agentstream/agentstream/agentstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "codex-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "codex-json", "testdata/*.jsonl") }

// decode reads lines with one decoder, as a stream, with End.
func decode(lines ...string) []agentstream.Event {
	d := codex.NewDecoder()
	var evs []agentstream.Event
	for _, l := range lines {
		evs = d.Decode(evs, []byte(l))
	}
	return d.End(evs)
}

// render gives each event as "type payload".
func render(evs []agentstream.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	return out
}

func usages(evs []agentstream.Event, scope string) []*agentstream.Usage {
	var out []*agentstream.Usage
	for _, e := range evs {
		if u, ok := e.Payload.(*agentstream.Usage); ok && u.Scope == scope {
			out = append(out, u)
		}
	}
	return out
}

// TestCodexResumeTotals: turn.completed.usage is the thread's running total
// (across exec resume runs) with input including cached input; each becomes
// session usage with non-cached input, never call usage, and the recap
// takes the latest instead of adding them up. The first run is the lab's
// capture codex-0.169.0-text.jsonl (its thread, turn and usage lines; the
// text scenario's one call: 1200 in, 300 cached, 19 out of which 5
// reasoning). The resumed run is written after codex.md §4–§5 (the same
// thread id again, a total that includes the first run's) with a second
// call of 1300 in, 1200 cached, 8 out (the conversation scenario's second).
func TestCodexResumeTotals(t *testing.T) {
	const thread = "01a233a9-4ebf-70d0-9e11-32ba10a12867"
	evs := decode(
		`{"type":"thread.started","thread_id":"`+thread+`"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":1500,"cached_input_tokens":300,"cache_write_input_tokens":0,"output_tokens":19,"reasoning_output_tokens":5}}`,
		`{"type":"thread.started","thread_id":"`+thread+`"}`,
		`{"type":"turn.started"}`,
		// 1500+2500 in, 300+1200 cached, 19+8 out, 5+0 reasoning.
		`{"type":"turn.completed","usage":{"input_tokens":4000,"cached_input_tokens":1500,"cache_write_input_tokens":0,"output_tokens":27,"reasoning_output_tokens":5}}`,
	)
	if calls := usages(evs, agentstream.ScopeCall); len(calls) != 0 {
		t.Errorf("got %d call usage events, want none (exec reports no per-call usage)", len(calls))
	}
	got := render(evs)
	want := []string{
		`session.started {"harness":"codex","model":null,"contextWindow":null,"cwd":null,"sessionId":"` + thread + `","tools":null,"version":null,"permissionMode":null}`,
		`turn.started {"turn":1}`,
		// Non-cached input: 1500 - 300.
		`usage {"scope":"session","inputTokens":1200,"outputTokens":19,"cacheReadTokens":300,"cacheCreationTokens":0,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":5,"thread":"` + thread + `"}`,
		`turn.ended {"turn":1,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":null,"error":null,"reason":"completion"}`,
		`session.started {"harness":"codex","model":null,"contextWindow":null,"cwd":null,"sessionId":"` + thread + `","tools":null,"version":null,"permissionMode":null}`,
		`turn.started {"turn":2}`,
		// Non-cached input: 4000 - 1500.
		`usage {"scope":"session","inputTokens":2500,"outputTokens":27,"cacheReadTokens":1500,"cacheCreationTokens":0,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":5,"thread":"` + thread + `"}`,
		`turn.ended {"turn":2,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":null,"summary":null,"error":null,"reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	r := agentstream.SummarizeUsage(evs)
	if r.TokensFrom != "session" || *r.InputTokens != 2500 || *r.CacheReadTokens != 1500 || *r.OutputTokens != 27 {
		t.Errorf("recap = %s from %q, want the latest total (2500 in, 1500 cached, 27 out)", r.String(), r.TokensFrom)
	}
}

// TestCodexCacheWrite: newer builds report cache_write_input_tokens and
// reasoning_output_tokens; input_tokens includes both kinds of cache.
func TestCodexCacheWrite(t *testing.T) {
	evs := decode(`{"type":"turn.completed","usage":{"input_tokens":22904,"cached_input_tokens":19200,"cache_write_input_tokens":1000,"output_tokens":500,"reasoning_output_tokens":320}}`)
	u := usages(evs, agentstream.ScopeSession)
	if len(u) != 1 {
		t.Fatalf("got %d session usage events, want 1", len(u))
	}
	want := `{"scope":"session","inputTokens":2704,"outputTokens":500,"cacheReadTokens":19200,"cacheCreationTokens":1000,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":320}`
	if got := string(u[0].AppendJSON(nil)); got != want {
		t.Errorf("usage = %s, want %s", got, want)
	}
}

// TestCodexLegacyTokenCount: in the legacy stream last_token_usage is one
// request (call usage) and total_token_usage the running total (session
// usage); a token_count restating the same total is not a new request.
// Lines recorded in lwyBZss8924d-ACPLazyBridge-codex-proto-real-run.jsonl
// and BloopAI-vibe-kanban-legacy-exec-json-test-lines.jsonl.
func TestCodexLegacyTokenCount(t *testing.T) {
	tc := `{"id":"test","msg":{"type":"token_count","info":{"total_token_usage":{"input_tokens":2552,"cached_input_tokens":0,"output_tokens":15,"reasoning_output_tokens":0,"total_tokens":2567},"last_token_usage":{"input_tokens":2552,"cached_input_tokens":0,"output_tokens":15,"reasoning_output_tokens":0,"total_tokens":2567},"model_context_window":272000},"rate_limits":null}}`
	evs := decode(
		`{"id":"","msg":{"type":"session_configured","session_id":"0199894d-068c-70a1-857c-753ef9abf7b5","model":"gpt-5-codex","history_log_id":1104763548210798038,"history_entry_count":3,"rollout_path":"/home/node/.codex/sessions/2025/09/27/rollout-2025-09-27T03-52-30-0199894d-068c-70a1-857c-753ef9abf7b5.jsonl"}}`,
		tc, tc,
		`{"id":"1","msg":{"type":"token_count","input_tokens":1674,"cached_input_tokens":1627,"output_tokens":384,"reasoning_output_tokens":384,"total_tokens":2058}}`,
	)
	var got []string
	for _, u := range append(usages(evs, agentstream.ScopeCall), usages(evs, agentstream.ScopeSession)...) {
		got = append(got, string(u.AppendJSON(nil)))
	}
	want := []string{
		`{"scope":"call","model":"gpt-5-codex","inputTokens":2552,"outputTokens":15,"cacheReadTokens":0,"cacheCreationTokens":null,"contextTokens":2552,"reasoningTokens":0,"messageId":null}`,
		`{"scope":"call","model":"gpt-5-codex","inputTokens":47,"outputTokens":384,"cacheReadTokens":1627,"cacheCreationTokens":null,"contextTokens":1674,"reasoningTokens":384,"messageId":null}`,
		`{"scope":"session","inputTokens":2552,"outputTokens":15,"cacheReadTokens":0,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":null,"reasoningTokens":0,"contextWindow":272000}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestCodexItems checks the item lifecycle on recorded lines: a call at
// item.started, the result at item.completed, a call and result together
// for an item completed without a start, the shell wrapper taken off the
// summary, and the error item as a warning (the notice Codex 0.169.0
// prints before every lab run, in testdata/lab).
func TestCodexItems(t *testing.T) {
	const notice = "Model metadata for `modelsim` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."
	got := render(decode(
		`{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'cat sample.txt'","aggregated_output":"","status":"in_progress"}}`,
		`{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'cat sample.txt'","aggregated_output":"test content\n","exit_code":0,"status":"completed"}}`,
		`{"type":"item.completed","item":{"id":"item_9","type":"command_execution","command":"/bin/zsh -lc tools","aggregated_output":"zsh:1: command not found: tools\n","exit_code":127,"status":"failed"}}`,
		`{"type":"item.completed","item":{"id":"item_0","type":"error","message":"`+notice+`"}}`,
	))
	want := []string{
		`tool.call {"callId":"item_1","name":"command_execution","input":"{\"command\":\"bash -lc 'cat sample.txt'\"}","truncated":false,"category":"execute","summary":"cat sample.txt","displayName":"Shell"}`,
		`tool.result {"callId":"item_1","isError":false,"output":"test content\n","truncated":false,"name":"command_execution","characters":13,"exitCode":0}`,
		`tool.call {"callId":"item_9","name":"command_execution","input":"{\"command\":\"/bin/zsh -lc tools\"}","truncated":false,"category":"execute","summary":"tools","displayName":"Shell"}`,
		`tool.result {"callId":"item_9","isError":true,"output":"zsh:1: command not found: tools\n","truncated":false,"name":"command_execution","characters":32,"exitCode":127}`,
		`warning {"message":"` + notice + `"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestCodexErrors: a top-level error is a retry when it is a reconnect
// notice, an error otherwise; turn.failed ends the turn and the session.
func TestCodexErrors(t *testing.T) {
	got := render(decode(
		`{"type":"error","message":"Reconnecting... 2/5"}`,
		`{"type":"error","message":"stream error: stream disconnected before completion: Transport error; retrying 1/5 in 211ms…"}`,
		`{"type":"error","message":"unexpected status 401 Unauthorized"}`,
		`{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}`,
	))
	want := []string{
		`retry {"attempt":2,"maxRetries":5,"delayMs":null,"error":"Reconnecting... 2/5","status":null}`,
		`retry {"attempt":1,"maxRetries":5,"delayMs":211,"error":"stream error: stream disconnected before completion: Transport error; retrying 1/5 in 211ms…","status":null}`,
		`error {"message":"unexpected status 401 Unauthorized","errorType":null,"recoverable":null}`,
		`turn.ended {"turn":0,"reason":"error"}`,
		`session.ended {"status":"failed","stopReason":null,"summary":null,"error":"unexpected status 401 Unauthorized","reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestCodexThreadsAddUp: the totals of another thread in the same stream
// start again, so they are another run and the recap adds them up, while
// a resumed thread's go on (TestCodexResumeTotals).
func TestCodexThreadsAddUp(t *testing.T) {
	evs := decode(
		`{"type":"thread.started","thread_id":"t-1"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}}`,
		`{"type":"thread.started","thread_id":"t-2"}`,
		`{"type":"turn.started"}`,
		`{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":3}}`,
	)
	var runs []int64
	for _, u := range usages(evs, agentstream.ScopeSession) {
		runs = append(runs, u.Run)
	}
	if diff := cmp.Diff([]int64{0, 2}, runs); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	r := agentstream.SummarizeUsage(evs)
	if r.Runs != 2 || *r.InputTokens != 60+50 || *r.CacheReadTokens != 40 || *r.OutputTokens != 10 {
		t.Errorf("recap = %s over %d runs, want in 110, cache read 40, out 10 over 2 runs", r.String(), r.Runs)
	}
}
