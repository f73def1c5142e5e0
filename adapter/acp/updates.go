package acp

import (
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// updateOf is what an update object (or a permission request's toolCall)
// holds, as raw JSON values.
type updateOf struct {
	kind, content, messageID, toolCallID, toolKind, title, rawInput, rawOutput []byte
	status, meta, entries, commands, modeID, currentModeID, configOptions      []byte
	used, size, cost                                                           []byte

	ct contentOf // the content, when it is an array

	block     bool   // the content is an object: a chunk's content block
	blockType []byte // its type
	blockText string // its text, decoded
}

// scratch is decoding space a Decoder reuses from line to line.
type scratch struct {
	text  []byte   // a text being decoded: a tool output, a chunk, a call id
	diff  []byte   // the texts of a content's diffs, decoded one after another
	diffs []diffOf // a content's diffs
}

// parse reads the update object v.
func (u *updateOf) parse(v []byte, s *scratch) {
	obj, _ := jsonscan.Object(v)
	u.read(&obj, s)
}

// read reads the members of an update object from its iterator, scanning
// each value once: the content is read in place, its texts decoded where
// they are scanned, using the scratch space s.
func (u *updateOf) read(obj *jsonscan.Obj, s *scratch) {
	for obj.NextKey() {
		if string(obj.Key()) == "content" {
			u.readContent(obj, s)
			continue
		}
		val := obj.Value()
		switch string(obj.Key()) {
		case "sessionUpdate":
			u.kind = val
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

// readContent reads the current member of obj, the update's content: a
// tool call's content array, or a chunk's content block, whose type and
// text are kept as blockText reads them.
func (u *updateOf) readContent(obj *jsonscan.Obj, s *scratch) {
	u.ct = contentOf{}
	u.block, u.blockType, u.blockText = false, nil, ""
	if arr, ok := obj.Array(); ok {
		u.ct = contentArr(&arr, s)
		obj.LeaveArray(&arr)
	} else if b, ok := obj.Object(); ok {
		for b.NextKey() {
			switch string(b.Key()) {
			case "type":
				u.blockType = b.Value()
			case "text":
				u.blockText, _ = fields.StrMember(&b, &s.text)
			}
		}
		obj.LeaveObject(&b)
		u.block = true
	}
	u.content = obj.Value()
}

// update maps one session/update (v is its "update" object).
func (d *Decoder) update(dst []agentstream.Event, line []byte, u *updateOf, sessionID []byte) []agentstream.Event {
	if !d.started {
		dst = d.ensureStarted(dst, fields.Str(sessionID))
	}
	replay := d.replay
	kind := string(fields.Unquoted(u.kind))
	if kind == "agent_message_chunk" {
		switch fields.Str(jsonscan.Get(u.meta, "source")) {
		case "background_task_completed":
			// Qwen Code's note that a background task ended, between turns
			// or in one: it stays where it comes.
			return d.backgroundEnded(dst, u, replay)
		case "background_notification":
			// The same note as the message that starts the turn Qwen Code
			// runs for it.
			dst = d.openTurn(dst, replay)
			dst = d.flush(dst)
			return d.chunk(dst, textUser, u, replay)
		}
	}
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
		dst = d.openTurn(dst, replay)
	}
	start := len(dst)
	switch kind {
	case "agent_message_chunk":
		dst = d.chunk(dst, textAgent, u, replay)
		// Qwen Code gives a model call's usage on its last chunk.
		if mu := jsonscan.Get(u.meta, "usage"); len(mu) > 0 && mu[0] == '{' {
			cu := promptUsage(mu)
			cu.Scope = agentstream.ScopeCall
			dst = append(dst, agentstream.E(cu))
		}
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

// backgroundEnded maps Qwen Code's note that a background task ended
// (_meta.backgroundTask: taskId, status, kind, toolUseId, description).
func (d *Decoder) backgroundEnded(dst []agentstream.Event, u *updateOf, replay bool) []agentstream.Event {
	dst = d.flush(dst)
	bt := jsonscan.Get(u.meta, "backgroundTask")
	text := u.blockText
	if !u.block {
		text = blockText(u.content)
	}
	b := &agentstream.SessionBackground{
		TaskID:      fields.Str(jsonscan.Get(bt, "taskId")),
		Kind:        fields.Str(jsonscan.Get(bt, "kind")),
		Status:      fields.Str(jsonscan.Get(bt, "status")),
		Description: clipped(fields.Str(jsonscan.Get(bt, "description"))),
		Summary:     clipped(text),
		CallID:      fields.Str(jsonscan.Get(bt, "toolUseId")),
	}
	return append(dst, agentstream.Event{Payload: b, Replay: replay})
}

// clipped is s cut to the longest text an event holds.
func clipped(s string) string {
	s, _ = agentstream.Clip(s, agentstream.MaxText)
	return s
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
	id := fields.Unquoted(u.messageID)
	if d.open != kind || d.openReplay != replay || (len(id) > 0 && d.openID != "" && string(id) != d.openID) {
		dst = d.flush(dst)
		d.open, d.openReplay = kind, replay
	}
	if len(id) > 0 && string(id) != d.openID {
		d.openID = string(id)
	}
	var s string
	if u.block && string(fields.Unquoted(u.blockType)) == "text" {
		s = u.blockText
	} else {
		s = blockText(u.content)
	}
	if s == "" || d.text.Whole(s) {
		return dst
	}
	d.text.Add(s, time.Time{})
	s, _ = agentstream.Clip(s, agentstream.MaxText)
	var p agentstream.Payload
	switch kind {
	case textThought:
		p = d.deltas.Thinking(s)
	case textUser:
		p = d.deltas.Message(agentstream.RoleUser, s)
	default:
		p = d.deltas.Message(agentstream.RoleAssistant, s)
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
	switch string(fields.Unquoted(typ)) {
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
	id, kind, title, meta string
	input                 []byte
	announced, done       bool
	waiting               bool // in the decoder's waiting list
}

// tool returns what the decoder knows of the call whose raw JSON id is v,
// as fields.Str decodes it; a known call's id costs no allocation.
func (d *Decoder) tool(v []byte) *tool {
	id, _ := jsonscan.AppendString(d.scratch.text[:0], v)
	d.scratch.text = id[:0]
	t, ok := d.tools[string(id)]
	if !ok {
		t = &tool{id: string(id)}
		d.tools[t.id] = t
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

// hasInput reports whether a call's raw input says anything: not absent,
// null or an empty object.
func hasInput(v []byte) bool {
	v = jsonscan.TrimSpace(v)
	if len(v) == 0 || jsonscan.IsNull(v) {
		return false
	}
	if v[0] == '{' {
		o, ok := jsonscan.Object(v)
		return !ok || o.Next()
	}
	return true
}

// announce appends the call's tool.call and marks it announced.
func (t *tool) announce(dst []agentstream.Event) []agentstream.Event {
	t.announced = true
	c := &agentstream.ToolCall{CallID: t.id, Name: t.name(), Input: "null", Category: agentstream.CategoryOther}
	if len(t.input) > 0 {
		c.Input, c.Truncated = fields.Input(t.input)
	}
	if cat, ok := categories[t.kind]; ok {
		c.Category = cat
	}
	switch t.meta { // the Claude agent's own tool names, where the kind says less
	case "Agent", "Task":
		c.Category = agentstream.CategoryDelegate
	case "TodoWrite":
		c.Category = agentstream.CategoryPlan
	}
	// The title is the label ACP defines for showing the call.
	c.Summary = fields.Summary(t.title)
	c.DisplayName = fields.Display(c.Category, c.Name)
	return append(dst, agentstream.E(c))
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
	t := d.tool(u.toolCallID)
	id := t.id
	t.merge(u)
	status := string(fields.Unquoted(u.status))
	if !t.announced {
		// Agents announce a call before its input is known (the Claude
		// agent's first tool_call has rawInput {}, Qwen's input comes in a
		// tool_call_update): the tool.call waits for the input, or for the
		// call's output or end, whichever comes first.
		if !hasInput(t.input) && status != "completed" && status != "failed" && u.ct.chars == 0 {
			if !t.waiting {
				t.waiting = true
				d.waiting = append(d.waiting, t)
			}
			return dst
		}
		dst = t.announce(dst)
	}
	if t.done {
		return dst
	}
	c, meta := &u.ct, u.meta
	switch status {
	case "completed", "failed":
		t.done = true
		r := &agentstream.ToolResult{CallID: id, Name: t.name(), IsError: status == "failed"}
		r.Output, r.Truncated, r.Characters = c.text, c.truncated, c.chars
		if r.Characters == 0 {
			r.Output, r.Truncated, r.Characters = rawOutput(u.rawOutput)
		}
		if code := jsonscan.GetPath(meta, "terminal_exit", "exit_code"); len(code) > 0 {
			r.ExitCode = fields.Int(code)
		}
		dst = append(dst, agentstream.E(r))
		if st := jsonscan.Get(u.rawOutput, "status"); !r.IsError && fields.Str(st) == "background" {
			// Qwen Code's agent tool answers as it launches its subagent in
			// the background.
			dst = append(dst, agentstream.E(&agentstream.SessionBackground{
				Kind: "agent", Status: "running", CallID: id,
				Description: clipped(fields.Str(jsonscan.Get(u.rawOutput, "taskDescription"))),
			}))
		}
		if !r.IsError && c.hasDiff {
			if fc := fileChange(id, c.diffs, d.scratch.diff); fc != nil {
				dst = append(dst, agentstream.E(fc))
			}
		}
	default:
		if c.chars > 0 {
			dst = append(dst, agentstream.E(&agentstream.ToolOutput{CallID: id, Channel: "stdout", Text: c.text, Truncated: c.truncated}))
		}
		if s, trunc, n := fields.Text(jsonscan.GetPath(meta, "terminal_output", "data")); n > 0 {
			dst = append(dst, agentstream.E(&agentstream.ToolOutput{CallID: id, Channel: "stdout", Text: s, Truncated: trunc}))
		}
	}
	return dst
}

// contentOf is what a tool call's content array holds: the text of its
// content blocks ({type:"content", content: ContentBlock}) joined, and its
// diffs. Diffs and terminals have their own events.
type contentOf struct {
	text      string
	truncated bool
	chars     int64
	hasDiff   bool     // an element has the type "diff"
	diffs     []diffOf // the elements that are diffs, read by their decoded keys
}

// diffOf is a diff of a tool call's content: its raw path and oldText, and
// where its decoded texts lie in the scratch space.
type diffOf struct {
	path, oldText []byte
	oldAt, newAt  span
}

// span is where a decoded text lies in a buffer.
type span struct{ from, to int }

// appendDiffText decodes the current member of o, when it is a string, at
// the end of s.diff; it returns the member's raw value and where its text
// lies.
func (s *scratch) appendDiffText(o *jsonscan.Obj) (raw []byte, at span) {
	from := len(s.diff)
	s.diff, _ = o.AppendString(s.diff)
	return o.Value(), span{from, len(s.diff)}
}

// contentArr reads a tool call's content, the array arr iterates, in one
// pass: the text of a content block is decoded and clipped where it is
// scanned, and the texts of diffs are decoded into s.diff.
func contentArr(arr *jsonscan.Arr, s *scratch) (c contentOf) {
	var parts []string
	single, singleTrunc := false, false // parts is one text, clipped when read
	s.diff, s.diffs = s.diff[:0], s.diffs[:0]
	for arr.NextElem() {
		var typ, diffType, inner, btyp, btext []byte
		var clipped fields.Clipped // btext, read in place
		var df diffOf
		obj, ok := arr.Object()
		if !ok {
			arr.Value()
			continue
		}
		mark := len(s.diff)
		// One pass over the element: the inner block is read in place. The
		// members of a diff are matched on their decoded keys, the others
		// on their raw keys; an escaped "type" counts for a diff only.
		for obj.NextKey() {
			switch {
			case string(obj.Key()) == "type":
				typ = obj.Value()
				diffType = typ
			case string(obj.Key()) == "content":
				btyp, btext, clipped = nil, nil, fields.Clipped{}
				if in, ok := obj.Object(); ok {
					for in.NextKey() {
						switch string(in.Key()) {
						case "type":
							btyp = in.Value()
						case "text":
							clipped, btext = fields.ClipRaw(&in, &s.text)
						}
					}
					obj.LeaveObject(&in)
				}
				inner = obj.Value()
			case obj.KeyIs("type"):
				diffType = obj.Value()
			case obj.KeyIs("path"):
				df.path = obj.Value()
			case obj.KeyIs("oldText"):
				df.oldText, df.oldAt = s.appendDiffText(&obj)
			case obj.KeyIs("newText"):
				_, df.newAt = s.appendDiffText(&obj)
			}
		}
		arr.LeaveObject(&obj)
		if string(fields.Unquoted(diffType)) == "diff" {
			s.diffs = append(s.diffs, df)
		} else {
			s.diff = s.diff[:mark]
		}
		switch string(fields.Unquoted(typ)) {
		case "diff":
			c.hasDiff = true
			continue
		case "content":
		default:
			continue
		}
		var text string
		var n int64
		isText, trunc := false, false
		if string(fields.Unquoted(btyp)) == "text" {
			text, trunc, n = clipped.Or(btext)
			isText = true
		} else {
			text = blockText(inner)
			n = int64(agentstream.CountChars(text))
		}
		if n == 0 {
			continue
		}
		single, singleTrunc = isText && len(parts) == 0, trunc
		parts = append(parts, text)
		c.chars += n
	}
	c.diffs = s.diffs
	if len(parts) == 0 {
		return c
	}
	if single && len(parts) == 1 {
		// One text, decoded and clipped to MaxText code points: joining
		// and clipping it again changes nothing.
		c.text, c.truncated = parts[0], singleTrunc
		return c
	}
	c.chars += int64(len(parts) - 1)
	c.text, c.truncated = agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
	c.truncated = c.truncated || c.chars > int64(agentstream.CountChars(c.text))
	return c
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

// fileChange returns the file.change of a call's diffs, whose texts lie in
// texts, or nil when there are none.
func fileChange(callID string, diffs []diffOf, texts []byte) *agentstream.FileChange {
	if len(diffs) == 0 {
		return nil
	}
	fc := &agentstream.FileChange{CallID: callID, Changes: make([]agentstream.FileChangeItem, 0, len(diffs))}
	for _, df := range diffs {
		path := fields.Str(df.path)
		kind := agentstream.ChangeModify
		if len(df.oldText) == 0 || jsonscan.IsNull(df.oldText) {
			kind = agentstream.ChangeAdd
		}
		oldText, newText := texts[df.oldAt.from:df.oldAt.to], texts[df.newAt.from:df.newAt.to]
		item, trunc := filediff.Texts(path, kind, string(oldText), string(newText))
		fc.Truncated = fc.Truncated || trunc
		fc.Changes = append(fc.Changes, item)
	}
	return fc
}
