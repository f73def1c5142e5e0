package claude

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// block is one content block of a message, as raw JSON values.
// The text, thinking and content strings are also decoded where they are
// read (the c fields), so that a large one is scanned once.
type block struct {
	typ, text, thinking, signature, id, name, input []byte
	toolUseID, content, isError, source, toolName   []byte
	textC, thinkingC, contentC                      fields.Clipped
}

// readBlock reads a content block's members in place, each value once; buf
// is scratch space for decoding.
func readBlock(o *jsonscan.Obj, buf *[]byte) block {
	var b block
	for o.NextKey() {
		switch string(o.Key()) {
		case "type":
			b.typ = o.Value()
		case "text":
			b.textC, b.text = fields.ClipRaw(o, buf)
		case "thinking":
			b.thinkingC, b.thinking = fields.ClipRaw(o, buf)
		case "signature":
			b.signature = o.Value()
		case "id":
			b.id = o.Value()
		case "name":
			b.name = o.Value()
		case "input":
			b.input = o.Value()
		case "tool_use_id":
			b.toolUseID = o.Value()
		case "content":
			b.contentC, b.content = fields.ClipRaw(o, buf)
		case "is_error":
			b.isError = o.Value()
		case "source":
			b.source = o.Value()
		case "tool_name":
			b.toolName = o.Value()
		}
	}
	return b
}

// readMessage reads the message object of an assistant or user line in
// place: content blocks are mapped as they come, the rest is kept in f for
// the end of the line.
func (d *Decoder) readMessage(dst []agentstream.Event, m *jsonscan.Obj, typ string, f *fieldsOf) []agentstream.Event {
	for m.NextKey() {
		switch string(m.Key()) {
		case "id":
			f.msgID = m.Value()
		case "model":
			f.msgModel = m.Value()
		case "usage":
			f.msgUsage = m.Value()
		case "content":
			arr, ok := m.Array()
			if !ok {
				v := m.Value()
				if typ == "assistant" {
					f.msgText = fields.Str(v)
				} else {
					f.userContent = v
				}
				continue
			}
			for arr.NextElem() {
				o, ok := arr.Object()
				if !ok {
					continue
				}
				b := readBlock(&o, &d.buf)
				arr.LeaveObject(&o)
				if typ == "assistant" {
					n := len(dst)
					dst = d.assistantBlock(dst, b)
					for _, e := range dst[n:] {
						if msg, ok := e.Payload.(*agentstream.Message); ok {
							f.lastText = msg.Text
						}
					}
				} else {
					if len(b.content) > 0 && b.content[0] == '"' {
						f.resultRaw = b.content
					}
					dst = d.userBlock(dst, b, f)
				}
			}
			m.LeaveArray(&arr)
		}
	}
	return dst
}

// assistant maps an assistant line: one content block (usually) of a model
// response, with the response's usage snapshot.
func (d *Decoder) assistant(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	d.inMain = len(f.parent) == 0 || jsonscan.IsNull(f.parent)
	d.lineCalled = false
	if d.inMain {
		d.active = true
	}
	if !f.messageRead {
		m, ok := jsonscan.Object(f.message)
		if !ok {
			return append(dst, fields.Raw(line))
		}
		dst = d.readMessage(dst, &m, "assistant", f)
	}
	if d.inMain {
		// A message that calls a tool goes on with its result; text
		// without a call is the model's reply. Lines with neither (Qwen
		// splits a response, its usage on a line of its own) change
		// nothing.
		if d.lineCalled {
			d.mainCalled = true
		} else if f.msgText != "" {
			d.mainCalled = false
		}
	}
	if f.msgText != "" {
		text, trunc := agentstream.Clip(f.msgText, agentstream.MaxText)
		f.lastText = text
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	}
	if len(f.errorV) > 0 && !jsonscan.IsNull(f.errorV) {
		dst = append(dst, agentstream.E(&agentstream.Error{Message: f.lastText, ErrorType: fields.Str(f.errorV)}))
	}
	if len(f.msgUsage) > 0 {
		dst = d.lineUsage(dst, fields.Str(f.msgID), fields.Str(f.msgModel), fields.Str(f.parent), parseUsage(f.msgUsage), fields.Time(f.timestamp))
	}
	return dst
}

