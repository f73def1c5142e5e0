// Package opencode is the adapter for opencode's JSON output (protocol
// opencode-json, `opencode run --format json`): one line per completed
// message part (step_start, text, reasoning, tool_use, step_finish), plus
// error and, in the newest builds, done.
package opencode

import (
	"strconv"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "opencode"

// Decoder reads one opencode stream. It is not safe for concurrent use.
type Decoder struct {
	session  string          // the session id announced last
	called   map[string]bool // tool calls emitted, by callID
	lastStep string          // the step-finish part whose usage was emitted last
	turn     int64
	ended    bool            // the run's final report arrived
	summary  string          // the run's latest text part
	failure  string          // the run's latest error
	denied   map[string]bool // tools whose call was refused a permission
	buf      []byte          // scratch for decoding texts and outputs
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{called: map[string]bool{}, denied: map[string]bool{}}
}

// line is what a line's top level holds, as raw JSON values, with its
// part read in place.
type line struct {
	typ, timestamp, sessionID, errorV, reason, rejected []byte
	part                                                partOf
}

// partOf is what a message part holds, as raw JSON values. The text is
// also decoded where it is read, and the state of a tool part is read in
// place, so that a large text or output is scanned once.
type partOf struct {
	id, messageID, callID, tool, reason, tokens, cost []byte
	text, state                                       []byte
	textC                                             fields.Clipped
	st                                                stateOf
}

// stateOf is what a tool part's state holds, as raw JSON values, with the
// output also decoded where it is read.
type stateOf struct {
	status, input, output, errorV, metadata []byte
	outputC                                 fields.Clipped
}

// readPart reads a part's members in place, each value once; buf is
// scratch space for decoding.
func readPart(obj *jsonscan.Obj, buf *[]byte) partOf {
	var p partOf
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "text":
			p.textC, p.text = fields.ClipRaw(obj, buf)
		case "state":
			p.st = stateOf{}
			if st, ok := obj.Object(); ok {
				p.st = readState(&st, buf)
				obj.LeaveObject(&st)
			}
			p.state = obj.Value()
		case "id":
			p.id = obj.Value()
		case "messageID":
			p.messageID = obj.Value()
		case "callID":
			p.callID = obj.Value()
		case "tool":
			p.tool = obj.Value()
		case "reason":
			p.reason = obj.Value()
		case "tokens":
			p.tokens = obj.Value()
		case "cost":
			p.cost = obj.Value()
		}
	}
	return p
}

// readState reads a tool part's state in place; buf is scratch space.
func readState(obj *jsonscan.Obj, buf *[]byte) stateOf {
	var st stateOf
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "output":
			st.outputC, st.output = fields.ClipRaw(obj, buf)
		case "status":
			st.status = obj.Value()
		case "input":
			st.input = obj.Value()
		case "error":
			st.errorV = obj.Value()
		case "metadata":
			st.metadata = obj.Value()
		}
	}
	return st
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, false)
	if !ok {
		return dst
	}
	var l line
	obj, _ := jsonscan.Object(raw)
	// One pass over the line: the part, which may hold a large output, is
	// read in place.
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "part":
			l.part = partOf{}
			if p, ok := obj.Object(); ok {
				l.part = readPart(&p, &d.buf)
				obj.LeaveObject(&p)
			}
		case "type":
			l.typ = obj.Value()
		case "timestamp":
			l.timestamp = obj.Value()
		case "sessionID":
			l.sessionID = obj.Value()
		case "error":
			l.errorV = obj.Value()
		case "reason":
			l.reason = obj.Value()
		case "rejected":
			l.rejected = obj.Value()
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(raw))
	}
	start := len(dst)
	switch typ := string(fields.Unquoted(l.typ)); typ {
	case "step_start", "text", "reasoning", "tool_use", "step_finish", "error", "done":
		dst = d.announce(dst, l.sessionID)
		switch typ {
		case "step_start":
			// A step is one model call; the run is one turn, so a step
			// start says nothing a reader needs (its usage comes with
			// step_finish).
			if d.ended {
				d.ended, d.summary, d.failure = false, "", ""
				clear(d.denied)
			}
		case "text":
			dst = d.text(dst, raw, &l.part, false)
		case "reasoning":
			dst = d.text(dst, raw, &l.part, true)
		case "tool_use":
			dst = d.toolUse(dst, raw, &l.part)
		case "step_finish":
			dst = d.stepFinish(dst, &l.part)
		case "error":
			dst = d.error(dst, l.errorV)
		case "done":
			dst = d.done(dst, &l)
		}
	default:
		return append(dst, fields.Raw(raw))
	}
	if ms, ok := jsonscan.Int(l.timestamp); ok && ms > 0 && ms < 1e14 {
		t := time.UnixMilli(ms).UTC()
		for i := start; i < len(dst); i++ {
			dst[i].Time = t
		}
	}
	return dst
}

