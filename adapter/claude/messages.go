package claude

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// assistant maps an assistant line: one content block (usually) of a model
// response, with the response's usage snapshot.
func (d *Decoder) assistant(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	var id, model []byte
	var content, usage []byte
	obj, ok := jsonscan.Object(f.message)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	for obj.Next() {
		switch string(obj.Key()) {
		case "id":
			id = obj.Value()
		case "model":
			model = obj.Value()
		case "content":
			content = obj.Value()
		case "usage":
			usage = obj.Value()
		}
	}
	start := len(dst)
	if s := fields.Str(content); s != "" {
		text, trunc, _ := fields.Text(content)
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	}
	arr, _ := jsonscan.Array(content)
	for arr.Next() {
		dst = d.assistantBlock(dst, arr.Value())
	}
	if len(f.errorV) > 0 && !jsonscan.IsNull(f.errorV) {
		msg := ""
		for _, e := range dst[start:] {
			if m, ok := e.Payload.(*agentstream.Message); ok {
				msg = m.Text
			}
		}
		dst = append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: fields.Str(f.errorV)}))
	}
	if len(usage) > 0 {
		msgID, m := fields.Str(id), fields.Str(model)
		u := parseUsage(usage)
		if p, ok := d.pending[msgID]; ok && msgID != "" {
			// Deltas are streamed: the final figures come with message_delta.
			if p.model == "" {
				p.model = m
			}
		} else {
			dst = d.emitUsage(dst, msgID, m, u)
		}
	}
	return dst
}

func (d *Decoder) assistantBlock(dst []agentstream.Event, block []byte) []agentstream.Event {
	var typ, text, thinking, signature, id, name, input []byte
	obj, ok := jsonscan.Object(block)
	if !ok {
		return dst
	}
	for obj.Next() {
		switch string(obj.Key()) {
		case "type":
			typ = obj.Value()
		case "text":
			text = obj.Value()
		case "thinking":
			thinking = obj.Value()
		case "signature":
			signature = obj.Value()
		case "data":
			// redacted_thinking carries its encrypted reasoning here.
		case "id":
			id = obj.Value()
		case "name":
			name = obj.Value()
		case "input":
			input = obj.Value()
		}
	}
	switch fields.Str(typ) {
	case "text":
		t, trunc, n := fields.Text(text)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: t, Truncated: trunc}))
	case "thinking":
		t, trunc, n := fields.Text(thinking)
		redacted := n == 0 && fields.Str(signature) != ""
		if n == 0 && !redacted {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Thinking{Text: t, Truncated: trunc, Redacted: redacted}))
	case "redacted_thinking":
		return append(dst, agentstream.E(&agentstream.Thinking{Redacted: true}))
	case "tool_use", "server_tool_use":
		return d.toolUse(dst, fields.Str(id), fields.Str(name), input)
	}
	return dst
}

func (d *Decoder) toolUse(dst []agentstream.Event, id, name string, input []byte) []agentstream.Event {
	in, trunc := fields.Input(input)
	category, summary := describeTool(name, input)
	info := toolInfo{name: name}
	dst = append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary,
	}))
	switch name {
	case "TodoWrite":
		if p := todoPlan(input); p != nil {
			dst = append(dst, agentstream.E(p))
		}
	case "Agent", "Task":
		info.subagent = true
		desc, _ := agentstream.Clip(fields.Str(jsonscan.Get(input, "description")), agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Subagent{
			ID: id, CallID: id, Name: fields.Str(jsonscan.Get(input, "subagent_type")),
			Status: agentstream.SubagentStarted, Description: desc,
		}))
	case "AskUserQuestion":
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

