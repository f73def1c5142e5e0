package codex

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// RolloutDecoder reads a Codex session rollout (protocol codex-rollout), the
// file Codex keeps of each thread under ~/.codex/sessions: lines of
// {"timestamp","type","payload"}. The conversation is in its response_item
// lines (what the model was sent and gave); its event_msg lines give the
// turns, the token counts and the commands' exit codes, and restate the
// messages, which are then kept raw. It is not safe for concurrent use.
type RolloutDecoder struct {
	d *Decoder
	// done holds the calls whose result a CommandExecution item gave, so
	// that their function_call_output (the same output, as the model
	// read it) is kept raw.
	done map[string]bool
}

var _ agentstream.Decoder = (*RolloutDecoder)(nil)

// NewRolloutDecoder returns a RolloutDecoder for one file.
func NewRolloutDecoder() *RolloutDecoder {
	return &RolloutDecoder{d: NewDecoder(), done: map[string]bool{}}
}

// RolloutFolded lists the rollout lines that may give no event of their own.
var RolloutFolded = map[string]string{
	"event_msg/token_count": "a count that restates the running total (a rate-limit update) is not a new model call",
}

// RolloutDeliberate lists the rollout lines kept raw on purpose, each with
// the reason.
var RolloutDeliberate = map[string]string{
	"world_state":                        "the harness's picture of the environment (instructions, skills, shells), no part of the conversation",
	"token_usage_record":                 "a model call's usage, which the token_count after it gives too: each call is counted once",
	"turn_context":                       "the turn's settings; a model other than the last gives session.updated",
	"event_msg/thread_settings_applied":  "the thread's settings (model, approval policy, cwd), which session_meta and turn_context give",
	"event_msg/item_completed":           "a user or agent message or a reasoning summary its response_item gives; a CommandExecution gives the tool.result",
	"response_item/message":              "the developer's instructions and the context Codex writes itself as user messages (an `<environment_context>` block)",
	"response_item/function_call_output": "the output a CommandExecution item gave already, as the model read it",
}

// Decode appends the events of one line to dst.
func (r *RolloutDecoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, false)
	if !ok {
		return dst
	}
	var typ, payload, ts []byte
	obj, _ := jsonscan.Object(raw)
	for obj.Next() {
		switch string(obj.Key()) {
		case "type":
			typ = obj.Value()
		case "payload":
			payload = obj.Value()
		case "timestamp":
			ts = obj.Value()
		}
	}
	if !obj.Complete() || len(payload) == 0 || payload[0] != '{' {
		return append(dst, fields.Raw(raw))
	}
	start := len(dst)
	switch fields.Str(typ) {
	case "session_meta":
		dst = r.meta(dst, payload)
	case "turn_context":
		dst = r.context(dst, raw, payload)
	case "event_msg":
		dst = r.event(dst, raw, payload)
	case "response_item":
		dst = r.item(dst, raw, payload)
	default:
		// world_state, token_usage_record (each model call's usage, which
		// token_count gives too) and anything newer.
		dst = append(dst, fields.Raw(raw))
	}
	fields.Stamp(dst[start:], ts)
	return dst
}

// End appends nothing: a rollout cut short is ended by whoever reads it.
func (r *RolloutDecoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

// meta maps session_meta: the thread's id, working directory and CLI
// version. The model comes with the turn context.
func (r *RolloutDecoder) meta(dst []agentstream.Event, p []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(p, "id"))
	if id == "" {
		id = fields.Str(jsonscan.Get(p, "session_id"))
	}
	r.d.startThread(id)
	return append(dst, agentstream.E(&agentstream.SessionStarted{
		Harness:   Harness,
		SessionID: id,
		Cwd:       fields.Str(jsonscan.Get(p, "cwd")),
		Version:   fields.Str(jsonscan.Get(p, "cli_version")),
	}))
}

// context maps turn_context: a model other than the last one is a
// session.updated; the rest of the context is kept raw.
func (r *RolloutDecoder) context(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	model := fields.Str(jsonscan.Get(p, "model"))
	if model == "" || model == r.d.model {
		return append(dst, fields.Raw(raw))
	}
	r.d.model = model
	return append(dst, agentstream.E(&agentstream.SessionUpdated{Model: model}))
}

