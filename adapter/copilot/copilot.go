// Package copilot is the adapter for the JSONL output of GitHub Copilot CLI
// (`copilot -p … --output-format json`, protocol copilot-json): events in a
// {type, data, id, timestamp, parentId, ephemeral} envelope with dotted
// types (session.*, user.message, assistant.*, tool.execution_*), and a
// final {type:"result", sessionId, exitCode, usage} line.
package copilot

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "copilot-cli"

// Decoder reads one Copilot stream. It is not safe for concurrent use.
type Decoder struct {
	started   bool
	sessionID string
	model     string
	calls     map[string]call // tool calls by id
	counted   map[string]bool // model calls whose usage was emitted
	reasoned  bool            // a reasoning event came since the last message
	lastText  string          // the latest assistant message, for session.ended
	task      string          // the summary of session.task_complete
	turn      int64
	active    bool          // events other than a turn's end since the last result
	buf       []byte        // scratch for decoding tool outputs
	requests  []requestOf   // scratch for assistant.message's tool requests
	deltas    fields.Deltas // delta payloads, from slabs

	failStatus, failAttempt *int64          // the latest failed model call, for its retry
	failMessage             string          // and its message
	shellOutput             map[string]bool // calls whose shell output was shown
}

// call is what the decoder keeps of a tool call until its result.
type call struct {
	name      string
	announced bool
	args      []byte // file tools only: their arguments, for file.change
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{calls: map[string]call{}, counted: map[string]bool{}}
}

// lineOf is what a line's top level holds, as raw JSON values, and what
// its data object holds.
type lineOf struct {
	kind                                                 string // the type, named by lineKind
	typ, data, id, timestamp, sessionID, exitCode, usage []byte
	d                                                    dataOf
}

// dataOf is what a line's data object holds, read in one pass (readData).
// Text is decoded where it is read, so that a large one is scanned once.
type dataOf struct {
	readAs []byte // the raw type the data was read for; nil until it is read
	object bool   // the data is an object

	res resultOf  // tool.execution_complete
	msg messageOf // assistant.message

	// The members the other types use.
	model, newModel, message, errorType, summary, success []byte
	content, autopilot, toolCallID, toolName, arguments   []byte
	contentC                                              fields.Clipped
	deltaContent, partialOutput                           string
}

// resultOf is what tool.execution_complete's data holds.
type resultOf struct {
	id, success, result, errV, toolName []byte
	exitCode                            []byte // shellExecution.exitCode
	// result.content and result.detailedContent, when result is an object
	content, detailed []byte
	// result, when a string, and result.content, decoded where read
	resultC, contentC fields.Clipped
}

// messageOf is what assistant.message's data holds.
type messageOf struct {
	content, reasoning, outputTokens, model, messageID, apiCallID []byte
	contentC, reasoningC                                          fields.Clipped
	requests                                                      []requestOf // toolRequests, read in place
}

// requestOf is what an entry of assistant.message's toolRequests holds.
type requestOf struct {
	id, name, arguments, intention []byte
}

// readData reads the data object of a line of kind kind into f, decoding
// in the decoder's scratch space.
func (d *Decoder) readData(o *jsonscan.Obj, kind string, f *dataOf) {
	f.object = true
	switch kind {
	case "tool.execution_complete":
		readResult(o, &f.res, &d.buf)
	case "assistant.message":
		readMessage(o, &f.msg, &d.buf, &d.requests)
	default:
		readMembers(o, f, &d.buf)
	}
}

// readResult reads the members of tool.execution_complete's data,
// descending into the result object in place.
func readResult(o *jsonscan.Obj, r *resultOf, buf *[]byte) {
	for o.NextKey() {
		switch string(o.Key()) {
		case "toolCallId":
			r.id = o.Value()
		case "success":
			r.success = o.Value()
		case "result":
			r.content, r.detailed = nil, nil
			r.resultC, r.contentC = fields.Clipped{}, fields.Clipped{}
			if ro, ok := o.Object(); ok {
				for ro.NextKey() {
					switch {
					case ro.KeyIs("content"):
						r.contentC, r.content = fields.ClipRaw(&ro, buf)
					case ro.KeyIs("detailedContent"):
						r.detailed = ro.Value()
					}
				}
				o.LeaveObject(&ro)
			} else {
				r.resultC = fields.ClipMember(o, buf)
			}
			r.result = o.Value()
		case "error":
			r.errV = o.Value()
		case "toolName":
			r.toolName = o.Value()
		case "shellExecution":
			r.exitCode = jsonscan.Get(o.Value(), "exitCode")
		}
	}
}

