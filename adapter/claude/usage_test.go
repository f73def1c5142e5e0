package claude_test

import (
	"strconv"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/google/go-cmp/cmp"
)

// usageOf decodes lines and returns the usage events' payloads.
func usageOf(t *testing.T, cfg claude.Config, lines ...string) []string {
	t.Helper()
	var out []string
	for _, l := range decode(t, cfg, lines...) {
		if len(l) > 6 && l[:6] == "usage " {
			out = append(out, l[6:])
		}
	}
	return out
}

// Lines shaped as Claude Code 2.1.328 prints them (the lab's captures in
// testdata/lab), cut to what usage reads.
const (
	textCall  = `{"type":"assistant","message":{"id":"m_0001","model":"claude-opus-5-5","usage":{"input_tokens":1200,"cache_read_input_tokens":300,"cache_creation_input_tokens":0,"output_tokens":1},"content":[{"type":"text","text":"hi"}]},"parent_tool_use_id":null,"session_id":"s1"}`
	textFinal = `{"type":"result","subtype":"success","is_error":false,"num_turns":1,"duration_ms":30,"session_id":"s1","total_cost_usd":0.00524,"usage":{"input_tokens":1200,"cache_read_input_tokens":300,"cache_creation_input_tokens":0,"output_tokens":19},"modelUsage":{"claude-opus-5-5":{"inputTokens":1200,"outputTokens":19,"cacheReadInputTokens":300,"cacheCreationInputTokens":0,"costUSD":0.00524,"contextWindow":1000000}}}`
)

