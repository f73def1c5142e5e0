package claude_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// transcriptLines is what a test reads of a transcript with encoding/json,
// apart from the adapter: its cost-state lines, and its calls' usage (the
// last line of each message id, the main conversation's and the
// sidechain's alike).
type transcriptLines struct {
	costStates []costStateLine
	calls      [4]int64 // input, output, cache read, cache creation
}

type costStateLine struct {
	SessionID     string  `json:"sessionId"`
	TotalCostUSD  float64 `json:"totalCostUSD"`
	TotalDuration int64   `json:"totalDuration"`
	ModelUsage    map[string]struct {
		InputTokens              int64   `json:"inputTokens"`
		OutputTokens             int64   `json:"outputTokens"`
		CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
		CostUSD                  float64 `json:"costUSD"`
	} `json:"modelUsage"`
	HasUnknownModelCost bool `json:"hasUnknownModelCost"`
}

func readTranscript(t *testing.T, path string) ([]byte, transcriptLines) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tl transcriptLines
	last := map[string][4]int64{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Message struct {
				ID    string `json:"id"`
				Usage *struct {
					In  int64 `json:"input_tokens"`
					Out int64 `json:"output_tokens"`
					CR  int64 `json:"cache_read_input_tokens"`
					CC  int64 `json:"cache_creation_input_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch {
		case l.Type == "cost-state":
			var c costStateLine
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			tl.costStates = append(tl.costStates, c)
		case l.Type == "assistant" && l.Message.Usage != nil:
			if _, ok := last[l.Message.ID]; !ok {
				order = append(order, l.Message.ID)
			}
			u := l.Message.Usage
			last[l.Message.ID] = [4]int64{u.In, u.Out, u.CR, u.CC}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, id := range order {
		for i, v := range last[id] {
			tl.calls[i] += v
		}
	}
	return data, tl
}

func decodeAll(data []byte) []agentstream.Event {
	d := claude.NewDecoder(claude.Claude)
	var evs []agentstream.Event
	for _, l := range bytes.Split(data, []byte("\n")) {
		evs = d.Decode(evs, l)
	}
	return d.End(evs)
}

// TestCostStateTranscripts reads the lab's transcripts: each cost-state
// line gives a session total with the cost, per model too, and the
// duration the line holds, and no tokens; the recap's cost is the latest
// line's totalCostUSD and its tokens are the calls' sums.
func TestCostStateTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/lab/transcripts/*.jsonl")
	files = append(files, "testdata/synthetic-claude-2.1.328-transcript-resumed-cost-state.jsonl")
	seen := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, tl := readTranscript(t, f)
			evs := decodeAll(data)
			var totals []*agentstream.Usage
			for _, e := range evs {
				if u, ok := e.Payload.(*agentstream.Usage); ok && u.Scope == agentstream.ScopeSession {
					totals = append(totals, u)
				}
			}
			if len(totals) != len(tl.costStates) {
				t.Fatalf("%d session totals, want one per cost-state line (%d)", len(totals), len(tl.costStates))
			}
			seen += len(totals)
			for i, c := range tl.costStates {
				u := totals[i]
				if u.InputTokens != nil || u.OutputTokens != nil || u.CacheReadTokens != nil || u.CacheCreationTokens != nil {
					t.Errorf("cost-state %d: tokens %s, want none", i+1, u.AppendJSON(nil))
				}
				if u.CostUSD == nil || *u.CostUSD != c.TotalCostUSD {
					t.Errorf("cost-state %d: cost %v, want totalCostUSD %v", i+1, u.CostUSD, c.TotalCostUSD)
				}
				if u.DurationMs == nil || *u.DurationMs != c.TotalDuration {
					t.Errorf("cost-state %d: duration %v, want totalDuration %v", i+1, u.DurationMs, c.TotalDuration)
				}
				if u.Unpriced != c.HasUnknownModelCost || u.Run != 0 {
					t.Errorf("cost-state %d: unpriced %v run %d, want %v and run 1", i+1, u.Unpriced, u.Run, c.HasUnknownModelCost)
				}
				want := map[string]*float64{}
				for name, m := range c.ModelUsage {
					cost := m.CostUSD
					if cost == 0 && m.InputTokens+m.OutputTokens+m.CacheReadInputTokens+m.CacheCreationInputTokens > 0 {
						want[name] = nil // no price
					} else {
						want[name] = &cost
					}
				}
				got := map[string]*float64{}
				for _, m := range u.Models {
					got[m.Model] = m.CostUSD
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("cost-state %d: models' costs (-want +got):\n%s", i+1, diff)
				}
			}
			r := agentstream.SummarizeUsage(evs)
			tokens := [4]int64{}
			for i, v := range []*int64{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens} {
				if v != nil {
					tokens[i] = *v
				}
			}
			if tokens != tl.calls || r.TokensFrom != "calls" {
				t.Errorf("recap tokens %v from %q, want the calls' sums %v", tokens, r.TokensFrom, tl.calls)
			}
			if len(tl.costStates) == 0 {
				if r.CostUSD != nil {
					t.Errorf("recap cost %v, want none without a cost-state", *r.CostUSD)
				}
				return
			}
			latest := tl.costStates[len(tl.costStates)-1]
			if diff := cmp.Diff(&latest.TotalCostUSD, r.CostUSD, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("recap cost (-want +got):\n%s", diff)
			}
			if r.IsEstimated(agentstream.FigureCostUSD) != latest.HasUnknownModelCost {
				t.Errorf("recap cost estimated %v, want %v (hasUnknownModelCost)", r.IsEstimated(agentstream.FigureCostUSD), latest.HasUnknownModelCost)
			}
			if r.DurationMs == nil || *r.DurationMs != latest.TotalDuration {
				t.Errorf("recap duration %v, want the latest totalDuration %d", r.DurationMs, latest.TotalDuration)
			}
		})
	}
	if seen == 0 {
		t.Fatal("no cost-state line read")
	}
}

// TestCostStateCoversSubagents shows why a cost-state's token counts are
// not the transcript's: in the lab's subagent run, its modelUsage is the
// parent's calls and the subagent's (kept in the subagent's own
// transcript) together.
func TestCostStateCoversSubagents(t *testing.T) {
	_, parent := readTranscript(t, "testdata/lab/transcripts/claude-2.1.328-subagent.jsonl")
	_, agent := readTranscript(t, "testdata/lab/transcripts/claude-2.1.328-subagent-agent.jsonl")
	if len(parent.costStates) != 1 || len(agent.costStates) != 0 {
		t.Fatalf("cost-state lines: parent %d, subagent %d; want 1 and 0", len(parent.costStates), len(agent.costStates))
	}
	var model [4]int64
	for _, m := range parent.costStates[0].ModelUsage {
		for i, v := range []int64{m.InputTokens, m.OutputTokens, m.CacheReadInputTokens, m.CacheCreationInputTokens} {
			model[i] += v
		}
	}
	var both [4]int64
	for i := range both {
		both[i] = parent.calls[i] + agent.calls[i]
	}
	if model != both || model == parent.calls {
		t.Errorf("modelUsage %v, parent's calls %v, with the subagent's %v: want modelUsage to be both", model, parent.calls, both)
	}
}

func TestCostStateRuns(t *testing.T) {
	cs := func(sid, cost, models string, unknown bool) string {
		u := "false"
		if unknown {
			u = "true"
		}
		return `{"type":"cost-state","sessionId":"` + sid + `","totalCostUSD":` + cost + `,"totalAPIDuration":20,"totalDuration":400,"modelUsage":{` + models + `},"hasUnknownModelCost":` + u + `}`
	}
	opus := func(in, out int, cost string) string {
		return `"claude-opus-5-5":{"inputTokens":` + itoa(in) + `,"outputTokens":` + itoa(out) + `,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":` + cost + `}`
	}
	const none = `"inputTokens":null,"outputTokens":null,"cacheReadTokens":null,"cacheCreationTokens":null`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{
			name:  "the process's cost, per model, without tokens",
			lines: []string{cs("s1", "0.00524", opus(1200, 19, "0.00524"), false)},
			want:  []string{`{"scope":"session",` + none + `,"costUsd":0.00524,"turns":null,"durationMs":400,"reasoningTokens":null,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.00524}]}`},
		},
		{
			name: "a resumed session's totals go on: one run",
			lines: []string{
				cs("s1", "0.00524", opus(1200, 19, "0.00524"), false),
				cs("s1", "0.01138", opus(2600, 31, "0.01138"), false),
			},
			want: []string{
				`{"scope":"session",` + none + `,"costUsd":0.00524,"turns":null,"durationMs":400,"reasoningTokens":null,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.00524}]}`,
				`{"scope":"session",` + none + `,"costUsd":0.01138,"turns":null,"durationMs":400,"reasoningTokens":null,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.01138}]}`,
			},
		},
		{
			name: "totals that went down start a new run",
			lines: []string{
				cs("s1", "0.01138", opus(2600, 31, "0.01138"), false),
				cs("s1", "0.00614", opus(1400, 12, "0.00614"), false),
			},
			want: []string{
				`{"scope":"session",` + none + `,"costUsd":0.01138,"turns":null,"durationMs":400,"reasoningTokens":null,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.01138}]}`,
				`{"scope":"session",` + none + `,"costUsd":0.00614,"turns":null,"durationMs":400,"reasoningTokens":null,"run":2,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.00614}]}`,
			},
		},
		{
			name: "another session starts a new run",
			lines: []string{
				cs("s1", "0.00524", opus(1200, 19, "0.00524"), false),
				cs("s2", "0.01138", opus(2600, 31, "0.01138"), false),
			},
			want: []string{
				`{"scope":"session",` + none + `,"costUsd":0.00524,"turns":null,"durationMs":400,"reasoningTokens":null,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.00524}]}`,
				`{"scope":"session",` + none + `,"costUsd":0.01138,"turns":null,"durationMs":400,"reasoningTokens":null,"run":2,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.01138}]}`,
			},
		},
		{
			name:  "a model without a price: the cost is a lower bound",
			lines: []string{cs("s1", "0.00524", opus(1200, 19, "0.00524")+`,"my-model":{"inputTokens":300,"outputTokens":5,"costUSD":0}`, true)},
			want:  []string{`{"scope":"session",` + none + `,"costUsd":0.00524,"turns":null,"durationMs":400,"reasoningTokens":null,"unpriced":true,"models":[{"model":"claude-opus-5-5",` + none + `,"costUsd":0.00524},{"model":"my-model",` + none + `,"costUsd":null}]}`},
		},
		{
			name:  "no model priced: no cost",
			lines: []string{cs("s1", "0", `"my-model":{"inputTokens":300,"outputTokens":5,"costUSD":0}`, true)},
			want:  []string{`{"scope":"session",` + none + `,"costUsd":null,"turns":null,"durationMs":400,"reasoningTokens":null,"unpriced":true,"models":[{"model":"my-model",` + none + `,"costUsd":null}]}`},
		},
		{
			name:  "a line without figures is raw",
			lines: []string{`{"type":"cost-state","sessionId":"s1"}`},
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
