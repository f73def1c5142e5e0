package agentstream

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Recap is what a session consumed, as SummarizeUsage folds it from usage
// events. A nil figure is unknown: nobody reported it. Measured, Estimated
// and Missing sort the figures by how they are known, so a reader can say
// "not reported" instead of printing zero, and mark an estimate as one.
type Recap struct {
	// Model is the session's model as the harness named it: the latest
	// session.started or session.updated model, else the latest call's.
	Model               string   `json:"model"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	ReasoningTokens     *int64   `json:"reasoningTokens"`
	CostUSD             *float64 `json:"costUsd"`
	// Turns is the number of turns (prompts the agent took up), counted
	// from the turn events.
	Turns *int64 `json:"turns"`
	// ModelCalls is the number of model calls (round trips to the model):
	// the harness's own count where it gives one (Claude's num_turns),
	// else the calls whose usage was seen.
	ModelCalls      *int64   `json:"modelCalls"`
	DurationMs      *int64   `json:"durationMs"`
	ContextTokens   *int64   `json:"contextTokens"`
	ContextWindow   *int64   `json:"contextWindow"`
	PremiumRequests *float64 `json:"premiumRequests"`
	// TokensFrom is "session" when the tokens are the harness's own totals,
	// "calls" when they are the sum of call usage, "session+calls" when a
	// total is followed by calls it does not cover yet (a running
	// session), or "" when no usage was seen.
	TokensFrom string `json:"tokensFrom"`
	// Calls is the number of call usage events seen.
	Calls int64 `json:"calls"`
	// Runs is the number of runs summed: stretches of output each with a
	// running total of its own, such as the processes of one file.
	Runs int64 `json:"runs"`
	// Thread is the harness conversation the latest run's totals are the
	// running total of, when they go on across processes (Codex's thread):
	// a report that also holds the thread's earlier sessions counts only
	// what this one added (see UsageReport). "" otherwise.
	Thread string `json:"thread"`
	// Models breaks the figures down by model (ModelKey), largest first:
	// from the harness's own breakdown where it gives one, else from the
	// calls' models.
	Models []ModelRecap `json:"models"`
	// Measured lists the figures the harness reported in full.
	Measured []string `json:"measured"`
	// Estimated lists the figures that are lower bounds: they include a
	// call whose final count was never printed, or a cost that part of the
	// session did not report.
	Estimated []string `json:"estimated"`
	// Missing lists the figures nobody reported.
	Missing []string `json:"missing"`
}

// ModelRecap is one model's share of a Recap.
type ModelRecap struct {
	// Model is the grouping name (ModelKey); Names are the native names the
	// harness gave it.
	Model               string   `json:"model"`
	Names               []string `json:"names"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	CostUSD             *float64 `json:"costUsd"`
	// Calls is the number of call usage events of the model seen.
	Calls int64 `json:"calls"`
	// Estimated lists the figures of the model that are lower bounds.
	Estimated []string `json:"estimated"`
}

// Figure keys, as Recap's JSON names them and Measured, Estimated and
// Missing list them.
const (
	FigureInputTokens         = "inputTokens"
	FigureOutputTokens        = "outputTokens"
	FigureCacheReadTokens     = "cacheReadTokens"
	FigureCacheCreationTokens = "cacheCreationTokens"
	FigureCostUSD             = "costUsd"
	FigureTurns               = "turns"
	FigureModelCalls          = "modelCalls"
	FigureDurationMs          = "durationMs"
	FigureContextTokens       = "contextTokens"
	FigureContextWindow       = "contextWindow"
)

var figureNames = map[string]string{
	FigureInputTokens:         "input tokens",
	FigureOutputTokens:        "output tokens",
	FigureCacheReadTokens:     "cache read tokens",
	FigureCacheCreationTokens: "cache write tokens",
	FigureCostUSD:             "cost",
	FigureTurns:               "turns",
	FigureModelCalls:          "model calls",
	FigureDurationMs:          "duration",
	FigureContextTokens:       "context",
	FigureContextWindow:       "context window",
}

// FigureName returns the words people read for a figure key
// ("cacheCreationTokens" is "cache write tokens"), or the key itself.
func FigureName(key string) string {
	if n, ok := figureNames[key]; ok {
		return n
	}
	return key
}

