// Package droid is the adapter for the stream-json output of Factory's Droid
// CLI (`droid exec --output-format stream-json`, protocol droid-json):
// system/init, message, tool_call, tool_result, error and completion lines,
// and the single result object of `--output-format json`.
package droid

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "droid"

// Decoder reads one Droid stream. It is not safe for concurrent use.
type Decoder struct {
	sessions map[string]bool
	init     *agentstream.SessionStarted
	calls    []pending // calls without a result, oldest first
	replied  bool      // an assistant message came since the last prompt or tool
	early    string    // the final text a completion showed before its message
	turn     int64
	active   bool   // events other than a turn's end since the last completion
	buf      []byte // scratch for decoding texts and outputs
}

// pending is a tool call waiting for its result.
type pending struct {
	id, toolID, name string
	edit             *filediff.Edit // the change an edit call describes
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{sessions: map[string]bool{}}
}

// lineOf is what a line's top level holds, as raw JSON values. The text
// and a tool's value are also decoded where they are read, so that a large
// one is scanned once.
type lineOf struct {
	typ, subtype, sessionID, role, text, timestamp, id, toolID, toolName []byte
	parameters, isError, value, errorV, message, source, finalText       []byte
	numTurns, durationMs, usage, result, durationMsSnake, numTurnsSnake  []byte
	isErrorSnake                                                         []byte
	textS                                                                string // text decoded, "" when not a string
	valueC                                                               fields.Clipped
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
		d.early = ""
		return append(dst, fields.Raw(line))
	}
	var l lineOf
	obj, _ := jsonscan.Object(line)
	// One pass over the line: the text and the value, which may be large,
	// are decoded as they are read.
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "text":
			l.textS, _ = fields.StrMember(&obj, &d.buf)
			l.text = obj.Value()
		case "value":
			l.valueC, l.value = fields.ClipRaw(&obj, &d.buf)
		case "type":
			l.typ = obj.Value()
		case "subtype":
			l.subtype = obj.Value()
		case "session_id":
			l.sessionID = obj.Value()
		case "role":
			l.role = obj.Value()
		case "timestamp":
			l.timestamp = obj.Value()
		case "id":
			l.id = obj.Value()
		case "toolId":
			l.toolID = obj.Value()
		case "toolName":
			l.toolName = obj.Value()
		case "parameters":
			l.parameters = obj.Value()
		case "isError":
			l.isError = obj.Value()
		case "is_error":
			l.isErrorSnake = obj.Value()
		case "error":
			l.errorV = obj.Value()
		case "message":
			l.message = obj.Value()
		case "source":
			l.source = obj.Value()
		case "finalText":
			l.finalText = obj.Value()
		case "numTurns":
			l.numTurns = obj.Value()
		case "num_turns":
			l.numTurnsSnake = obj.Value()
		case "durationMs":
			l.durationMs = obj.Value()
		case "duration_ms":
			l.durationMsSnake = obj.Value()
		case "usage":
			l.usage = obj.Value()
		case "result":
			l.result = obj.Value()
		}
	}
	if !obj.Complete() {
		d.early = ""
		return append(dst, fields.Raw(line))
	}
	early := d.early
	d.early = ""
	start := len(dst)
	switch string(fields.Unquoted(l.typ)) {
	case "system":
		if fields.Str(l.subtype) == "init" {
			dst = d.initLine(dst, line, &l)
		} else {
			dst = append(dst, fields.Raw(line))
		}
	case "message":
		dst = d.message(dst, line, &l, early)
	case "reasoning":
		text, trunc := agentstream.Clip(fields.Str(l.text), agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	case "tool_call":
		dst = d.toolCall(dst, &l)
	case "tool_result":
		dst = d.toolResult(dst, &l)
	case "error":
		msg, _ := agentstream.Clip(fields.Str(l.message), agentstream.MaxText)
		if msg == "" {
			msg, _ = agentstream.Clip(fields.Str(jsonscan.Get(l.errorV, "message")), agentstream.MaxText)
		}
		dst = append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: fields.Str(l.source)}))
	case "completion":
		dst = d.completion(dst, &l)
	case "result":
		dst = d.result(dst, &l)
	default:
		dst = append(dst, fields.Raw(line))
	}
	t := stamp(l.timestamp)
	for i := start; i < len(dst); i++ {
		if dst[i].Time.IsZero() {
			dst[i].Time = t
		}
		switch dst[i].Type() {
		case agentstream.TypeUsage, agentstream.TypeTurnEnded, agentstream.TypeSessionEnded:
		default:
			d.active = true
		}
	}
	return dst
}