// event maps an event_msg line. Its turn, token and error messages are
// those of the legacy stream; a completed command gives its tool.result
// with the exit code.
func (r *RolloutDecoder) event(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	switch fields.Str(jsonscan.Get(p, "type")) {
	case "task_started", "task_complete", "turn_aborted", "token_count", "error", "stream_error", "background_event":
		return r.d.legacy(dst, raw, p)
	case "item_completed":
		it := jsonscan.Get(p, "item")
		if fields.Str(jsonscan.Get(it, "type")) == "CommandExecution" {
			return r.command(dst, raw, it)
		}
	}
	// The restated messages and reasoning (item_completed, agent_message,
	// user_message), the thread's settings and anything newer.
	return append(dst, fields.Raw(raw))
}

// command maps a CommandExecution item: the result of the call of its id.
func (r *RolloutDecoder) command(dst []agentstream.Event, raw, it []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(it, "id"))
	if id == "" {
		return append(dst, fields.Raw(raw))
	}
	dst = r.d.ensureCall(dst, id, nameCommand, &msgOf{command: jsonscan.Get(it, "command")})
	res := &agentstream.ToolResult{CallID: id, Name: r.d.take(id, nameCommand), ExitCode: fields.Int(jsonscan.Get(it, "exit_code"))}
	res.IsError = res.ExitCode != nil && *res.ExitCode != 0 || fields.Str(jsonscan.Get(it, "status")) == "failed"
	res.Output, res.Truncated, res.Characters = fields.Text(jsonscan.Get(it, "aggregated_output"))
	r.done[id] = true
	return append(dst, agentstream.E(res))
}

// item maps a response_item line: a message, a reasoning summary, a tool
// call or a tool's output.
func (r *RolloutDecoder) item(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	switch fields.Str(jsonscan.Get(p, "type")) {
	case "message":
		return r.message(dst, raw, p)
	case "reasoning":
		var texts []string
		arr, _ := jsonscan.Array(jsonscan.Get(p, "summary"))
		for arr.Next() {
			if s := fields.Str(jsonscan.Get(arr.Value(), "text")); s != "" {
				texts = append(texts, s)
			}
		}
		if len(texts) == 0 {
			return append(dst, fields.Raw(raw))
		}
		text, trunc := agentstream.Clip(strings.Join(texts, "\n\n"), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
	case "function_call", "custom_tool_call":
		return r.call(dst, raw, p)
	case "function_call_output", "custom_tool_call_output":
		return r.output(dst, raw, p)
	}
	return append(dst, fields.Raw(raw))
}

// message maps a message item. The developer's instructions and the user
// messages Codex writes itself (an <environment_context> block) are kept raw.
func (r *RolloutDecoder) message(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	role := fields.Str(jsonscan.Get(p, "role"))
	var b strings.Builder
	arr, _ := jsonscan.Array(jsonscan.Get(p, "content"))
	for arr.Next() {
		if s := fields.Str(jsonscan.Get(arr.Value(), "text")); s != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
	}
	whole := b.String()
	if whole == "" || (role != agentstream.RoleUser && role != agentstream.RoleAssistant) || role == agentstream.RoleUser && injected(whole) {
		return append(dst, fields.Raw(raw))
	}
	text, trunc := agentstream.Clip(whole, agentstream.MaxText)
	if role == agentstream.RoleAssistant {
		r.d.summary = text
	}
	return append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
}

// injected reports whether a user message is one Codex wrote: a single
// XML-tagged block such as <environment_context>…</environment_context>.
func injected(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<") || !strings.HasSuffix(s, ">") {
		return false
	}
	end := strings.IndexAny(s, "> \n")
	return end > 1 && strings.HasSuffix(s, "</"+s[1:end]+">")
}