// readMessage reads the members of assistant.message's data; requests is
// scratch space for the tool requests.
func readMessage(o *jsonscan.Obj, m *messageOf, buf *[]byte, requests *[]requestOf) {
	for o.NextKey() {
		switch string(o.Key()) {
		case "content":
			m.contentC, m.content = fields.ClipRaw(o, buf)
		case "toolRequests":
			m.requests = appendRequests((*requests)[:0], o)
			*requests = m.requests
		case "reasoningText":
			m.reasoningC, m.reasoning = fields.ClipRaw(o, buf)
		case "outputTokens":
			m.outputTokens = o.Value()
		case "model":
			m.model = o.Value()
		case "messageId":
			m.messageID = o.Value()
		case "apiCallId":
			m.apiCallID = o.Value()
		}
	}
}

// readMembers reads the members the other types use, matching keys as
// jsonscan.Get does.
func readMembers(o *jsonscan.Obj, f *dataOf, buf *[]byte) {
	for o.NextKey() {
		switch string(memberKey(o)) {
		case "model":
			f.model = o.Value()
		case "newModel":
			f.newModel = o.Value()
		case "message":
			f.message = o.Value()
		case "errorType":
			f.errorType = o.Value()
		case "summary":
			f.summary = o.Value()
		case "success":
			f.success = o.Value()
		case "content":
			f.contentC, f.content = fields.ClipRaw(o, buf)
		case "isAutopilotContinuation":
			f.autopilot = o.Value()
		case "deltaContent":
			f.deltaContent, _ = fields.StrMember(o, buf)
		case "toolCallId":
			f.toolCallID = o.Value()
		case "toolName":
			f.toolName = o.Value()
		case "arguments":
			f.arguments = o.Value()
		case "partialOutput":
			f.partialOutput, _ = fields.StrMember(o, buf)
		}
	}
}

// appendRequests appends the entries of the current member of o, when it
// is an array, read in place: an entry that is not an object gives a zero
// requestOf.
func appendRequests(dst []requestOf, o *jsonscan.Obj) []requestOf {
	a, ok := o.Array()
	if !ok {
		return dst
	}
	for a.NextElem() {
		var r requestOf
		if e, ok := a.Object(); ok {
			readRequest(&e, &r)
			a.LeaveObject(&e)
		}
		dst = append(dst, r)
	}
	o.LeaveArray(&a)
	return dst
}

// readRequest reads an entry of toolRequests, matching keys as jsonscan.Get
// does.
func readRequest(o *jsonscan.Obj, r *requestOf) {
	for o.NextKey() {
		switch string(memberKey(o)) {
		case "toolCallId":
			r.id = o.Value()
		case "name":
			r.name = o.Value()
		case "arguments":
			r.arguments = o.Value()
		case "intentionSummary":
			r.intention = o.Value()
		}
	}
}

