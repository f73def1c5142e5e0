// Package cursor is the adapter for the stream-json output of Cursor's agent
// CLI (`cursor-agent -p --output-format stream-json`, protocol cursor-json):
// Claude-shaped system/user/assistant/result lines plus Cursor's own
// thinking and tool_call lines, with and without --stream-partial-output.
package cursor

import (
	"bytes"
	"slices"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "cursor-agent"

// Decoder reads one Cursor stream. It is not safe for concurrent use.
type Decoder struct {
	sessions map[string]bool
	init     *agentstream.SessionStarted
	calls    map[string]string // ids of the calls announced, each to itself (see callID)
	text     fields.Acc        // assistant text since the last other line
	thought  fields.Acc        // thinking deltas since the last other line
	// The message last completed by a line of another type, when its
	// pieces were timestamped deltas: a later copy of it (partial output's
	// whole message, printed after the line that completed it) is dropped.
	copySize int
	copyHash uint64
	turn     int64
	active   bool          // events other than a turn's end since the last result
	buf      []byte        // scratch for decoding texts and tool outputs
	deltas   fields.Deltas // delta payloads, from slabs
	tc       toolCall      // the current line's tool call
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{sessions: map[string]bool{}, calls: map[string]string{}}
}

// lineOf is what a line's top level holds, as raw JSON values.
type lineOf struct {
	kind                                                            string // the line's type, one of lineKinds or ""
	typ, subtype, sessionID, message, toolCall, callID, timestampMs []byte
	text, result, isError, durationMs, usage                        []byte

	msgRead  bool           // the message was read in place
	msgText  string         // its content's text
	msgOK    bool           // its content was a string or an array
	tcRead   bool           // the tool call was read in place, into Decoder.tc
	textRead bool           // a thinking line's text was read in place
	textStr  string         // its decoded string ("" when not a string)
	resultC  fields.Clipped // a result line's result, read in place
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	line = jsonscan.TrimSpace(line)
	if len(line) == 0 {
		return dst
	}
	if line[0] != '{' {
		if jsonscan.IsNull(line) {
			return dst
		}
		dst = d.flush(dst, "")
		return append(dst, fields.Raw(line))
	}
	var l lineOf
	var obj jsonscan.Obj
	if pos := d.readThinkingHead(line, &l); pos > 0 {
		obj = jsonscan.ObjectFrom(line, pos)
	} else {
		obj, _ = jsonscan.Object(line)
	}
	d.readMembers(&obj, &l)
	if !obj.Complete() {
		dst = d.flush(dst, "")
		return append(dst, fields.Raw(line))
	}
	t := epochMillis(l.timestampMs)
	typ := l.kind
	flushed := len(dst)
	dst = d.flush(dst, typ)
	d.observe(dst[flushed:])
	start := len(dst)
	switch typ {
	case "system":
		if string(fields.Unquoted(l.subtype)) == "init" {
			dst = d.initLine(dst, line, &l)
		} else {
			dst = append(dst, fields.Raw(line))
		}
	case "user":
		dst = d.user(dst, line, &l)
	case "assistant":
		dst = d.assistant(dst, line, &l, t)
	case "thinking":
		dst = d.thinking(dst, line, &l, t)
	case "tool_call":
		dst = d.toolCall(dst, line, &l)
	case "result":
		dst = d.result(dst, &l)
	default:
		dst = append(dst, fields.Raw(line))
	}
	for i := start; i < len(dst); i++ {
		if dst[i].Time.IsZero() {
			dst[i].Time = t
		}
	}
	d.observe(dst[start:])
	return dst
}

// readMembers reads the members obj has left into l, in one pass: a
// message's content, a tool call, which may hold a large output, and the
// texts of thinking and result lines are read in place when the line's
// type came first.
func (d *Decoder) readMembers(obj *jsonscan.Obj, l *lineOf) {
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "type":
			l.typ = obj.Value()
			l.kind = fields.Kind(fields.Unquoted(l.typ), lineKinds)
		case "subtype":
			l.subtype = obj.Value()
		case "session_id":
			l.sessionID = obj.Value()
		case "message":
			l.msgRead = false
			if l.kind == "user" || l.kind == "assistant" {
				if m, ok := obj.Object(); ok {
					l.msgText, l.msgOK = readContent(&m, &d.buf)
					obj.LeaveObject(&m)
					l.msgRead = true
				}
			}
			l.message = obj.Value()
		case "tool_call":
			l.tcRead = false
			if l.kind == "tool_call" {
				if o, ok := obj.Object(); ok {
					readToolCall(&o, &d.tc, &d.buf)
					obj.LeaveObject(&o)
					l.tcRead = true
				}
			}
			l.toolCall = obj.Value()
		case "call_id":
			l.callID = obj.Value()
		case "timestamp_ms":
			l.timestampMs = obj.Value()
		case "text":
			l.textRead = l.kind == "thinking"
			if l.textRead {
				l.textStr, _ = fields.StrMember(obj, &d.buf)
			}
			l.text = obj.Value()
		case "result":
			l.resultC = fields.Clipped{}
			if l.kind == "result" {
				l.resultC = fields.ClipMember(obj, &d.buf)
			}
			l.result = obj.Value()
		case "is_error":
			l.isError = obj.Value()
		case "duration_ms":
			l.durationMs = obj.Value()
		case "usage":
			l.usage = obj.Value()
		}
	}
}