// todoPlan reads TodoWrite's todos as a plan.
func todoPlan(input []byte) *agentstream.Plan {
	arr, ok := jsonscan.Array(jsonscan.Get(input, "todos"))
	if !ok {
		return nil
	}
	p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "content"))
		status := fields.Str(jsonscan.Get(e, "status"))
		switch status {
		case agentstream.StepPending, agentstream.StepInProgress, agentstream.StepCompleted, agentstream.StepCancelled:
		default:
			status = agentstream.StepPending
		}
		p.Steps = append(p.Steps, agentstream.PlanStep{Text: text, Status: status})
	}
	return p
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
	content := jsonscan.Get(f.message, "content")
	role := agentstream.RoleUser
	if fields.Bool(f.isSynthetic) {
		role = agentstream.RoleSystem
	}
	if len(content) > 0 && content[0] == '"' {
		text, trunc, n := fields.Text(content)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	}
	arr, ok := jsonscan.Array(content)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	var texts []string
	for arr.Next() {
		block := arr.Value()
		switch fields.Str(jsonscan.Get(block, "type")) {
		case "tool_result":
			dst = d.toolResult(dst, block)
		case "text":
			if s := fields.Str(jsonscan.Get(block, "text")); s != "" {
				texts = append(texts, s)
			}
		case "image":
			texts = append(texts, imageText(block))
		}
	}
	if len(texts) > 0 {
		text, trunc := agentstream.Clip(strings.Join(texts, "\n"), agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	}
	return dst
}

func imageText(block []byte) string {
	src := jsonscan.Get(block, "source")
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

func (d *Decoder) toolResult(dst []agentstream.Event, block []byte) []agentstream.Event {
	var id, content, isError []byte
	obj, _ := jsonscan.Object(block)
	for obj.Next() {
		switch string(obj.Key()) {
		case "tool_use_id":
			id = obj.Value()
		case "content":
			content = obj.Value()
		case "is_error":
			isError = obj.Value()
		}
	}
	callID := fields.Str(id)
	info := d.tools[callID]
	r := &agentstream.ToolResult{CallID: callID, IsError: fields.Bool(isError), Name: info.name}
	switch {
	case len(content) > 0 && content[0] == '"':
		r.Output, r.Truncated, r.Characters = fields.Text(content)
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
				s = imageText(b)
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
	dst = append(dst, agentstream.E(r))
	if info.subagent {
		status := agentstream.SubagentFinished
		if r.IsError {
			status = agentstream.SubagentFailed
		}
		dst = append(dst, agentstream.E(&agentstream.Subagent{ID: callID, CallID: callID, Status: status}))
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

// streamEvent maps a partial-message line: text and thinking deltas become
// live events; message_start and message_delta feed the usage state.
func (d *Decoder) streamEvent(dst []agentstream.Event, f *fieldsOf) []agentstream.Event {
	var typ, delta, message, usage []byte
	obj, _ := jsonscan.Object(f.event)
	for obj.Next() {
		switch string(obj.Key()) {
		case "type":
			typ = obj.Value()
		case "delta":
			delta = obj.Value()
		case "message":
			message = obj.Value()
		case "usage":
			usage = obj.Value()
		}
	}
	parent := fields.Str(f.parent)
	switch fields.Str(typ) {
	case "content_block_delta":
		var dt, text []byte
		obj, _ := jsonscan.Object(delta)
		for obj.Next() {
			switch string(obj.Key()) {
			case "type":
				dt = obj.Value()
			case "text", "thinking":
				text = obj.Value()
			}
		}
		switch fields.Str(dt) {
		case "text_delta":
			if s := fields.Str(text); s != "" {
				dst = append(dst, agentstream.E(&agentstream.MessageDelta{Role: agentstream.RoleAssistant, Text: s}))
			}
		case "thinking_delta":
			if s := fields.Str(text); s != "" {
				dst = append(dst, agentstream.E(&agentstream.ThinkingDelta{Text: s}))
			}
		}
	case "message_start":
		id := fields.Str(jsonscan.Get(message, "id"))
		if id == "" || d.counted[id] {
			return dst
		}
		if _, ok := d.pending[id]; !ok {
			d.order = append(d.order, id)
		}
		d.pending[id] = &pendingUsage{
			id: id, parent: parent,
			model: fields.Str(jsonscan.Get(message, "model")),
			u:     parseUsage(jsonscan.Get(message, "usage")),
		}
		d.current[parent] = id
	case "message_delta":
		id := d.current[parent]
		p, ok := d.pending[id]
		if !ok {
			return dst
		}
		p.u = p.u.merge(parseUsage(usage))
		dst = d.emitUsage(dst, p.id, p.model, p.u)
		d.dropOrder(id)
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