// End appends nothing: Droid's completion is the end of its stream.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// stamp reads a timestamp: epoch milliseconds, or RFC 3339.
func stamp(v []byte) time.Time {
	if n, ok := jsonscan.Int(v); ok {
		if n < 1e12 || n > 1e14 {
			return time.Time{}
		}
		return time.UnixMilli(n).UTC()
	}
	return fields.Time(v)
}

// initLine maps system/init: session.started for a session id not seen
// before, session.updated with what changed for a repeated one.
func (d *Decoder) initLine(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	s := &agentstream.SessionStarted{
		Harness:   Harness,
		Model:     fields.Str(get("model")),
		Cwd:       fields.Str(get("cwd")),
		SessionID: fields.Str(l.sessionID),
		Tools:     fields.Strings(get("tools")),
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
	if s.Cwd != prev.Cwd {
		u.Cwd = s.Cwd
	}
	if !slices.Equal(s.Tools, prev.Tools) {
		u.Tools = s.Tools
	}
	return append(dst, agentstream.E(u))
}

// message maps a message line. An assistant message that repeats the final
// text a completion just showed (0.27.4 printed the completion first) is
// not shown twice.
func (d *Decoder) message(dst []agentstream.Event, line []byte, l *lineOf, early string) []agentstream.Event {
	var role string
	switch string(fields.Unquoted(l.role)) {
	case agentstream.RoleAssistant:
		role, d.replied = agentstream.RoleAssistant, true
	case agentstream.RoleUser:
		role, d.replied = agentstream.RoleUser, false
	case agentstream.RoleSystem:
		role, d.replied = agentstream.RoleSystem, false
	default:
		return append(dst, fields.Raw(line))
	}
	s := l.textS
	if s == "" || role == agentstream.RoleAssistant && early != "" && strings.HasSuffix(early, s) {
		return dst
	}
	text, trunc := agentstream.Clip(s, agentstream.MaxText)
	return append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
}

func (d *Decoder) toolCall(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	d.replied = false
	p := pending{id: fields.Str(l.id), toolID: fields.Str(l.toolID), name: fields.Str(l.toolName)}
	if p.name == "" {
		p.name = p.toolID
	}
	if len(d.calls) < maxPendingEdits {
		p.edit = editOf(p.name, l.parameters)
	}
	d.calls = append(d.calls, p)
	in, trunc := fields.Input(l.parameters)
	category, summary := describeTool(p.name, l.parameters)
	dst = append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: p.id, Name: p.name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, p.name),
	}))
	if p.name == "TodoWrite" {
		if plan := fields.TodoPlan(l.parameters, "content", nil); plan != nil {
			dst = append(dst, agentstream.E(plan))
		}
	}
	return dst
}

// take removes and returns the pending call a result answers: by id, else
// the oldest with the same tool id, else the oldest (one release printed
// results without their id).
func (d *Decoder) take(id, toolID string) (pending, bool) {
	at := -1
	for i, p := range d.calls {
		if id != "" && p.id == id {
			at = i
			break
		}
	}
	if at < 0 && id == "" {
		for i, p := range d.calls {
			if toolID != "" && p.toolID == toolID {
				at = i
				break
			}
		}
		if at < 0 && len(d.calls) > 0 {
			at = 0
		}
	}
	if at < 0 {
		return pending{}, false
	}
	p := d.calls[at]
	d.calls = append(d.calls[:at], d.calls[at+1:]...)
	return p, true
}