// End appends nothing: every opencode line is complete, and a stream that
// stops without its final step is ended by the runner.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// announce emits session.started when a line names a session (the raw
// JSON value sessionID) not announced before: opencode has no init line,
// every line carries the session id, so the same one is told without
// decoding it.
func (d *Decoder) announce(dst []agentstream.Event, sessionID []byte) []agentstream.Event {
	if jsonscan.StringIs(sessionID, d.session) {
		return dst
	}
	session := fields.Str(sessionID)
	if session == "" || session == d.session {
		return dst
	}
	d.session = session
	return append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: session}))
}

// text maps a finished text or reasoning part.
func (d *Decoder) text(dst []agentstream.Event, raw []byte, part *partOf, thinking bool) []agentstream.Event {
	if len(part.text) == 0 {
		return append(dst, fields.Raw(raw))
	}
	text, trunc, n := part.textC.Or(part.text)
	if n == 0 {
		return dst
	}
	if thinking {
		return append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	}
	d.summary = text
	return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
}

// tokens are the counters of a step-finish part.
type tokens struct {
	in, out, reasoning, cacheRead, cacheWrite *int64
}

func parseTokens(v []byte) tokens {
	var t tokens
	obj, ok := jsonscan.Object(v)
	if !ok {
		return t
	}
	for obj.Next() {
		switch string(obj.Key()) {
		case "input":
			t.in = fields.Int(obj.Value())
		case "output":
			t.out = fields.Int(obj.Value())
		case "reasoning":
			t.reasoning = fields.Int(obj.Value())
		case "cache":
			c, _ := jsonscan.Object(obj.Value())
			for c.Next() {
				switch string(c.Key()) {
				case "read":
					t.cacheRead = fields.Int(c.Value())
				case "write":
					t.cacheWrite = fields.Int(c.Value())
				}
			}
		}
	}
	return t
}

// stepFinish maps the end of one step (one model call): its usage as call
// usage, and, when the step's reason is not more tool calls, the end of
// the run.
func (d *Decoder) stepFinish(dst []agentstream.Event, part *partOf) []agentstream.Event {
	// A step-finish part printed twice in a row is one model call.
	if partID := fields.Str(part.id); partID == "" || partID != d.lastStep {
		d.lastStep = partID
		dst = d.stepUsage(dst, part)
	}
	switch string(fields.Unquoted(part.reason)) {
	case "", "tool-calls", "unknown":
		return dst
	}
	if d.ended {
		return dst
	}
	r := fields.Str(part.reason)
	status := agentstream.StatusSucceeded
	if r == "error" || d.failure != "" {
		status = agentstream.StatusFailed
	}
	return d.end(dst, status, r)
}

