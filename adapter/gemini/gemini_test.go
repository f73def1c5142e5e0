package gemini_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/gemini"
	"github.com/agentstream/agentstream/agentstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "gemini-json",
		Fixtures: []string{"testdata/*.jsonl"},
		// Excerpts: lines picked from several runs, with results whose
		// calls were not kept.
		Unpaired: []string{
			"ceedaragents-cyrus-gemini-runner-schema-example-lines.jsonl",
			"jnarowski-agentcmd-docs-event-reference-compacted.jsonl",
		},
		Update: *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "gemini-json", "testdata/*.jsonl") }

func decode(lines ...string) []agentstream.Event {
	d := gemini.NewDecoder()
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

// TestGeminiCachedSplit: result.stats.input_tokens includes cached tokens.
// Newer builds give the non-cached part as "input"; older ones only
// "cached", and the adapter subtracts it; the oldest give neither. The
// figures of the first line are those of the 0.45.0 run cited in
// formats/gemini.md (33651 = 21772 + 11879); the last line is recorded in
// jnarowski-agentcmd-docs-stream-json-say-hello.jsonl.
func TestGeminiCachedSplit(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{
			"input and cached",
			`{"type":"result","timestamp":"2026-06-04T05:22:23.237Z","status":"success","stats":{"total_tokens":35682,"input_tokens":33651,"output_tokens":151,"cached":11879,"input":21772,"duration_ms":19200,"tool_calls":1,"models":{"gemini-3.1-flash-lite":{"total_tokens":4118,"input_tokens":3310,"output_tokens":40},"gemini-3-flash-preview":{"total_tokens":31564,"input_tokens":30341,"output_tokens":111}}}}`,
			`{"scope":"session","inputTokens":21772,"outputTokens":151,"cacheReadTokens":11879,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":19200,"reasoningTokens":null,` +
				`"models":[{"model":"gemini-3.1-flash-lite","inputTokens":null,"outputTokens":40,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null},` +
				`{"model":"gemini-3-flash-preview","inputTokens":null,"outputTokens":111,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null}]}`,
		},
		{
			"cached only",
			`{"type":"result","timestamp":"2026-06-04T05:22:23.237Z","status":"success","stats":{"total_tokens":35682,"input_tokens":33651,"output_tokens":151,"cached":11879,"duration_ms":19200,"tool_calls":1}}`,
			`{"scope":"session","inputTokens":21772,"outputTokens":151,"cacheReadTokens":11879,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":19200,"reasoningTokens":null}`,
		},
		{
			"no cache figures",
			`{"type":"result","timestamp":"2025-10-29T10:36:09.773Z","status":"success","stats":{"total_tokens":7386,"input_tokens":7352,"output_tokens":16,"duration_ms":2239,"tool_calls":0}}`,
			`{"scope":"session","inputTokens":7352,"outputTokens":16,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":2239,"reasoningTokens":null}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := decode(tc.line)
			var got []string
			for _, e := range evs {
				if u, ok := e.Payload.(*agentstream.Usage); ok {
					got = append(got, string(u.AppendJSON(nil)))
				}
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
			r := agentstream.SummarizeUsage(evs)
			if r.TokensFrom != "session" {
				t.Errorf("recap tokens from %q, want session", r.TokensFrom)
			}
		})
	}
}

// TestGeminiDeltas: assistant text arrives only as delta chunks; they are
// live message.delta events and are joined into one message when a
// non-message line arrives or the stream ends. Lines recorded in
// google-gemini-gemini-cli-nonInteractiveCli-snapshot.jsonl.
func TestGeminiDeltas(t *testing.T) {
	got := render(decode(
		`{"type":"message","timestamp":"<TIMESTAMP>","role":"assistant","content":"Thinking","delta":true}`,
		`{"type":"message","timestamp":"<TIMESTAMP>","role":"assistant","content":"...","delta":true}`,
		`{"type":"tool_use","timestamp":"<TIMESTAMP>","tool_name":"testTool","tool_id":"tool-1","parameters":{"arg1":"value1"}}`,
		`{"type":"tool_result","timestamp":"<TIMESTAMP>","tool_id":"tool-1","status":"success","output":"Tool executed successfully"}`,
		`{"type":"message","timestamp":"<TIMESTAMP>","role":"assistant","content":"Final answer","delta":true}`,
	))
	want := []string{
		`message.delta {"role":"assistant","text":"Thinking"}`,
		`message.delta {"role":"assistant","text":"..."}`,
		`message {"role":"assistant","text":"Thinking...","truncated":false}`,
		`tool.call {"callId":"tool-1","name":"testTool","input":"{\"arg1\":\"value1\"}","truncated":false,"category":"other","summary":null,"displayName":"testTool"}`,
		`tool.result {"callId":"tool-1","isError":false,"output":"Tool executed successfully","truncated":false,"name":"testTool","characters":26,"exitCode":null}`,
		`message.delta {"role":"assistant","text":"Final answer"}`,
		`message {"role":"assistant","text":"Final answer","truncated":false}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestGeminiLongDeltas: the joined message is clipped like any text, and
// says so.
func TestGeminiLongDeltas(t *testing.T) {
	chunk := `{"type":"message","role":"assistant","content":"` + strings.Repeat("é", 1000) + `","delta":true}`
	var lines []string
	for range 10 {
		lines = append(lines, chunk)
	}
	evs := decode(lines...)
	m, ok := evs[len(evs)-1].Payload.(*agentstream.Message)
	if !ok {
		t.Fatalf("last event is %s, want message", evs[len(evs)-1].Type())
	}
	if n := agentstream.CountChars(m.Text); n != agentstream.MaxText || !m.Truncated {
		t.Errorf("message has %d code points, truncated %v; want %d, true", n, m.Truncated, agentstream.MaxText)
	}
}

// TestGeminiEnds: result ends the turn and the session, failed when its
// status is error; error lines with a severity are notices. Lines recorded
// in ceedaragents-cyrus-gemini-runner-schema-example-lines.jsonl and
// google-gemini-gemini-cli-nonInteractiveCli-snapshot.jsonl.
func TestGeminiEnds(t *testing.T) {
	got := render(decode(
		`{"type":"error","timestamp":"<TIMESTAMP>","severity":"warning","message":"Loop detected, stopping execution"}`,
		`{"type":"error","timestamp":"<TIMESTAMP>","severity":"error","message":"Maximum session turns exceeded"}`,
		`{"type":"result","timestamp":"2025-11-25T03:27:54.727Z","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns..."},"stats":{"total_tokens":8255,"input_tokens":7862,"output_tokens":90,"duration_ms":0,"tool_calls":2}}`,
	))
	want := []string{
		`warning {"message":"Loop detected, stopping execution"}`,
		`error {"message":"Maximum session turns exceeded","errorType":null,"recoverable":null}`,
		`usage {"scope":"session","inputTokens":7862,"outputTokens":90,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":null,"turns":null,"durationMs":0,"reasoningTokens":null}`,
		`turn.ended {"turn":1,"reason":"error"}`,
		`session.ended {"status":"failed","stopReason":"FatalTurnLimitedError","summary":null,"error":"Reached max session turns...","reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestGeminiEdits checks that an edit call gives its file.change once its
// result succeeded, and none when it failed.
func TestGeminiEdits(t *testing.T) {
	call := `{"type":"tool_use","timestamp":"2025-10-29T10:37:08.885Z","tool_name":"replace","tool_id":"r1","parameters":{"file_path":"/w/a.txt","old_string":"Hello","new_string":"Goodbye"}}`
	var got []string
	for _, e := range render(decode(call, `{"type":"tool_result","tool_id":"r1","status":"success","output":""}`)) {
		if strings.HasPrefix(e, "file.change") {
			got = append(got, e)
		}
	}
	want := []string{`file.change {"callId":"r1","changes":[{"path":"/w/a.txt","kind":"modify","movePath":null,"diff":"--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-Hello\n+Goodbye\n"}]}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, e := range render(decode(call, `{"type":"tool_result","tool_id":"r1","status":"error","error":{"type":"edit_no_occurrence_found","message":"not found"}}`)) {
		if strings.HasPrefix(e, "file.change") {
			t.Errorf("a failed edit gave %s", e)
		}
	}
}
