package codex

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Phases of an item's lifecycle.
const (
	phaseStarted = iota
	phaseUpdated
	phaseCompleted
)

// itemOf is what an exec --json item holds, as raw JSON values. The text
// and the command output are also decoded where they are read, and an MCP
// result's content is read in place, so that a large one is scanned once.
type itemOf struct {
	id, typ, text, command, output, exitCode, status, changes []byte
	server, tool, arguments, result, errorV, query, action    []byte
	items, receivers, prompt, states, message, cwd            []byte
	textC, outputC                                            fields.Clipped
	content                                                   mcpParts // result's content
}

// Tool names of the built-in items, as tool.call and tool.result name them.
const (
	nameCommand   = "command_execution"
	nameFiles     = "file_change"
	nameWebSearch = "web_search"
)

// toolTypes are the types of the items that are tool calls.
var toolTypes = []string{nameCommand, nameFiles, "mcp_tool_call", nameWebSearch, "collab_tool_call"}

// toolType returns the type of a tool item as one of toolTypes, or "" when
// typ is not one, so that naming the tool does not allocate.
func toolType(typ []byte) string {
	for _, t := range toolTypes {
		if string(typ) == t {
			return t
		}
	}
	return ""
}

// readItem reads an item's members in place, each value once; buf is
// scratch space for decoding.
func readItem(obj *jsonscan.Obj, buf *[]byte) (it itemOf, itemType []byte) {
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "text":
			it.textC, it.text = fields.ClipRaw(obj, buf)
		case "aggregated_output":
			it.outputC, it.output = fields.ClipRaw(obj, buf)
		case "result":
			it.content = mcpParts{}
			if r, ok := obj.Object(); ok {
				it.content = readMCP(&r, buf)
				obj.LeaveObject(&r)
			}
			it.result = obj.Value()
		case "id":
			it.id = obj.Value()
		case "type":
			it.typ = obj.Value()
		case "item_type":
			itemType = obj.Value()
		case "command":
			it.command = obj.Value()
		case "exit_code":
			it.exitCode = obj.Value()
		case "status":
			it.status = obj.Value()
		case "changes":
			it.changes = obj.Value()
		case "server":
			it.server = obj.Value()
		case "tool":
			it.tool = obj.Value()
		case "arguments":
			it.arguments = obj.Value()
		case "error":
			it.errorV = obj.Value()
		case "query":
			it.query = obj.Value()
		case "action":
			it.action = obj.Value()
		case "items":
			it.items = obj.Value()
		case "receiver_thread_ids":
			it.receivers = obj.Value()
		case "prompt":
			it.prompt = obj.Value()
		case "agents_states":
			it.states = obj.Value()
		case "message":
			it.message = obj.Value()
		}
	}
	return it, itemType
}

// item maps item.started, item.updated and item.completed.
func (d *Decoder) item(dst []agentstream.Event, raw []byte, l *line, phase int) []agentstream.Event {
	if !l.itemRead {
		// Decode reads an item that is an object in place: this one is
		// absent or not an object.
		return append(dst, fields.Raw(raw))
	}
	it := &l.it
	typ := fields.Unquoted(it.typ)
	if len(typ) == 0 {
		typ = fields.Unquoted(l.itemType)
	}
	switch string(typ) {
	case "agent_message", "assistant_message":
		if phase != phaseCompleted {
			return dst
		}
		text, trunc, n := it.textC.Or(it.text)
		if n == 0 {
			return dst
		}
		d.summary = text
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	case "reasoning":
		if phase != phaseCompleted {
			return dst
		}
		text, trunc, n := it.textC.Or(it.text)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	case "plan":
		// Plan mode's proposed plan: markdown the agent wrote, streamed
		// first as item.plan.delta.
		if phase != phaseCompleted {
			return dst
		}
		text, trunc, _ := it.textC.Or(it.text)
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	case "todo_list":
		return d.todoList(dst, fields.Str(it.id), it.items, phase)
	case "error":
		msg, _, _ := fields.Text(it.message)
		return append(dst, agentstream.E(&agentstream.Warning{Message: msg}))
	}
	if t := toolType(typ); t != "" {
		return d.toolItem(dst, t, fields.Str(it.id), it, phase)
	}
	return append(dst, fields.Raw(raw))
}

