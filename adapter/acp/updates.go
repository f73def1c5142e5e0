package acp

import (
	"bytes"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// updateOf is what an update object (or a permission request's toolCall)
// holds, as raw JSON values.
type updateOf struct {
	kind, content, messageID, toolCallID, toolKind, title, rawInput, rawOutput []byte
	status, meta, entries, commands, modeID, currentModeID, configOptions      []byte
	used, size, cost                                                           []byte

	ct contentOf // the content's text, when it was an array read in place

	block                bool   // the content was an object read in place
	blockType, blockBody []byte // its type and text
}

func (u *updateOf) parse(v []byte) {
	obj, _ := jsonscan.Object(v)
	u.read(&obj, nil)
}

// read reads the members of an update object from its iterator, scanning
// each value once. With a scratch buffer buf, a content array is read in
// place and its text kept.
func (u *updateOf) read(obj *jsonscan.Obj, buf *[]byte) {
	for obj.NextKey() {
		if buf != nil && string(obj.Key()) == "content" {
			u.ct = contentOf{}
			u.block, u.blockType, u.blockBody = false, nil, nil
			if arr, ok := obj.Array(); ok {
				c := &u.ct
				c.text, c.truncated, c.chars, c.hasDiff = contentArr(&arr, buf)
				obj.LeaveArray(&arr)
				c.done = true
			} else if b, ok := obj.Object(); ok {
				// A chunk's content block: its type and text, as
				// blockText reads them.
				for b.NextKey() {
					switch string(b.Key()) {
					case "type":
						u.blockType = b.Value()
					case "text":
						u.blockBody = b.Value()
					}
				}
				obj.LeaveObject(&b)
				u.block = true
			}
			u.content = obj.Value()
			continue
		}
		val := obj.Value()
		switch string(obj.Key()) {
		case "sessionUpdate":
			u.kind = val
		case "content":
			u.content = val
		case "messageId":
			u.messageID = val
		case "toolCallId":
			u.toolCallID = val
		case "kind":
			u.toolKind = val
		case "title":
			u.title = val
		case "rawInput":
			u.rawInput = val
		case "rawOutput":
			u.rawOutput = val
		case "status":
			u.status = val
		case "_meta":
			u.meta = val
		case "entries":
			u.entries = val
		case "availableCommands":
			u.commands = val
		case "modeId":
			u.modeID = val
		case "currentModeId":
			u.currentModeID = val
		case "configOptions":
			u.configOptions = val
		case "used":
			u.used = val
		case "size":
			u.size = val
		case "cost":
			u.cost = val
		}
	}
}

// update maps one session/update (v is its "update" object).
func (d *Decoder) update(dst []agentstream.Event, line []byte, u *updateOf, sessionID []byte) []agentstream.Event {
	if !d.started {
		dst = d.ensureStarted(dst, fields.Str(sessionID))
	}
	replay := d.replay
	kind := string(unquote(u.kind))
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
		dst = d.openTurn(dst, replay)
	}
	start := len(dst)
	switch kind {
	case "agent_message_chunk":
		dst = d.chunk(dst, textAgent, u, replay)
	case "user_message_chunk":
		dst = d.chunk(dst, textUser, u, replay)
	case "agent_thought_chunk":
		dst = d.chunk(dst, textThought, u, replay)
	default:
		dst = d.flush(dst)
		start = len(dst)
		dst = d.other(dst, line, kind, u)
	}
	if replay {
		for i := start; i < len(dst); i++ {
			dst[i].Replay = true
		}
	}
	return dst
}

