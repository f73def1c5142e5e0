package codex

import (
	"encoding/base64"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// msgOf is what a legacy event message holds, as raw JSON values.
type msgOf struct {
	typ, message, text, delta, callID, command, stdout, stderr      []byte
	aggregated, exitCode, changes, success, server, tool, arguments []byte
	invocation, result, info, lastMessage, sessionID, model, query  []byte
	plan, chunk, stream, cwd                                        []byte
	flat                                                            bool // token_count with its counters at the top
}

// legacy maps a {"id","msg"} line of the pre-0.44 exec stream or of
// `codex proto`.
func (d *Decoder) legacy(dst []agentstream.Event, raw, v []byte) []agentstream.Event {
	var m msgOf
	obj, _ := jsonscan.Object(v)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "type":
			m.typ = v
		case "message":
			m.message = v
		case "text":
			m.text = v
		case "delta":
			m.delta = v
		case "call_id":
			m.callID = v
		case "command":
			m.command = v
		case "stdout":
			m.stdout = v
		case "stderr":
			m.stderr = v
		case "aggregated_output":
			m.aggregated = v
		case "exit_code":
			m.exitCode = v
		case "changes":
			m.changes = v
		case "success":
			m.success = v
		case "server":
			m.server = v
		case "tool":
			m.tool = v
		case "arguments":
			m.arguments = v
		case "invocation":
			m.invocation = v
		case "result":
			m.result = v
		case "info":
			m.info = v
		case "last_agent_message":
			m.lastMessage = v
		case "session_id":
			m.sessionID = v
		case "model":
			m.model = v
		case "query":
			m.query = v
		case "plan":
			m.plan = v
		case "chunk":
			m.chunk = v
		case "stream":
			m.stream = v
		case "cwd":
			m.cwd = v
		case "input_tokens", "output_tokens":
			m.flat = true
		}
	}
	callID := fields.Str(m.callID)
	switch fields.Str(m.typ) {
	case "session_configured":
		d.model = fields.Str(m.model)
		s := &agentstream.SessionStarted{Harness: Harness, Model: d.model, SessionID: fields.Str(m.sessionID)}
		if w, ok := agentstream.ContextWindow(s.Model); ok {
			s.ContextWindow = &w
		}
		return append(dst, agentstream.E(s))
	case "task_started":
		return d.startTurn(dst)
	case "task_complete":
		if text, _, n := fields.Text(m.lastMessage); n > 0 {
			d.summary = text
		}
		return d.endTurn(dst, agentstream.TurnOK, "")
	case "turn_aborted":
		return append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: agentstream.TurnInterrupt}))
	case "agent_message":
		text, trunc, n := fields.Text(m.message)
		if n == 0 {
			return dst
		}
		d.summary = text
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	case "user_message":
		text, trunc, n := fields.Text(m.message)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
	case "agent_message_delta":
		if s := fields.Str(m.delta); s != "" {
			return append(dst, agentstream.E(d.deltas.Message(agentstream.RoleAssistant, s)))
		}
		return dst
	case "agent_reasoning":
		text, trunc, n := fields.Text(m.text)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	case "agent_reasoning_delta":
		if s := fields.Str(m.delta); s != "" {
			return append(dst, agentstream.E(d.deltas.Thinking(s)))
		}
		return dst
	case "exec_command_begin":
		return d.legacyCall(dst, callID, nameCommand, &m)
	case "exec_command_output_delta":
		return d.outputDelta(dst, raw, callID, &m)
	case "exec_command_end":
		dst = d.ensureCall(dst, callID, nameCommand, &m)
		r := &agentstream.ToolResult{CallID: callID, Name: d.take(callID, nameCommand), ExitCode: fields.Int(m.exitCode)}
		r.IsError = r.ExitCode != nil && *r.ExitCode != 0
		out := m.aggregated
		if len(out) == 0 {
			r.Output, r.Truncated, r.Characters = joinOutput(m.stdout, m.stderr)
		} else {
			r.Output, r.Truncated, r.Characters = fields.Text(out)
		}
		return append(dst, agentstream.E(r))
	case "patch_apply_begin":
		dst = d.legacyCall(dst, callID, nameFiles, &m)
		if callID != "" {
			d.patches[callID] = patchOf(callID, m.changes)
		}
		return dst
	case "patch_apply_end":
		dst = d.ensureCall(dst, callID, nameFiles, &m)
		r := &agentstream.ToolResult{CallID: callID, Name: d.take(callID, nameFiles)}
		if b, ok := jsonscan.Bool(m.success); ok {
			r.IsError = !b
		}
		if fc := d.patches[callID]; fc != nil && !r.IsError && len(fc.Changes) > 0 {
			dst = append(dst, agentstream.E(fc))
		}
		delete(d.patches, callID)
		r.Output, r.Truncated, r.Characters = joinOutput(m.stdout, m.stderr)
		return append(dst, agentstream.E(r))
	case "mcp_tool_call_begin":
		return d.legacyCall(dst, callID, mcpName(&m), &m)
	case "mcp_tool_call_end":
		dst = d.ensureCall(dst, callID, mcpName(&m), &m)
		r := &agentstream.ToolResult{CallID: callID, Name: d.take(callID, mcpName(&m))}
		res := m.result
		if ok := jsonscan.Get(res, "Ok"); len(ok) > 0 {
			res = ok
		}
		if e := jsonscan.Get(res, "Err"); len(e) > 0 {
			r.IsError = true
			r.Output, r.Truncated, r.Characters = fields.Text(e)
			if r.Characters == 0 {
				r.Output, r.Truncated = fields.Input(e)
				r.Characters = int64(agentstream.CountChars(r.Output))
			}
		} else {
			r.IsError = fields.Bool(firstOf(res, "isError", "is_error"))
			r.Output, r.Truncated, r.Characters = mcpContent(res, &d.buf)
		}
		return append(dst, agentstream.E(r))
	case "web_search_begin":
		if fields.Str(m.query) == "" {
			// The query comes with web_search_end; the call waits for it.
			return dst
		}
		return d.legacyCall(dst, callID, nameWebSearch, &m)
	case "web_search_end":
		dst = d.ensureCall(dst, callID, nameWebSearch, &m)
		return append(dst, agentstream.E(&agentstream.ToolResult{CallID: callID, Name: d.take(callID, nameWebSearch)}))
	case "token_count":
		return d.tokenCount(dst, raw, v, &m)
	case "error":
		text, _, _ := fields.Text(m.message)
		return append(dst, agentstream.E(&agentstream.Error{Message: text}))
	case "stream_error", "background_event":
		msg := fields.Str(m.message)
		if r := parseRetry(msg); r != nil {
			return append(dst, agentstream.E(r))
		}
		text, _ := agentstream.Clip(msg, agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Warning{Message: text}))
	case "plan_update":
		return append(dst, agentstream.E(planOf(m.plan)))
	}
	return append(dst, fields.Raw(raw))
}