// memberKey returns the key of o's current member decoded, as
// jsonscan.Get compares keys: its raw bytes when it has no escape.
func memberKey(o *jsonscan.Obj) []byte {
	k := o.Key()
	if bytes.IndexByte(k, '\\') < 0 {
		return k
	}
	q := make([]byte, 0, len(k)+2)
	q = append(append(append(q, '"'), k...), '"')
	return unquote(q)
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
		// Auth failures print plain text: raw, malformed.
		return append(dst, fields.Raw(line))
	}
	var l lineOf
	// One pass over the line: the data, where a tool's output makes a line
	// large, is read in place when the type came first, as Copilot prints
	// it. The head of a delta line, the most frequent kind, is read at once.
	var obj jsonscan.Obj
	if pos := d.readDeltaHead(line, &l); pos > 0 {
		obj = jsonscan.ObjectFrom(line, pos)
	} else {
		obj, _ = jsonscan.Object(line)
	}
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "type":
			l.typ = obj.Value()
			l.kind = lineKind(unquote(l.typ))
		case "data":
			if l.d.object {
				l.d = dataOf{}
			}
			if o, ok := obj.Object(); ok && l.typ != nil {
				d.readData(&o, l.kind, &l.d)
				obj.LeaveObject(&o)
				l.d.readAs = l.typ
			}
			l.data = obj.Value()
		case "id":
			l.id = obj.Value()
		case "timestamp":
			l.timestamp = obj.Value()
		case "sessionId":
			l.sessionID = obj.Value()
		case "exitCode":
			l.exitCode = obj.Value()
		case "usage":
			l.usage = obj.Value()
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(line))
	}
	if l.kind == "" {
		return append(dst, unmapped(line))
	}
	if !bytes.Equal(l.d.readAs, l.typ) {
		l.d = dataOf{}
		if o, ok := jsonscan.Object(l.data); ok {
			d.readData(&o, l.kind, &l.d)
		}
	}
	start := len(dst)
	if !d.started && l.kind != "result" && len(l.data) > 0 && l.data[0] == '{' && len(l.id) > 0 {
		dst = d.start(dst, l.kind, l.data)
	}
	dst = d.dispatch(dst, line, &l)
	if start == len(dst) {
		return dst
	}
	t := fields.Time(l.timestamp)
	for i := start; i < len(dst); i++ {
		if dst[i].Time.IsZero() {
			dst[i].Time = t
		}
		switch dst[i].Type() {
		case agentstream.TypeUsage, agentstream.TypeTurnEnded, agentstream.TypeSessionEnded, agentstream.TypeSessionStarted,
			agentstream.TypeProgress, agentstream.TypeSessionUpdated:
		default:
			d.active = true
		}
	}
	return dst
}

// lineKinds are the line types dispatch knows.
var lineKinds = []string{
	"session.start", "session.tools_updated", "session.model_change", "session.warning",
	"session.error", "session.task_complete", "user.message", "assistant.turn_start",
	"assistant.turn_end", "assistant.message_start", "assistant.message_delta",
	"assistant.reasoning_delta", "assistant.reasoning", "assistant.message", "model.message",
	"tool.execution_start", "tool.execution_partial_result", "tool.execution_complete", "result",
	"session.skills_loaded", "session.mcp_servers_loaded", "session.background_tasks_changed",
	"model.call_start", "model.call_finished", "model.call_final_result", "model.call_failure",
	"assistant.turn_retry", "assistant.tool_call_delta", "assistant.idle", "tool.shell_output",
	"subagent.started", "subagent.completed", "subagent.failed",
}

// lineKind returns the line type t as one of lineKinds, without
// allocating: "" for no type, "other" for any type it does not know.
func lineKind(t []byte) string {
	if k := fields.Kind(t, lineKinds); k != "" || len(t) == 0 {
		return k
	}
	return "other"
}

// The heads of delta lines as Copilot prints them, up to the data's first
// value, and the members that follow, each up to its value.
var (
	messageDeltaHead   = []byte(`{"type":"assistant.message_delta","data":{"messageId":`)
	reasoningDeltaHead = []byte(`{"type":"assistant.reasoning_delta","data":{"reasoningId":`)
	deltaContentKey    = []byte(`,"deltaContent":`)
	idKey              = []byte(`},"id":`)
	timestampKey       = []byte(`,"timestamp":`)
)