// todoList maps a todo_list snapshot to a plan, skipping a snapshot equal
// to the one before it.
func (d *Decoder) todoList(dst []agentstream.Event, id string, items []byte, phase int) []agentstream.Event {
	p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
	var key strings.Builder
	arr, _ := jsonscan.Array(items)
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "text"))
		status := agentstream.StepPending
		if fields.Bool(jsonscan.Get(e, "completed")) {
			status = agentstream.StepCompleted
		}
		p.Steps = append(p.Steps, agentstream.PlanStep{Text: text, Status: status})
		key.WriteString(status)
		key.WriteByte(0)
		key.WriteString(text)
		key.WriteByte(0)
	}
	k := key.String()
	prev, seen := d.plans[id]
	if phase == phaseCompleted {
		delete(d.plans, id)
	} else {
		d.plans[id] = k
	}
	if seen && prev == k {
		return dst
	}
	return append(dst, agentstream.E(p))
}

// toolItem maps the items that are tool calls: the call when the item
// starts (or when it completes, if no start was seen), the result when it
// completes.
func (d *Decoder) toolItem(dst []agentstream.Event, typ, id string, it *itemOf, phase int) []agentstream.Event {
	name := d.items[id]
	called := name != ""
	if !called {
		name = toolName(typ, it)
	}
	if !called && phase != phaseCompleted && typ == "web_search" && fields.Str(it.query) == "" {
		// Newer builds start a search before its query is known: the call
		// waits for the completed item, which has it.
		return dst
	}
	if !called {
		dst = append(dst, agentstream.E(callOf(typ, id, name, it)))
		if id != "" {
			d.items[id] = name
		}
		if typ == "collab_tool_call" {
			dst = d.spawn(dst, id, it)
		}
	}
	if phase != phaseCompleted {
		return dst
	}
	delete(d.items, id)
	status := string(fields.Unquoted(it.status))
	r := &agentstream.ToolResult{CallID: id, Name: name, IsError: status == "failed" || status == "declined"}
	switch typ {
	case "command_execution":
		r.Output, r.Truncated, r.Characters = it.outputC.Or(it.output)
		r.ExitCode = fields.Int(it.exitCode)
		if r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
		if status == "declined" {
			dst = append(dst, agentstream.E(&agentstream.ToolDenied{CallID: id, Name: name, Reason: "declined"}))
		}
	case "file_change":
		fc, out := changesOf(id, it.changes)
		if !r.IsError && len(fc.Changes) > 0 {
			dst = append(dst, agentstream.E(fc))
		}
		r.Output, r.Truncated = agentstream.Clip(out, agentstream.MaxText)
		r.Characters = int64(agentstream.CountChars(out))
	case "mcp_tool_call":
		msg := fields.Str(jsonscan.Get(it.errorV, "message"))
		if msg == "" {
			msg = fields.Str(it.errorV)
		}
		if msg != "" {
			r.IsError = true
			r.Output, r.Truncated = agentstream.Clip(msg, agentstream.MaxText)
			r.Characters = int64(agentstream.CountChars(msg))
		} else {
			r.Output, r.Truncated, r.Characters = it.content.output(it.result)
		}
	case "collab_tool_call":
		out := collabOutput(it.states)
		r.Output, r.Truncated = agentstream.Clip(out, agentstream.MaxText)
		r.Characters = int64(agentstream.CountChars(out))
		dst = append(dst, agentstream.E(r))
		return d.collabDone(dst, it.states)
	}
	return append(dst, agentstream.E(r))
}