// lineKinds are the line types the adapter maps.
var lineKinds = []string{"system", "user", "assistant", "thinking", "tool_call", "result"}

// thinkingHead is how Cursor starts a thinking delta line, the most
// frequent, up to its text; rawThinking and rawDelta are its type and
// subtype.
var (
	thinkingHead          = []byte(`{"type":"thinking","subtype":"delta","text":`)
	rawThinking, rawDelta = []byte(`"thinking"`), []byte(`"delta"`)
)

// readThinkingHead reads the members of thinkingHead and the text after
// them into l, the text decoded where it is read. It returns the index just
// past the text, or 0 when the line does not start so.
func (d *Decoder) readThinkingHead(line []byte, l *lineOf) int {
	if !bytes.HasPrefix(line, thinkingHead) {
		return 0
	}
	out, end, ok := jsonscan.StringAt(d.buf[:0], line, len(thinkingHead))
	if !ok {
		return 0
	}
	d.buf = out[:0]
	l.kind, l.typ, l.subtype = "thinking", rawThinking, rawDelta
	l.text, l.textStr, l.textRead = line[len(thinkingHead):end], string(out), true
	return end
}

// observe notes whether evs hold anything but the events that end a turn,
// so that a result right after another result does not count a new turn.
func (d *Decoder) observe(evs []agentstream.Event) {
	for _, e := range evs {
		switch e.Type() {
		case agentstream.TypeUsage, agentstream.TypeTurnEnded, agentstream.TypeSessionEnded:
		default:
			d.active = true
		}
	}
}

// End appends nothing: text that only ever came in pieces is flushed by the
// Normalizer from its live deltas, marked partial.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// flush appends the complete message or thinking accumulated from earlier
// lines when a line of another type arrives.
func (d *Decoder) flush(dst []agentstream.Event, next string) []agentstream.Event {
	if next != "assistant" && d.text.N > 0 {
		d.copySize, d.copyHash = 0, 0
		if d.text.Stamped {
			d.copySize, d.copyHash = d.text.Size, d.text.Hash()
		}
		text, trunc := d.text.Text()
		dst = append(dst, agentstream.Event{
			Payload: &agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc},
			Time:    d.text.Time,
		})
		d.text.Reset()
	}
	if next != "thinking" && d.thought.N > 0 {
		dst = d.flushThinking(dst)
	}
	return dst
}

func (d *Decoder) flushThinking(dst []agentstream.Event) []agentstream.Event {
	if d.thought.N == 0 {
		return dst
	}
	text, trunc := d.thought.Text()
	ev := agentstream.Event{Payload: &agentstream.Thinking{Text: text, Truncated: trunc}, Time: d.thought.Time}
	d.thought.Reset()
	return append(dst, ev)
}