// readDeltaHead reads the type and data members at once when the line
// starts exactly as a delta line does: the type, then data holding a string
// id and the deltaContent string, and nothing else; and the id and
// timestamp strings when they follow. It fills l as the member loop would
// and returns the position just past the last value read, or 0 (l
// untouched) for any other line, which the member loop then reads.
func (d *Decoder) readDeltaHead(line []byte, l *lineOf) int {
	var kind string
	var p int
	switch {
	case bytes.HasPrefix(line, messageDeltaHead):
		kind, p = "assistant.message_delta", len(messageDeltaHead)
	case bytes.HasPrefix(line, reasoningDeltaHead):
		kind, p = "assistant.reasoning_delta", len(reasoningDeltaHead)
	default:
		return 0
	}
	q, ok := jsonscan.SkipString(line, p)
	if !ok || !bytes.HasPrefix(line[q:], deltaContentKey) {
		return 0
	}
	q += len(deltaContentKey)
	out, end, ok := jsonscan.StringAt(d.buf[:0], line, q)
	if !ok || end >= len(line) || line[end] != '}' {
		return 0
	}
	d.buf = out[:0]
	// {"type": is 8 bytes, as is ,"data": after the quoted type.
	l.kind, l.typ, l.data = kind, line[8:10+len(kind)], line[18+len(kind):end+1]
	l.d.readAs, l.d.object, l.d.deltaContent = l.typ, true, string(out)
	pos := end + 1
	if v, next := stringMember(line, end, idKey); next > 0 {
		l.id, pos = v, next
		if v, next := stringMember(line, pos, timestampKey); next > 0 {
			l.timestamp, pos = v, next
		}
	}
	return pos
}

// stringMember returns the raw string value that follows the bytes key at
// line[pos:], checked, and the position just past it; next is 0 when key is
// not there or no valid string follows it.
func stringMember(line []byte, pos int, key []byte) (v []byte, next int) {
	if !bytes.HasPrefix(line[pos:], key) {
		return nil, 0
	}
	p := pos + len(key)
	e, ok := jsonscan.SkipString(line, p)
	if !ok {
		return nil, 0
	}
	return line[p:e:e], e
}

// unmapped returns the raw event of a line that maps to nothing, the member
// loop having found it valid (fields.Raw would check it again).
func unmapped(line []byte) agentstream.Event {
	return agentstream.E(agentstream.NewRaw(agentstream.RawUnmapped, line))
}

// End appends nothing: message deltas without their message are flushed by
// the Normalizer, marked partial.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// start announces the session at the stream's first event (a line in the
// {type, data, id} envelope). Copilot prints
// no init line: the model comes from the event when it carries one, the
// session id only with the final result.
func (d *Decoder) start(dst []agentstream.Event, kind string, data []byte) []agentstream.Event {
	d.started = true
	s := &agentstream.SessionStarted{Harness: Harness}
	switch kind {
	case "session.start":
		s.SessionID = fields.Str(jsonscan.Get(data, "sessionId"))
		s.Version = fields.Str(jsonscan.Get(data, "copilotVersion"))
		s.Model = fields.Str(jsonscan.Get(data, "selectedModel"))
		s.Cwd = fields.Str(jsonscan.GetPath(data, "context", "cwd"))
	case "session.tools_updated", "assistant.message", "tool.execution_complete":
		s.Model = fields.Str(jsonscan.Get(data, "model"))
	}
	d.sessionID, d.model = s.SessionID, s.Model
	if w, ok := agentstream.ContextWindow(s.Model); ok {
		s.ContextWindow = &w
	}
	return append(dst, agentstream.E(s))
}