// FigureNames returns the words of each key, joined with commas.
func FigureNames(keys []string) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = FigureName(k)
	}
	return strings.Join(names, ", ")
}

// UsageEventTypes are the event types a UsageFolder reads; a reader that
// folds a stored session's recap again needs only these.
var UsageEventTypes = []string{TypeUsage, TypeSessionStarted, TypeSessionUpdated, TypeTurnStarted, TypeTurnEnded}

// tally sums figures. A nil figure is one nobody reported.
type tally struct {
	in, out, cacheRead, cacheWrite, reasoning *int64
	cost                                      *float64
	calls                                     int64
	estOut                                    bool // out includes a snapshot
	unpriced                                  bool // a part with tokens had no cost
}

func addTo(dst **int64, v *int64) {
	if v == nil {
		return
	}
	if *dst == nil {
		*dst = new(int64)
	}
	**dst += *v
}

func addCost(dst **float64, v *float64) {
	if v == nil {
		return
	}
	if *dst == nil {
		*dst = new(float64)
	}
	**dst += *v
}

func (t *tally) tokens() bool {
	for _, v := range []*int64{t.in, t.out, t.cacheRead, t.cacheWrite} {
		if v != nil && *v != 0 {
			return true
		}
	}
	return false
}

// add sums o into t.
func (t *tally) add(o *tally) {
	addTo(&t.in, o.in)
	addTo(&t.out, o.out)
	addTo(&t.cacheRead, o.cacheRead)
	addTo(&t.cacheWrite, o.cacheWrite)
	addTo(&t.reasoning, o.reasoning)
	addCost(&t.cost, o.cost)
	t.calls += o.calls
	t.estOut = t.estOut || o.estOut
	t.unpriced = t.unpriced || o.unpriced
}

// reportedCost is a cost as a reader should take it: a cost of 0 for
// tokens spent is what harnesses print for a model they have no price for,
// not a price, so it counts as unreported.
func reportedCost(cost *float64, spent bool) *float64 {
	if cost != nil && *cost == 0 && spent {
		return nil
	}
	return cost
}

func callTally(p *Usage) tally {
	t := tally{in: p.InputTokens, out: p.OutputTokens, cacheRead: p.CacheReadTokens,
		cacheWrite: p.CacheCreationTokens, reasoning: p.ReasoningTokens, calls: 1, estOut: p.Estimate}
	t.cost = reportedCost(p.CostUSD, t.tokens())
	t.unpriced = t.cost == nil && t.tokens()
	return t
}

// over returns the figures of total with the calls after it added, each
// figure the total reports; figures it does not report come from all, the
// run's calls.
func over(total *tally, after, all *tally) (tally, bool) {
	var r tally
	fromTotal := false
	pick := func(dst **int64, tv, av, allv *int64) {
		switch {
		case tv != nil:
			fromTotal = true
			addTo(dst, tv)
			addTo(dst, av)
		default:
			addTo(dst, allv)
		}
	}
	pick(&r.in, total.in, after.in, all.in)
	pick(&r.cacheRead, total.cacheRead, after.cacheRead, all.cacheRead)
	pick(&r.cacheWrite, total.cacheWrite, after.cacheWrite, all.cacheWrite)
	addTo(&r.reasoning, total.reasoning)
	if total.reasoning != nil {
		addTo(&r.reasoning, after.reasoning)
	} else {
		addTo(&r.reasoning, all.reasoning)
	}
	if total.out != nil {
		fromTotal = true
		addTo(&r.out, total.out)
		addTo(&r.out, after.out)
		r.estOut = after.estOut
	} else {
		addTo(&r.out, all.out)
		r.estOut = all.estOut
	}
	if total.cost != nil {
		addCost(&r.cost, total.cost)
		addCost(&r.cost, after.cost)
		r.unpriced = total.unpriced
	} else {
		addCost(&r.cost, all.cost)
		r.unpriced = all.unpriced
	}
	if r.cost == nil && r.tokens() {
		r.unpriced = true
	}
	r.calls = all.calls
	return r, fromTotal
}

