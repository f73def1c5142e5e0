// Package pi is the adapter for the JSON events of the pi coding agent
// (`pi --print --mode json`, protocol pi-json): one AgentSessionEvent a
// line, discriminated by type. A session header names the session; each
// prompt runs as agent_start … agent_end, with a turn_start … turn_end per
// model round trip; messages come as message_start, message_update (the
// whole message so far, plus the delta in assistantMessageEvent) and
// message_end; tools as tool_execution_start, _update and _end.
package pi

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "pi"

// Decoder reads one pi stream. It is not safe for concurrent use.
type Decoder struct {
	started   bool
	inTurn    bool
	announced map[string]bool           // tool calls already given as tool.call
	edits     map[string]*filediff.Edit // edit calls awaiting their result
	lastText  string                    // the run's latest assistant text
	failure   string                    // the error of the run's latest assistant message
	stop      string                    // the stop reason of the run's latest assistant message
	compactBy string                    // the reason of the compaction under way
	deltas    fields.Deltas
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{announced: map[string]bool{}, edits: map[string]*filediff.Edit{}}
}

// lineKinds are the line types Decode maps.
var lineKinds = []string{
	"session", "agent_start", "agent_end", "turn_start", "turn_end", "message_start",
	"message_update", "message_end", "tool_execution_start", "tool_execution_update",
	"tool_execution_end", "auto_compaction_start", "auto_compaction_end",
	"auto_retry_start", "auto_retry_end",
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
	switch fields.Kind(fields.Unquoted(get("type")), lineKinds) {
	case "session":
		d.started = true
		return append(dst, agentstream.E(&agentstream.SessionStarted{
			Harness: Harness, SessionID: fields.Str(get("id")), Cwd: fields.Str(get("cwd")),
			Version: versionOf(get("version")),
		}))
	case "agent_start":
		dst = d.start(dst)
		d.inTurn = true
		d.lastText, d.failure, d.stop = "", "", ""
		return append(dst, agentstream.E(&agentstream.TurnStarted{}))
	case "agent_end":
		return d.end(dst)
	case "turn_start", "turn_end":
		// A model round trip within the prompt's run: its messages and
		// tools say what it did (Folded).
		return dst
	case "message_start":
		return dst
	case "message_update":
		return d.update(dst, get("assistantMessageEvent"))
	case "message_end":
		return d.message(dst, get("message"))
	case "tool_execution_start":
		return d.toolCall(dst, fields.Str(get("toolCallId")), fields.Str(get("toolName")), get("args"))
	case "tool_execution_update":
		text, trunc := resultText(get("partialResult"))
		if text == "" {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.ToolOutput{CallID: fields.Str(get("toolCallId")), Channel: "stdout", Text: text, Truncated: trunc}))
	case "tool_execution_end":
		return d.toolResult(dst, line)
	case "auto_compaction_start":
		d.compactBy = fields.Str(get("reason"))
		return append(dst, agentstream.E(&agentstream.Progress{Activity: agentstream.ActivityCompacting}))
	case "auto_compaction_end":
		if fields.Bool(get("aborted")) {
			return append(dst, agentstream.E(&agentstream.Warning{Message: "compaction aborted"}))
		}
		c := &agentstream.Compaction{Trigger: d.compactBy, PreTokens: fields.Int(jsonscan.GetPath(line, "result", "tokensBefore"))}
		if c.Trigger == "" {
			c.Trigger = "auto"
		}
		d.compactBy = ""
		return append(dst, agentstream.E(c))
	case "auto_retry_start":
		r := &agentstream.Retry{
			Attempt: fields.Int(get("attempt")), MaxRetries: fields.Int(get("maxAttempts")),
			DelayMs: fields.Float(get("delayMs")),
		}
		r.Error, _ = agentstream.Clip(fields.Str(get("errorMessage")), agentstream.MaxText)
		return append(dst, agentstream.E(r))
	case "auto_retry_end":
		if b, ok := jsonscan.Bool(get("success")); ok && !b {
			msg, _ := agentstream.Clip("retries exhausted: "+fields.Str(get("finalError")), agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.Error{Message: strings.TrimSuffix(msg, ": "), ErrorType: "retry"}))
		}
		return dst
	}
	return append(dst, fields.Raw(line))
}

// End appends nothing: the runner ends a run that printed no agent_end.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