func toolName(typ string, it *itemOf) string {
	switch typ {
	case "mcp_tool_call":
		server, tool := fields.Str(it.server), fields.Str(it.tool)
		switch {
		case server == "":
			return tool
		case tool == "":
			return server
		}
		return server + "." + tool
	case "collab_tool_call":
		if t := fields.Str(it.tool); t != "" {
			return t
		}
	}
	return typ
}

// callOf is the tool.call of an item.
func callOf(typ, id, name string, it *itemOf) *agentstream.ToolCall {
	c := &agentstream.ToolCall{CallID: id, Name: name, Category: agentstream.CategoryOther}
	var input []byte
	switch typ {
	case "command_execution":
		input = object(member{"command", it.command}, member{"cwd", it.cwd})
		c.Category = agentstream.CategoryExecute
		c.Summary = fields.Summary(commandLine(it.command))
	case "file_change":
		input = object(member{"changes", it.changes})
		c.Category, c.Summary = describeChanges(it.changes)
	case "mcp_tool_call":
		input = it.arguments
		c.Category = agentstream.CategoryMCP
		c.Summary = fields.Str(it.server)
		if t := fields.Str(it.tool); t != "" {
			if c.Summary != "" {
				c.Summary += ": "
			}
			c.Summary += t
		}
		c.Summary = fields.Summary(c.Summary)
	case "web_search":
		input = object(member{"query", it.query}, member{"action", it.action})
		c.Category = agentstream.CategorySearch
		c.Summary = fields.Summary(fields.Str(it.query))
		switch fields.Str(jsonscan.Get(it.action, "type")) {
		case "open_page":
			c.Category = agentstream.CategoryFetch
			if u := fields.Summary(fields.Str(jsonscan.Get(it.action, "url"))); u != "" {
				c.Summary = u
			}
		case "find_in_page":
			if p := fields.Summary(fields.Str(jsonscan.Get(it.action, "pattern"))); p != "" {
				c.Summary = p
			}
		}
	case "collab_tool_call":
		input = object(member{"tool", it.tool}, member{"receiver_thread_ids", it.receivers}, member{"prompt", it.prompt})
		c.Category = agentstream.CategoryDelegate
		c.Summary = fields.Summary(fields.Str(it.prompt))
		if c.Summary == "" {
			c.Summary = fields.Summary(fields.Str(it.tool))
		}
	}
	c.Input, c.Truncated = fields.Input(input)
	c.DisplayName = fields.Display(c.Category, c.Name)
	return c
}

// member is one key and raw JSON value of an object to write.
type member struct {
	key   string
	value []byte
}

// object writes a JSON object of members, skipping absent values.
func object(members ...member) []byte {
	n := 2
	for _, m := range members {
		n += len(m.key) + len(m.value) + 4
	}
	dst := make([]byte, 0, n)
	dst = append(dst, '{')
	for _, m := range members {
		if len(m.value) == 0 {
			continue
		}
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = jsonscan.AppendQuote(dst, m.key)
		dst = append(dst, ':')
		dst = append(dst, m.value...)
	}
	return append(dst, '}')
}

// describeChanges gives a file_change's category and summary: the first
// path, and how many more.
func describeChanges(changes []byte) (category, summary string) {
	category = agentstream.CategoryEdit
	n, deletes := 0, 0
	first := ""
	each := func(path, kind string) {
		n++
		if kind == "delete" {
			deletes++
		}
		if first == "" {
			first = path
		}
	}
	if arr, ok := jsonscan.Array(changes); ok {
		for arr.Next() {
			e := arr.Value()
			each(fields.Str(jsonscan.Get(e, "path")), fields.Str(jsonscan.Get(e, "kind")))
		}
	} else if obj, ok := jsonscan.Object(changes); ok {
		for obj.Next() {
			path := unescapeKey(obj.Key())
			kind := ""
			if o, ok := jsonscan.Object(obj.Value()); ok && o.Next() {
				kind = string(o.Key())
			}
			each(path, kind)
		}
	}
	if n > 0 && deletes == n {
		category = agentstream.CategoryDelete
	}
	summary = fields.Summary(first)
	if n > 1 {
		summary += " (+" + strconv.Itoa(n-1) + " more)"
	}
	return category, summary
}