func (d *Decoder) assistantBlock(dst []agentstream.Event, b block) []agentstream.Event {
	switch string(fields.Unquoted(b.typ)) {
	case "text":
		t, trunc, n := b.textC.Or(b.text)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: t, Truncated: trunc}))
	case "thinking":
		t, trunc, n := b.thinkingC.Or(b.thinking)
		redacted := n == 0 && fields.Str(b.signature) != ""
		if n == 0 && !redacted {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Thinking{Text: t, Truncated: trunc, Redacted: redacted}))
	case "redacted_thinking":
		return append(dst, agentstream.E(&agentstream.Thinking{Redacted: true}))
	case "tool_use", "server_tool_use":
		return d.toolUse(dst, fields.Str(b.id), fields.Str(b.name), b.input)
	}
	return dst
}

func (d *Decoder) toolUse(dst []agentstream.Event, id, name string, input []byte) []agentstream.Event {
	d.lineCalled = true
	in, trunc := fields.Input(input)
	category, summary, display := d.describeTool(name, input)
	info := toolInfo{name: name}
	dst = append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: display,
	}))
	spec, _ := d.spec(name)
	info.edit = d.pendingEdit(spec.edit, input)
	info.plan = pendingPlanOf(spec.plan, input)
	if info.plan != nil && info.plan.kind == planTodos && d.offers(name) {
		// A todo list the session offers is the plan at once; one it does
		// not offer waits for its result, since the harness rejects it.
		dst = append(dst, agentstream.E(info.plan.todos))
		info.plan = nil
	}
	switch {
	case spec.category == agentstream.CategoryDelegate && !strings.HasPrefix(name, "mcp__"):
		info.subagent = true
		desc, _ := agentstream.Clip(fields.Str(jsonscan.Get(input, "description")), agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Subagent{
			ID: id, CallID: id, Name: fields.Str(jsonscan.Get(input, "subagent_type")),
			Status: agentstream.SubagentStarted, Description: desc,
		}))
	case spec.category == agentstream.CategoryAsk:
		info.ask = true
		if q := questions(id, input); q != nil {
			dst = append(dst, agentstream.E(q))
		}
	}
	if id != "" {
		d.tools[id] = info
	}
	return dst
}

// offers reports whether the session may call the tool called name: its
// init listed it, or listed no tools.
func (d *Decoder) offers(name string) bool {
	return d.init == nil || len(d.init.Tools) == 0 || slices.Contains(d.init.Tools, name)
}

// questions reads AskUserQuestion's input.
func questions(callID string, input []byte) *agentstream.Question {
	arr, ok := jsonscan.Array(jsonscan.Get(input, "questions"))
	if !ok {
		return nil
	}
	q := &agentstream.Question{RequestID: callID, CallID: callID, Questions: []agentstream.QuestionItem{}}
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "question"))
		item := agentstream.QuestionItem{
			Question:    text,
			Header:      fields.Str(jsonscan.Get(e, "header")),
			Options:     []agentstream.QuestionOption{},
			MultiSelect: fields.Bool(jsonscan.Get(e, "multiSelect")),
		}
		opts, _ := jsonscan.Array(jsonscan.Get(e, "options"))
		for opts.Next() {
			o := opts.Value()
			label, _, _ := fields.Text(jsonscan.Get(o, "label"))
			desc, _, _ := fields.Text(jsonscan.Get(o, "description"))
			item.Options = append(item.Options, agentstream.QuestionOption{Label: label, Description: desc})
		}
		q.Questions = append(q.Questions, item)
	}
	return q
}