// stepUsage maps a step-finish part's tokens and cost as call usage, unless
// all are zero.
func (d *Decoder) stepUsage(dst []agentstream.Event, part *partOf) []agentstream.Event {
	t := parseTokens(part.tokens)
	u := &agentstream.Usage{
		Scope:               agentstream.ScopeCall,
		InputTokens:         t.in,
		OutputTokens:        t.out,
		CacheReadTokens:     t.cacheRead,
		CacheCreationTokens: t.cacheWrite,
		ReasoningTokens:     t.reasoning,
		MessageID:           fields.Str(part.messageID),
		CostUSD:             fields.Float(part.cost),
	}
	// opencode counts reasoning apart from output; the format's
	// output includes it.
	if t.out != nil && t.reasoning != nil {
		u.OutputTokens = new(*t.out + *t.reasoning)
	} else if t.out == nil {
		u.OutputTokens = t.reasoning
	}
	u.ClearUnpricedCost()
	if !u.IsZero() || (u.CostUSD != nil && *u.CostUSD != 0) {
		u.ContextTokens = u.CallContext()
		dst = append(dst, agentstream.E(u))
	}
	return dst
}

// end emits turn.ended and session.ended: opencode's run is one turn.
func (d *Decoder) end(dst []agentstream.Event, status, stopReason string) []agentstream.Event {
	d.ended = true
	d.turn++
	reason := agentstream.TurnOK
	end := &agentstream.SessionEnded{Status: status, StopReason: stopReason, Summary: d.summary, Reason: agentstream.ReasonCompletion}
	if status == agentstream.StatusFailed {
		reason = agentstream.TurnError
		end.Error = d.failure
		if end.Error == "" {
			end.Error = stopReason
		}
	}
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// error maps an error line: {name, data{message, statusCode, isRetryable}}.
func (d *Decoder) error(dst []agentstream.Event, v []byte) []agentstream.Event {
	name := fields.Str(jsonscan.Get(v, "name"))
	data := jsonscan.Get(v, "data")
	msg := fields.Str(jsonscan.Get(data, "message"))
	if msg == "" {
		msg = fields.Str(jsonscan.Get(v, "message"))
	}
	if msg == "" {
		msg = fields.Str(v)
	}
	if msg == "" {
		msg = name
	}
	if code := fields.Int(jsonscan.Get(data, "statusCode")); code != nil && *code > 0 {
		msg += " (HTTP " + strconv.FormatInt(*code, 10) + ")"
	}
	msg, _ = agentstream.Clip(msg, agentstream.MaxText)
	e := &agentstream.Error{Message: msg, ErrorType: name}
	if b, ok := jsonscan.Bool(jsonscan.Get(data, "isRetryable")); ok {
		e.Recoverable = &b
	}
	if name != "MessageAbortedError" {
		d.failure = msg
	}
	return append(dst, agentstream.E(e))
}

// done maps the newest builds' last line (the session went idle): a
// tool.denied for each permission opencode rejected on its own that no
// failed tool call reported already, and the end of the run when no final
// step reported it.
func (d *Decoder) done(dst []agentstream.Event, l *line) []agentstream.Event {
	arr, _ := jsonscan.Array(l.rejected)
	for arr.Next() {
		name := fields.Str(arr.Value())
		if name == "" {
			name = fields.Str(jsonscan.Get(arr.Value(), "permission"))
		}
		if d.denied[name] {
			continue
		}
		dst = append(dst, agentstream.E(&agentstream.ToolDenied{Name: name, Reason: "auto-rejected"}))
	}
	if d.ended {
		return dst
	}
	status := agentstream.StatusSucceeded
	if d.failure != "" {
		status = agentstream.StatusFailed
	}
	return d.end(dst, status, fields.Str(l.reason))
}

// Folded lists the native line types of opencode whose lines may give no
// event of their own, with where what they say goes.
var Folded = map[string]string{
	"step_start": "a model step's start: its parts and its step_finish say what it did",
	"done":       "the run's end after the turn already ended, whose rejected tools were already denied",
}
