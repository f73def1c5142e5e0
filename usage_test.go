package agentstream_test

import (
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func call(model string, in, out, cr, cc int64) *agentstream.Usage {
	return &agentstream.Usage{Scope: agentstream.ScopeCall, Model: model, InputTokens: ptr(in), OutputTokens: ptr(out),
		CacheReadTokens: ptr(cr), CacheCreationTokens: ptr(cc)}
}

func estimate(u *agentstream.Usage) *agentstream.Usage { u.Estimate = true; return u }

func total(run int64, in, out, cr, cc int64, cost float64, calls int64) *agentstream.Usage {
	return &agentstream.Usage{Scope: agentstream.ScopeSession, Run: run, InputTokens: ptr(in), OutputTokens: ptr(out),
		CacheReadTokens: ptr(cr), CacheCreationTokens: ptr(cc), CostUSD: ptr(cost), Turns: ptr(calls)}
}

func withModels(u *agentstream.Usage, ms ...agentstream.ModelUsage) *agentstream.Usage {
	u.Models = ms
	return u
}

func modelUsage(name string, in, out, cr, cc int64, cost float64) agentstream.ModelUsage {
	return agentstream.ModelUsage{Model: name, InputTokens: ptr(in), OutputTokens: ptr(out), CacheReadTokens: ptr(cr),
		CacheCreationTokens: ptr(cc), CostUSD: ptr(cost)}
}

// costOnly is a session total that gives a cost and a duration but no
// tokens, as a Claude transcript's cost-state line does, with its
// breakdown of the cost by model.
func costOnly(run int64, cost float64, ms int64, models ...agentstream.ModelUsage) *agentstream.Usage {
	return &agentstream.Usage{Scope: agentstream.ScopeSession, Run: run, CostUSD: ptr(cost), DurationMs: ptr(ms), Models: models}
}

func modelCost(name string, cost *float64) agentstream.ModelUsage {
	return agentstream.ModelUsage{Model: name, CostUSD: cost}
}

func unpriced(u *agentstream.Usage) *agentstream.Usage { u.Unpriced = true; return u }

// tokens is what a test says of a recap's figures.
type tokens struct {
	From                string
	In, Out, Read, Make *int64
	Cost                *float64
	ModelCalls, Turns   *int64
	Runs                int64
	Estimated, Missing  []string
}

func tokensOf(r agentstream.Recap) tokens {
	return tokens{From: r.TokensFrom, In: r.InputTokens, Out: r.OutputTokens, Read: r.CacheReadTokens,
		Make: r.CacheCreationTokens, Cost: r.CostUSD, ModelCalls: r.ModelCalls, Turns: r.Turns, Runs: r.Runs,
		Estimated: r.Estimated, Missing: r.Missing}
}

func fold(ps ...agentstream.Payload) agentstream.Recap {
	var f agentstream.UsageFolder
	for _, p := range ps {
		f.Add(p)
	}
	return f.Recap()
}

var (
	noContext = []string{"turns", "durationMs", "contextTokens", "contextWindow"}
	noWindow  = []string{"turns", "durationMs", "contextWindow"}
)

func TestUsageFolder(t *testing.T) {
	tests := []struct {
		name string
		in   []agentstream.Payload
		want tokens
	}{
		{
			// Claude without --include-partial-messages: the assistant
			// line's snapshot says 1, the result says 19.
			name: "a total after the last call stands for the calls",
			in: []agentstream.Payload{
				estimate(call("claude-opus-5-5", 1200, 1, 300, 0)),
				total(0, 1200, 19, 300, 0, 0.00524, 1),
			},
			want: tokens{From: "session", In: ptr[int64](1200), Out: ptr[int64](19), Read: ptr[int64](300), Make: ptr[int64](0),
				Cost: ptr(0.00524), ModelCalls: ptr[int64](1), Runs: 1, Estimated: []string{}, Missing: []string{"turns", "durationMs"}},
		},
		{
			name: "calls after the latest total are added to it",
			in: []agentstream.Payload{
				call("m", 10, 5, 0, 0), total(0, 10, 5, 0, 0, 0.5, 1),
				call("m", 20, 7, 100, 0), call("m", 30, 9, 200, 0),
			},
			want: tokens{From: "session+calls", In: ptr[int64](60), Out: ptr[int64](21), Read: ptr[int64](300), Make: ptr[int64](0),
				Cost: ptr(0.5), ModelCalls: ptr[int64](3), Runs: 1, Estimated: []string{}, Missing: noWindow},
		},
		{
			name: "calls alone are summed, and counted as model calls",
			in:   []agentstream.Payload{call("m", 1, 2, 3, 4), call("m", 10, 20, 30, 40)},
			want: tokens{From: "calls", In: ptr[int64](11), Out: ptr[int64](22), Read: ptr[int64](33), Make: ptr[int64](44),
				ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{}, Missing: []string{"costUsd", "turns", "durationMs", "contextWindow"}},
		},
		{
			name: "a snapshot never passes for a final count",
			in:   []agentstream.Payload{call("m", 5, 100, 0, 0), estimate(call("m", 5, 1, 0, 0))},
			want: tokens{From: "calls", In: ptr[int64](10), Out: ptr[int64](101), Read: ptr[int64](0), Make: ptr[int64](0),
				ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{"outputTokens"}, Missing: []string{"costUsd", "turns", "durationMs", "contextWindow"}},
		},
		{
			name: "totals of one run replace each other",
			in: []agentstream.Payload{
				total(0, 1200, 8, 300, 0, 0.00502, 1), total(0, 2500, 16, 1500, 0, 0.01062, 2),
			},
			want: tokens{From: "session", In: ptr[int64](2500), Out: ptr[int64](16), Read: ptr[int64](1500), Make: ptr[int64](0),
				Cost: ptr(0.01062), ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{}, Missing: noContext},
		},
		{
			name: "totals without a run number replace each other",
			in: []agentstream.Payload{
				// A Codex thread and its resumed run (TestCodexResumeTotals).
				total(0, 1200, 19, 300, 0, 0, 0), total(0, 2500, 27, 1500, 0, 0, 0),
			},
			want: tokens{From: "session", In: ptr[int64](2500), Out: ptr[int64](27), Read: ptr[int64](1500), Make: ptr[int64](0),
				ModelCalls: ptr[int64](0), Runs: 1, Estimated: []string{}, Missing: append([]string{"costUsd"}, noContext...)},
		},
		{
			// The four results of synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl
			// (the last one's models summed).
			name: "runs add up",
			in: []agentstream.Payload{
				total(0, 1200, 19, 300, 0, 0.00524, 1),
				total(2, 3200, 42, 1700, 0, 0.01398, 2),
				total(3, 3000, 40, 1500, 0, 0.0131, 2),
				total(4, 2600+480, 210+25, 4100, 900, 0.049705, 3),
			},
			want: tokens{From: "session", In: ptr[int64](1200 + 3200 + 3000 + 3080), Out: ptr[int64](19 + 42 + 40 + 235),
				Read: ptr[int64](300 + 1700 + 1500 + 4100), Make: ptr[int64](900),
				Cost: ptr(0.00524 + 0.01398 + 0.0131 + 0.049705), ModelCalls: ptr[int64](1 + 2 + 2 + 3), Runs: 4,
				Estimated: []string{}, Missing: noContext},
		},
		{
			name: "the calls before a new run's first total are the new run's",
			in: []agentstream.Payload{
				call("m", 1, 1, 0, 0), total(0, 1, 10, 0, 0, 1, 1),
				call("m", 2, 1, 0, 0), total(2, 2, 20, 0, 0, 2, 1),
			},
			want: tokens{From: "session", In: ptr[int64](3), Out: ptr[int64](30), Read: ptr[int64](0), Make: ptr[int64](0),
				Cost: ptr(3.0), ModelCalls: ptr[int64](2), Runs: 2, Estimated: []string{}, Missing: noWindow},
		},
		{
			name: "a cost of 0 for tokens spent is unreported",
			in:   []agentstream.Payload{total(0, 100, 10, 0, 0, 0, 1)},
			want: tokens{From: "session", In: ptr[int64](100), Out: ptr[int64](10), Read: ptr[int64](0), Make: ptr[int64](0),
				ModelCalls: ptr[int64](1), Runs: 1, Estimated: []string{}, Missing: append([]string{"costUsd"}, noContext...)},
		},
		{
			name: "a cost of 0 for nothing spent is $0",
			in:   []agentstream.Payload{total(0, 0, 0, 0, 0, 0, 1)},
			want: tokens{From: "session", In: ptr[int64](0), Out: ptr[int64](0), Read: ptr[int64](0), Make: ptr[int64](0),
				Cost: ptr(0.0), ModelCalls: ptr[int64](1), Runs: 1, Estimated: []string{}, Missing: noContext},
		},
		{
			name: "a cost some runs did not report is a lower bound",
			in:   []agentstream.Payload{total(0, 100, 10, 0, 0, 0.25, 1), total(2, 100, 10, 0, 0, 0, 1)},
			want: tokens{From: "session", In: ptr[int64](200), Out: ptr[int64](20), Read: ptr[int64](0), Make: ptr[int64](0),
				Cost: ptr(0.25), ModelCalls: ptr[int64](2), Runs: 2, Estimated: []string{"costUsd"}, Missing: noContext},
		},
		{
			name: "turns are counted from the turn events, model calls from the harness",
			in: []agentstream.Payload{
				&agentstream.TurnStarted{Turn: 1}, &agentstream.TurnEnded{Turn: 1},
				&agentstream.TurnStarted{Turn: 2}, total(0, 1, 1, 1, 1, 1, 9), &agentstream.TurnEnded{Turn: 2},
			},
			want: tokens{From: "session", In: ptr[int64](1), Out: ptr[int64](1), Read: ptr[int64](1), Make: ptr[int64](1),
				Cost: ptr(1.0), ModelCalls: ptr[int64](9), Turns: ptr[int64](2), Runs: 1, Estimated: []string{},
				Missing: []string{"durationMs", "contextTokens", "contextWindow"}},
		},
		{
			// claude-2.1.328-shell.jsonl's transcript: two calls, then the
			// process's cost-state.
			name: "a total of the cost alone leaves the tokens to the calls",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1500, 30, 200, 0), call("claude-opus-5-5", 1700, 12, 1500, 0),
				costOnly(0, 0.01398, 445, modelCost("claude-opus-5-5", ptr(0.01398))),
			},
			want: tokens{From: "calls", In: ptr[int64](3200), Out: ptr[int64](42), Read: ptr[int64](1700), Make: ptr[int64](0),
				Cost: ptr(0.01398), ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{}, Missing: []string{"turns"}},
		},
		{
			name: "a later total of the cost alone replaces the run's earlier one",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1200, 19, 300, 0), costOnly(0, 0.00524, 386),
				call("claude-opus-5-5", 1700, 12, 1500, 0), costOnly(0, 0.0125, 900),
			},
			want: tokens{From: "calls", In: ptr[int64](2900), Out: ptr[int64](31), Read: ptr[int64](1800), Make: ptr[int64](0),
				Cost: ptr(0.0125), ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{}, Missing: []string{"turns"}},
		},
		{
			name: "totals of the cost alone of two runs add up",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1200, 19, 300, 0), costOnly(0, 0.00524, 386),
				call("claude-opus-5-5", 1700, 12, 1500, 0), costOnly(2, 0.0075, 500),
			},
			want: tokens{From: "calls", In: ptr[int64](2900), Out: ptr[int64](31), Read: ptr[int64](1800), Make: ptr[int64](0),
				Cost: ptr(0.01274), ModelCalls: ptr[int64](2), Runs: 2, Estimated: []string{}, Missing: []string{"turns"}},
		},
		{
			name: "an unpriced total's cost is a lower bound",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1200, 19, 300, 0),
				unpriced(costOnly(0, 0.00524, 386, modelCost("claude-opus-5-5", ptr(0.00524)), modelCost("my-model", nil))),
			},
			want: tokens{From: "calls", In: ptr[int64](1200), Out: ptr[int64](19), Read: ptr[int64](300), Make: ptr[int64](0),
				Cost: ptr(0.00524), ModelCalls: ptr[int64](1), Runs: 1, Estimated: []string{"costUsd"}, Missing: []string{"turns"}},
		},
		{
			name: "calls after a breakdown of the cost alone make the cost a lower bound",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1200, 19, 300, 0), costOnly(0, 0.00524, 386, modelCost("claude-opus-5-5", ptr(0.00524))),
				call("claude-opus-5-5", 1700, 12, 1500, 0),
			},
			want: tokens{From: "calls", In: ptr[int64](2900), Out: ptr[int64](31), Read: ptr[int64](1800), Make: ptr[int64](0),
				Cost: ptr(0.00524), ModelCalls: ptr[int64](2), Runs: 1, Estimated: []string{"costUsd"}, Missing: []string{"turns"}},
		},
		{
			name: "nothing reported",
			in:   []agentstream.Payload{&agentstream.SessionStarted{}},
			want: tokens{Estimated: []string{}, Missing: []string{"inputTokens", "outputTokens", "cacheReadTokens",
				"cacheCreationTokens", "costUsd", "turns", "modelCalls", "durationMs", "contextTokens", "contextWindow"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokensOf(fold(tt.in...))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("recap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsageFolderModels(t *testing.T) {
	tests := []struct {
		name string
		in   []agentstream.Payload
		want []agentstream.ModelRecap
	}{
		{
			// The max-turns result of synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl,
			// after a call of the main model.
			name: "the harness's breakdown, one model under two names",
			in: []agentstream.Payload{
				&agentstream.SessionStarted{Model: "claude-opus-5-5[1m]"},
				call("claude-opus-5-5", 3, 400, 1000, 10),
				withModels(total(0, 3080, 235, 4100, 900, 0.049705, 3),
					modelUsage("claude-haiku-4-5-20251001", 480, 25, 0, 0, 0.000605),
					modelUsage("claude-opus-5-5[1m]", 2600, 210, 4100, 900, 0.0491)),
			},
			want: []agentstream.ModelRecap{
				{Model: "claude-opus-5-5", Names: []string{"claude-opus-5-5", "claude-opus-5-5[1m]"}, InputTokens: ptr[int64](2600),
					OutputTokens: ptr[int64](210), CacheReadTokens: ptr[int64](4100), CacheCreationTokens: ptr[int64](900),
					CostUSD: ptr(0.0491), Calls: 1, Estimated: []string{}},
				{Model: "claude-haiku-4-5", Names: []string{"claude-haiku-4-5-20251001"}, InputTokens: ptr[int64](480),
					OutputTokens: ptr[int64](25), CacheReadTokens: ptr[int64](0), CacheCreationTokens: ptr[int64](0),
					CostUSD: ptr(0.000605), Estimated: []string{}},
			},
		},
		{
			name: "a breakdown of the cost alone: the calls' tokens, the harness's cost",
			in: []agentstream.Payload{
				call("claude-opus-5-5", 1500, 50, 100, 0), call("claude-haiku-4-5-20251001", 400, 5, 0, 0),
				call("claude-opus-5-5", 1700, 9, 1500, 0),
				unpriced(costOnly(0, 0.0312, 581, modelCost("claude-opus-5-5", ptr(0.03)),
					modelCost("claude-haiku-4-5-20251001", ptr(0.0012)), modelCost("my-model", nil))),
			},
			want: []agentstream.ModelRecap{
				{Model: "claude-opus-5-5", Names: []string{"claude-opus-5-5"}, InputTokens: ptr[int64](3200),
					OutputTokens: ptr[int64](59), CacheReadTokens: ptr[int64](1600), CacheCreationTokens: ptr[int64](0),
					CostUSD: ptr(0.03), Calls: 2, Estimated: []string{}},
				{Model: "claude-haiku-4-5", Names: []string{"claude-haiku-4-5-20251001"}, InputTokens: ptr[int64](400),
					OutputTokens: ptr[int64](5), CacheReadTokens: ptr[int64](0), CacheCreationTokens: ptr[int64](0),
					CostUSD: ptr(0.0012), Calls: 1, Estimated: []string{}},
			},
		},
		{
			name: "the calls' models when there is no breakdown",
			in: []agentstream.Payload{
				call("claude-opus-5", 1, 10, 0, 0), estimate(call("claude-haiku-4-5", 2, 1, 0, 0)), call("claude-opus-5", 1, 10, 0, 0),
			},
			want: []agentstream.ModelRecap{
				{Model: "claude-opus-5", Names: []string{"claude-opus-5"}, InputTokens: ptr[int64](2), OutputTokens: ptr[int64](20),
					CacheReadTokens: ptr[int64](0), CacheCreationTokens: ptr[int64](0), Calls: 2, Estimated: []string{}},
				{Model: "claude-haiku-4-5", Names: []string{"claude-haiku-4-5"}, InputTokens: ptr[int64](2), OutputTokens: ptr[int64](1),
					CacheReadTokens: ptr[int64](0), CacheCreationTokens: ptr[int64](0), Calls: 1, Estimated: []string{"outputTokens"}},
			},
		},
		{
			name: "a total without a breakdown is the session model's",
			in: []agentstream.Payload{
				&agentstream.SessionStarted{Model: "gpt-5-codex"}, total(0, 100, 10, 5, 0, 0, 0),
			},
			want: []agentstream.ModelRecap{
				{Model: "gpt-5-codex", Names: []string{"gpt-5-codex"}, InputTokens: ptr[int64](100), OutputTokens: ptr[int64](10),
					CacheReadTokens: ptr[int64](5), CacheCreationTokens: ptr[int64](0), Estimated: []string{}},
			},
		},
		{
			name: "runs' breakdowns add up",
			in: []agentstream.Payload{
				withModels(total(0, 1, 1, 0, 0, 1, 1), modelUsage("claude-opus-5[1m]", 1, 1, 0, 0, 1)),
				withModels(total(2, 2, 2, 0, 0, 2, 1), modelUsage("claude-opus-5", 2, 2, 0, 0, 2)),
			},
			want: []agentstream.ModelRecap{
				{Model: "claude-opus-5", Names: []string{"claude-opus-5", "claude-opus-5[1m]"}, InputTokens: ptr[int64](3),
					OutputTokens: ptr[int64](3), CacheReadTokens: ptr[int64](0), CacheCreationTokens: ptr[int64](0),
					CostUSD: ptr(3.0), Estimated: []string{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fold(tt.in...).Models
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecapContext(t *testing.T) {
	r := fold(&agentstream.SessionStarted{Model: "claude-sonnet-4-5"}, call("claude-sonnet-4-5", 4, 100, 1000, 50), call("claude-sonnet-4-5", 6, 20, 2000, 0))
	if *r.ContextTokens != 2006 || *r.ContextWindow != 200000 {
		t.Errorf("context %d of %d, want 2006 of 200000 (the latest call's prompt; the model's window)", *r.ContextTokens, *r.ContextWindow)
	}
}

func TestRecapString(t *testing.T) {
	tests := []struct {
		name     string
		in       []agentstream.Payload
		has, not []string
	}{
		{"missing cost is said, not zero", []agentstream.Payload{call("m", 1, 2, 0, 0)},
			[]string{"cost: not reported", "model calls: 1"}, []string{"$0.00", "turns"}},
		{"an estimate is a lower bound", []agentstream.Payload{estimate(call("m", 1, 2, 0, 0))},
			[]string{"out ≥2"}, nil},
		{"runs are said", []agentstream.Payload{total(0, 1, 1, 0, 0, 1, 1), total(2, 1, 1, 0, 0, 1, 1)},
			[]string{"2 runs", "cost: $2.00"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fold(tt.in...)
			s := r.String()
			for _, h := range tt.has {
				if !strings.Contains(s, h) {
					t.Errorf("recap %q lacks %q", s, h)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(s, n) {
					t.Errorf("recap %q has %q", s, n)
				}
			}
		})
	}
}

func TestModelKey(t *testing.T) {
	tests := map[string]string{
		"claude-opus-5[1m]":                          "claude-opus-5",
		"claude-opus-5":                              "claude-opus-5",
		"Claude-Opus-5":                              "claude-opus-5",
		"claude-haiku-4-5-20251001":                  "claude-haiku-4-5",
		"claude-sonnet-4-5-20250929[1m]":             "claude-sonnet-4-5",
		"claude-3-5-sonnet@20240620":                 "claude-3-5-sonnet",
		"us.anthropic.claude-opus-4-1-20250805-v1:0": "claude-opus-4-1",
		"anthropic/claude-sonnet-4-5":                "claude-sonnet-4-5",
		"models/gemini-2.5-pro":                      "gemini-2.5-pro",
		"gpt-5-codex":                                "gpt-5-codex",
		"gemini-3.8-flash":                           "gemini-3.8-flash",
		"qwen3-coder-20":                             "qwen3-coder-20",
		"":                                           "",
	}
	for in, want := range tests {
		if got := agentstream.ModelKey(in); got != want {
			t.Errorf("ModelKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFigureNames(t *testing.T) {
	got := agentstream.FigureNames([]string{"cacheCreationTokens", "costUsd", "contextWindow"})
	if want := "cache write tokens, cost, context window"; got != want {
		t.Errorf("FigureNames = %q, want %q", got, want)
	}
}