// unescapeKey decodes an object key as Obj.Key returns it (escaped, without
// quotes).
func unescapeKey(k []byte) string {
	b := make([]byte, 0, len(k)+2)
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, '"')
	s, _ := jsonscan.String(b)
	return s
}

// changeKind maps Codex's change kinds to the format's.
func changeKind(kind string, movePath string) string {
	switch {
	case movePath != "":
		return agentstream.ChangeRename
	case kind == "add":
		return agentstream.ChangeAdd
	case kind == "delete":
		return agentstream.ChangeDelete
	}
	return agentstream.ChangeModify
}

// changesOf reads the changes of a file_change item (an array of {path,
// kind}) as a file.change, and the text of its tool result: one
// "kind path" line per file.
func changesOf(callID string, changes []byte) (*agentstream.FileChange, string) {
	fc := &agentstream.FileChange{CallID: callID, Changes: []agentstream.FileChangeItem{}}
	var out strings.Builder
	arr, _ := jsonscan.Array(changes)
	for arr.Next() {
		e := arr.Value()
		path := fields.Str(jsonscan.Get(e, "path"))
		kind := fields.Str(jsonscan.Get(e, "kind"))
		if k := jsonscan.Get(e, "kind"); len(k) > 0 && k[0] == '{' {
			// Newer shapes: {"type":"update","move_path":…}.
			kind = fields.Str(jsonscan.Get(k, "type"))
		}
		move := fields.Str(jsonscan.Get(e, "move_path"))
		if move == "" {
			move = fields.Str(jsonscan.GetPath(e, "kind", "move_path"))
		}
		fc.Changes = append(fc.Changes, agentstream.FileChangeItem{Path: path, Kind: changeKind(kind, move), MovePath: move})
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(kind)
		out.WriteByte(' ')
		out.WriteString(path)
	}
	return fc, out.String()
}

// mcpParts is the content of an MCP result as read: its parts of text,
// their length in code points, and whether they are a single text already
// clipped as the output needs.
type mcpParts struct {
	parts       []string
	chars       int64
	single      bool
	singleTrunc bool
}

// readMCP reads the content blocks of an MCP result from its iterator, in
// one pass; buf is scratch space for decoding. The last content member is
// the one read, as jsonscan.Get finds it.
func readMCP(obj *jsonscan.Obj, buf *[]byte) mcpParts {
	var p mcpParts
	for obj.NextKey() {
		if !obj.KeyIs("content") {
			continue
		}
		p.parts, p.chars, p.single = p.parts[:0], 0, false
		arr, ok := obj.Array()
		if !ok {
			continue
		}
		for arr.NextElem() {
			var typ, text []byte
			var textC fields.Clipped
			if e, ok := arr.Object(); ok {
				for e.NextKey() {
					switch {
					case e.KeyIs("type"):
						typ = e.Value()
					case e.KeyIs("text"):
						textC, text = fields.ClipRaw(&e, buf)
					}
				}
				arr.LeaveObject(&e)
			}
			b := arr.Value()
			switch string(fields.Unquoted(typ)) {
			case "text", "":
				t, trunc, n := textC.Or(text)
				if n == 0 {
					continue
				}
				p.single, p.singleTrunc = len(p.parts) == 0, trunc
				p.parts = append(p.parts, t)
				p.chars += n
			case "image":
				s := "[image: " + fields.Str(firstOf(b, "mimeType", "mime_type")) + "]"
				p.single = false
				p.parts = append(p.parts, s)
				p.chars += int64(agentstream.CountChars(s))
			case "resource", "resource_link":
				s := "[resource: " + fields.Str(firstOf(b, "uri", "name")) + "]"
				if r := jsonscan.Get(b, "resource"); len(r) > 0 {
					s = "[resource: " + fields.Str(jsonscan.Get(r, "uri")) + "]"
				}
				p.single = false
				p.parts = append(p.parts, s)
				p.chars += int64(agentstream.CountChars(s))
			}
		}
		obj.LeaveArray(&arr)
	}
	return p
}

