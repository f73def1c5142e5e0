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
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{called: map[string]bool{}, denied: map[string]bool{}}
}

// line is what a line's top level holds, as raw JSON values.
type line struct {
	typ, timestamp, sessionID, part, errorV, reason, rejected []byte
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	raw = jsonscan.TrimSpace(raw)
	if len(raw) == 0 {
		return dst
	}
	if raw[0] != '{' {
		if jsonscan.IsNull(raw) {
			return dst
		}
		return append(dst, fields.Raw(raw))
	}
	var l line
	obj, _ := jsonscan.Object(raw)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "type":
			l.typ = v
		case "timestamp":
			l.timestamp = v
		case "sessionID":
			l.sessionID = v
		case "part":
			l.part = v
		case "error":
			l.errorV = v
		case "reason":
			l.reason = v
		case "rejected":
			l.rejected = v
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(raw))
	}
	start := len(dst)
	switch typ := fields.Str(l.typ); typ {
	case "step_start", "text", "reasoning", "tool_use", "step_finish", "error", "done":
		dst = d.announce(dst, fields.Str(l.sessionID))
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
			dst = d.text(dst, raw, l.part, false)
		case "reasoning":
			dst = d.text(dst, raw, l.part, true)
		case "tool_use":
			dst = d.toolUse(dst, raw, l.part)
		case "step_finish":
			dst = d.stepFinish(dst, l.part)
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

// announce emits session.started when a line names a session not announced
// before: opencode has no init line, every line carries the session id.
func (d *Decoder) announce(dst []agentstream.Event, session string) []agentstream.Event {
	if session == "" || session == d.session {
		return dst
	}
	d.session = session
	return append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: session}))
}

// text maps a finished text or reasoning part.
func (d *Decoder) text(dst []agentstream.Event, raw, part []byte, thinking bool) []agentstream.Event {
	v := jsonscan.Get(part, "text")
	if len(v) == 0 {
		return append(dst, fields.Raw(raw))
	}
	text, trunc, n := fields.Text(v)
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
func (d *Decoder) stepFinish(dst []agentstream.Event, part []byte) []agentstream.Event {
	var id, messageID, reason, toks, cost []byte
	obj, _ := jsonscan.Object(part)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "id":
			id = v
		case "messageID":
			messageID = v
		case "reason":
			reason = v
		case "tokens":
			toks = v
		case "cost":
			cost = v
		}
	}
	// A step-finish part printed twice in a row is one model call.
	if partID := fields.Str(id); partID == "" || partID != d.lastStep {
		d.lastStep = partID
		t := parseTokens(toks)
		u := &agentstream.Usage{
			Scope:               agentstream.ScopeCall,
			InputTokens:         t.in,
			OutputTokens:        t.out,
			CacheReadTokens:     t.cacheRead,
			CacheCreationTokens: t.cacheWrite,
			ReasoningTokens:     t.reasoning,
			MessageID:           fields.Str(messageID),
			CostUSD:             fields.Float(cost),
		}
		// opencode counts reasoning apart from output; the format's
		// output includes it.
		if t.out != nil && t.reasoning != nil {
			u.OutputTokens = new(*t.out + *t.reasoning)
		} else if t.out == nil {
			u.OutputTokens = t.reasoning
		}
		if !u.IsZero() || (u.CostUSD != nil && *u.CostUSD != 0) {
			u.ContextTokens = u.CallContext()
			dst = append(dst, agentstream.E(u))
		}
	}
	r := fields.Str(reason)
	if r == "" || r == "tool-calls" || r == "unknown" || d.ended {
		return dst
	}
	status := agentstream.StatusSucceeded
	if r == "error" || d.failure != "" {
		status = agentstream.StatusFailed
	}
	return d.end(dst, status, r)
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
