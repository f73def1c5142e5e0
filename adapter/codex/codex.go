// Package codex is the adapter for the output of OpenAI's Codex CLI (protocol
// codex-json): the JSONL of `codex exec --json` (thread.*, turn.* and item.*
// events), its short-lived September 2025 shape (session.created, item_type,
// assistant_message), and the legacy {"id","msg"} event stream that
// `codex exec --json` printed before 0.44 and `codex proto` printed, with the
// config summary and prompt lines that came first.
package codex

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "codex"

// Decoder reads one Codex stream. It is not safe for concurrent use.
type Decoder struct {
	turn    int64
	summary string // the turn's latest agent message, for session.ended

	// exec --json items by id: tool items whose call was emitted, and the
	// latest plan of each todo_list.
	items map[string]string
	plans map[string]string
	// subagent threads: the call that spawned each, and those that ended.
	spawned map[string]string
	ended   map[string]bool

	buf []byte // scratch for decoding outputs

	// The running totals: turn.completed gives the thread's, which go on
	// across exec resume; another thread's start again (a new run).
	thread string
	run    int64
	totals bool

	// Legacy stream state.
	model     string
	calls     map[string]string // call_id -> tool name
	patches   map[string]*agentstream.FileChange
	lastTotal usageVals
	deltas    fields.Deltas // delta payloads, from slabs
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{
		items:   map[string]string{},
		plans:   map[string]string{},
		spawned: map[string]string{},
		ended:   map[string]bool{},
		calls:   map[string]string{},
		patches: map[string]*agentstream.FileChange{},
	}
}

// line is what a line's top level holds, as raw JSON values.
type line struct {
	typ, threadID, sessionID, usage, errorV, message []byte
	timestamp, delta, msg, prompt, callID            []byte
	questions, id                                    []byte
	config                                           bool // a key of the legacy config summary
	others                                           bool // any other key

	itemRead bool   // the item was read in place
	it       itemOf // the item's members, when read
	itemType []byte // its item_type
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, false)
	if !ok {
		return dst
	}
	var l line
	obj, _ := jsonscan.Object(raw)
	// One pass over the line: the item, which may hold a large output, is
	// read in place.
	for obj.NextKey() {
		key := obj.Key()
		if string(key) == "item" {
			l.itemRead = false
			if o, ok := obj.Object(); ok {
				l.it, l.itemType = readItem(&o, &d.buf)
				obj.LeaveObject(&o)
				l.itemRead = true
			}
			continue
		}
		v := obj.Value()
		switch string(key) {
		case "type":
			l.typ = v
		case "thread_id":
			l.threadID = v
		case "session_id":
			l.sessionID = v
		case "usage":
			l.usage = v
		case "error":
			l.errorV = v
		case "message":
			l.message = v
		case "timestamp":
			l.timestamp = v
		case "delta":
			l.delta = v
		case "msg":
			l.msg = v
		case "prompt":
			l.prompt = v
		case "call_id":
			l.callID = v
		case "questions":
			l.questions = v
		case "id":
			l.id = v
		case "model", "provider", "sandbox", "approval", "workdir", "reasoning effort", "reasoning summaries":
			l.config = true
		default:
			l.others = true
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(raw))
	}
	start := len(dst)
	switch {
	case len(l.typ) > 0:
		dst = d.event(dst, raw, &l)
	case len(l.msg) > 0 && l.msg[0] == '{':
		dst = d.legacy(dst, raw, l.msg)
	case len(l.prompt) > 0 && l.prompt[0] == '"' && !l.config && !l.others:
		text, trunc, _ := fields.Text(l.prompt)
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
	case l.config && len(l.prompt) == 0:
		dst = d.config(dst, raw)
	default:
		dst = append(dst, fields.Raw(raw))
	}
	fields.Stamp(dst[start:], l.timestamp)
	return dst
}

// End appends nothing: every Codex event is complete when it arrives, and a
// stream that stops without turn.completed is ended by the runner.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// event maps a line of `codex exec --json`, current or transitional.
func (d *Decoder) event(dst []agentstream.Event, raw []byte, l *line) []agentstream.Event {
	switch string(fields.Unquoted(l.typ)) {
	case "thread.started":
		d.startThread(fields.Str(l.threadID))
		return append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: fields.Str(l.threadID)}))
	case "session.created":
		// The September 2025 shape had no turn events: one exec, one turn.
		dst = append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: fields.Str(l.sessionID)}))
		return d.startTurn(dst)
	case "turn.started":
		return d.startTurn(dst)
	case "turn.completed":
		if len(l.usage) > 0 && !jsonscan.IsNull(l.usage) {
			if u := sessionUsage(parseUsage(l.usage)); u != nil {
				if d.run > 1 {
					u.Run = d.run
				}
				u.Thread = d.thread
				d.totals = true
				dst = append(dst, agentstream.E(u))
			}
		}
		return d.endTurn(dst, agentstream.TurnOK, "")
	case "turn.failed":
		msg := fields.Str(jsonscan.Get(l.errorV, "message"))
		if msg == "" {
			msg = fields.Str(l.errorV)
		}
		if msg == "" {
			msg = "turn failed"
		}
		return d.endTurn(dst, agentstream.TurnError, msg)
	case "error":
		msg := fields.Str(l.message)
		if msg == "" {
			msg = fields.Str(jsonscan.Get(l.errorV, "message"))
		}
		return append(dst, agentstream.E(notice(msg)))
	case "item.started":
		return d.item(dst, raw, l, phaseStarted)
	case "item.updated":
		return d.item(dst, raw, l, phaseUpdated)
	case "item.completed":
		return d.item(dst, raw, l, phaseCompleted)
	case "item.plan.delta":
		if s := fields.Str(l.delta); s != "" {
			return append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, s)))
		}
		return dst
	case "request_user_input":
		return d.question(dst, raw, l)
	}
	return append(dst, fields.Raw(raw))
}