func (d *Decoder) dispatch(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	f := &l.d
	switch l.kind {
	case "session.start":
		return dst
	case "session.tools_updated", "session.model_change":
		m := fields.Str(f.model)
		if m == "" {
			m = fields.Str(f.newModel)
		}
		if m == "" || m == d.model {
			return dst
		}
		d.model = m
		return append(dst, agentstream.E(&agentstream.SessionUpdated{Model: m}))
	case "session.warning":
		msg, _ := agentstream.Clip(fields.Str(f.message), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Warning{Message: msg}))
	case "session.error":
		msg, _ := agentstream.Clip(fields.Str(f.message), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: fields.Str(f.errorType)}))
	case "session.task_complete":
		d.task = fields.Str(f.summary)
		if b, ok := jsonscan.Bool(f.success); ok && !b {
			msg := "the agent reported the task not completed"
			if d.task != "" {
				msg += ": " + fields.Summary(d.task)
			}
			msg, _ = agentstream.Clip(msg, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.Warning{Message: msg}))
		}
		return dst
	case "user.message":
		text, trunc, n := f.contentC.Or(f.content)
		if n == 0 {
			return dst
		}
		role := agentstream.RoleUser
		if fields.Bool(f.autopilot) {
			role = agentstream.RoleSystem
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	case "assistant.turn_start", "assistant.turn_end", "assistant.message_start":
		// Copilot's turns are model calls within one prompt; the prompt's
		// turn ends with the result line.
		return dst
	case "assistant.message_delta":
		if s := f.deltaContent; s != "" {
			s, _ = agentstream.Clip(s, agentstream.MaxText)
			return append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, s)))
		}
		return dst
	case "assistant.reasoning_delta":
		if s := f.deltaContent; s != "" {
			s, _ = agentstream.Clip(s, agentstream.MaxText)
			return append(dst, agentstream.E(d.deltas.Thinking(s)))
		}
		return dst
	case "assistant.reasoning":
		text, trunc, n := f.contentC.Or(f.content)
		if n == 0 {
			return dst
		}
		d.reasoned = true
		return append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	case "assistant.message":
		if !f.object {
			return append(dst, unmapped(line))
		}
		return d.message(dst, &f.msg)
	case "model.message":
		return d.modelMessage(dst, line, l.data)
	case "tool.execution_start":
		if d.announced(f.toolCallID) {
			return dst
		}
		return d.toolCall(dst, fields.Str(f.toolCallID), fields.Str(f.toolName), f.arguments, nil)
	case "tool.execution_partial_result":
		s, trunc := agentstream.Clip(f.partialOutput, agentstream.MaxText)
		if s == "" || d.shellOutput[fields.Str(f.toolCallID)] {
			// tool.shell_output already showed a shell's output.
			return dst
		}
		return append(dst, agentstream.E(&agentstream.ToolOutput{CallID: fields.Str(f.toolCallID), Channel: "stdout", Text: s, Truncated: trunc}))
	case "tool.execution_complete":
		return d.toolResult(dst, &f.res)
	case "result":
		return d.result(dst, l)
	default:
		return d.progress(dst, line, l)
	}
}

// progress maps the lines that say what Copilot is busy with: the skills
// and MCP servers it loaded, its model calls, their failures and retries,
// the output of a running shell. A model call's start is progress, its
// failure an error, its retry a retry; its end, its streamed tool input and
// the bare notice that background tasks changed say nothing the other
// lines do not (Folded).
func (d *Decoder) progress(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	data := l.data
	get := func(k string) []byte { return jsonscan.Get(data, k) }
	switch l.kind {
	case "session.skills_loaded":
		u := &agentstream.SessionUpdated{Skills: []string{}}
		arr, _ := jsonscan.Array(get("skills"))
		for arr.Next() {
			if n := fields.Str(jsonscan.Get(arr.Value(), "name")); n != "" {
				u.Skills = append(u.Skills, n)
			}
		}
		return append(dst, agentstream.E(u))
	case "session.mcp_servers_loaded":
		u := &agentstream.SessionUpdated{MCPServers: []agentstream.MCPServer{}}
		arr, _ := jsonscan.Array(get("servers"))
		for arr.Next() {
			v := arr.Value()
			u.MCPServers = append(u.MCPServers, agentstream.MCPServer{Name: fields.Str(jsonscan.Get(v, "name")), Status: fields.Str(jsonscan.Get(v, "status"))})
		}
		return append(dst, agentstream.E(u))
	case "model.call_start":
		return append(dst, agentstream.E(&agentstream.Progress{Activity: agentstream.ActivityRequesting}))
	case "assistant.idle":
		return append(dst, agentstream.E(&agentstream.Progress{Activity: agentstream.ActivityIdle}))
	case "model.call_failure":
		msg := failureMessage(fields.Str(get("errorMessage")))
		d.failStatus, d.failAttempt, d.failMessage = fields.Int(get("statusCode")), fields.Int(get("retryAttempt")), msg
		if d.failStatus != nil && *d.failStatus > 0 {
			msg = strings.TrimSpace(msg + " (HTTP " + strconv.FormatInt(*d.failStatus, 10) + ")")
		}
		if msg == "" {
			msg = "model call failed"
		}
		msg, _ = agentstream.Clip(msg, agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: fields.Str(get("failureKind"))}))
	case "assistant.turn_retry":
		r := &agentstream.Retry{Error: d.failMessage, Status: d.failStatus}
		if r.Error == "" {
			r.Error = fields.Str(get("reason"))
		}
		r.Error, _ = agentstream.Clip(r.Error, agentstream.MaxText)
		if d.failAttempt != nil {
			n := *d.failAttempt + 1
			r.Attempt = &n
		}
		d.failStatus, d.failAttempt, d.failMessage = nil, nil, ""
		return append(dst, agentstream.E(r))
	case "subagent.started", "subagent.completed", "subagent.failed":
		status := agentstream.SubagentStarted
		switch l.kind {
		case "subagent.completed":
			status = agentstream.SubagentFinished
		case "subagent.failed":
			status = agentstream.SubagentFailed
		}
		id := fields.Str(jsonscan.Get(line, "agentId"))
		callID := fields.Str(get("toolCallId"))
		if id == "" {
			id = callID
		}
		desc, _ := agentstream.Clip(fields.Str(get("agentDescription")), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Subagent{
			ID: id, CallID: callID, Name: fields.Str(get("agentName")), Status: status, Description: desc,
		}))
	case "model.call_final_result":
		if r := fields.Str(get("result")); r != "" && r != "success" {
			msg, _ := agentstream.Clip("model call: "+r, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: r}))
		}
		return dst
	case "tool.shell_output":
		text, trunc, _ := fields.Text(get("text"))
		if text == "" {
			return dst
		}
		id := fields.Str(get("toolCallId"))
		if d.shellOutput == nil {
			d.shellOutput = map[string]bool{}
		}
		d.shellOutput[id] = true
		channel := fields.Str(get("stream"))
		if channel == "" {
			channel = "stdout"
		}
		return append(dst, agentstream.E(&agentstream.ToolOutput{CallID: id, Channel: channel, Text: text, Truncated: trunc}))
	case "model.call_finished", "assistant.tool_call_delta", "session.background_tasks_changed":
		return dst
	}
	return append(dst, unmapped(line))
}