func mcpName(m *msgOf) string {
	server, tool := m.server, m.tool
	if len(m.invocation) > 0 {
		server, tool = jsonscan.Get(m.invocation, "server"), jsonscan.Get(m.invocation, "tool")
	}
	return toolName("mcp_tool_call", &itemOf{server: server, tool: tool})
}

// legacyCall emits the tool.call of a *_begin message.
func (d *Decoder) legacyCall(dst []agentstream.Event, callID, name string, m *msgOf) []agentstream.Event {
	if callID != "" {
		d.calls[callID] = name
	}
	return append(dst, agentstream.E(legacyToolCall(callID, name, m)))
}

// ensureCall emits the tool.call of an *_end message whose begin was not
// seen, so that every result has its call.
func (d *Decoder) ensureCall(dst []agentstream.Event, callID, name string, m *msgOf) []agentstream.Event {
	if _, ok := d.calls[callID]; ok {
		return dst
	}
	return append(dst, agentstream.E(legacyToolCall(callID, name, m)))
}

// take returns the name of a begun call and forgets it.
func (d *Decoder) take(callID, name string) string {
	if n, ok := d.calls[callID]; ok {
		delete(d.calls, callID)
		return n
	}
	return name
}

func legacyToolCall(callID, name string, m *msgOf) *agentstream.ToolCall {
	it := &itemOf{command: m.command, changes: m.changes, query: m.query, cwd: m.cwd}
	typ := name
	if name != nameCommand && name != nameFiles && name != nameWebSearch {
		typ = "mcp_tool_call"
		it.server, it.tool, it.arguments = m.server, m.tool, m.arguments
		if len(m.invocation) > 0 {
			it.server = jsonscan.Get(m.invocation, "server")
			it.tool = jsonscan.Get(m.invocation, "tool")
			it.arguments = jsonscan.Get(m.invocation, "arguments")
		}
	}
	return callOf(typ, callID, name, it)
}

// joinOutput gives a command's stdout then stderr as one output.
func joinOutput(stdout, stderr []byte) (string, bool, int64) {
	out, outTrunc, outN := fields.Text(stdout)
	errText, _, errN := fields.Text(stderr)
	if errN == 0 {
		return out, outTrunc, outN
	}
	if outN == 0 {
		return fields.Text(stderr)
	}
	chars := outN + 1 + errN
	s, trunc := agentstream.Clip(out+"\n"+errText, agentstream.MaxText)
	return s, trunc || chars > int64(agentstream.CountChars(s)), chars
}