func (d *Decoder) toolResult(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	d.replied = false
	id, toolID := fields.Str(l.id), fields.Str(l.toolID)
	p, ok := d.take(id, toolID)
	if !ok {
		// A result for a call never seen: announce it, so that every
		// result has its call.
		p = pending{id: id, toolID: toolID, name: toolID}
		dst = append(dst, agentstream.E(&agentstream.ToolCall{
			CallID: id, Name: p.name, Input: "null", Category: category(p.name), DisplayName: fields.Display(category(p.name), p.name),
		}))
	}
	r := &agentstream.ToolResult{CallID: p.id, Name: p.name, IsError: fields.Bool(l.isError)}
	switch v := l.value; {
	case len(v) > 0 && v[0] == '"':
		r.Output, r.Truncated, r.Characters = l.valueC.Or(v)
	case len(v) > 0 && !jsonscan.IsNull(v):
		r.Output, r.Truncated, r.Characters = jsonText(v)
	}
	if len(l.errorV) > 0 && !jsonscan.IsNull(l.errorV) {
		r.IsError = true
		if r.Characters == 0 {
			msg := l.errorV
			if msg[0] == '{' {
				msg = jsonscan.Get(msg, "message")
			}
			r.Output, r.Truncated, r.Characters = fields.Text(msg)
		}
	}
	if p.name == "Execute" {
		r.ExitCode = exitCode(r.Output)
		if r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
	}
	dst = append(dst, agentstream.E(r))
	if p.edit != nil && !r.IsError {
		dst = append(dst, agentstream.E(p.edit.Change(p.id, p.name == "Create")))
	}
	return dst
}

// maxPendingEdits bounds how many calls awaiting their result keep an
// edit's texts.
const maxPendingEdits = 16

// editOf reads the change an edit tool's parameters describe: Edit's old
// and new texts, MultiEdit's replacements, Create's content.
func editOf(name string, params []byte) *filediff.Edit {
	if name != "Edit" && name != "MultiEdit" && name != "Create" {
		return nil
	}
	path := fields.Str(firstOf(params, "file_path", "path"))
	oldNew := func(v []byte) filediff.Fragment {
		return filediff.Fragment{Old: fields.Str(firstOf(v, "old_str", "old_string")), New: fields.Str(firstOf(v, "new_str", "new_string"))}
	}
	switch name {
	case "Edit":
		f := oldNew(params)
		return filediff.NewReplace(path, f.Old, f.New)
	case "MultiEdit":
		if len(params) > filediff.MaxInput {
			return &filediff.Edit{Path: path, TooLarge: true}
		}
		e := &filediff.Edit{Path: path}
		arr, _ := jsonscan.Array(jsonscan.Get(params, "edits"))
		for arr.Next() {
			e.Frags = append(e.Frags, oldNew(arr.Value()))
		}
		return e
	case "Create":
		return filediff.NewWrite(path, fields.Str(jsonscan.Get(params, "content")))
	}
	return nil
}

func firstOf(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && !jsonscan.IsNull(v) {
			return v
		}
	}
	return nil
}

