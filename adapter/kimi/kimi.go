// Package kimi is the adapter for Kimi CLI's print mode (`kimi --print
// --output-format stream-json`, protocol kimi-json) and its successor
// kimi-code's `kimi -p … --output-format stream-json`: OpenAI-chat-shaped
// messages without a type, one a line ({"role":"assistant","content",
// "tool_calls"}, {"role":"tool","tool_call_id","content"}), meta lines of
// kimi-code ({"role":"meta","type":"system.version"|"session.resume_hint"}),
// and background-task notifications ({"id","category","type":"task.…"}).
// Kimi prints no usage and no end line: the runner ends the session.
package kimi

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "kimi"

// Decoder reads one Kimi stream. It is not safe for concurrent use.
type Decoder struct {
	started bool
	calls   map[string]string         // tool names by call id
	edits   map[string]*filediff.Edit // edit calls awaiting their result
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{calls: map[string]string{}, edits: map[string]*filediff.Edit{}}
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	line = jsonscan.TrimSpace(line)
	if len(line) == 0 {
		return dst
	}
	if line[0] != '{' || !jsonscan.Valid(line) {
		return append(dst, fields.Raw(line))
	}
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	switch role := fields.Str(get("role")); role {
	case "assistant":
		return d.assistant(d.start(dst, ""), line)
	case "user":
		text, trunc := contentText(get("content"))
		if text == "" {
			return d.start(dst, "")
		}
		return append(d.start(dst, ""), agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
	case "tool":
		return d.toolResult(d.start(dst, ""), line)
	case "meta":
		switch fields.Str(get("type")) {
		case "system.version":
			return d.start(dst, fields.Str(get("version")))
		case "session.resume_hint":
			if id := fields.Str(get("session_id")); id != "" {
				return append(d.start(dst, ""), agentstream.E(&agentstream.SessionUpdated{SessionID: id}))
			}
		}
	case "":
		if t := fields.Str(get("type")); strings.HasPrefix(t, "task.") && len(get("id")) > 0 {
			return append(d.start(dst, ""), agentstream.E(notification(line, t)))
		}
	}
	return append(dst, fields.Raw(line))
}

// End appends nothing.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// start announces the session at the stream's first line (Kimi prints no
// init; kimi-code's first line names its version).
func (d *Decoder) start(dst []agentstream.Event, version string) []agentstream.Event {
	if d.started {
		return dst
	}
	d.started = true
	return append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, Version: version}))
}

// assistant maps an assistant message: its thinking and text, then a
// tool.call per tool call.
func (d *Decoder) assistant(dst []agentstream.Event, line []byte) []agentstream.Event {
	content := jsonscan.Get(line, "content")
	if t, trunc := partsText(content, "think"); t != "" {
		dst = append(dst, agentstream.E(&agentstream.Thinking{Text: t, Truncated: trunc}))
	}
	if t, trunc := contentText(content); t != "" {
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: t, Truncated: trunc}))
	}
	arr, _ := jsonscan.Array(jsonscan.Get(line, "tool_calls"))
	for arr.Next() {
		c := arr.Value()
		id := fields.Str(jsonscan.Get(c, "id"))
		fn := jsonscan.Get(c, "function")
		name := fields.Str(jsonscan.Get(fn, "name"))
		args := arguments(jsonscan.Get(fn, "arguments"))
		in, trunc := fields.Input(args)
		category, summary := describeTool(name, args)
		dst = append(dst, agentstream.E(&agentstream.ToolCall{
			CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary,
			DisplayName: fields.Display(category, name),
		}))
		if p := plan(name, args); p != nil {
			dst = append(dst, agentstream.E(p))
		}
		if id != "" {
			d.calls[id] = name
			if e := editOf(name, args); e != nil && len(d.edits) < maxPendingEdits {
				d.edits[id] = e
			}
		}
	}
	return dst
}

// maxPendingEdits bounds how many edit calls awaiting their result keep
// their texts.
const maxPendingEdits = 16