func versionOf(v []byte) string {
	if s := fields.Str(v); s != "" {
		return s
	}
	if len(v) > 0 && !jsonscan.IsNull(v) && v[0] != '{' && v[0] != '[' {
		return string(v)
	}
	return ""
}

// start announces the session at the first event of a stream without a
// session header.
func (d *Decoder) start(dst []agentstream.Event) []agentstream.Event {
	if d.started {
		return dst
	}
	d.started = true
	return append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness}))
}

// end maps agent_end: the prompt's run ended, failed when its last
// assistant message did.
func (d *Decoder) end(dst []agentstream.Event) []agentstream.Event {
	dst = d.start(dst)
	e := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, StopReason: d.stop, Summary: d.lastText}
	reason := agentstream.TurnOK
	switch d.stop {
	case "error":
		e.Status, reason = agentstream.StatusFailed, agentstream.TurnError
		e.Error = d.failure
		if e.Error == "" {
			e.Error = "error"
		}
	case "aborted":
		e.Status, reason = agentstream.StatusCancelled, agentstream.TurnInterrupt
		e.Error = "aborted"
	}
	if !d.inTurn {
		dst = append(dst, agentstream.E(&agentstream.TurnStarted{}))
	}
	d.inTurn = false
	return append(dst, agentstream.E(&agentstream.TurnEnded{Reason: reason}), agentstream.E(e))
}

// update maps a message_update's event: text and thinking deltas are live;
// the other events (a block's start or end, a tool call's input) are
// carried whole by message_end.
func (d *Decoder) update(dst []agentstream.Event, ev []byte) []agentstream.Event {
	delta := fields.Str(jsonscan.Get(ev, "delta"))
	if delta == "" {
		return dst
	}
	switch fields.Str(jsonscan.Get(ev, "type")) {
	case "text_delta":
		return append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, delta)))
	case "thinking_delta":
		return append(dst, agentstream.E(d.deltas.Thinking(delta)))
	}
	return dst
}

// message maps message_end: the whole message. A user's is a message; an
// assistant's gives its thinking, text, tool calls and the call's usage;
// a tool result's is given by tool_execution_end (Folded).
func (d *Decoder) message(dst []agentstream.Event, m []byte) []agentstream.Event {
	dst = d.start(dst)
	role := fields.Str(jsonscan.Get(m, "role"))
	content := jsonscan.Get(m, "content")
	switch role {
	case "user":
		text, trunc := textOf(content, "text")
		if text == "" {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
	case "assistant":
	default:
		return dst
	}
	if t, trunc := textOf(content, "thinking"); t != "" {
		dst = append(dst, agentstream.E(&agentstream.Thinking{Text: t, Truncated: trunc}))
	}
	if t, trunc := textOf(content, "text"); t != "" {
		d.lastText = t
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: t, Truncated: trunc}))
	}
	arr, _ := jsonscan.Array(content)
	for arr.Next() {
		b := arr.Value()
		if fields.Str(jsonscan.Get(b, "type")) == "toolCall" {
			dst = d.toolCall(dst, fields.Str(jsonscan.Get(b, "id")), fields.Str(jsonscan.Get(b, "name")), jsonscan.Get(b, "arguments"))
		}
	}
	d.stop = fields.Str(jsonscan.Get(m, "stopReason"))
	if d.stop == "error" {
		d.failure, _ = agentstream.Clip(fields.Str(jsonscan.Get(m, "errorMessage")), agentstream.MaxText)
		msg := d.failure
		if msg == "" {
			msg = "model call failed"
		}
		dst = append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: "api"}))
	}
	if u := usageOf(m); u != nil {
		dst = append(dst, agentstream.E(u))
	}
	return dst
}

// textOf joins the blocks of one type (text, thinking) of a content array,
// or returns a content given as a string.
func textOf(content []byte, typ string) (string, bool) {
	if len(content) > 0 && content[0] == '"' {
		if typ != "text" {
			return "", false
		}
		t, trunc, _ := fields.Text(content)
		return t, trunc
	}
	var parts []string
	arr, _ := jsonscan.Array(content)
	for arr.Next() {
		b := arr.Value()
		if fields.Str(jsonscan.Get(b, "type")) != typ {
			continue
		}
		if s := fields.Str(jsonscan.Get(b, typ)); s != "" {
			parts = append(parts, s)
		}
	}
	return agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
}