func TestCallUsage(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{
			name:  "an assistant line's snapshot is an estimate",
			lines: []string{textCall},
			want:  []string{`{"scope":"call","model":"claude-opus-5-5","inputTokens":1200,"outputTokens":1,"cacheReadTokens":300,"cacheCreationTokens":0,"contextTokens":1500,"reasoningTokens":null,"messageId":"m_0001","estimate":true}`},
		},
		{
			name: "the final count of message_delta is no estimate",
			lines: []string{
				`{"type":"stream_event","event":{"type":"message_start","message":{"id":"m_0001","model":"claude-opus-5-5","usage":{"input_tokens":1200,"cache_read_input_tokens":300,"output_tokens":1}}},"parent_tool_use_id":null}`,
				textCall,
				`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":19}},"parent_tool_use_id":null}`,
			},
			want: []string{`{"scope":"call","model":"claude-opus-5-5","inputTokens":1200,"outputTokens":19,"cacheReadTokens":300,"cacheCreationTokens":null,"contextTokens":1500,"reasoningTokens":null,"messageId":"m_0001"}`},
		},
		{
			// A transcript's lines of one message (d-kimuson-claude-code-viewer-1.0.98-session-head.jsonl):
			// the last one printed the final count.
			name: "a later line's count is the call's",
			lines: []string{
				`{"type":"assistant","message":{"id":"msg_a","model":"claude-sonnet-4-20250514","usage":{"input_tokens":3,"cache_read_input_tokens":14874,"cache_creation_input_tokens":1331,"output_tokens":3},"content":[{"type":"text","text":"a"}]}}`,
				`{"type":"assistant","message":{"id":"msg_a","model":"claude-sonnet-4-20250514","usage":{"input_tokens":3,"cache_read_input_tokens":14874,"cache_creation_input_tokens":1331,"output_tokens":172},"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x"}]}}`,
			},
			want: []string{`{"scope":"call","model":"claude-sonnet-4-20250514","inputTokens":3,"outputTokens":172,"cacheReadTokens":14874,"cacheCreationTokens":1331,"contextTokens":16208,"reasoningTokens":null,"messageId":"msg_a"}`},
		},
		{
			// A subagent's call is not ended by the main conversation's
			// lines, nor a call by its tool's result, which may come
			// before the call's last line (marot-spotter-tool-heavy-2.1.38.jsonl).
			name: "a call lasts until its conversation's next call",
			lines: []string{
				`{"type":"assistant","message":{"id":"m_sub","model":"claude-opus-5-5","usage":{"input_tokens":900,"output_tokens":1},"content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},"parent_tool_use_id":"toolu_9"}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"x"}]},"parent_tool_use_id":"toolu_9"}`,
				`{"type":"assistant","message":{"id":"m_sub","model":"claude-opus-5-5","usage":{"input_tokens":900,"output_tokens":1},"content":[{"type":"text","text":"done"}]},"parent_tool_use_id":"toolu_9"}`,
				textCall,
			},
			want: []string{
				`{"scope":"call","model":"claude-opus-5-5","inputTokens":900,"outputTokens":1,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":900,"reasoningTokens":null,"messageId":"m_sub","estimate":true}`,
				`{"scope":"call","model":"claude-opus-5-5","inputTokens":1200,"outputTokens":1,"cacheReadTokens":300,"cacheCreationTokens":0,"contextTokens":1500,"reasoningTokens":null,"messageId":"m_0001","estimate":true}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, usageOf(t, claude.Claude, tt.lines...)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

// result builds a result line of session sid with the given cost, the
// query's usage and modelUsage of one model.
func result(sid string, cost float64, turns int, in, out, cr, cc int, mIn, mOut, mCR, mCC int) string {
	return `{"type":"result","subtype":"success","is_error":false,"num_turns":` + itoa(turns) + `,"duration_ms":10,"session_id":"` + sid +
		`","total_cost_usd":` + ftoa(cost) + `,"usage":{"input_tokens":` + itoa(in) + `,"output_tokens":` + itoa(out) +
		`,"cache_read_input_tokens":` + itoa(cr) + `,"cache_creation_input_tokens":` + itoa(cc) + `},"modelUsage":{"claude-opus-5[1m]":{"inputTokens":` +
		itoa(mIn) + `,"outputTokens":` + itoa(mOut) + `,"cacheReadInputTokens":` + itoa(mCR) + `,"cacheCreationInputTokens":` + itoa(mCC) +
		`,"costUSD":` + ftoa(cost) + `,"contextWindow":1000000}}}`
}

func TestSessionUsage(t *testing.T) {
	type total struct {
		Run                 int64
		In, Out, Read, Make int64
		Cost                float64
		Turns               int64
	}
	tests := []struct {
		name  string
		lines []string
		want  []total
	}{
		{
			// claude-stream-2.1.328-conversation.jsonl: two queries of one
			// process; modelUsage and the cost run on, usage and num_turns
			// are each query's.
			name: "the queries of one process",
			lines: []string{
				result("s1", 0.00502, 1, 1200, 8, 300, 0, 1200, 8, 300, 0),
				result("s1", 0.01062, 1, 1300, 8, 1200, 0, 2500, 16, 1500, 0),
			},
			want: []total{{0, 1200, 8, 300, 0, 0.00502, 1}, {0, 2500, 16, 1500, 0, 0.01062, 2}},
		},
		{
			// claude-2.1.328-subagent.jsonl: the held result of the first
			// turn and the next one's, both after the background agent.
			name: "a result printed with the next one's",
			lines: []string{
				result("s1", 0.03044, 2, 3200, 59, 1600, 0, 6900, 100, 4200, 0),
				result("s1", 0.03044, 1, 1800, 9, 1700, 0, 6900, 100, 4200, 0),
			},
			want: []total{{0, 6900, 100, 4200, 0, 0.03044, 2}, {0, 6900, 100, 4200, 0, 0.03044, 3}},
		},
		{
			// tandemtechnology-bb-stdout-resume.jsonl: the same session
			// resumed in a new process, whose totals start again.
			name: "a resumed session in a new process",
			lines: []string{
				result("s1", 0.0978725, 1, 2, 4, 20645, 8744, 2, 4, 20645, 8744),
				result("s1", 0.0153145, 1, 2, 4, 29389, 51, 2, 4, 29389, 51),
			},
			want: []total{{0, 2, 4, 20645, 8744, 0.0978725, 1}, {2, 2, 4, 29389, 51, 0.0153145, 1}},
		},
		{
			// synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl:
			// after the text capture's result, another session whose
			// totals are all larger (the max-turns run's, its main model
			// alone) is still another run.
			name: "another session",
			lines: []string{
				result("s1", 0.00524, 1, 1200, 19, 300, 0, 1200, 19, 300, 0),
				result("s2", 0.0491, 3, 2600, 210, 4100, 900, 2600, 210, 4100, 900),
			},
			want: []total{{0, 1200, 19, 300, 0, 0.00524, 1}, {2, 2600, 210, 4100, 900, 0.0491, 3}},
		},
		{
			// tandemtechnology-bb-stdout-steer-then-compact.jsonl: a
			// compaction's query reports no usage of its own, while the
			// process's totals grow.
			name: "a compaction",
			lines: []string{
				result("s1", 0.174535, 9, 18, 702, 270010, 2189, 18, 702, 270010, 2189),
				result("s1", 0.31090725, 0, 0, 0, 0, 0, 2042, 2775, 290652, 12446),
			},
			want: []total{{0, 18, 702, 270010, 2189, 0.174535, 9}, {0, 2042, 2775, 290652, 12446, 0.31090725, 9}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := claude.NewDecoder(claude.Claude)
			var evs []agentstream.Event
			for _, l := range tt.lines {
				evs = d.Decode(evs, []byte(l))
			}
			var got []total
			for _, e := range evs {
				u, ok := e.Payload.(*agentstream.Usage)
				if !ok || u.Scope != agentstream.ScopeSession {
					continue
				}
				got = append(got, total{u.Run, *u.InputTokens, *u.OutputTokens, *u.CacheReadTokens, *u.CacheCreationTokens, *u.CostUSD, *u.Turns})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("session totals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnpricedModel: Claude Code prints a cost of 0 for a model it has no
// price for (a custom model behind ANTHROPIC_BASE_URL); that is no price.
func TestUnpricedModel(t *testing.T) {
	got := usageOf(t, claude.Claude,
		`{"type":"result","subtype":"success","num_turns":1,"duration_ms":5,"session_id":"s","total_cost_usd":0,"usage":{"input_tokens":10,"output_tokens":14},"modelUsage":{"my-model":{"inputTokens":10,"outputTokens":14,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0}}}`)
	want := []string{`{"scope":"session","inputTokens":10,"outputTokens":14,"cacheReadTokens":0,"cacheCreationTokens":0,"costUsd":null,"turns":1,"durationMs":5,"reasoningTokens":null,"models":[{"model":"my-model","inputTokens":10,"outputTokens":14,"cacheReadTokens":0,"cacheCreationTokens":0,"costUsd":null}]}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestRecapAgreesWithResult: with or without partial messages, the recap
// of a run is its result's totals (claude-2.1.328-text.jsonl).
func TestRecapAgreesWithResult(t *testing.T) {
	for _, partial := range []bool{false, true} {
		lines := []string{`{"type":"system","subtype":"init","session_id":"s1","model":"claude-opus-5-5","tools":[]}`}
		if partial {
			lines = append(lines, `{"type":"stream_event","event":{"type":"message_start","message":{"id":"m_0001","model":"claude-opus-5-5","usage":{"input_tokens":1200,"cache_read_input_tokens":300,"output_tokens":1}}}}`)
		}
		lines = append(lines, textCall)
		if partial {
			lines = append(lines, `{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":19}}}`)
		}
		lines = append(lines, textFinal)
		d := claude.NewDecoder(claude.Claude)
		var evs []agentstream.Event
		for _, l := range lines {
			evs = d.Decode(evs, []byte(l))
		}
		r := agentstream.SummarizeUsage(d.End(evs))
		if r.OutputTokens == nil || *r.OutputTokens != 19 || *r.InputTokens != 1200 || r.TokensFrom != "session" || len(r.Estimated) != 0 {
			t.Errorf("partial %v: recap %s (from %s, estimated %v), want out 19 as the result says", partial, r.String(), r.TokensFrom, r.Estimated)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