func (d *Decoder) other(dst []agentstream.Event, line []byte, kind string, u *updateOf) []agentstream.Event {
	switch kind {
	case "tool_call", "tool_call_update":
		return d.toolUpdate(dst, u)
	case "plan":
		p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
		arr, _ := jsonscan.Array(u.entries)
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
		return append(dst, agentstream.E(p))
	case "available_commands_update":
		cmds := fields.Strings(u.commands)
		if cmds == nil {
			cmds = []string{}
		}
		return append(dst, agentstream.E(&agentstream.SessionUpdated{Commands: cmds}))
	case "current_mode_update":
		mode := fields.Str(u.currentModeID)
		if mode == "" {
			mode = fields.Str(u.modeID)
		}
		d.mode = mode
		return append(dst, agentstream.E(&agentstream.SessionUpdated{Mode: mode}))
	case "config_option_update":
		return append(dst, agentstream.E(d.configUpdate(u.configOptions)))
	case "session_info_update":
		if t := strings.TrimSpace(fields.Str(u.title)); t != "" {
			title, _ := agentstream.Clip(t, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
		}
		return append(dst, agentstream.E(&agentstream.SessionUpdated{}))
	case "usage_update":
		d.ctxUsed = fields.Int(u.used)
		d.ctxSize = fields.Int(u.size)
		cost := u.cost
		if strings.EqualFold(fields.Str(jsonscan.Get(cost, "currency")), "USD") {
			d.cost = fields.Float(jsonscan.Get(cost, "amount"))
		}
		return append(dst, agentstream.E(d.sessionUsage()))
	}
	return append(dst, fields.Raw(line))
}

// chunk maps a message or thought chunk: a live delta, accumulated until
// something else arrives. A chunk that repeats the whole text streamed so
// far (some bridges end with one) adds nothing.
func (d *Decoder) chunk(dst []agentstream.Event, kind int, u *updateOf, replay bool) []agentstream.Event {
	id := unquote(u.messageID)
	if d.open != kind || d.openReplay != replay || (len(id) > 0 && d.openID != "" && string(id) != d.openID) {
		dst = d.flush(dst)
		d.open, d.openReplay = kind, replay
	}
	if len(id) > 0 && string(id) != d.openID {
		d.openID = string(id)
	}
	var s string
	if u.block && string(unquote(u.blockType)) == "text" {
		s = fields.Str(u.blockBody)
	} else {
		s = blockText(u.content)
	}
	if s == "" || d.text.Whole(s) {
		return dst
	}
	d.text.Add(s, zeroTime)
	s, _ = agentstream.Clip(s, agentstream.MaxText)
	var p agentstream.Payload
	switch kind {
	case textThought:
		p = &agentstream.ThinkingDelta{Text: s}
	case textUser:
		p = &agentstream.MessageDelta{Role: agentstream.RoleUser, Text: s}
	default:
		p = &agentstream.MessageDelta{Role: agentstream.RoleAssistant, Text: s}
	}
	return append(dst, agentstream.Event{Payload: p, Replay: replay})
}

// blockText returns the text of a content block: its text, or a short
// description of an image, audio or resource.
func blockText(b []byte) string {
	var typ, text []byte
	obj, _ := jsonscan.Object(b)
	for obj.Next() {
		switch string(obj.Key()) {
		case "type":
			typ = obj.Value()
		case "text":
			text = obj.Value()
		}
	}
	get := func(k string) string { return fields.Str(jsonscan.Get(b, k)) }
	switch string(unquote(typ)) {
	case "text":
		return fields.Str(text)
	case "image", "audio":
		return "[" + get("type") + ": " + get("mimeType") + "]"
	case "resource_link":
		return "[resource: " + get("uri") + "]"
	case "resource":
		return "[resource: " + fields.Str(jsonscan.GetPath(b, "resource", "uri")) + "]"
	}
	return ""
}

// tool is what the decoder knows of one tool call: ACP sends a call, then
// partial updates of any of its fields.
type tool struct {
	kind, title, meta string
	input             []byte
	announced, done   bool
}

func (d *Decoder) tool(id string) *tool {
	t, ok := d.tools[id]
	if !ok {
		t = &tool{}
		d.tools[id] = t
	}
	return t
}

// merge takes the fields a tool_call or tool_call_update (or the toolCall of
// a permission request) sets.
func (t *tool) merge(u *updateOf) {
	if s := fields.Str(u.toolKind); s != "" {
		t.kind = s
	}
	if s := fields.Str(u.title); s != "" {
		t.title = s
	}
	if v := u.rawInput; len(v) > 0 && !jsonscan.IsNull(v) {
		t.input = append(t.input[:0], v...)
	}
	if s := fields.Str(jsonscan.GetPath(u.meta, "claudeCode", "toolName")); s != "" {
		t.meta = s
	}
}

// name is the call's name: the agent's own tool name when its metadata
// gives one, else the ACP kind.
func (t *tool) name() string {
	if t.meta != "" {
		return t.meta
	}
	if t.kind != "" {
		return t.kind
	}
	return "other"
}

// categories maps ACP tool kinds to tool.call categories.
var categories = map[string]string{
	"read":    agentstream.CategoryRead,
	"edit":    agentstream.CategoryEdit,
	"delete":  agentstream.CategoryDelete,
	"move":    agentstream.CategoryMove,
	"search":  agentstream.CategorySearch,
	"execute": agentstream.CategoryExecute,
	"think":   agentstream.CategoryThink,
	"fetch":   agentstream.CategoryFetch,
}

// toolUpdate maps tool_call and tool_call_update: tool.call the first time
// a call is seen (ACP agents may start with an update), tool.output while
// it runs, tool.result (and file.change for its diffs) when it completes or
// fails.
func (d *Decoder) toolUpdate(dst []agentstream.Event, u *updateOf) []agentstream.Event {
	id := fields.Str(u.toolCallID)
	t := d.tool(id)
	t.merge(u)
	if !t.announced {
		t.announced = true
		c := &agentstream.ToolCall{CallID: id, Name: t.name(), Input: "null", Category: agentstream.CategoryOther}
		if len(t.input) > 0 {
			c.Input, c.Truncated = fields.Input(t.input)
		}
		if cat, ok := categories[t.kind]; ok {
			c.Category = cat
		}
		// The title is the label ACP defines for showing the call.
		c.Summary = fields.Summary(t.title)
		dst = append(dst, agentstream.E(c))
	}
	if t.done {
		return dst
	}
	content, meta := u.content, u.meta
	switch status := string(unquote(u.status)); status {
	case "completed", "failed":
		t.done = true
		r := &agentstream.ToolResult{CallID: id, Name: t.name(), IsError: status == "failed"}
		var hasDiff bool
		r.Output, r.Truncated, r.Characters, hasDiff = u.contentText(&d.buf)
		if r.Characters == 0 {
			r.Output, r.Truncated, r.Characters = rawOutput(u.rawOutput)
		}
		if code := fields.Int(jsonscan.GetPath(meta, "terminal_exit", "exit_code")); code != nil {
			r.ExitCode = code
		}
		dst = append(dst, agentstream.E(r))
		if !r.IsError && hasDiff {
			if fc := diffs(id, content, &d.dbuf); fc != nil {
				dst = append(dst, agentstream.E(fc))
			}
		}
	default:
		if s, trunc, n, _ := u.contentText(&d.buf); n > 0 {
			dst = append(dst, agentstream.E(&agentstream.ToolOutput{CallID: id, Channel: "stdout", Text: s, Truncated: trunc}))
		}
		if s, trunc, n := fields.Text(jsonscan.GetPath(meta, "terminal_output", "data")); n > 0 {
			dst = append(dst, agentstream.E(&agentstream.ToolOutput{CallID: id, Channel: "stdout", Text: s, Truncated: trunc}))
		}
	}
	return dst
}

// contentText joins the text of a tool call's content blocks
// ({type:"content", content: ContentBlock}), and reports whether the list
// holds diffs; diffs and terminals have their own events.
func contentText(content []byte, buf *[]byte) (text string, truncated bool, chars int64, hasDiff bool) {
	arr, ok := jsonscan.Array(content)
	if !ok {
		return "", false, 0, false
	}
	return contentArr(&arr, buf)
}

// contentOf is contentText's result, computed while an update is read.
type contentOf struct {
	done      bool
	text      string
	truncated bool
	chars     int64
	hasDiff   bool
}

// contentText returns the text of the update's content: as computed in
// place when it was, else from the raw value.
func (u *updateOf) contentText(buf *[]byte) (string, bool, int64, bool) {
	if c := &u.ct; c.done {
		return c.text, c.truncated, c.chars, c.hasDiff
	}
	return contentText(u.content, buf)
}

// contentArr is contentText for the array arr iterates, read in one pass.
func contentArr(arr *jsonscan.Arr, buf *[]byte) (text string, truncated bool, chars int64, hasDiff bool) {
	var parts []string
	single, singleTrunc := false, false // parts is one text clipped by clipText
	for arr.NextElem() {
		var typ, inner, btyp, btext []byte
		obj, ok := arr.Object()
		if !ok {
			arr.Value()
			continue
		}
		// One pass over the element: the inner block is read in place.
		for obj.NextKey() {
			switch string(obj.Key()) {
			case "type":
				typ = obj.Value()
			case "content":
				btyp, btext = nil, nil
				if in, ok := obj.Object(); ok {
					for in.NextKey() {
						switch string(in.Key()) {
						case "type":
							btyp = in.Value()
						case "text":
							btext = in.Value()
						}
					}
					obj.LeaveObject(&in)
				}
				inner = obj.Value()
			}
		}
		arr.LeaveObject(&obj)
		switch string(unquote(typ)) {
		case "diff":
			hasDiff = true
			continue
		case "content":
		default:
			continue
		}
		var s string
		var n int64
		clipped, trunc := false, false
		if string(unquote(btyp)) == "text" {
			s, trunc, n = clipText(buf, btext)
			clipped = true
		} else {
			s = blockText(inner)
			n = int64(agentstream.CountChars(s))
		}
		if n == 0 {
			continue
		}
		single, singleTrunc = clipped && len(parts) == 0, trunc
		parts = append(parts, s)
		chars += n
	}
	if len(parts) == 0 {
		return "", false, 0, hasDiff
	}
	if single && len(parts) == 1 {
		// One text, decoded and clipped to MaxText code points: joining
		// and clipping it again changes nothing.
		return parts[0], singleTrunc, chars, hasDiff
	}
	chars += int64(len(parts) - 1)
	text, truncated = agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
	return text, truncated || chars > int64(agentstream.CountChars(text)), chars, hasDiff
}

// rawOutput is a call's rawOutput as text: a string's value, else compact
// JSON.
func rawOutput(v []byte) (string, bool, int64) {
	switch {
	case len(v) == 0 || jsonscan.IsNull(v):
		return "", false, 0
	case v[0] == '"':
		return fields.Text(v)
	}
	b, ok := jsonscan.AppendCompact(nil, v)
	if !ok {
		return "", false, 0
	}
	s, trunc := agentstream.ClipBytes(b, agentstream.MaxText)
	return s, trunc, int64(agentstream.CountChars(string(b)))
}

// diffs returns the file.change of a call's diff contents, or nil.
func diffs(callID string, content []byte, bufs *[2][]byte) *agentstream.FileChange {
	arr, ok := jsonscan.Array(content)
	if !ok {
		return nil
	}
	var fc *agentstream.FileChange
	for arr.NextElem() {
		var typ, pathV, oldV, newV []byte
		obj, ok := arr.Object()
		if !ok {
			arr.Value()
			continue
		}
		for obj.NextKey() {
			switch {
			case obj.KeyIs("type"):
				typ = obj.Value()
			case obj.KeyIs("path"):
				pathV = obj.Value()
			case obj.KeyIs("oldText"):
				oldV = obj.Value()
			case obj.KeyIs("newText"):
				newV = obj.Value()
			}
		}
		arr.LeaveObject(&obj)
		if string(fields.Unquoted(typ)) != "diff" {
			continue
		}
		if fc == nil {
			fc = &agentstream.FileChange{CallID: callID, Changes: []agentstream.FileChangeItem{}}
		}
		path := fields.Str(pathV)
		item := agentstream.FileChangeItem{Path: path, Kind: agentstream.ChangeModify}
		if len(oldV) == 0 || jsonscan.IsNull(oldV) {
			item.Kind = agentstream.ChangeAdd
		}
		diff, trunc := unifiedDiff(path, strBytes(&bufs[0], oldV), strBytes(&bufs[1], newV), item.Kind == agentstream.ChangeAdd)
		item.Diff = diff
		fc.Truncated = fc.Truncated || trunc
		fc.Changes = append(fc.Changes, item)
	}
	return fc
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

// clipText is fields.Text decoding into the scratch buffer buf, so that a
// large output costs one allocation, the string kept.
func clipText(buf *[]byte, v []byte) (text string, truncated bool, chars int64) {
	if len(v) == 0 || v[0] != '"' {
		return "", false, 0
	}
	out, total, trunc, ok := jsonscan.AppendStringClip((*buf)[:0], v, agentstream.MaxText)
	if !ok {
		return "", false, 0
	}
	*buf = out[:0]
	return string(out), trunc, int64(total)
}

// strBytes is fields.Str decoding into the scratch buffer buf: the decoded
// bytes, valid until buf is used again.
func strBytes(buf *[]byte, v []byte) []byte {
	if len(v) == 0 || v[0] != '"' {
		return nil
	}
	out, ok := jsonscan.AppendString((*buf)[:0], v)
	if !ok {
		return nil
	}
	*buf = out[:0]
	return out
}