// failureMessage is the message of a failed model call: often the API's
// error JSON, whose message is what a reader wants.
func failureMessage(msg string) string {
	if m := fields.Str(jsonscan.Get([]byte(msg), "message")); m != "" {
		return m
	}
	if m := fields.Str(jsonscan.GetPath([]byte(msg), "error", "message")); m != "" {
		return m
	}
	return msg
}

// message maps assistant.message: its reasoning (unless reasoning events
// already showed it), its text, a tool.call per tool request, and the call's
// output tokens.
func (d *Decoder) message(dst []agentstream.Event, m *messageOf) []agentstream.Event {
	if model := fields.Str(m.model); model != "" {
		d.model = model
	}
	if !d.reasoned {
		if text, trunc, n := m.reasoningC.Or(m.reasoning); n > 0 {
			dst = append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
		}
	}
	d.reasoned = false
	if text, trunc, n := m.contentC.Or(m.content); n > 0 {
		d.lastText = text
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	}
	for _, r := range m.requests {
		id := fields.Str(r.id)
		if c, ok := d.calls[id]; ok && c.announced {
			continue
		}
		dst = d.toolCall(dst, id, fields.Str(r.name), r.arguments, r.intention)
	}
	key := fields.Str(m.apiCallID)
	if key == "" {
		key = fields.Str(m.messageID)
	}
	return d.callUsage(dst, key, m.outputTokens)
}

// modelMessage maps model.message, the raw model response some versions
// print beside assistant.message (which then lacks outputTokens): only the
// output tokens of an assistant response are taken, once per API call.
func (d *Decoder) modelMessage(dst []agentstream.Event, line, data []byte) []agentstream.Event {
	msg := jsonscan.Get(data, "message")
	if fields.Str(jsonscan.Get(msg, "role")) != agentstream.RoleAssistant {
		return append(dst, unmapped(line))
	}
	if m := fields.Str(jsonscan.GetPath(data, "modelCall", "model")); m != "" {
		d.model = m
	}
	key := fields.Str(jsonscan.Get(msg, "apiCallId"))
	if key == "" {
		key = fields.Str(jsonscan.GetPath(data, "modelCall", "api_id"))
	}
	return d.callUsage(dst, key, jsonscan.Get(msg, "outputTokens"))
}