// call maps a function_call (arguments a JSON string) or a custom_tool_call
// (its input free text, such as apply_patch's patch).
func (r *RolloutDecoder) call(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(p, "call_id"))
	name := fields.Str(jsonscan.Get(p, "name"))
	if id == "" || name == "" {
		return append(dst, fields.Raw(raw))
	}
	c := &agentstream.ToolCall{CallID: id, Name: name, Category: agentstream.CategoryOther}
	var input []byte
	if args := fields.Str(jsonscan.Get(p, "arguments")); args != "" && jsonscan.Valid([]byte(args)) {
		input = []byte(args)
	} else if v := jsonscan.Get(p, "input"); len(v) > 0 {
		input = object(member{"input", v})
	}
	switch name {
	case "exec_command", "shell", "local_shell", "container.exec":
		c.Category = agentstream.CategoryExecute
		cmd := jsonscan.Get(input, "cmd")
		if len(cmd) == 0 {
			cmd = jsonscan.Get(input, "command")
		}
		c.Summary = fields.Summary(commandLine(cmd))
	case "apply_patch":
		c.Category = agentstream.CategoryEdit
		if fc := patchChanges(id, fields.Str(jsonscan.Get(p, "input"))); fc != nil {
			r.d.patches[id] = fc
			c.Summary = fields.Summary(fc.Changes[0].Path)
		}
	}
	c.Input, c.Truncated = fields.Input(input)
	c.DisplayName = fields.Display(c.Category, c.Name)
	r.d.calls[id] = name
	return append(dst, agentstream.E(c))
}

// output maps a tool's output, unless a CommandExecution item gave it.
func (r *RolloutDecoder) output(dst []agentstream.Event, raw, p []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(p, "call_id"))
	if id == "" || r.done[id] {
		delete(r.done, id)
		return append(dst, fields.Raw(raw))
	}
	res := &agentstream.ToolResult{CallID: id, Name: r.d.take(id, "")}
	out := jsonscan.Get(p, "output")
	if len(out) > 0 && out[0] == '{' {
		if ok, found := jsonscan.Bool(jsonscan.Get(out, "success")); found {
			res.IsError = !ok
		}
		out = jsonscan.Get(out, "content")
	}
	res.Output, res.Truncated, res.Characters = fields.Text(out)
	if fc := r.d.patches[id]; fc != nil {
		delete(r.d.patches, id)
		if !res.IsError {
			dst = append(dst, agentstream.E(fc))
		}
	}
	return append(dst, agentstream.E(res))
}

// patchChanges reads the files of an apply_patch patch (*** Add File: p,
// *** Update File: p, *** Delete File: p, *** Move to: q), each with its
// lines as the diff; nil when it names none.
func patchChanges(callID, patch string) *agentstream.FileChange {
	fc := &agentstream.FileChange{CallID: callID}
	var body []string
	flush := func() {
		if n := len(fc.Changes); n > 0 && len(body) > 0 {
			fc.Changes[n-1].Diff, fc.Truncated = agentstream.Clip(strings.Join(body, "\n"), agentstream.MaxText)
		}
		body = body[:0]
	}
	for _, l := range strings.Split(patch, "\n") {
		kind, path, ok := "", "", false
		for _, m := range [...]struct{ prefix, kind string }{
			{"*** Add File: ", agentstream.ChangeAdd},
			{"*** Update File: ", agentstream.ChangeModify},
			{"*** Delete File: ", agentstream.ChangeDelete},
		} {
			if p, found := strings.CutPrefix(l, m.prefix); found {
				kind, path, ok = m.kind, strings.TrimSpace(p), true
			}
		}
		switch {
		case ok:
			flush()
			fc.Changes = append(fc.Changes, agentstream.FileChangeItem{Path: path, Kind: kind})
		case strings.HasPrefix(l, "*** Move to: ") && len(fc.Changes) > 0:
			c := &fc.Changes[len(fc.Changes)-1]
			c.MovePath, c.Kind = strings.TrimSpace(strings.TrimPrefix(l, "*** Move to: ")), agentstream.ChangeRename
		case strings.HasPrefix(l, "*** "):
			// *** Begin Patch, *** End Patch, *** End of File
		case len(fc.Changes) > 0:
			body = append(body, l)
		}
	}
	flush()
	if len(fc.Changes) == 0 {
		return nil
	}
	return fc
}

// ClaimsRollout reports whether the first line of a stream is a rollout's:
// {"type":"session_meta","payload":{…}}, which Codex writes first.
func ClaimsRollout(lines [][]byte) bool {
	if len(lines) == 0 {
		return false
	}
	obj, ok := jsonscan.Object(lines[0])
	if !ok {
		return false
	}
	var meta, payload bool
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "type":
			meta = fields.Str(v) == "session_meta"
		case "payload":
			payload = len(v) > 0 && v[0] == '{'
		}
	}
	return obj.Complete() && meta && payload
}