// usageOf reads an assistant message's usage: one model call, with its
// cost.
func usageOf(m []byte) *agentstream.Usage {
	u := jsonscan.Get(m, "usage")
	if len(u) == 0 || u[0] != '{' {
		return nil
	}
	p := &agentstream.Usage{
		Scope:               agentstream.ScopeCall,
		Model:               fields.Str(jsonscan.Get(m, "model")),
		InputTokens:         fields.Int(jsonscan.Get(u, "input")),
		OutputTokens:        fields.Int(jsonscan.Get(u, "output")),
		CacheReadTokens:     fields.Int(jsonscan.Get(u, "cacheRead")),
		CacheCreationTokens: fields.Int(jsonscan.Get(u, "cacheWrite")),
		CostUSD:             fields.Float(jsonscan.GetPath(u, "cost", "total")),
	}
	if p.IsZero() {
		return nil
	}
	p.ClearUnpricedCost()
	p.ContextTokens = p.CallContext()
	return p
}

// toolCall announces a tool call once, from the assistant message that
// asked for it or from tool_execution_start, whichever comes first.
func (d *Decoder) toolCall(dst []agentstream.Event, id, name string, args []byte) []agentstream.Event {
	if id != "" && d.announced[id] {
		return dst
	}
	dst = d.start(dst)
	if id != "" {
		d.announced[id] = true
	}
	in, trunc := fields.Input(args)
	category, summary := describeTool(name, args)
	dst = append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary,
		DisplayName: fields.Display(category, name),
	}))
	if e := editOf(name, args); e != nil && id != "" && len(d.edits) < maxPendingEdits {
		d.edits[id] = e
	}
	return dst
}

// maxPendingEdits bounds how many edit calls awaiting their result keep
// their texts.
const maxPendingEdits = 16

// toolResult maps tool_execution_end: the result, and the file.change of a
// successful edit.
func (d *Decoder) toolResult(dst []agentstream.Event, line []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(line, "toolCallId"))
	name := fields.Str(jsonscan.Get(line, "toolName"))
	if !d.announced[id] {
		dst = d.toolCall(dst, id, name, nil)
	}
	delete(d.announced, id)
	result := jsonscan.Get(line, "result")
	r := &agentstream.ToolResult{CallID: id, Name: name, IsError: fields.Bool(jsonscan.Get(line, "isError"))}
	r.Output, r.Truncated = resultText(result)
	r.Characters = int64(agentstream.CountChars(r.Output))
	r.ExitCode = fields.Int(jsonscan.GetPath(result, "details", "exit_code"))
	if r.ExitCode == nil {
		r.ExitCode = fields.Int(jsonscan.GetPath(result, "details", "exitCode"))
	}
	dst = append(dst, agentstream.E(r))
	if e, ok := d.edits[id]; ok {
		delete(d.edits, id)
		if !r.IsError {
			dst = append(dst, agentstream.E(e.Change(id, false)))
		}
	}
	return dst
}

// resultText is the text of a tool result {content: [blocks]}, or of a
// string.
func resultText(v []byte) (string, bool) {
	if len(v) > 0 && v[0] == '"' {
		t, trunc, _ := fields.Text(v)
		return t, trunc
	}
	return textOf(jsonscan.Get(v, "content"), "text")
}

// Claims reports whether lines are pi's JSON events: a line whose type is
// one of pi's own (session with a version, agent_start, turn_start,
// message_start with a message, tool_execution_start).
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		switch fields.Str(jsonscan.Get(l, "type")) {
		case "agent_start", "auto_compaction_start", "auto_retry_start":
			return true
		case "session":
			return len(jsonscan.Get(l, "version")) > 0 && len(jsonscan.Get(l, "id")) > 0
		case "message_start", "message_end", "message_update", "turn_end":
			return len(jsonscan.GetPath(l, "message", "role")) > 0
		case "tool_execution_start", "tool_execution_end":
			return len(jsonscan.Get(l, "toolCallId")) > 0
		}
	}
	return false
}

// Folded lists the native line types of pi whose lines may give no event
// of their own, with where what they say goes.
var Folded = map[string]string{
	"turn_start":           "a model round trip's start within the prompt's run: its messages and tools say what it did",
	"turn_end":             "a model round trip's end, repeating its message and tool results",
	"message_start":        "a message's start: message_end carries it whole",
	"message_update":       "a block's start or end or a tool call's input, which message_end carries whole (text and thinking deltas give live events)",
	"message_end":          "a tool result's message, which tool_execution_end gives",
	"auto_retry_end":       "a retry that succeeded: the run that follows says so",
	"tool_execution_start": "a call its assistant message already announced",
}