func epochMillis(v []byte) time.Time {
	n, ok := jsonscan.Int(v)
	if !ok || n < 1e11 || n > 1e14 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// initKeys are the keys of Cursor's system/init line.
var initKeys = []string{"type", "subtype", "apiKeySource", "cwd", "session_id", "model", "permissionMode"}

// initLine maps system/init: session.started for a session id not seen
// before, session.updated with what changed for a repeated one.
func (d *Decoder) initLine(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	s := &agentstream.SessionStarted{
		Harness:        Harness,
		Model:          fields.Str(get("model")),
		Cwd:            fields.Str(get("cwd")),
		SessionID:      fields.Str(l.sessionID),
		PermissionMode: fields.Str(get("permissionMode")),
	}
	if w, ok := agentstream.ContextWindow(s.Model); ok {
		s.ContextWindow = &w
	}
	prev := d.init
	d.init = s
	if prev == nil || !d.sessions[s.SessionID] {
		d.sessions[s.SessionID] = true
		return append(dst, agentstream.E(s))
	}
	u := &agentstream.SessionUpdated{}
	if s.Model != prev.Model {
		u.Model = s.Model
	}
	if s.PermissionMode != prev.PermissionMode {
		u.PermissionMode = s.PermissionMode
	}
	if s.Cwd != prev.Cwd {
		u.Cwd = s.Cwd
	}
	return append(dst, agentstream.E(u))
}

// contentText joins the text blocks of a message's content (an array of
// {type:"text",text} blocks, or a plain string); buf is scratch space.
func contentText(message []byte, buf *[]byte) (string, bool) {
	m, ok := jsonscan.Object(message)
	if !ok {
		return "", false
	}
	return readContent(&m, buf)
}

// readContent is contentText reading the message from its iterator in one
// pass: each content seen replaces the one before it.
func readContent(m *jsonscan.Obj, buf *[]byte) (text string, ok bool) {
	for m.NextKey() {
		if !m.KeyIs("content") {
			continue
		}
		text, ok = "", false
		arr, isArr := m.Array()
		if !isArr {
			text, ok = fields.StrMember(m, buf)
			continue
		}
		text, ok = arrayText(&arr, buf), true
		m.LeaveArray(&arr)
	}
	return text, ok
}

// arrayText joins the text of the {type:"text",text} blocks of a content
// array, read in one pass, each text decoded where it is read.
func arrayText(arr *jsonscan.Arr, buf *[]byte) string {
	var room [2]string
	parts := room[:0] // on the stack for messages of one or two texts
	for arr.NextElem() {
		b, ok := arr.Object()
		if !ok {
			arr.Value()
			continue
		}
		var typ []byte
		var text string
		for b.NextKey() {
			switch {
			case b.KeyIs("type"):
				typ = b.Value()
			case b.KeyIs("text"):
				text, _ = fields.StrMember(&b, buf)
			}
		}
		arr.LeaveObject(&b)
		if string(fields.Unquoted(typ)) == "text" {
			parts = append(parts, text)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, "")
}

func (d *Decoder) user(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	s, ok := l.content(&d.buf)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	if s == "" {
		return dst
	}
	text, trunc := agentstream.Clip(s, agentstream.MaxText)
	return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
}

// assistant maps an assistant line. Every line's text is a live delta; the
// text accumulates until a line of another type arrives, which completes it
// as one message. With --stream-partial-output the pieces are followed by a
// copy of the whole message: that copy completes the message and is not
// counted twice.
func (d *Decoder) assistant(dst []agentstream.Event, line []byte, l *lineOf, t time.Time) []agentstream.Event {
	s, ok := l.content(&d.buf)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	if s == "" {
		return dst
	}
	copySize, copyHash := d.copySize, d.copyHash
	d.copySize, d.copyHash = 0, 0
	if t.IsZero() && copySize > 0 && len(s) == copySize && fields.Hash(s) == copyHash {
		return dst
	}
	if d.text.Whole(s) {
		if t.IsZero() {
			t = d.text.Time
		}
		text, trunc := d.text.Text()
		d.text.Reset()
		return append(dst, agentstream.Event{
			Payload: &agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc},
			Time:    t,
		})
	}
	d.text.Add(s, t)
	delta, _ := agentstream.Clip(s, agentstream.MaxText)
	return append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, delta)))
}

// content is the text of the line's message content; buf is scratch space.
func (l *lineOf) content(buf *[]byte) (string, bool) {
	if l.msgRead {
		return l.msgText, l.msgOK
	}
	return contentText(l.message, buf)
}

// thinking maps thinking/delta (a live delta) and thinking/completed (the
// accumulated reasoning).
func (d *Decoder) thinking(dst []agentstream.Event, line []byte, l *lineOf, t time.Time) []agentstream.Event {
	switch string(fields.Unquoted(l.subtype)) {
	case "delta":
		s := l.textStr
		if !l.textRead {
			s = fields.Str(l.text)
		}
		if s == "" {
			return dst
		}
		d.thought.Add(s, t)
		delta, _ := agentstream.Clip(s, agentstream.MaxText)
		return append(dst, agentstream.E(d.deltas.Thinking(delta)))
	case "completed":
		if !t.IsZero() {
			d.thought.Time = t
		}
		return d.flushThinking(dst)
	}
	return append(dst, fields.Raw(line))
}

// toolCall maps tool_call/started to tool.call and tool_call/completed to
// tool.result, announcing the call first when its started line was not
// seen.
func (d *Decoder) toolCall(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	tc := &d.tc
	if !l.tcRead {
		*tc = parseToolCall(l.toolCall)
	}
	if tc.name == "" {
		return append(dst, fields.Raw(line))
	}
	callID, seen := d.callID(l)
	switch string(fields.Unquoted(l.subtype)) {
	case "started":
		if seen {
			return dst
		}
		return d.announce(dst, callID, tc)
	case "completed":
		if !seen {
			dst = d.announce(dst, callID, tc)
		}
		delete(d.calls, callID)
		return tc.results(dst, callID, &d.buf)
	}
	return append(dst, fields.Raw(line))
}