func (d *Decoder) startTurn(dst []agentstream.Event) []agentstream.Event {
	d.turn++
	d.summary = ""
	return append(dst, agentstream.E(&agentstream.TurnStarted{Turn: d.turn}))
}

// endTurn ends the turn and, with it, the exec run: Codex's own final
// report. errMsg is empty for a turn that completed.
func (d *Decoder) endTurn(dst []agentstream.Event, reason, errMsg string) []agentstream.Event {
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, Summary: d.summary}
	if reason != agentstream.TurnOK {
		end.Status = agentstream.StatusFailed
		end.Error, _ = agentstream.Clip(errMsg, agentstream.MaxText)
	}
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// question maps request_user_input: the model asks the person (exec cannot
// answer it).
func (d *Decoder) question(dst []agentstream.Event, raw []byte, l *line) []agentstream.Event {
	arr, ok := jsonscan.Array(l.questions)
	if !ok {
		return append(dst, fields.Raw(raw))
	}
	callID := fields.Str(l.callID)
	q := &agentstream.Question{RequestID: callID, CallID: callID, Questions: []agentstream.QuestionItem{}}
	if q.RequestID == "" {
		q.RequestID = fields.Str(l.id)
	}
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "question"))
		header, _, _ := fields.Text(jsonscan.Get(e, "header"))
		item := agentstream.QuestionItem{
			Question: text, Header: header, Options: []agentstream.QuestionOption{},
			MultiSelect: fields.Bool(jsonscan.Get(e, "multi_select")) || fields.Bool(jsonscan.Get(e, "multiSelect")),
		}
		opts, _ := jsonscan.Array(jsonscan.Get(e, "options"))
		for opts.Next() {
			o := opts.Value()
			label, _, _ := fields.Text(jsonscan.Get(o, "label"))
			if len(o) > 0 && o[0] == '"' {
				label, _, _ = fields.Text(o)
			}
			desc, _, _ := fields.Text(jsonscan.Get(o, "description"))
			item.Options = append(item.Options, agentstream.QuestionOption{Label: label, Description: desc})
		}
		q.Questions = append(q.Questions, item)
	}
	return append(dst, agentstream.E(q))
}

// usageVals are the counters of an OpenAI-style usage object, input
// including cached (and cache-written) tokens.
type usageVals struct {
	in, cached, written, out, reasoning *int64
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
		case "cached_input_tokens":
			u.cached = fields.Int(obj.Value())
		case "cache_write_input_tokens":
			u.written = fields.Int(obj.Value())
		case "output_tokens":
			u.out = fields.Int(obj.Value())
		case "reasoning_output_tokens":
			u.reasoning = fields.Int(obj.Value())
		}
	}
	return u
}

func (u usageVals) equal(o usageVals) bool {
	eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return eq(u.in, o.in) && eq(u.cached, o.cached) && eq(u.written, o.written) && eq(u.out, o.out) && eq(u.reasoning, o.reasoning)
}

// nonCached is the input not read from or written to the cache.
func (u usageVals) nonCached() *int64 {
	if u.in == nil {
		return nil
	}
	n := *u.in
	if u.cached != nil {
		n -= *u.cached
	}
	if u.written != nil {
		n -= *u.written
	}
	return new(max(n, 0))
}

func (u usageVals) zero() bool {
	for _, v := range []*int64{u.in, u.cached, u.written, u.out, u.reasoning} {
		if v != nil && *v != 0 {
			return false
		}
	}
	return true
}

// startThread notes a thread's start: the totals of a thread other than
// the one they were given for so far are another run's.
func (d *Decoder) startThread(id string) {
	if _, sub := d.spawned[id]; sub || id == "" {
		return
	}
	if d.thread != "" && id != d.thread && d.totals {
		d.run = max(d.run, 1) + 1
		d.totals = false
	}
	d.thread = id
}

// sessionUsage is the usage of Codex's running thread total, in the
// format's meanings; nil when it has no counters.
func sessionUsage(u usageVals) *agentstream.Usage {
	if u.zero() && u.in == nil && u.out == nil {
		return nil
	}
	return &agentstream.Usage{
		Scope:               agentstream.ScopeSession,
		InputTokens:         u.nonCached(),
		OutputTokens:        u.out,
		CacheReadTokens:     u.cached,
		CacheCreationTokens: u.written,
		ReasoningTokens:     u.reasoning,
	}
}

// callUsage is the usage of one model request; nil when all zero.
func callUsage(u usageVals, model string) *agentstream.Usage {
	p := &agentstream.Usage{
		Scope:               agentstream.ScopeCall,
		Model:               model,
		InputTokens:         u.nonCached(),
		OutputTokens:        u.out,
		CacheReadTokens:     u.cached,
		CacheCreationTokens: u.written,
		ReasoningTokens:     u.reasoning,
	}
	if p.IsZero() {
		return nil
	}
	p.ContextTokens = p.CallContext()
	return p
}

// Folded lists the native line types of Codex whose lines may give no event
// of their own, with where what they say goes.
var Folded = map[string]string{
	"item.started":         "a web search whose query comes only with its completion, which announces the call",
	"item.completed":       "a todo list equal to the plan already given",
	"msg/web_search_begin": "a web search whose query comes only with web_search_end, which announces the call",
}