// callUsage emits the output tokens of one model call, once per call id.
// Copilot reports no input or cache tokens.
func (d *Decoder) callUsage(dst []agentstream.Event, key string, outputTokens []byte) []agentstream.Event {
	n := fields.Int(outputTokens)
	if n == nil || *n == 0 {
		return dst
	}
	if key != "" {
		if d.counted[key] {
			return dst
		}
		d.counted[key] = true
	}
	return append(dst, agentstream.E(&agentstream.Usage{
		Scope: agentstream.ScopeCall, Model: d.model, OutputTokens: n, MessageID: key,
	}))
}

// announced reports whether the call whose raw id is v was announced,
// decoding the id in scratch space rather than allocating it.
func (d *Decoder) announced(v []byte) bool {
	id, _ := jsonscan.AppendString(d.buf[:0], v)
	d.buf = id[:0]
	c, ok := d.calls[string(id)]
	return ok && c.announced
}

// toolCall emits the tool.call of a call and keeps the call until its
// result; intention is the request's raw intentionSummary.
func (d *Decoder) toolCall(dst []agentstream.Event, id, name string, args, intention []byte) []agentstream.Event {
	in, trunc := fields.Input(args)
	category, summary := describeTool(name, args, intention)
	c := call{name: name, announced: true}
	if fileTools[name] != "" {
		c.args = append([]byte(nil), args...)
	}
	d.calls[id] = c
	return append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, name),
	}))
}

// toolResult maps tool.execution_complete: tool.result, plus tool.denied
// when the CLI's permission policy refused the call, and file.change for a
// file tool that succeeded.
func (d *Decoder) toolResult(dst []agentstream.Event, res *resultOf) []agentstream.Event {
	id, success, result, errV, toolName := res.id, res.success, res.result, res.errV, res.toolName
	callID := fields.Str(id)
	c, ok := d.calls[callID]
	if !ok || !c.announced {
		dst = d.toolCall(dst, callID, fields.Str(toolName), nil, nil)
		c = d.calls[callID]
	}
	delete(d.calls, callID)
	ok, _ = jsonscan.Bool(success)
	r := &agentstream.ToolResult{CallID: callID, Name: c.name, IsError: !ok}
	switch {
	case len(result) > 0 && result[0] == '"':
		r.Output, r.Truncated, r.Characters = res.resultC.Or(result)
	case len(result) > 0 && result[0] == '{':
		r.Output, r.Truncated, r.Characters = res.contentC.Or(res.content)
	}
	msg, code := errV, []byte(nil)
	if len(errV) > 0 && errV[0] == '{' {
		msg, code = jsonscan.Get(errV, "message"), jsonscan.Get(errV, "code")
	}
	if r.Characters == 0 {
		r.Output, r.Truncated, r.Characters = fields.Text(msg)
	}
	if n, ok := jsonscan.Int(res.exitCode); ok {
		r.ExitCode = &n
		// A shell command that failed is a failed call, though the tool
		// ran: Copilot says success.
		r.IsError = r.IsError || n != 0
	}
	dst = append(dst, agentstream.E(r))
	if r.IsError && fields.Str(code) == "denied" {
		reason := fields.Str(msg)
		if reason == "" {
			reason = "permission denied"
		}
		reason, _ = agentstream.Clip(reason, agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.ToolDenied{CallID: callID, Name: c.name, Reason: reason}))
	}
	if !r.IsError {
		if fc := fileChange(callID, c, res.detailed); fc != nil {
			dst = append(dst, agentstream.E(fc))
		}
	}
	return dst
}