// exitCode reads the "[Process exited with code N]" line Droid's Execute
// tool appends to its output.
func exitCode(out string) *int64 {
	const marker = "[Process exited with code "
	i := strings.LastIndex(out, marker)
	if i < 0 {
		return nil
	}
	rest := out[i+len(marker):]
	j := strings.IndexByte(rest, ']')
	if j < 0 {
		return nil
	}
	n, err := strconv.ParseInt(rest[:j], 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

// jsonText is the output of a tool whose value is not a string: the value
// as compact JSON.
func jsonText(v []byte) (string, bool, int64) {
	b, ok := jsonscan.AppendCompact(nil, v)
	if !ok {
		return "", false, 0
	}
	s, trunc := agentstream.ClipBytes(b, agentstream.MaxText)
	return s, trunc, int64(agentstream.CountChars(string(b)))
}

// completion maps the completion line that ends a run: session usage,
// turn.ended, session.ended. finalText repeats the streamed assistant
// text, so it is the summary; only when no assistant message came since the
// last prompt or tool (0.27.4 printed the completion before its message) is
// it shown as the message, and the copy that follows is dropped.
func (d *Decoder) completion(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	if final := fields.Str(l.finalText); final != "" && !d.replied {
		text, trunc := agentstream.Clip(final, agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
		d.early = final
	}
	d.replied = false
	dst = append(dst, agentstream.E(sessionUsage(l.usage, l.numTurns, l.durationMs)))
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion}
	end.Summary, end.Truncated, _ = fields.Text(l.finalText)
	return d.endTurn(dst, end, agentstream.TurnOK)
}

// result maps the single object of --output-format json, shaped like
// Claude Code's result.
func (d *Decoder) result(dst []agentstream.Event, l *lineOf) []agentstream.Event {
	dst = append(dst, agentstream.E(sessionUsage(l.usage, l.numTurnsSnake, l.durationMsSnake)))
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion}
	end.Summary, end.Truncated, _ = fields.Text(l.result)
	reason := agentstream.TurnOK
	if sub := fields.Str(l.subtype); sub != "success" || fields.Bool(l.isErrorSnake) {
		end.Status, reason = agentstream.StatusFailed, agentstream.TurnError
		switch {
		case sub != "" && sub != "success":
			end.Error = sub
		case end.Summary != "":
			end.Error = fields.Summary(end.Summary)
		default:
			end.Error = "error"
		}
	}
	return d.endTurn(dst, end, reason)
}

func (d *Decoder) endTurn(dst []agentstream.Event, end *agentstream.SessionEnded, reason string) []agentstream.Event {
	if d.active || d.turn == 0 {
		d.turn++
	}
	d.active = false
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// sessionUsage reads a run's usage: Anthropic-shaped snake_case counters
// (input excludes cache reads), or the camelCase ones of Droid's RPC
// surface.
func sessionUsage(usage, turns, durationMs []byte) *agentstream.Usage {
	u := &agentstream.Usage{Scope: agentstream.ScopeSession, Turns: fields.Int(turns), DurationMs: fields.Int(durationMs)}
	obj, _ := jsonscan.Object(usage)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "input_tokens", "inputTokens":
			u.InputTokens = fields.Int(v)
		case "output_tokens", "outputTokens":
			u.OutputTokens = fields.Int(v)
		case "cache_read_input_tokens", "cacheReadTokens", "cacheReadInputTokens":
			u.CacheReadTokens = fields.Int(v)
		case "cache_creation_input_tokens", "cacheCreationTokens", "cacheCreationInputTokens", "cacheWriteTokens":
			u.CacheCreationTokens = fields.Int(v)
		case "thinking_tokens", "thinkingTokens", "reasoning_tokens", "reasoningTokens":
			u.ReasoningTokens = fields.Int(v)
		}
	}
	return u
}

// Claims reports whether lines are Droid stream-json: a line of one of
// Droid's own types (message with role and text, tool_call with toolName,
// tool_result with toolId, completion with finalText), or a system/init
// with tools but none of the keys Claude Code, Amp or Qwen Code write
// (mcp_servers, uuid, apiKeySource, permissionMode, a version).
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		var typ, subtype []byte
		has := map[string]bool{}
		obj, ok := jsonscan.Object(l)
		if !ok {
			continue
		}
		for obj.Next() {
			k := string(obj.Key())
			switch k {
			case "type":
				typ = obj.Value()
			case "subtype":
				subtype = obj.Value()
			}
			has[k] = true
		}
		if obj.Err() != nil {
			continue
		}
		switch fields.Str(typ) {
		case "message":
			if has["role"] && has["text"] && has["session_id"] {
				return true
			}
		case "tool_call":
			if has["toolName"] && has["parameters"] && !has["tool_call"] {
				return true
			}
		case "tool_result":
			if has["toolId"] && (has["value"] || has["error"]) {
				return true
			}
		case "completion":
			if has["finalText"] {
				return true
			}
		case "system":
			if fields.Str(subtype) != "init" || !has["tools"] || !has["session_id"] {
				continue
			}
			foreign := false
			for k := range has {
				switch k {
				case "mcp_servers", "uuid", "apiKeySource", "permissionMode", "permission_mode", "slash_commands",
					"claude_code_version", "qwen_code_version", "amp_version", "agents", "output_style":
					foreign = true
				}
			}
			if !foreign {
				return true
			}
		}
	}
	return false
}

// Folded lists the native line types of droid whose lines may give no event
// of their own, with where what they say goes.
var Folded = map[string]string{
	"message": "an assistant message repeating the final text its completion line already gave",
}