// outputDelta maps exec_command_output_delta: live output of a running
// command, whose chunk is base64 (or, in some builds, an array of bytes).
func (d *Decoder) outputDelta(dst []agentstream.Event, raw []byte, callID string, m *msgOf) []agentstream.Event {
	var text []byte
	switch {
	case len(m.chunk) > 0 && m.chunk[0] == '"':
		s := fields.Str(m.chunk)
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b = []byte(s)
		}
		text = b
	case len(m.chunk) > 0 && m.chunk[0] == '[':
		arr, _ := jsonscan.Array(m.chunk)
		for arr.Next() {
			n, ok := jsonscan.Int(arr.Value())
			if !ok || n < 0 || n > 255 {
				return append(dst, fields.Raw(raw))
			}
			text = append(text, byte(n))
		}
	default:
		return append(dst, fields.Raw(raw))
	}
	if len(text) == 0 {
		return dst
	}
	ch := "stdout"
	if fields.Str(m.stream) == "stderr" {
		ch = "stderr"
	}
	s, trunc := agentstream.ClipBytes(text, agentstream.MaxText)
	s = strings.ToValidUTF8(s, "\uFFFD")
	return append(dst, agentstream.E(&agentstream.ToolOutput{CallID: callID, Channel: ch, Text: s, Truncated: trunc}))
}

// patchOf reads patch_apply_begin's changes, {path: {add|delete|update:
// {…}}}, as a file.change carrying the diffs.
func patchOf(callID string, changes []byte) *agentstream.FileChange {
	fc := &agentstream.FileChange{CallID: callID, Changes: []agentstream.FileChangeItem{}}
	obj, _ := jsonscan.Object(changes)
	for obj.Next() {
		path := unescapeKey(obj.Key())
		kinds, _ := jsonscan.Object(obj.Value())
		if !kinds.Next() {
			fc.Changes = append(fc.Changes, agentstream.FileChangeItem{Path: path, Kind: agentstream.ChangeModify})
			continue
		}
		kind, body := string(kinds.Key()), kinds.Value()
		move := fields.Str(jsonscan.Get(body, "move_path"))
		c := agentstream.FileChangeItem{Path: path, Kind: changeKind(kind, move), MovePath: move}
		if diff, trunc, n := fields.Text(jsonscan.Get(body, "unified_diff")); n > 0 {
			c.Diff = diff
			fc.Truncated = fc.Truncated || trunc
		}
		fc.Changes = append(fc.Changes, c)
	}
	return fc
}

// planOf maps plan_update's steps.
func planOf(v []byte) *agentstream.Plan {
	p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
	arr, _ := jsonscan.Array(v)
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "step"))
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

// tokenCount maps token_count: per-request usage (flat in Aug 2025, later
// info.last_token_usage) as call usage, and info.total_token_usage as the
// session's running total.
func (d *Decoder) tokenCount(dst []agentstream.Event, raw, v []byte, m *msgOf) []agentstream.Event {
	if m.flat {
		if u := callUsage(parseUsage(v), d.model); u != nil {
			return append(dst, agentstream.E(u))
		}
		return dst
	}
	if len(m.info) == 0 || jsonscan.IsNull(m.info) {
		return append(dst, fields.Raw(raw))
	}
	var last, total, window []byte
	obj, _ := jsonscan.Object(m.info)
	for obj.Next() {
		switch string(obj.Key()) {
		case "last_token_usage":
			last = obj.Value()
		case "total_token_usage":
			total = obj.Value()
		case "model_context_window":
			window = obj.Value()
		}
	}
	t := parseUsage(total)
	// A token_count that restates the same total (a rate-limit update)
	// is not a new request.
	repeat := len(total) > 0 && t.equal(d.lastTotal)
	if len(last) > 0 && !repeat {
		if u := callUsage(parseUsage(last), d.model); u != nil {
			dst = append(dst, agentstream.E(u))
		}
	}
	if len(total) > 0 && !repeat {
		d.lastTotal = t
		if u := sessionUsage(t); u != nil {
			u.ContextWindow = fields.Int(window)
			dst = append(dst, agentstream.E(u))
		}
	}
	return dst
}

// config maps the config summary a legacy exec printed first
// ({"model","provider"} or {"sandbox","approval","workdir",…}).
func (d *Decoder) config(dst []agentstream.Event, raw []byte) []agentstream.Event {
	s := &agentstream.SessionStarted{
		Harness:        Harness,
		Model:          fields.Str(jsonscan.Get(raw, "model")),
		Cwd:            fields.Str(jsonscan.Get(raw, "workdir")),
		PermissionMode: fields.Str(jsonscan.Get(raw, "sandbox")),
	}
	if s.Model != "" {
		d.model = s.Model
	}
	if w, ok := agentstream.ContextWindow(s.Model); ok {
		s.ContextWindow = &w
	}
	return append(dst, agentstream.E(s))
}