// result maps the final line: session usage with the premium requests, the
// session id when no earlier line named it, turn.ended and session.ended
// (succeeded exactly when the exit code is 0).
func (d *Decoder) result(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	// Copilot CLI 1.0 names its session only here; a session.started was
	// written at the first line already, and is not written twice.
	if id := fields.Str(l.sessionID); id != "" && id != d.sessionID && !d.started {
		d.sessionID = id
		d.started = true
		s := &agentstream.SessionStarted{Harness: Harness, SessionID: id, Model: d.model}
		if w, ok := agentstream.ContextWindow(s.Model); ok {
			s.ContextWindow = &w
		}
		dst = append(dst, agentstream.E(s))
	}
	if len(l.usage) > 0 {
		u := &agentstream.Usage{Scope: agentstream.ScopeSession}
		u.PremiumRequests = fields.Float(jsonscan.Get(l.usage, "premiumRequests"))
		u.DurationMs = fields.Int(jsonscan.Get(l.usage, "sessionDurationMs"))
		dst = append(dst, agentstream.E(u))
	}
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion}
	summary := d.task
	if summary == "" {
		summary = d.lastText
	}
	end.Summary, end.Truncated = agentstream.Clip(summary, agentstream.MaxText)
	reason := agentstream.TurnOK
	code, ok := jsonscan.Int(l.exitCode)
	if !ok || code != 0 {
		end.Status = agentstream.StatusFailed
		reason = agentstream.TurnError
		end.Error = "exit code " + strings.TrimSpace(string(l.exitCode))
		if ok {
			end.Error = "exit code " + strconv.FormatInt(code, 10)
		} else if len(l.exitCode) == 0 {
			end.Error = "no exit code"
		}
	}
	if d.active || d.turn == 0 {
		d.turn++
	}
	d.active = false
	d.task, d.lastText = "", ""
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// Claims reports whether lines are Copilot CLI JSON: an event in the
// {type, data, id, timestamp} envelope whose type is dotted, or the final
// result with camelCase sessionId and exitCode.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		var typ, data, id, ts, sessionID, exitCode []byte
		obj, ok := jsonscan.Object(l)
		if !ok {
			continue
		}
		for obj.Next() {
			switch string(obj.Key()) {
			case "type":
				typ = obj.Value()
			case "data":
				data = obj.Value()
			case "id":
				id = obj.Value()
			case "timestamp":
				ts = obj.Value()
			case "sessionId":
				sessionID = obj.Value()
			case "exitCode":
				exitCode = obj.Value()
			}
		}
		if obj.Err() != nil {
			continue
		}
		t := fields.Str(typ)
		if t == "result" && len(sessionID) > 0 && len(exitCode) > 0 {
			return true
		}
		if strings.Contains(t, ".") && len(data) > 0 && data[0] == '{' && fields.Str(id) != "" && fields.Str(ts) != "" {
			return true
		}
	}
	return false
}

// unquote returns the content of the JSON string v: the bytes between the
// quotes when it has no escape (no allocation), else its decoded value; nil
// when v is not a string.
func unquote(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return v[1 : len(v)-1]
	}
	out, _ := jsonscan.AppendString(nil, v)
	return out
}

// Deliberate lists the native line types of Copilot CLI 1.0.102 that stay
// raw on purpose, with the reason.
var Deliberate = map[string]string{
	"subagent.configured": "the model a subagent runs on, once subagent.started announced it",
	"session.info":        "a notice for the terminal; its model_retry repeats what assistant.turn_retry reports",
}

// Folded lists the native line types of Copilot CLI whose lines may give
// no event of their own, with where what they say goes.
var Folded = map[string]string{
	"assistant.turn_start":             "the start of a model round trip within the prompt's turn: its messages and tool calls say what it did",
	"assistant.turn_end":               "the end of a model round trip within the prompt's turn; the result line ends the turn",
	"assistant.message_start":          "a message's start: its deltas and assistant.message carry it",
	"tool.execution_start":             "a call assistant.message already announced",
	"tool.execution_partial_result":    "a shell's output tool.shell_output already showed",
	"session.task_complete":            "the task's summary, which goes into session.ended (a failed task gives a warning)",
	"session.start":                    "the session's start, which session.started says",
	"session.tools_updated":            "the model again, when it did not change",
	"model.call_finished":              "a model call's end: its message says what came of it, model.call_failure a failure",
	"model.call_final_result":          "a model call's success (a failure gives an error)",
	"assistant.tool_call_delta":        "the streamed input of a tool call, which assistant.message gives whole",
	"session.background_tasks_changed": "a notice that the set of background tasks changed, naming none",
}