// arguments returns a tool call's arguments as JSON: the JSON text the
// arguments string holds, or the string itself when it holds none.
func arguments(v []byte) []byte {
	if len(v) == 0 || v[0] != '"' {
		return v
	}
	s := fields.Str(v)
	if b := []byte(s); jsonscan.Valid(b) {
		return b
	}
	return v
}

// toolResult maps a tool message: the result of the call it names, and the
// file.change of a successful edit. Kimi marks a failed tool's output with
// an "ERROR:" or error system note; the message has no error flag.
func (d *Decoder) toolResult(dst []agentstream.Event, line []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(line, "tool_call_id"))
	name, known := d.calls[id]
	if !known {
		dst = append(dst, agentstream.E(&agentstream.ToolCall{CallID: id, Input: "null", Category: agentstream.CategoryOther}))
	}
	delete(d.calls, id)
	r := &agentstream.ToolResult{CallID: id, Name: name}
	r.Output, r.Truncated = contentText(jsonscan.Get(line, "content"))
	r.Characters = int64(agentstream.CountChars(r.Output))
	low := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.Output), "<system>")))
	r.IsError = strings.HasPrefix(low, "error")
	dst = append(dst, agentstream.E(r))
	if e, ok := d.edits[id]; ok {
		delete(d.edits, id)
		if !r.IsError {
			dst = append(dst, agentstream.E(e.Change(id, false)))
		}
	}
	return dst
}

// contentText is a message's text: its content when a string, else its
// text parts joined.
func contentText(v []byte) (string, bool) {
	if len(v) > 0 && v[0] == '"' {
		t, trunc, _ := fields.Text(v)
		return t, trunc
	}
	return partsText(v, "text")
}

// partsText joins the parts of one type of a content array: text parts'
// text, think parts' think.
func partsText(v []byte, typ string) (string, bool) {
	var parts []string
	arr, _ := jsonscan.Array(v)
	for arr.Next() {
		p := arr.Value()
		if fields.Str(jsonscan.Get(p, "type")) != typ {
			continue
		}
		if s := fields.Str(jsonscan.Get(p, typ)); s != "" {
			parts = append(parts, s)
		}
	}
	return agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
}

// notification maps a background task's notification to
// session.background: task.completed, task.failed, ….
func notification(line []byte, typ string) *agentstream.SessionBackground {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	b := &agentstream.SessionBackground{TaskID: fields.Str(get("id")), Kind: "other"}
	if k := fields.Str(get("source_kind")); k != "" {
		b.Kind = k
	}
	switch status := strings.TrimPrefix(typ, "task."); status {
	case "completed", "failed":
		b.Status = status
	case "cancelled", "killed", "stopped":
		b.Status = "stopped"
	default:
		b.Status = "running"
	}
	b.Description, _ = agentstream.Clip(fields.Str(get("title")), agentstream.MaxText)
	b.Summary, _ = agentstream.Clip(fields.Str(get("body")), agentstream.MaxText)
	return b
}

// Claims reports whether lines are Kimi's print mode: a line without a type
// whose role is assistant or tool in the chat shape (an assistant's content
// and no model or id of another dialect; a tool's tool_call_id), or a meta
// line of kimi-code.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		if len(l) == 0 || l[0] != '{' {
			continue
		}
		// The first JSON object decides.
		role := fields.Str(jsonscan.Get(l, "role"))
		if len(jsonscan.Get(l, "type")) > 0 && role != "meta" {
			return false
		}
		switch role {
		case "assistant":
			return len(jsonscan.Get(l, "content")) > 0 && len(jsonscan.Get(l, "model")) == 0 && len(jsonscan.Get(l, "jsonrpc")) == 0
		case "tool":
			return len(jsonscan.Get(l, "tool_call_id")) > 0
		case "meta":
			t := fields.Str(jsonscan.Get(l, "type"))
			return t == "system.version" || t == "session.resume_hint"
		}
		return false
	}
	return false
}
