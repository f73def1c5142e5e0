package agentstreamtest

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Totals is what a recorded session consumed, read from its native lines
// as the harness printed them, apart from any adapter: the oracle that the
// usage consistency tests hold every surface to. A nil figure is one the
// harness never printed.
type Totals struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens *int64
	CostUSD                                                         *float64
	// Runs is the number of the harness's running totals summed.
	Runs int
	// Estimated is true when the output includes a Claude call whose final
	// count was never printed (no result line covers it).
	Estimated bool
	// From says where the figures come from: "result", "calls" or "".
	From string
}

// UsageRecordings returns the recorded sessions of Claude Code, Codex and
// Gemini CLI under the module's adapter testdata (real-run captures
// included), as paths below root, the module's directory.
func UsageRecordings(root string) ([]string, error) {
	var out []string
	for _, dir := range []string{"adapter/claude/testdata", "adapter/codex/testdata", "adapter/gemini/testdata"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if d.IsDir() {
				// Qwen Code's and Amp's recordings, which the Claude
				// adapter also reads, and Qwen Code's chats beside Gemini
				// CLI's, are other harnesses; goldens are events, not
				// recordings.
				switch d.Name() {
				case "qwen", "amp", "qwenchat", "golden":
					return filepath.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, ".jsonl") {
				out = append(out, rel)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

type claudeCall struct {
	in, out, read, write *int64
	first                *int64
	grew, final          bool
}

type runTotals struct {
	t       Totals
	session string
	cost    *float64
	after   map[string]*claudeCall // calls after the run's latest result
	order   []string
	// costState is set once a transcript's cost-state line priced the
	// run; sinceCost is how many of order came before the latest one.
	costState bool
	sinceCost int
}

// RecordedUsage reads the totals of a recorded Claude Code, Codex or Gemini
// CLI session, following each harness's documented meaning:
//
//   - Claude Code: a result line's modelUsage (summed over its models) and
//     total_cost_usd run on over the process; without modelUsage its usage
//     is the query's, added up. A result of another session_id, or whose
//     cost went down, is a new run; runs add up. Calls printed after the
//     last result (a message's final count: its message_delta, else its
//     last assistant line) add to it; with no result at all, the calls are
//     the figures.
//   - Claude Code's transcripts: no result lines; a cost-state line's
//     totalCostUSD is the process's cost so far (its subagents' included)
//     and the tokens are the calls'. A later cost-state of the same
//     sessionId whose cost did not go down continues the run; another
//     one starts a run of the calls after the previous cost-state.
//   - Codex exec --json: turn.completed.usage is the thread's running
//     total (input including cached input); another thread is another run.
//     The legacy stream's token_count total_token_usage likewise, and a
//     session rollout's (event_msg lines).
//   - Gemini CLI's chat files: each model message's tokens, once per id.
//   - Gemini CLI: each result's stats (input excluding cached, or
//     input_tokens less cached), one run each; the JSON output's
//     stats.models summed.
//
// It uses encoding/json on every line and shares no code with the adapters.
func RecordedUsage(data []byte) Totals {
	var runs []*runTotals
	cur := func() *runTotals {
		if len(runs) == 0 {
			runs = append(runs, &runTotals{after: map[string]*claudeCall{}})
		}
		return runs[len(runs)-1]
	}
	var codexThread string
	var msgID = map[string]string{} // parent -> current streamed message id
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var objs []map[string]any
		if line[0] == '[' {
			if json.Unmarshal(line, &objs) != nil {
				continue
			}
		} else {
			var o map[string]any
			if json.Unmarshal(line, &o) != nil {
				continue
			}
			objs = []map[string]any{o}
		}
		for _, o := range objs {
			typ, _ := o["type"].(string)
			switch {
			case typ == "result" && o["stats"] != nil:
				// Gemini CLI stream-json.
				st, _ := o["stats"].(map[string]any)
				r := &runTotals{after: map[string]*claudeCall{}}
				cached := intOf(st, "cached")
				in := intOf(st, "input")
				if in == nil {
					if n := intOf(st, "input_tokens"); n != nil {
						v := *n
						if cached != nil {
							v = max(v-*cached, 0)
						}
						in = &v
					}
				}
				r.t = Totals{InputTokens: in, OutputTokens: intOf(st, "output_tokens"), CacheReadTokens: cached, From: "result"}
				runs = append(runs, r)
			case typ == "" && o["response"] != nil && o["stats"] != nil:
				// Gemini CLI --output-format json.
				st, _ := o["stats"].(map[string]any)
				models, _ := st["models"].(map[string]any)
				var in, out, cached int64
				seen := false
				for _, m := range models {
					tok, _ := m.(map[string]any)["tokens"].(map[string]any)
					if tok == nil {
						continue
					}
					seen = true
					p, c := val(intOf(tok, "prompt")), val(intOf(tok, "cached"))
					in += max(p-c, 0)
					cached += c
					out += val(intOf(tok, "candidates")) + val(intOf(tok, "thoughts"))
				}
				if seen {
					runs = append(runs, &runTotals{t: Totals{InputTokens: &in, OutputTokens: &out, CacheReadTokens: &cached, From: "result"}, after: map[string]*claudeCall{}})
				}
			case typ == "thread.started":
				id, _ := o["thread_id"].(string)
				if codexThread != "" && id != codexThread && len(runs) > 0 && runs[len(runs)-1].t.From != "" {
					runs = append(runs, &runTotals{after: map[string]*claudeCall{}})
				}
				codexThread = id
			case typ == "turn.completed":
				u, _ := o["usage"].(map[string]any)
				if u == nil {
					continue
				}
				r := cur()
				r.t = codexTotals(u)
			case o["msg"] != nil && o["id"] != nil:
				// Codex's legacy stream.
				msg, _ := o["msg"].(map[string]any)
				if t, _ := msg["type"].(string); t == "token_count" {
					info, _ := msg["info"].(map[string]any)
					if tot, _ := info["total_token_usage"].(map[string]any); tot != nil {
						r := cur()
						r.t = codexTotals(tot)
						r.after, r.order = map[string]*claudeCall{}, nil
					} else if msg["input_tokens"] != nil {
						// The August 2025 shape: one request's usage.
						r := cur()
						u := codexTotals(msg)
						id := strconv.Itoa(len(r.order))
						r.after[id] = &claudeCall{in: u.InputTokens, out: u.OutputTokens, read: u.CacheReadTokens, write: u.CacheCreationTokens, final: true}
						r.order = append(r.order, id)
					}
				}
			case typ == "gemini" && o["tokens"] != nil:
				// A Gemini CLI chat's model message: its call's tokens,
				// once per message id (a message is written again as its
				// tools complete).
				tok, _ := o["tokens"].(map[string]any)
				id, _ := o["id"].(string)
				r := cur()
				if _, ok := r.after[id]; ok || tok == nil {
					continue
				}
				cached := val(intOf(tok, "cached"))
				in := max(val(intOf(tok, "input"))-cached, 0) + val(intOf(tok, "tool"))
				out := val(intOf(tok, "output")) + val(intOf(tok, "thoughts"))
				var zero int64
				r.after[id] = &claudeCall{in: &in, out: &out, read: &cached, write: &zero, final: true}
				r.order = append(r.order, id)
			case typ == "event_msg":
				// A Codex rollout's event messages: token_count as the
				// legacy stream's.
				p, _ := o["payload"].(map[string]any)
				if t, _ := p["type"].(string); t == "token_count" {
					info, _ := p["info"].(map[string]any)
					if tot, _ := info["total_token_usage"].(map[string]any); tot != nil {
						cur().t = codexTotals(tot)
					}
				}
			case typ == "result":
				claudeResult(&runs, o)
			case typ == "cost-state":
				claudeCostState(&runs, o)
			case typ == "assistant":
				m, _ := o["message"].(map[string]any)
				u, _ := m["usage"].(map[string]any)
				id, _ := m["id"].(string)
				if u == nil || id == "" {
					continue
				}
				r := cur()
				c := r.after[id]
				if c == nil {
					c = &claudeCall{first: intOf(u, "output_tokens")}
					r.after[id] = c
					r.order = append(r.order, id)
				}
				if c.final {
					continue
				}
				if o2 := intOf(u, "output_tokens"); o2 != nil && c.first != nil && *o2 != *c.first {
					c.grew = true
				}
				c.in, c.out, c.read, c.write = intOf(u, "input_tokens"), intOf(u, "output_tokens"), intOf(u, "cache_read_input_tokens"), intOf(u, "cache_creation_input_tokens")
			case typ == "stream_event":
				ev, _ := o["event"].(map[string]any)
				parent, _ := o["parent_tool_use_id"].(string)
				switch ev["type"] {
				case "message_start":
					m, _ := ev["message"].(map[string]any)
					id, _ := m["id"].(string)
					msgID[parent] = id
				case "message_delta":
					u, _ := ev["usage"].(map[string]any)
					id := msgID[parent]
					r := cur()
					c := r.after[id]
					if c == nil || u == nil {
						continue
					}
					if v := intOf(u, "output_tokens"); v != nil {
						c.out = v
					}
					if v := intOf(u, "input_tokens"); v != nil {
						c.in = v
					}
					if v := intOf(u, "cache_read_input_tokens"); v != nil {
						c.read = v
					}
					if v := intOf(u, "cache_creation_input_tokens"); v != nil {
						c.write = v
					}
					c.final = true
				}
			}
		}
	}
	var t Totals
	for _, r := range runs {
		rt := r.t
		for _, id := range r.order {
			c := r.after[id]
			if c.in == nil && c.out == nil && c.read == nil && c.write == nil ||
				val(c.in)+val(c.out)+val(c.read)+val(c.write) == 0 {
				continue
			}
			add(&rt.InputTokens, c.in)
			add(&rt.OutputTokens, c.out)
			add(&rt.CacheReadTokens, c.read)
			add(&rt.CacheCreationTokens, c.write)
			if !c.final && !c.grew {
				rt.Estimated = true
			}
			if rt.From == "" {
				rt.From = "calls"
			}
		}
		if rt.From == "" {
			continue
		}
		t.Runs++
		add(&t.InputTokens, rt.InputTokens)
		add(&t.OutputTokens, rt.OutputTokens)
		add(&t.CacheReadTokens, rt.CacheReadTokens)
		add(&t.CacheCreationTokens, rt.CacheCreationTokens)
		if rt.CostUSD != nil {
			if t.CostUSD == nil {
				t.CostUSD = new(float64)
			}
			*t.CostUSD += *rt.CostUSD
		}
		t.Estimated = t.Estimated || rt.Estimated
		if t.From == "" || rt.From == "result" {
			t.From = rt.From
		}
	}
	return t
}

// claudeResult folds a Claude Code result line into the runs.
func claudeResult(runs *[]*runTotals, o map[string]any) {
	sid, _ := o["session_id"].(string)
	cost := floatOf(o, "total_cost_usd")
	var r *runTotals
	if n := len(*runs); n > 0 {
		r = (*runs)[n-1]
	}
	sameRun := r != nil && r.t.From == "result" && (sid == "" || r.session == "" || sid == r.session) &&
		!(cost != nil && r.cost != nil && *cost < *r.cost)
	if r == nil || r.t.From == "result" && !sameRun {
		// A new run: the calls since the previous run's result are its own.
		next := &runTotals{after: map[string]*claudeCall{}}
		if r != nil {
			next.after, next.order = r.after, r.order
			r.after, r.order = map[string]*claudeCall{}, nil
		}
		r = next
		*runs = append(*runs, r)
	}
	// The calls before this result are in its totals.
	r.after, r.order = map[string]*claudeCall{}, nil
	r.session, r.cost = sid, cost
	prev := r.t
	r.t = Totals{From: "result"}
	if models, _ := o["modelUsage"].(map[string]any); len(models) > 0 {
		for _, m := range models {
			mu, _ := m.(map[string]any)
			add(&r.t.InputTokens, intOf(mu, "inputTokens"))
			add(&r.t.OutputTokens, intOf(mu, "outputTokens"))
			add(&r.t.CacheReadTokens, intOf(mu, "cacheReadInputTokens"))
			add(&r.t.CacheCreationTokens, intOf(mu, "cacheCreationInputTokens"))
		}
	} else if u, _ := o["usage"].(map[string]any); u != nil {
		// The query's usage, added to the run's earlier queries'.
		if prev.From == "result" {
			r.t.InputTokens, r.t.OutputTokens, r.t.CacheReadTokens, r.t.CacheCreationTokens = prev.InputTokens, prev.OutputTokens, prev.CacheReadTokens, prev.CacheCreationTokens
		}
		add(&r.t.InputTokens, intOf(u, "input_tokens"))
		add(&r.t.OutputTokens, intOf(u, "output_tokens"))
		add(&r.t.CacheReadTokens, intOf(u, "cache_read_input_tokens"))
		add(&r.t.CacheCreationTokens, intOf(u, "cache_creation_input_tokens"))
	}
	spent := val(r.t.InputTokens)+val(r.t.OutputTokens)+val(r.t.CacheReadTokens)+val(r.t.CacheCreationTokens) > 0
	if cost != nil && !(*cost == 0 && spent) {
		r.t.CostUSD = cost
	}
}

// claudeCostState folds a Claude Code transcript's cost-state line into
// the runs: the cost of the run, whose tokens stay its calls'.
func claudeCostState(runs *[]*runTotals, o map[string]any) {
	sid, _ := o["sessionId"].(string)
	cost := floatOf(o, "totalCostUSD")
	if len(*runs) == 0 {
		*runs = append(*runs, &runTotals{after: map[string]*claudeCall{}})
	}
	r := (*runs)[len(*runs)-1]
	sameRun := !r.costState || (sid == "" || r.session == "" || sid == r.session) &&
		!(cost != nil && r.cost != nil && *cost < *r.cost)
	if !sameRun {
		// A new run: the calls since the previous cost-state are its own.
		next := &runTotals{after: map[string]*claudeCall{}, order: r.order[r.sinceCost:]}
		for _, id := range next.order {
			next.after[id] = r.after[id]
			delete(r.after, id)
		}
		r.order = r.order[:r.sinceCost:r.sinceCost]
		r = next
		*runs = append(*runs, r)
	}
	r.costState, r.sinceCost = true, len(r.order)
	r.session, r.cost = sid, cost
	var spent int64
	models, _ := o["modelUsage"].(map[string]any)
	for _, m := range models {
		mu, _ := m.(map[string]any)
		for _, k := range []string{"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheCreationInputTokens"} {
			spent += val(intOf(mu, k))
		}
	}
	r.t.CostUSD = nil
	if cost != nil && !(*cost == 0 && spent > 0) {
		r.t.CostUSD = cost
	}
}

func codexTotals(u map[string]any) Totals {
	in, cached, written := intOf(u, "input_tokens"), intOf(u, "cached_input_tokens"), intOf(u, "cache_write_input_tokens")
	if in != nil {
		v := max(*in-val(cached)-val(written), 0)
		in = &v
	}
	return Totals{InputTokens: in, OutputTokens: intOf(u, "output_tokens"), CacheReadTokens: cached, CacheCreationTokens: written, From: "result"}
}

func intOf(m map[string]any, k string) *int64 {
	f, ok := m[k].(float64)
	if !ok {
		return nil
	}
	n := int64(f)
	return &n
}

func floatOf(m map[string]any, k string) *float64 {
	f, ok := m[k].(float64)
	if !ok {
		return nil
	}
	return &f
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func add(dst **int64, v *int64) {
	if v == nil {
		return
	}
	n := *v
	if *dst != nil {
		n += **dst
	}
	*dst = &n
}
