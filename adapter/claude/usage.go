package claude

import (
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// How Claude Code reports usage, and how it is read here:
//
//   - A call's final count is in its stream_event message_delta (printed
//     with --include-partial-messages). Each assistant line of the call
//     carries the usage as it stood when the line was written: in
//     stream-json, the message_start snapshot (output_tokens 1 or so); in a
//     transcript, the last line of a message often has the final count.
//     So a call's usage waits for its message_delta, or, without stream
//     events, for the call's last line; it is an estimate unless a
//     message_delta gave it or a later line printed another count.
//     Subagent calls never print stream events.
//   - A result line ends a query (a turn): its usage and num_turns are the
//     main conversation's for that query alone; total_cost_usd and
//     modelUsage are the process's running totals, over every model and the
//     subagents. The session total is therefore modelUsage summed (else the
//     queries' usage added up), with num_turns and duration_ms added up over
//     the queries of the run.
//   - A run is one process: its running totals start again in a new process
//     (a resumed session, or another session in the same file), and runs
//     add up.
//   - A transcript has no result lines; Claude Code writes a cost-state
//     line instead (the last line of each of the lab's runs): the
//     process's running totals, totalCostUSD and modelUsage over every
//     model and the subagents, whose calls are in the subagents' own
//     transcripts. Its session total therefore gives the cost, per model
//     too, and the duration, but not the tokens: those of the transcript
//     are its calls' sum. A resumed session's process starts, as
//     third-party readers describe it, from the totals of its latest
//     cost-state, so a later cost-state of the same session whose totals
//     did not go down continues the run; another session's starts one.

// usageVals are the token counters of an Anthropic usage object.
type usageVals struct {
	in, out, cacheRead, cacheCreate, reasoning *int64
}

func parseUsage(v []byte) usageVals {
	var u usageVals
	obj, ok := jsonscan.Object(v)
	if !ok {
		return u
	}
	for obj.Next() {
		switch string(obj.Key()) {
		case "input_tokens":
			u.in = fields.Int(obj.Value())
		case "output_tokens":
			u.out = fields.Int(obj.Value())
		case "cache_read_input_tokens":
			u.cacheRead = fields.Int(obj.Value())
		case "cache_creation_input_tokens":
			u.cacheCreate = fields.Int(obj.Value())
		case "output_tokens_details":
			u.reasoning = fields.Int(jsonscan.Get(obj.Value(), "thinking_tokens"))
		}
	}
	return u
}

// merge overwrites u's counters with those later reports set.
func (u usageVals) merge(later usageVals) usageVals {
	for _, p := range []struct{ dst, src **int64 }{
		{&u.in, &later.in}, {&u.out, &later.out}, {&u.cacheRead, &later.cacheRead},
		{&u.cacheCreate, &later.cacheCreate}, {&u.reasoning, &later.reasoning},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	return u
}

func (u usageVals) counters() [4]int64 {
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return [4]int64{v(u.in), v(u.out), v(u.cacheRead), v(u.cacheCreate)}
}

func (u usageVals) spent() bool { return u.counters() != [4]int64{} }

// add sums o into u; a counter either reports stays reported. The sums
// are new values, so figures already handed out do not change.
func (u *usageVals) add(o usageVals) {
	for _, p := range []struct{ dst, src **int64 }{
		{&u.in, &o.in}, {&u.out, &o.out}, {&u.cacheRead, &o.cacheRead},
		{&u.cacheCreate, &o.cacheCreate}, {&u.reasoning, &o.reasoning},
	} {
		addInt(p.dst, *p.src)
	}
}

// nonCachedInput converts an input count that includes cache reads.
func (d *Decoder) nonCachedInput(u usageVals) *int64 {
	if !d.cfg.InputIncludesCache || u.in == nil || u.cacheRead == nil {
		return u.in
	}
	n := *u.in - *u.cacheRead
	if n < 0 {
		n = 0
	}
	return &n
}

// callUsage is the usage of a model call whose figures are still to be
// given: its message_start snapshot waiting for message_delta, or what its
// assistant lines printed so far.
type callUsage struct {
	id, model, parent string
	u                 usageVals
	first             *int64 // the output count first printed
	grew              bool   // a later line printed another output count
	streamed          bool   // message_start came: message_delta gives the final count
	time              time.Time
}

// startCall notes a message_start: the call's final figures come with its
// message_delta.
func (d *Decoder) startCall(id, model, parent string, u usageVals) {
	if id == "" || d.counted[id] {
		return
	}
	if _, ok := d.pending[id]; !ok {
		d.order = append(d.order, id)
	}
	d.pending[id] = &callUsage{id: id, parent: parent, model: model, u: u, first: u.out, streamed: true}
	d.current[parent] = id
}

// lineUsage notes the usage an assistant line printed for its call.
func (d *Decoder) lineUsage(dst []agentstream.Event, id, model, parent string, u usageVals, t time.Time) []agentstream.Event {
	if p, ok := d.pending[id]; ok && id != "" {
		if p.model == "" {
			p.model = model
		}
		if !d.cfg.SnapshotUsage {
			// A harness whose lines carry the call's final count
			// prints no message_delta (Qwen Code): the line ends the
			// call its message_start began.
			p.u = p.u.merge(u)
			d.dropOrder(id)
			return d.emitUsage(dst, p.id, p.model, p.parent, p.u, false, t)
		}
		if !p.streamed {
			if u.out != nil && p.first != nil && *u.out != *p.first {
				p.grew = true
			}
			p.u = p.u.merge(u)
			p.time = t
		}
		return dst
	}
	if !d.cfg.SnapshotUsage || id == "" {
		return d.emitUsage(dst, id, model, parent, u, d.cfg.SnapshotUsage, time.Time{})
	}
	if d.counted[id] {
		return dst
	}
	d.pending[id] = &callUsage{id: id, model: model, parent: parent, u: u, first: u.out, time: t}
	d.order = append(d.order, id)
	return dst
}

// endCall gives the final figures of the call message_delta ends.
func (d *Decoder) endCall(dst []agentstream.Event, parent string, u usageVals) []agentstream.Event {
	id := d.current[parent]
	p, ok := d.pending[id]
	if !ok {
		return dst
	}
	p.u = p.u.merge(u)
	d.dropOrder(id)
	return d.emitUsage(dst, p.id, p.model, p.parent, p.u, false, time.Time{})
}

// flushCalls gives the usage of the calls keep does not keep waiting, in
// the order they started: figures no message_delta made final are an
// estimate, unless a later line printed another count.
func (d *Decoder) flushCalls(dst []agentstream.Event, keep func(*callUsage) bool) []agentstream.Event {
	order := d.order[:0]
	var done []*callUsage
	for _, id := range d.order {
		p, ok := d.pending[id]
		if !ok {
			continue
		}
		if keep != nil && keep(p) {
			order = append(order, id)
			continue
		}
		done = append(done, p)
	}
	d.order = order
	for _, p := range done {
		dst = d.emitUsage(dst, p.id, p.model, p.parent, p.u, !p.grew, p.time)
	}
	return dst
}

// flushBefore gives the usage of the calls a line shows to be over: those
// of the line's conversation (main or a subagent's) other than the one an
// assistant line or message_start continues (a streamed call still waiting
// for its message_delta was cut off), all of them at a result or a
// transcript's cost-state (the process's totals, its calls over). A tool's
// result does not end its call: in a transcript, a call's last line, with
// its final count, may come after the result of a tool it asked for first.
func (d *Decoder) flushBefore(dst []agentstream.Event, f *fieldsOf) []agentstream.Event {
	if len(d.order) == 0 {
		return dst
	}
	parent := fields.Str(f.parent)
	switch f.kind {
	case "result", "cost-state":
		return d.flushCalls(dst, nil)
	case "assistant":
		id := fields.Str(f.msgID)
		if id == "" && !f.messageRead {
			// The message came before the line's type (a transcript's
			// lines), so it was not read in place.
			id = fields.Str(jsonscan.Get(f.message, "id"))
		}
		return d.flushCalls(dst, func(p *callUsage) bool { return p.parent != parent || p.id == id })
	case "stream_event":
		if string(fields.Unquoted(f.ev.typ)) != "message_start" {
			return dst
		}
		id := fields.Str(jsonscan.Get(f.ev.message, "id"))
		return d.flushCalls(dst, func(p *callUsage) bool { return p.parent != parent || p.id == id })
	}
	return dst
}

func (d *Decoder) dropOrder(id string) {
	for i, o := range d.order {
		if o == id {
			d.order = append(d.order[:i], d.order[i+1:]...)
			return
		}
	}
}

func (d *Decoder) emitUsage(dst []agentstream.Event, id, model, parent string, u usageVals, estimate bool, t time.Time) []agentstream.Event {
	if id != "" {
		if d.counted[id] {
			return dst
		}
		d.counted[id] = true
		delete(d.pending, id)
	}
	p := &agentstream.Usage{
		Scope:               agentstream.ScopeCall,
		Model:               model,
		InputTokens:         d.nonCachedInput(u),
		OutputTokens:        u.out,
		CacheReadTokens:     u.cacheRead,
		CacheCreationTokens: u.cacheCreate,
		ReasoningTokens:     u.reasoning,
		MessageID:           id,
		Estimate:            estimate,
	}
	if p.IsZero() {
		return dst
	}
	p.ContextTokens = p.CallContext()
	e := agentstream.E(p)
	e.ParentCallID, e.Time = parent, t
	return append(dst, e)
}

// runTotals are the running totals of one run (process), as its result
// lines report them.
type runTotals struct {
	n         int64
	sessionID string
	cost      *float64
	models    map[string]usageVals // modelUsage, per model
	order     []string             // modelUsage's models as first listed
	sum       usageVals            // modelUsage summed
	queries   usageVals            // the results' usage added up
	turns     *int64
	duration  *int64
}

// modelUsage reads a result's modelUsage: each model's running totals and
// cost, in the order listed.
func modelUsage(v []byte) (map[string]usageVals, []string, []agentstream.ModelUsage) {
	obj, ok := jsonscan.Object(v)
	if !ok {
		return nil, nil, nil
	}
	vals := map[string]usageVals{}
	var names []string
	var models []agentstream.ModelUsage
	for obj.Next() {
		name := string(obj.Key())
		var u usageVals
		var cost, window []byte
		m, ok := jsonscan.Object(obj.Value())
		if !ok {
			continue
		}
		for m.Next() {
			switch string(m.Key()) {
			case "inputTokens":
				u.in = fields.Int(m.Value())
			case "outputTokens":
				u.out = fields.Int(m.Value())
			case "cacheReadInputTokens":
				u.cacheRead = fields.Int(m.Value())
			case "cacheCreationInputTokens":
				u.cacheCreate = fields.Int(m.Value())
			case "costUSD":
				cost = m.Value()
			case "contextWindow":
				window = m.Value()
			}
		}
		if _, dup := vals[name]; !dup {
			names = append(names, name)
		}
		vals[name] = u
		models = append(models, agentstream.ModelUsage{
			Model: name, InputTokens: u.in, OutputTokens: u.out, CacheReadTokens: u.cacheRead,
			CacheCreationTokens: u.cacheCreate, CostUSD: priced(fields.Float(cost), u), ContextWindow: fields.Int(window),
		})
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	return vals, names, models
}

// priced is a cost as Claude Code printed it, but null for a cost of 0
// for tokens spent: Claude Code prints 0 for a model it has no price for.
func priced(cost *float64, u usageVals) *float64 {
	if cost != nil && *cost == 0 && u.spent() {
		return nil
	}
	return cost
}

// sameRun reports whether a result's running totals continue those of the
// run so far: none went down, and unless they are unchanged (a result held
// back and printed with the next one's), they grew by at least the query's
// own usage. Without modelUsage only the cost and the session id can tell.
func (r *runTotals) sameRun(sessionID string, cost *float64, models map[string]usageVals, sum, query usageVals) bool {
	if r.n == 0 {
		return false
	}
	if cost != nil && r.cost != nil && *cost < *r.cost {
		return false
	}
	if models == nil || r.models == nil {
		return sessionID == "" || r.sessionID == "" || sessionID == r.sessionID
	}
	same := len(models) == len(r.models)
	for name, prev := range r.models {
		cur, ok := models[name]
		if !ok {
			return false
		}
		c, p := cur.counters(), prev.counters()
		for i := range c {
			if c[i] < p[i] {
				return false
			}
		}
		same = same && c == p
	}
	if same {
		return true
	}
	grown, prev, q := sum.counters(), r.sum.counters(), query.counters()
	for i := range grown {
		if grown[i]-prev[i] < q[i] {
			return false
		}
	}
	return true
}

// sessionUsage is the session total a result line gives: the run's
// running totals, in a new run when the result's do not continue them.
func (d *Decoder) sessionUsage(sessionID string, usage, cost, turns, duration, models []byte) *agentstream.Usage {
	query := parseUsage(usage)
	vals, names, breakdown := modelUsage(models)
	var sum usageVals
	for _, n := range names {
		sum.add(vals[n])
	}
	c := fields.Float(cost)
	r := &d.run
	if !r.sameRun(sessionID, c, vals, sum, query) {
		*r = runTotals{n: r.n + 1}
	}
	if sessionID != "" {
		r.sessionID = sessionID
	}
	if c != nil {
		r.cost = c
	}
	r.queries.add(query)
	if vals != nil {
		r.models, r.order, r.sum = vals, names, sum
	}
	addInt(&r.turns, counted(fields.Int(turns)))
	addInt(&r.duration, counted(fields.Int(duration)))
	tot := r.queries
	if r.models != nil {
		tot = r.sum
		tot.reasoning = r.queries.reasoning
	}
	u := &agentstream.Usage{
		Scope:               agentstream.ScopeSession,
		InputTokens:         d.nonCachedInput(tot),
		OutputTokens:        tot.out,
		CacheReadTokens:     tot.cacheRead,
		CacheCreationTokens: tot.cacheCreate,
		ReasoningTokens:     tot.reasoning,
		CostUSD:             priced(r.cost, tot),
		Turns:               r.turns,
		DurationMs:          r.duration,
		Models:              breakdown,
	}
	if r.n > 1 {
		u.Run = r.n
	}
	if vals == nil && r.models != nil {
		u.Models = nil
	}
	return u
}

// counted is a count as printed, but nil for a negative one (Claude Code
// prints num_turns -1 for a query that made no model call of its own).
func counted(v *int64) *int64 {
	if v != nil && *v < 0 {
		return nil
	}
	return v
}

func addInt(dst **int64, v *int64) {
	if v == nil {
		return
	}
	n := *v
	if *dst != nil {
		n += **dst
	}
	*dst = &n
}

// costState is the session total a transcript's cost-state line gives: the
// cost the process reported, in all and per model, and its wall-clock
// duration, without token counts (see the comment at the top), in a new run
// when its totals do not continue those of the run so far. A
// hasUnknownModelCost line's cost is a lower bound (Unpriced), or null when
// it is 0 for tokens spent.
func (d *Decoder) costState(line []byte) *agentstream.Usage {
	var sessionID, cost, duration, models, unknown []byte
	obj, _ := jsonscan.Object(line)
	for obj.Next() {
		switch string(obj.Key()) {
		case "sessionId":
			sessionID = obj.Value()
		case "totalCostUSD":
			cost = obj.Value()
		case "totalDuration":
			duration = obj.Value()
		case "modelUsage":
			models = obj.Value()
		case "hasUnknownModelCost":
			unknown = obj.Value()
		}
	}
	c, ms := fields.Float(cost), fields.Int(duration)
	vals, names, breakdown := modelUsage(models)
	if c == nil && ms == nil && len(breakdown) == 0 {
		return nil
	}
	var sum usageVals
	for _, n := range names {
		sum.add(vals[n])
	}
	id := fields.Str(sessionID)
	r := &d.run
	// Claude Code restores a session's totals only for the same session.
	other := id != "" && r.sessionID != "" && id != r.sessionID
	if other || !r.sameRun(id, c, vals, sum, usageVals{}) {
		*r = runTotals{n: r.n + 1}
	}
	if id != "" {
		r.sessionID = id
	}
	if c != nil {
		r.cost = c
	}
	if vals != nil {
		r.models, r.order, r.sum = vals, names, sum
	}
	for i := range breakdown {
		m := &breakdown[i]
		m.InputTokens, m.OutputTokens, m.CacheReadTokens, m.CacheCreationTokens = nil, nil, nil, nil
	}
	u := &agentstream.Usage{
		Scope:      agentstream.ScopeSession,
		CostUSD:    priced(c, sum),
		DurationMs: counted(ms),
		Models:     breakdown,
		Unpriced:   fields.Bool(unknown),
	}
	if r.n > 1 {
		u.Run = r.n
	}
	return u
}