// callID returns the call id of a tool_call line (call_id, else the call's
// toolCallId) and whether the call was announced; the id of a call
// announced is the string kept then, not a new one.
func (d *Decoder) callID(l *lineOf) (id string, announced bool) {
	raw, ok := jsonscan.AppendString(d.buf[:0], l.callID)
	if !ok || len(raw) == 0 {
		raw, _ = jsonscan.AppendString(d.buf[:0], jsonscan.Get(l.toolCall, "toolCallId"))
	}
	d.buf = raw[:0]
	if id, announced = d.calls[string(raw)]; announced {
		return id, true
	}
	return string(raw), false
}

func (d *Decoder) announce(dst []agentstream.Event, callID string, tc *toolCall) []agentstream.Event {
	d.calls[callID] = callID
	dst = append(dst, agentstream.E(tc.call(callID, &d.buf)))
	if tc.kind == "updateTodos" {
		if p := fields.TodoPlan(tc.args, "content", stepStatus); p != nil {
			dst = append(dst, agentstream.E(p))
		}
	}
	return dst
}

// result maps the final result line: session usage, turn.ended,
// session.ended.
func (d *Decoder) result(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	if len(l.usage) > 0 || len(l.durationMs) > 0 {
		dst = append(dst, agentstream.E(sessionUsage(l.usage, l.durationMs)))
	}
	failed := fields.Str(l.subtype) != "success" || fields.Bool(l.isError)
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion}
	end.Summary, end.Truncated, _ = l.resultC.Or(l.result)
	reason := agentstream.TurnOK
	if failed {
		end.Status = agentstream.StatusFailed
		reason = agentstream.TurnError
		switch sub := fields.Str(l.subtype); {
		case end.Summary != "":
			end.Error = fields.Summary(end.Summary)
		case sub != "" && sub != "success":
			end.Error = sub
		default:
			end.Error = "error"
		}
	}
	if d.active || d.turn == 0 {
		d.turn++
	}
	d.active = false
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// sessionUsage reads result.usage, one total for the run in camelCase;
// inputTokens excludes cache reads.
func sessionUsage(usage, durationMs []byte) *agentstream.Usage {
	u := &agentstream.Usage{Scope: agentstream.ScopeSession, DurationMs: fields.Int(durationMs)}
	obj, _ := jsonscan.Object(usage)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "inputTokens":
			u.InputTokens = fields.Int(v)
		case "outputTokens":
			u.OutputTokens = fields.Int(v)
		case "cacheReadTokens":
			u.CacheReadTokens = fields.Int(v)
		case "cacheWriteTokens", "cacheCreationTokens":
			u.CacheCreationTokens = fields.Int(v)
		case "reasoningTokens":
			u.ReasoningTokens = fields.Int(v)
		}
	}
	return u
}

// Claims reports whether lines are Cursor stream-json: a tool_call line
// with a "<kind>ToolCall" member, a thinking line, a line with Cursor's
// timestamp_ms or model_call_id, a system/init with only the keys Cursor
// writes (no tools, no mcp_servers: Claude Code and Amp always write both),
// or a result with request_id and no num_turns. Lines of other harnesses'
// marks make it decline.
func Claims(lines [][]byte) bool {
	claimed := false
	for _, l := range lines {
		switch mark(l) {
		case 1:
			claimed = true
		case -1:
			return false
		}
	}
	return claimed
}

// mark says whether one line is Cursor's (1), another Claude-shaped
// harness's (-1), or could be either (0).
func mark(line []byte) int {
	obj, ok := jsonscan.Object(line)
	if !ok {
		return 0
	}
	var typ, subtype, toolCall []byte
	var keys [][]byte
	stamped, requestID, numTurns := false, false, false
	for obj.Next() {
		k := obj.Key()
		keys = append(keys, k)
		switch string(k) {
		case "type":
			typ = obj.Value()
		case "subtype":
			subtype = obj.Value()
		case "tool_call":
			toolCall = obj.Value()
		case "timestamp_ms", "model_call_id":
			stamped = true
		case "request_id":
			requestID = true
		case "num_turns":
			numTurns = true
		case "uuid", "parent_tool_use_id", "claude_code_version", "qwen_code_version", "amp_version":
			return -1
		}
	}
	if obj.Err() != nil {
		return 0
	}
	switch fields.Str(typ) {
	case "tool_call":
		if toolCallKey(toolCall) != nil {
			return 1
		}
		return 0
	case "thinking":
		switch fields.Str(subtype) {
		case "delta", "completed":
			return 1
		}
		return 0
	case "system":
		if fields.Str(subtype) != "init" {
			return 0
		}
		hasSession := false
		for _, k := range keys {
			if !slices.Contains(initKeys, string(k)) {
				return 0
			}
			hasSession = hasSession || string(k) == "session_id"
		}
		if hasSession {
			return 1
		}
		return 0
	case "result":
		if requestID && !numTurns {
			return 1
		}
	case "assistant", "user":
		if stamped {
			return 1
		}
	}
	return 0
}