// output joins the text parts of the MCP result whose raw value is
// result, or gives its structured content as JSON when it has no text.
func (p *mcpParts) output(result []byte) (string, bool, int64) {
	if p.single && len(p.parts) == 1 {
		// One text, decoded and clipped to MaxText code points: joining
		// and clipping it again changes nothing.
		return p.parts[0], p.singleTrunc, p.chars
	}
	if len(p.parts) == 0 {
		sc := firstOf(result, "structured_content", "structuredContent")
		if len(sc) == 0 {
			return "", false, 0
		}
		s, trunc := fields.Input(sc)
		if trunc {
			return s, true, int64(len(sc))
		}
		return s, false, int64(agentstream.CountChars(s))
	}
	chars := p.chars
	if len(p.parts) > 1 {
		chars += int64(len(p.parts) - 1)
	}
	out, trunc := agentstream.Clip(strings.Join(p.parts, "\n"), agentstream.MaxText)
	return out, trunc || chars > int64(agentstream.CountChars(out)), chars
}

// mcpContent is the output of the MCP result whose raw value is result.
func mcpContent(result []byte, buf *[]byte) (string, bool, int64) {
	var p mcpParts
	if obj, ok := jsonscan.Object(result); ok {
		p = readMCP(&obj, buf)
	}
	return p.output(result)
}

func firstOf(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && !jsonscan.IsNull(v) {
			return v
		}
	}
	return nil
}

// spawn emits subagent started for each thread a spawn_agent call creates.
func (d *Decoder) spawn(dst []agentstream.Event, callID string, it *itemOf) []agentstream.Event {
	if fields.Str(it.tool) != "spawn_agent" {
		return dst
	}
	desc := fields.Summary(fields.Str(it.prompt))
	arr, _ := jsonscan.Array(it.receivers)
	for arr.Next() {
		thread := fields.Str(arr.Value())
		if thread == "" {
			continue
		}
		if _, ok := d.spawned[thread]; ok {
			continue
		}
		d.spawned[thread] = callID
		dst = append(dst, agentstream.E(&agentstream.Subagent{
			ID: thread, CallID: callID, Status: agentstream.SubagentStarted, Description: desc,
		}))
	}
	return dst
}

// collabOutput is the text of a collab call's result: one
// "thread: status: message" line per agent.
func collabOutput(states []byte) string {
	var out strings.Builder
	obj, _ := jsonscan.Object(states)
	for obj.Next() {
		status := fields.Str(jsonscan.Get(obj.Value(), "status"))
		msg := fields.Str(jsonscan.Get(obj.Value(), "message"))
		if out.Len() > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(unescapeKey(obj.Key()))
		out.WriteString(": ")
		out.WriteString(status)
		if msg != "" {
			out.WriteString(": ")
			out.WriteString(msg)
		}
	}
	return out.String()
}

// collabDone emits subagent finished or failed for each agent of a
// completed collab call that reached an end.
func (d *Decoder) collabDone(dst []agentstream.Event, states []byte) []agentstream.Event {
	obj, _ := jsonscan.Object(states)
	for obj.Next() {
		var sub string
		switch fields.Str(jsonscan.Get(obj.Value(), "status")) {
		case "completed", "shutdown":
			sub = agentstream.SubagentFinished
		case "errored", "failed", "not_found":
			sub = agentstream.SubagentFailed
		default:
			continue
		}
		thread := unescapeKey(obj.Key())
		if d.ended[thread] {
			continue
		}
		d.ended[thread] = true
		dst = append(dst, agentstream.E(&agentstream.Subagent{ID: thread, CallID: d.spawned[thread], Status: sub}))
	}
	return dst
}