// breakdownTokens reports whether a session total's breakdown by model
// gives any token count.
func breakdownTokens(models []ModelUsage) bool {
	for i := range models {
		m := &models[i]
		if m.InputTokens != nil || m.OutputTokens != nil || m.CacheReadTokens != nil || m.CacheCreationTokens != nil {
			return true
		}
	}
	return false
}

// modelTally is one model's figures, under its grouping key.
type modelTally struct {
	key   string
	names []string
	t     tally
}

type modelTallies map[string]*modelTally

func (m modelTallies) add(name string, t *tally) {
	key := ModelKey(name)
	mt := m[key]
	if mt == nil {
		mt = &modelTally{key: key}
		m[key] = mt
	}
	mt.addNames([]string{name})
	mt.t.add(t)
}

// merge adds o's figures and names under o's key.
func (m modelTallies) merge(o *modelTally) {
	mt := m[o.key]
	if mt == nil {
		mt = &modelTally{key: o.key}
		m[o.key] = mt
	}
	mt.addNames(o.names)
	mt.t.add(&o.t)
}

func (mt *modelTally) addNames(names []string) {
	for _, n := range names {
		if n != "" && !contains(mt.names, n) {
			mt.names = append(mt.names, n)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// run is one stretch of output with running totals of its own.
type run struct {
	id         int64
	total      *Usage
	all, after tally // the run's calls; those after its latest total
	allModels  modelTallies
	afterModel modelTallies
}

func newRun(id int64) *run {
	return &run{id: id, allModels: modelTallies{}, afterModel: modelTallies{}}
}

func (r *run) empty() bool { return r.total == nil && r.all.calls == 0 }

// figures is the run's contribution to the recap: its tallies in total and
// by model, where its tokens came from, and its harness figures.
type figures struct {
	t                    tally
	from                 string
	models               modelTallies
	modelCalls, duration *int64
	premium              *float64
}

func (r *run) figures(sessionModel string) figures {
	var f figures
	var total tally
	if s := r.total; s != nil {
		total = tally{in: s.InputTokens, out: s.OutputTokens, cacheRead: s.CacheReadTokens,
			cacheWrite: s.CacheCreationTokens, reasoning: s.ReasoningTokens}
		total.cost = reportedCost(s.CostUSD, total.tokens())
		total.unpriced = s.Unpriced
		f.duration, f.premium = s.DurationMs, s.PremiumRequests
		if s.Turns != nil {
			n := *s.Turns + r.after.calls
			f.modelCalls = &n
		}
	}
	var fromTotal bool
	f.t, fromTotal = over(&total, &r.after, &r.all)
	switch {
	case fromTotal && r.after.calls > 0:
		f.from = "session+calls"
	case fromTotal:
		f.from = "session"
	case r.all.calls > 0:
		f.from = "calls"
	}
	f.models = modelTallies{}
	switch {
	case r.total != nil && len(r.total.Models) > 0 && !breakdownTokens(r.total.Models):
		// A breakdown of the cost alone (Claude Code's cost-state): each
		// model's tokens are its calls' sum, its cost the harness's, with
		// the cost of its calls after the total added; a model without a
		// price, or with calls after the total that have none, makes the
		// run's cost a lower bound.
		for _, mt := range r.allModels {
			f.models.merge(mt)
		}
		for i := range r.total.Models {
			m := &r.total.Models[i]
			key := ModelKey(m.Model)
			mt := f.models[key]
			switch {
			case mt == nil && m.CostUSD == nil:
				// Nothing known of it here (a subagent's model
				// without a price): the total says Unpriced.
				continue
			case mt == nil:
				mt = &modelTally{key: key}
				f.models[key] = mt
			}
			mt.addNames([]string{m.Model})
			if m.CostUSD == nil {
				continue
			}
			mt.t.cost, mt.t.unpriced = nil, false
			addCost(&mt.t.cost, m.CostUSD)
			if am := r.afterModel[key]; am != nil {
				// Calls the total does not cover yet, priced or not.
				addCost(&mt.t.cost, am.t.cost)
				mt.t.unpriced = am.t.unpriced
			}
		}
		for _, mt := range f.models {
			f.t.unpriced = f.t.unpriced || mt.t.unpriced
		}
	case r.total != nil && len(r.total.Models) > 0:
		for i := range r.total.Models {
			m := &r.total.Models[i]
			t := tally{in: m.InputTokens, out: m.OutputTokens, cacheRead: m.CacheReadTokens, cacheWrite: m.CacheCreationTokens}
			t.cost = reportedCost(m.CostUSD, t.tokens())
			t.unpriced = t.cost == nil && t.tokens()
			f.t.unpriced = f.t.unpriced || t.unpriced
			f.models.add(m.Model, &t)
		}
		for _, mt := range r.afterModel {
			f.models.merge(mt)
		}
		for k, mt := range r.allModels {
			if got := f.models[k]; got != nil {
				got.t.calls = mt.t.calls
				got.addNames(mt.names)
			}
		}
	case fromTotal:
		// One figure for the run: the model of its calls when they name
		// one, else the session's.
		name := sessionModel
		if len(r.allModels) == 1 {
			for _, mt := range r.allModels {
				if len(mt.names) > 0 {
					name = mt.names[0]
				}
			}
		}
		t := f.t
		f.models.add(name, &t)
		mt := f.models[ModelKey(name)]
		if am := r.allModels[mt.key]; am != nil {
			mt.addNames(am.names)
		}
		if sessionModel != "" && ModelKey(sessionModel) == mt.key {
			mt.addNames([]string{sessionModel})
		}
	default:
		for _, mt := range r.allModels {
			f.models.merge(mt)
		}
	}
	return f
}

// UsageFolder folds events into a Recap one at a time, for readers that see
// a session as it runs. The zero value is ready to use; it is not safe for
// concurrent use.
//
// Call usage is summed; a session total replaces the previous total of its
// run and covers the calls before it; the calls after the latest total are
// added to it; runs add up. Where a figure has no total, the calls' sum
// stands for it. Calls marked estimate make the output a lower bound until a
// total covers them.
type UsageFolder struct {
	runs        []figures
	cur         *run
	model       string // from session.started or session.updated
	callModel   string
	window      *int64
	lastContext *int64
	lastWindow  *int64
	calls       int64
	maxTurn     int64
}

// AddEnvelope folds one event in, as Add does; a subagent's call (an
// event with a parentCallId) counts in the figures but does not set the
// context, which is the main conversation's.
func (f *UsageFolder) AddEnvelope(e *Envelope) { f.add(e.Payload, e.ParentCallID != "") }

// Add folds one event's payload in. Payloads other than those of
// UsageEventTypes are ignored; a jsonl harness's passthrough payloads count
// as their typed selves.
func (f *UsageFolder) Add(p Payload) { f.add(p, false) }

func (f *UsageFolder) add(p Payload, subagent bool) {
	switch p := Typed(p).(type) {
	case *SessionStarted:
		if p.Model != "" {
			f.model = p.Model
		}
		if p.ContextWindow != nil {
			f.window = p.ContextWindow
		}
	case *SessionUpdated:
		if p.Model != "" {
			f.model = p.Model
		}
	case *TurnStarted:
		f.maxTurn = max(f.maxTurn, p.Turn)
	case *TurnEnded:
		f.maxTurn = max(f.maxTurn, p.Turn)
	case *Usage:
		switch p.Scope {
		case ScopeCall:
			f.addCall(p, subagent)
		case ScopeSession:
			f.addSession(p)
		}
	}
}

func (f *UsageFolder) current() *run {
	if f.cur == nil {
		f.cur = newRun(0)
	}
	return f.cur
}

func (f *UsageFolder) addCall(p *Usage, subagent bool) {
	if p.IsZero() {
		return
	}
	f.calls++
	t := callTally(p)
	r := f.current()
	r.all.add(&t)
	r.after.add(&t)
	r.allModels.add(p.Model, &t)
	r.afterModel.add(p.Model, &t)
	if subagent {
		return
	}
	if ctx := p.ContextTokens; ctx != nil {
		f.lastContext = ctx
	} else if ctx := p.CallContext(); ctx != nil {
		f.lastContext = ctx
	}
	if p.Model != "" {
		f.callModel = p.Model
	}
}

func (f *UsageFolder) addSession(p *Usage) {
	id := max(p.Run, 1)
	r := f.current()
	switch {
	case r.total == nil:
		r.id = id
	case id != r.id:
		// A new run: the calls since the previous total are its own.
		next := newRun(id)
		next.all, next.allModels = r.after, r.afterModel
		r.all = subtract(r.all, r.after)
		r.allModels = subtractModels(r.allModels, r.afterModel)
		r.after, r.afterModel = tally{}, modelTallies{}
		f.runs = append(f.runs, r.figures(f.sessionModel()))
		r = next
		f.cur = r
	}
	r.total = p
	r.after, r.afterModel = tally{}, modelTallies{}
	if p.ContextTokens != nil {
		f.lastContext = p.ContextTokens
	}
	if p.ContextWindow != nil {
		f.lastWindow = p.ContextWindow
	}
}

func subtract(a, b tally) tally {
	sub := func(x, y *int64) *int64 {
		if x == nil {
			return nil
		}
		n := *x
		if y != nil {
			n -= *y
		}
		return &n
	}
	r := tally{in: sub(a.in, b.in), out: sub(a.out, b.out), cacheRead: sub(a.cacheRead, b.cacheRead),
		cacheWrite: sub(a.cacheWrite, b.cacheWrite), reasoning: sub(a.reasoning, b.reasoning),
		calls: a.calls - b.calls, estOut: a.estOut, unpriced: a.unpriced}
	if a.cost != nil {
		c := *a.cost
		if b.cost != nil {
			c -= *b.cost
		}
		r.cost = &c
	}
	return r
}

func subtractModels(a, b modelTallies) modelTallies {
	out := modelTallies{}
	for k, mt := range a {
		cp := &modelTally{key: k, names: mt.names, t: mt.t}
		if o := b[k]; o != nil {
			cp.t = subtract(mt.t, o.t)
		}
		if cp.t.calls > 0 {
			out[k] = cp
		}
	}
	return out
}

func (f *UsageFolder) sessionModel() string {
	if f.model != "" {
		return f.model
	}
	return f.callModel
}

// Recap returns the recap of what was added so far.
func (f *UsageFolder) Recap() Recap {
	runs := f.runs
	if f.cur != nil && !f.cur.empty() {
		runs = append(runs[:len(runs):len(runs)], f.cur.figures(f.sessionModel()))
	}
	var r Recap
	var sum tally
	models := modelTallies{}
	froms := map[string]bool{}
	for i := range runs {
		ru := &runs[i]
		sum.add(&ru.t)
		if ru.from != "" {
			froms[ru.from] = true
		}
		addTo(&r.ModelCalls, ru.modelCalls)
		addTo(&r.DurationMs, ru.duration)
		if ru.premium != nil {
			addCost(&r.PremiumRequests, ru.premium)
		}
		for _, mt := range ru.models {
			models.merge(mt)
		}
	}
	r.Runs = int64(len(runs))
	if f.cur != nil && f.cur.total != nil {
		r.Thread = f.cur.total.Thread
	}
	switch {
	case froms["session+calls"] || froms["session"] && froms["calls"]:
		r.TokensFrom = "session+calls"
	case froms["session"]:
		r.TokensFrom = "session"
	case froms["calls"]:
		r.TokensFrom = "calls"
	}
	if r.TokensFrom != "" {
		r.InputTokens, r.OutputTokens = sum.in, sum.out
		r.CacheReadTokens, r.CacheCreationTokens = sum.cacheRead, sum.cacheWrite
		r.ReasoningTokens = sum.reasoning
	}
	r.CostUSD = sum.cost
	r.Calls = f.calls
	if r.ModelCalls == nil && f.calls > 0 {
		n := f.calls
		r.ModelCalls = &n
	}
	if f.maxTurn > 0 {
		n := f.maxTurn
		r.Turns = &n
	}
	r.Model = f.sessionModel()
	r.ContextTokens = f.lastContext
	r.ContextWindow = f.window
	if r.ContextWindow == nil {
		r.ContextWindow = f.lastWindow
	}
	if r.ContextWindow == nil {
		if w, ok := ContextWindow(r.Model); ok {
			r.ContextWindow = &w
		}
	}
	r.Models = modelRecaps(models)
	est := []string{}
	if sum.estOut && r.OutputTokens != nil {
		est = append(est, FigureOutputTokens)
	}
	if sum.unpriced && r.CostUSD != nil {
		est = append(est, FigureCostUSD)
	}
	r.Estimated = est
	r.Measured, r.Missing = sortFigures(&r)
	return r
}

func modelRecaps(models modelTallies) []ModelRecap {
	out := make([]ModelRecap, 0, len(models))
	for _, mt := range models {
		if mt.key == "" && !mt.t.tokens() && mt.t.cost == nil {
			continue
		}
		m := ModelRecap{Model: mt.key, Names: append([]string{}, mt.names...),
			InputTokens: mt.t.in, OutputTokens: mt.t.out, CacheReadTokens: mt.t.cacheRead,
			CacheCreationTokens: mt.t.cacheWrite, CostUSD: mt.t.cost, Calls: mt.t.calls, Estimated: []string{}}
		if mt.t.estOut && m.OutputTokens != nil {
			m.Estimated = append(m.Estimated, FigureOutputTokens)
		}
		if mt.t.unpriced && m.CostUSD != nil {
			m.Estimated = append(m.Estimated, FigureCostUSD)
		}
		sort.Strings(m.Names)
		out = append(out, m)
	}
	size := func(m *ModelRecap) int64 {
		var n int64
		for _, v := range []*int64{m.InputTokens, m.OutputTokens, m.CacheReadTokens, m.CacheCreationTokens} {
			if v != nil {
				n += *v
			}
		}
		return n
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := size(&out[i]), size(&out[j]); a != b {
			return a > b
		}
		return out[i].Model < out[j].Model
	})
	return out
}

// sortFigures returns the reported figures that are not estimates, and the
// figures nobody reported.
func sortFigures(r *Recap) (measured, missing []string) {
	measured, missing = []string{}, []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{FigureInputTokens, r.InputTokens != nil},
		{FigureOutputTokens, r.OutputTokens != nil},
		{FigureCacheReadTokens, r.CacheReadTokens != nil},
		{FigureCacheCreationTokens, r.CacheCreationTokens != nil},
		{FigureCostUSD, r.CostUSD != nil},
		{FigureTurns, r.Turns != nil},
		{FigureModelCalls, r.ModelCalls != nil},
		{FigureDurationMs, r.DurationMs != nil},
		{FigureContextTokens, r.ContextTokens != nil},
		{FigureContextWindow, r.ContextWindow != nil},
	} {
		switch {
		case !f.set:
			missing = append(missing, f.name)
		case !contains(r.Estimated, f.name):
			measured = append(measured, f.name)
		}
	}
	return measured, missing
}

// IsEstimated reports whether the figure key is an estimate in r.
func (r *Recap) IsEstimated(key string) bool { return contains(r.Estimated, key) }

// SummarizeUsage folds the usage of a session's events into its recap
// (see UsageFolder): a session total that came after the last call stands
// for the calls before it, runs add up, and cost, model calls and duration
// come only from the harness; the context is the latest call's; the
// context window comes from session.started, else from a session total,
// else from the model name.
func SummarizeUsage(events []Event) Recap {
	var f UsageFolder
	for _, e := range events {
		f.add(e.Payload, e.ParentCallID != "")
	}
	return f.Recap()
}

// TotalTokens returns input + output + cache tokens, counting unknown ones as
// zero.
func (r *Recap) TotalTokens() int64 {
	var n int64
	for _, v := range []*int64{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens} {
		if v != nil {
			n += *v
		}
	}
	return n
}

// FormatFigure formats a token count of r for people: "—" when nobody
// reported it, with "≥" before an estimate (a lower bound).
func (r *Recap) FormatFigure(key string, v *int64) string {
	if v == nil {
		return "—"
	}
	s := Thousands(*v)
	if r.IsEstimated(key) {
		s = "≥" + s
	}
	return s
}

// String renders the recap on one line for people, saying "not reported"
// for what is missing rather than printing zero, and marking estimates.
func (r *Recap) String() string {
	var parts []string
	if r.TokensFrom == "" {
		parts = append(parts, "tokens: not reported")
	} else {
		parts = append(parts, "tokens: "+strings.Join([]string{
			"in " + r.FormatFigure(FigureInputTokens, r.InputTokens),
			"out " + r.FormatFigure(FigureOutputTokens, r.OutputTokens),
			"cache read " + r.FormatFigure(FigureCacheReadTokens, r.CacheReadTokens),
			"cache write " + r.FormatFigure(FigureCacheCreationTokens, r.CacheCreationTokens),
		}, ", "))
	}
	if r.CostUSD != nil {
		c := FormatCost(*r.CostUSD)
		if r.IsEstimated(FigureCostUSD) {
			c = "≥" + c
		}
		parts = append(parts, "cost: "+c)
	} else {
		parts = append(parts, "cost: not reported")
	}
	if r.PremiumRequests != nil {
		parts = append(parts, "premium requests: "+strconv.FormatFloat(*r.PremiumRequests, 'f', -1, 64))
	}
	if r.Turns != nil {
		parts = append(parts, "turns: "+strconv.FormatInt(*r.Turns, 10))
	}
	if r.ModelCalls != nil {
		parts = append(parts, "model calls: "+strconv.FormatInt(*r.ModelCalls, 10))
	}
	if r.DurationMs != nil {
		parts = append(parts, "duration: "+FormatDurationMs(*r.DurationMs))
	}
	if r.ContextTokens != nil {
		c := "context: " + Thousands(*r.ContextTokens)
		if r.ContextWindow != nil && *r.ContextWindow > 0 {
			c += fmt.Sprintf(" of %s (%.0f%%)", Thousands(*r.ContextWindow), 100*float64(*r.ContextTokens)/float64(*r.ContextWindow))
		}
		parts = append(parts, c)
	}
	if r.Runs > 1 {
		parts = append(parts, strconv.FormatInt(r.Runs, 10)+" runs")
	}
	return strings.Join(parts, " · ")
}

// FormatCost formats a reported cost in dollars, with enough digits that a
// small cost does not read as zero.
func FormatCost(usd float64) string {
	if usd != 0 && usd < 0.01 && usd > -0.01 {
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// FormatDurationMs formats milliseconds as 850ms, 8.8s, 3m05s or 1h02m.
func FormatDurationMs(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	case ms < 3_600_000:
		return fmt.Sprintf("%dm%02ds", ms/60_000, ms/1000%60)
	default:
		return fmt.Sprintf("%dh%02dm", ms/3_600_000, ms/60_000%60)
	}
}

// Thousands formats n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// contextWindows is the one table of known context windows, matched against
// a model id with any provider prefix and "[…]" suffix removed. The first
// matching row wins.
var contextWindows = []struct {
	match  func(m string) bool
	tokens int64
}{
	{func(m string) bool { return strings.HasSuffix(m, "[1m]") }, 1_000_000},
	{func(m string) bool { return claudeGeneration(m) >= 5 }, 1_000_000},
	{func(m string) bool { g := claudeGeneration(m); return g == 3 || g == 4 }, 200_000},
	{func(m string) bool { return strings.Contains(m, "gemini-2.5") }, 1_048_576},
}

// claudeGeneration returns the major version of a Claude model id in either
// naming scheme (claude-3-5-sonnet, claude-sonnet-4-5, claude-opus-5), or 0.
func claudeGeneration(m string) int {
	i := strings.Index(m, "claude-")
	if i < 0 {
		return 0
	}
	rest := m[i+len("claude-"):]
	for _, fam := range []string{"opus-", "sonnet-", "haiku-"} {
		if strings.HasPrefix(rest, fam) {
			rest = rest[len(fam):]
			break
		}
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j > 2 {
		return 0
	}
	g, _ := strconv.Atoi(rest[:j])
	return g
}

// ContextWindow returns the context window of a model id, when it is known.
func ContextWindow(model string) (int64, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "" {
		return 0, false
	}
	for _, row := range contextWindows {
		if row.match(m) {
			return row.tokens, true
		}
	}
	return 0, false
}