// user maps a user line: tool results, a prompt, a subagent's prompt, or a
// replayed or synthetic message.
func (d *Decoder) user(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	if !f.messageRead {
		m, ok := jsonscan.Object(f.message)
		if !ok {
			return append(dst, fields.Raw(line))
		}
		dst = d.readMessage(dst, &m, "user", f)
	}
	for _, r := range f.results {
		dst = d.afterResult(dst, r, f)
	}
	if d.cfg.Harness == Qwen.Harness && d.active && !d.mainCalled && !f.hadResult &&
		(len(f.parent) == 0 || jsonscan.IsNull(f.parent)) && !fields.Bool(f.isReplay) {
		// Qwen Code wakes its agent with a message of its own (a background
		// agent finished) after the agent's reply ended its turn: the
		// reply's turn ends here and the message starts the next one. Qwen
		// prints one result, at the end, for both.
		dst = append(dst,
			agentstream.E(&agentstream.TurnEnded{Turn: d.turn + 1, Reason: agentstream.TurnOK}),
			agentstream.E(&agentstream.TurnStarted{Turn: d.turn + 2}))
		d.turn++
	}
	role := agentstream.RoleUser
	if fields.Bool(f.isSynthetic) {
		role = agentstream.RoleSystem
	}
	if len(f.userContent) > 0 {
		text, trunc, n := fields.Text(f.userContent)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	}
	if len(f.texts) > 0 {
		text, trunc := agentstream.Clip(strings.Join(f.texts, "\n"), agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	}
	return dst
}

// userBlock maps one content block of a user message: a tool result now,
// text and images into the message written at the end of the line.
func (d *Decoder) userBlock(dst []agentstream.Event, b block, f *fieldsOf) []agentstream.Event {
	switch string(fields.Unquoted(b.typ)) {
	case "tool_result":
		f.hadResult = true
		return d.toolResult(dst, b, f)
	case "text":
		s := b.textC.Text
		if !b.textC.OK || b.textC.Truncated {
			s = fields.Str(b.text)
		}
		if s != "" {
			f.texts = append(f.texts, s)
		}
	case "image":
		f.texts = append(f.texts, imageText(b.source))
	}
	return dst
}

// imageText describes an image block by its source object.
func imageText(src []byte) string {
	media := fields.Str(jsonscan.Get(src, "media_type"))
	if media == "" {
		media = "unknown"
	}
	data := jsonscan.Get(src, "data")
	n := 0
	if len(data) >= 2 {
		// base64: three bytes for every four characters.
		chars := len(data) - 2
		n = chars / 4 * 3
		if strings.HasSuffix(string(data), `=="`) {
			n -= 2
		} else if strings.HasSuffix(string(data), `="`) {
			n--
		}
	}
	return "[image: " + media + ", " + strconv.Itoa(n) + " bytes]"
}

func (d *Decoder) toolResult(dst []agentstream.Event, b block, f *fieldsOf) []agentstream.Event {
	id, content, isError := b.toolUseID, b.content, b.isError
	callID := fields.Str(id)
	info := d.tools[callID]
	r := &agentstream.ToolResult{CallID: callID, IsError: fields.Bool(isError), Name: info.name}
	switch {
	case len(content) > 0 && content[0] == '"':
		r.Output, r.Truncated, r.Characters = b.contentC.Or(content)
	case len(content) > 0 && content[0] == '[':
		var parts []string
		var chars int64
		arr, _ := jsonscan.Array(content)
		for arr.Next() {
			b := arr.Value()
			var s string
			switch fields.Str(jsonscan.Get(b, "type")) {
			case "text":
				t, _, n := fields.Text(jsonscan.Get(b, "text"))
				s, chars = t, chars+n
			case "image":
				s = imageText(jsonscan.Get(b, "source"))
				chars += int64(len(s))
			case "tool_reference":
				s = "[tool: " + fields.Str(jsonscan.Get(b, "tool_name")) + "]"
				chars += int64(agentstream.CountChars(s))
			default:
				continue
			}
			parts = append(parts, s)
		}
		if len(parts) > 1 {
			chars += int64(len(parts) - 1)
		}
		r.Output, r.Truncated = agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
		r.Truncated = r.Truncated || chars > int64(agentstream.CountChars(r.Output))
		r.Characters = chars
	}
	d.shellExitCode(r)
	dst = append(dst, agentstream.E(r))
	if info.subagent || info.edit != nil || info.plan != nil {
		f.results = append(f.results, resultSeen{callID: callID, isError: r.IsError, output: r.Output})
	}
	if info.ask {
		outcome := agentstream.OutcomeAnswered
		if r.IsError {
			outcome = agentstream.OutcomeCancelled
		}
		dst = append(dst, agentstream.E(&agentstream.RequestResolved{RequestID: callID, Outcome: outcome, Answer: r.Output}))
	}
	return dst
}

// eventFields are the members of a stream_event's event that the adapter
// reads.
type eventFields struct {
	typ, deltaType, deltaText, message, usage []byte
	errorV, goalState, content, toolUseID     []byte
	text                                      string // deltaText decoded
}

// readEvent reads a stream_event's event in place; buf is scratch space
// for decoding.
func readEvent(e *jsonscan.Obj, ev *eventFields, buf *[]byte) {
	for e.NextKey() {
		switch string(e.Key()) {
		case "type":
			ev.typ = e.Value()
		case "delta":
			dl, ok := e.Object()
			if !ok {
				continue
			}
			for dl.NextKey() {
				switch string(dl.Key()) {
				case "type":
					ev.deltaType = dl.Value()
				case "text", "thinking":
					ev.text, _ = fields.StrMember(&dl, buf)
					ev.deltaText = dl.Value()
				}
			}
			e.LeaveObject(&dl)
		case "message":
			ev.message = e.Value()
		case "usage":
			ev.usage = e.Value()
		case "error":
			ev.errorV = e.Value()
		case "goal_state":
			ev.goalState = e.Value()
		case "content":
			ev.content = e.Value()
		case "tool_use_id":
			ev.toolUseID = e.Value()
		}
	}
}

// The head of a text or thinking delta line as Claude Code prints it, up to
// the delta's text, and the raw values the member loop would read there.
var (
	deltaHead     = []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":`)
	textDelta     = []byte(`,"delta":{"type":"text_delta","text":`)
	thinkingDelta = []byte(`,"delta":{"type":"thinking_delta","thinking":`)

	rawStreamEvent   = []byte(`"stream_event"`)
	rawBlockDelta    = []byte(`"content_block_delta"`)
	rawTextDelta     = []byte(`"text_delta"`)
	rawThinkingDelta = []byte(`"thinking_delta"`)
)

// readDeltaHead reads the line's type and event members at once when the
// line starts exactly as a delta line does: the type, the event with its
// index and a text or thinking delta, and nothing else. It fills f as the
// member loop would and returns the position just past the event's value,
// or 0 (f untouched) for any other line, which the member loop then reads.
func (d *Decoder) readDeltaHead(line []byte, f *fieldsOf) int {
	if !bytes.HasPrefix(line, deltaHead) {
		return 0
	}
	// The index: digits without a leading zero.
	p := len(deltaHead)
	q := p
	for q < len(line) && line[q] >= '0' && line[q] <= '9' {
		q++
	}
	if q == p || (line[p] == '0' && q > p+1) {
		return 0
	}
	deltaType := rawTextDelta
	switch {
	case bytes.HasPrefix(line[q:], textDelta):
		q += len(textDelta)
	case bytes.HasPrefix(line[q:], thinkingDelta):
		q += len(thinkingDelta)
		deltaType = rawThinkingDelta
	default:
		return 0
	}
	out, end, ok := jsonscan.StringAt(d.buf[:0], line, q)
	if !ok || !bytes.HasPrefix(line[end:], []byte("}}")) {
		return 0
	}
	d.buf = out[:0]
	f.typ, f.kind = rawStreamEvent, "stream_event"
	f.ev.typ, f.ev.deltaType, f.ev.deltaText, f.ev.text = rawBlockDelta, deltaType, line[q:end], string(out)
	f.eventRead = true
	return end + 2
}

// streamEvent maps a partial-message line: text and thinking deltas become
// live events; message_start and message_delta feed the usage state.
func (d *Decoder) streamEvent(dst []agentstream.Event, f *fieldsOf) []agentstream.Event {
	ev := &f.ev
	switch string(fields.Unquoted(ev.typ)) {
	case "content_block_delta":
		switch string(fields.Unquoted(ev.deltaType)) {
		case "text_delta":
			if s := ev.text; s != "" {
				dst = append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, s)))
			}
		case "thinking_delta":
			if s := ev.text; s != "" {
				dst = append(dst, agentstream.E(d.deltas.Thinking(s)))
			}
		}
	case "message_start":
		d.startCall(fields.Str(jsonscan.Get(ev.message, "id")), fields.Str(jsonscan.Get(ev.message, "model")),
			fields.Str(f.parent), parseUsage(jsonscan.Get(ev.message, "usage")))
	case "error":
		msg, _, _ := fields.Text(jsonscan.Get(ev.errorV, "message"))
		if msg == "" {
			msg = "stream error"
		}
		return append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: fields.Str(jsonscan.Get(ev.errorV, "type"))}))
	case "goal_state":
		// Qwen Code's goal and what it is doing about it.
		g := jsonscan.Get(ev.goalState, "goal")
		goal := fields.Str(g)
		if goal == "" {
			goal = fields.Str(jsonscan.Get(g, "objective"))
		}
		return append(dst, agentstream.E(&agentstream.Progress{Activity: fields.Str(jsonscan.Get(ev.goalState, "activity")), Message: fields.Summary(goal)}))
	case "tool_progress":
		// Qwen Code's progress of a running (MCP) tool.
		text, trunc, _ := fields.Text(ev.content)
		if text == "" {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.ToolOutput{CallID: fields.Str(ev.toolUseID), Channel: "progress", Text: text, Truncated: trunc}))
	case "message_delta":
		dst = d.endCall(dst, fields.Str(f.parent), parseUsage(ev.usage))
	}
	return dst
}
