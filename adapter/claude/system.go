package claude

import (
	"slices"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

func (d *Decoder) system(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	switch fields.Str(f.subtype) {
	case "init":
		return d.initLine(dst, line, f)
	case "retry":
		if d.cfg.Harness == Qwen.Harness {
			return d.qwenRetry(dst, line)
		}
		return append(dst, fields.Raw(line))
	case "api_retry":
		return append(dst, agentstream.E(&agentstream.Retry{
			Attempt:    fields.Int(get("attempt")),
			MaxRetries: fields.Int(get("max_retries")),
			DelayMs:    fields.Float(get("retry_delay_ms")),
			Error:      fields.Str(get("error")),
			Status:     positive(fields.Int(get("error_status"))),
		}))
	case "compact_boundary":
		m := get("compact_metadata")
		if len(m) == 0 {
			m = get("compactMetadata")
		}
		c := &agentstream.Compaction{Trigger: fields.Str(jsonscan.Get(m, "trigger"))}
		c.PreTokens = fields.Int(firstOf(m, "pre_tokens", "preTokens"))
		c.PostTokens = fields.Int(firstOf(m, "post_tokens", "postTokens"))
		return append(dst, agentstream.E(c))
	case "hook_started", "hook_response":
		h := &agentstream.Hook{
			Event: fields.Str(firstOf(line, "hook_event", "hook_event_name")),
			Name:  fields.Str(get("hook_name")),
		}
		if h.Event == "" {
			h.Event, _, _ = strings.Cut(h.Name, ":")
		}
		if fields.Str(f.subtype) == "hook_started" {
			h.Status = agentstream.SubagentStarted
		} else {
			h.Status = agentstream.SubagentFinished
			h.Outcome = fields.Str(get("outcome"))
			out := fields.Str(get("output"))
			if out == "" {
				out = strings.TrimRight(fields.Str(get("stdout"))+"\n"+fields.Str(get("stderr")), "\n")
			}
			h.Output, h.Truncated = agentstream.Clip(out, agentstream.MaxText)
		}
		return append(dst, agentstream.E(h))
	case "task_started", "task_progress", "task_updated", "task_notification":
		b := task(line, fields.Str(f.subtype))
		dst = append(dst, agentstream.E(b))
		if b.CallID != "" && b.TaskID != "" {
			d.taskCall[b.TaskID] = b.CallID
		}
		return d.taskEnded(dst, b)
	case "status":
		return d.status(dst, line)
	case "thinking_tokens":
		return append(dst, agentstream.E(&agentstream.Progress{
			Activity: agentstream.ActivityThinking, Tokens: fields.Int(get("estimated_tokens")),
		}))
	case "background_tasks_changed":
		return append(dst, agentstream.E(&agentstream.SessionUpdated{BackgroundTasks: backgroundTasks(get("tasks"))}))
	case "model_refusal_fallback":
		fb := &agentstream.Fallback{
			From:    &agentstream.FallbackTarget{Harness: d.cfg.Harness, Model: fields.Str(get("original_model"))},
			To:      &agentstream.FallbackTarget{Harness: d.cfg.Harness, Model: fields.Str(get("fallback_model"))},
			Failure: "refusal",
		}
		if c := fields.Str(get("api_refusal_category")); c != "" {
			fb.Failure = "refusal: " + c
		}
		fb.Message, _, _ = fields.Text(firstOf(line, "content", "api_refusal_explanation"))
		return append(dst, agentstream.E(fb))
	case "permission_denied":
		reason := fields.Str(get("message"))
		if reason == "" {
			reason = fields.Str(get("decision_reason"))
		}
		return append(dst, agentstream.E(&agentstream.ToolDenied{
			CallID: fields.Str(get("tool_use_id")), Name: fields.Str(get("tool_name")), Reason: reason,
		}))
	}
	return append(dst, fields.Raw(line))
}

// status maps system/status: what Claude Code is busy with (a model
// request, a compaction), the permission mode when it changed, and the
// outcome of a compaction.
func (d *Decoder) status(dst []agentstream.Event, line []byte) []agentstream.Event {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	start := len(dst)
	if mode := fields.Str(firstOf(line, "permissionMode", "permission_mode")); mode != "" {
		dst = append(dst, agentstream.E(&agentstream.SessionUpdated{PermissionMode: mode}))
	}
	if msg := fields.Str(get("compact_error")); msg != "" || fields.Str(get("compact_result")) == "failed" {
		if msg == "" {
			msg = "compaction failed"
		}
		msg, _ = agentstream.Clip(msg, agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: "compaction"}))
	}
	activity := fields.Str(get("status"))
	if activity == "" {
		if len(dst) > start {
			return dst
		}
		activity = agentstream.ActivityIdle
	}
	return append(dst, agentstream.E(&agentstream.Progress{Activity: activity}))
}

// backgroundTasks reads the tasks of system/background_tasks_changed.
func backgroundTasks(v []byte) []agentstream.BackgroundTask {
	tasks := []agentstream.BackgroundTask{}
	arr, _ := jsonscan.Array(v)
	for arr.Next() {
		b := task(arr.Value(), "")
		tasks = append(tasks, agentstream.BackgroundTask{TaskID: b.TaskID, Kind: b.Kind, Description: b.Description})
	}
	return tasks
}

func firstOf(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && !jsonscan.IsNull(v) {
			return v
		}
	}
	return nil
}

func positive(v *int64) *int64 {
	if v == nil || *v <= 0 {
		return nil
	}
	return v
}

// task maps the task_* lifecycle lines to session.background.
func task(line []byte, subtype string) *agentstream.SessionBackground {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	b := &agentstream.SessionBackground{
		TaskID: fields.Str(get("task_id")),
		CallID: fields.Str(get("tool_use_id")),
	}
	b.Description, _ = agentstream.Clip(fields.Str(get("description")), agentstream.MaxText)
	b.Summary, _ = agentstream.Clip(fields.Str(get("summary")), agentstream.MaxText)
	switch tt := fields.Str(get("task_type")); {
	case strings.Contains(tt, "agent") || fields.Str(get("subagent_type")) != "":
		b.Kind = "subagent"
	case strings.Contains(tt, "workflow") || fields.Str(get("workflow_name")) != "":
		b.Kind = "workflow"
	case strings.Contains(tt, "bash") || strings.Contains(tt, "shell"):
		b.Kind = "shell"
	case strings.Contains(tt, "monitor"):
		b.Kind = "monitor"
	case tt != "":
		b.Kind = "other"
	}
	status := fields.Str(get("status"))
	if subtype == "task_updated" {
		status = fields.Str(jsonscan.GetPath(line, "patch", "status"))
	}
	switch subtype {
	case "task_started":
		b.Status = "started"
	case "task_progress":
		b.Status = "running"
	default:
		switch status {
		case "completed":
			b.Status = "completed"
		case "failed":
			b.Status = "failed"
		case "stopped", "killed", "cancelled":
			b.Status = "stopped"
		case "pending", "running", "paused":
			b.Status = "running"
		}
	}
	return b
}

// initLine maps system/init: session.started for a session id not seen
// before, session.updated with what changed for a repeated one.
func (d *Decoder) initLine(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	get := func(k string) []byte { return jsonscan.Get(line, k) }
	s := &agentstream.SessionStarted{
		Harness:        d.cfg.Harness,
		Model:          fields.Str(get("model")),
		Cwd:            fields.Str(get("cwd")),
		SessionID:      fields.Str(f.sessionID),
		Tools:          fields.Strings(get("tools")),
		Version:        fields.Str(get(d.cfg.VersionKey)),
		PermissionMode: fields.Str(firstOf(line, "permissionMode", "permission_mode")),
	}
	if w, ok := agentstream.ContextWindow(s.Model); ok {
		s.ContextWindow = &w
	}
	cmds := fields.Strings(get("slash_commands"))
	prev, prevCmds := d.init, d.commands
	d.init, d.commands = s, cmds
	if prev == nil || !d.sessions[s.SessionID] {
		d.sessions[s.SessionID] = true
		return append(dst, agentstream.E(s))
	}
	// A repeated init (a new turn or a resumed process) says what changed;
	// an update with every field null says nothing did. One that comes
	// while the main agent's turn has had no result starts a turn Claude
	// Code began by itself (a background task ended): the turn before it
	// ends here, and its result, held back, comes later.
	if d.active {
		d.active = false
		d.held++
		dst = append(dst,
			agentstream.E(&agentstream.TurnEnded{Turn: d.turn + 1, Reason: agentstream.TurnOK}),
			agentstream.E(&agentstream.TurnStarted{Turn: d.turn + 2}))
		d.turn++
	}
	u := &agentstream.SessionUpdated{}
	if s.Model != prev.Model {
		u.Model = s.Model
	}
	if s.PermissionMode != prev.PermissionMode {
		u.PermissionMode = s.PermissionMode
	}
	if s.Cwd != prev.Cwd {
		u.Cwd = s.Cwd
	}
	if !slices.Equal(s.Tools, prev.Tools) {
		u.Tools = s.Tools
	}
	if !slices.Equal(cmds, prevCmds) {
		u.Commands = cmds
	}
	return append(dst, agentstream.E(u))
}

// result maps the result line that ends a turn (and, in one-shot mode, the
// process): session usage, denials, turn.ended, session.ended.
func (d *Decoder) result(dst []agentstream.Event, line []byte) []agentstream.Event {
	var subtype, isError, result, errs, terminal, stopReason, usage, cost, turns, duration, denials, apiStatus []byte
	var sessionID, models []byte
	obj, _ := jsonscan.Object(line)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "subtype":
			subtype = v
		case "is_error":
			isError = v
		case "result":
			result = v
		case "errors":
			errs = v
		case "error":
			if len(errs) == 0 {
				errs = v
			}
		case "terminal_reason":
			terminal = v
		case "stop_reason":
			stopReason = v
		case "usage":
			usage = v
		case "total_cost_usd", "total_cost", "cost_usd":
			if len(cost) == 0 || string(obj.Key()) == "total_cost_usd" {
				cost = v
			}
		case "num_turns":
			turns = v
		case "duration_ms":
			duration = v
		case "permission_denials":
			denials = v
		case "api_error_status":
			apiStatus = v
		case "session_id":
			sessionID = v
		case "modelUsage":
			models = v
		}
	}
	if len(usage) > 0 || len(cost) > 0 || len(turns) > 0 || len(duration) > 0 {
		dst = append(dst, agentstream.E(d.sessionUsage(fields.Str(sessionID), usage, cost, turns, duration, models)))
	}
	if d.held > 0 {
		// The result of a turn already ended by the one Claude Code began
		// by itself: its totals and denials, and its failure, but neither
		// a turn end nor a session end of its own.
		d.held--
		dst = denied(dst, denials)
		if sub := fields.Str(subtype); sub != "success" || fields.Bool(isError) {
			text, _, _ := fields.Text(result)
			dst = append(dst, agentstream.E(&agentstream.Error{Message: resultError(errs, fields.Str(terminal), sub, text, apiStatus), ErrorType: sub}))
		}
		return dst
	}
	d.active = false
	dst = denied(dst, denials)
	sub := fields.Str(subtype)
	failed := sub != "success" || fields.Bool(isError)
	term := fields.Str(terminal)
	end := &agentstream.SessionEnded{
		Status:     agentstream.StatusSucceeded,
		StopReason: fields.Str(stopReason),
		Reason:     agentstream.ReasonCompletion,
	}
	end.Summary, end.Truncated, _ = fields.Text(result)
	turnReason := agentstream.TurnOK
	if failed {
		end.Status = agentstream.StatusFailed
		turnReason = agentstream.TurnError
		if strings.HasPrefix(term, "aborted") {
			end.Status = agentstream.StatusCancelled
			turnReason = agentstream.TurnInterrupt
		}
		end.Error = resultError(errs, term, sub, end.Summary, apiStatus)
	}
	d.turn++
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: turnReason}))
	return append(dst, agentstream.E(end))
}

// denied appends the tool.denied of a result's permission denials.
func denied(dst []agentstream.Event, denials []byte) []agentstream.Event {
	arr, _ := jsonscan.Array(denials)
	for arr.Next() {
		e := arr.Value()
		dst = append(dst, agentstream.E(&agentstream.ToolDenied{
			CallID: fields.Str(jsonscan.Get(e, "tool_use_id")),
			Name:   fields.Str(jsonscan.Get(e, "tool_name")),
			Reason: "permission denied",
		}))
	}
	return dst
}

// resultError says why a result failed: its errors, else its terminal
// reason, else its subtype, else its text.
func resultError(errs []byte, terminal, subtype, text string, apiStatus []byte) string {
	var msgs []string
	if len(errs) > 0 && errs[0] == '"' {
		msgs = append(msgs, fields.Str(errs))
	}
	if len(errs) > 0 && errs[0] == '{' { // Qwen Code: {"message": …}
		if s := fields.Str(jsonscan.Get(errs, "message")); s != "" {
			msgs = append(msgs, s)
		}
	}
	arr, _ := jsonscan.Array(errs)
	for arr.Next() {
		if s := fields.Str(arr.Value()); s != "" {
			msgs = append(msgs, s)
		}
	}
	msg := strings.Join(msgs, "; ")
	switch {
	case msg != "":
	case terminal != "" && terminal != "completed":
		msg = terminal
	case subtype != "success" && subtype != "":
		msg = subtype
	case text != "":
		msg = fields.Summary(text)
	default:
		msg = "error"
	}
	if n := fields.Int(apiStatus); n != nil && *n > 0 {
		msg += " (HTTP " + strconv.FormatInt(*n, 10) + ")"
	}
	s, _ := agentstream.Clip(msg, agentstream.MaxText)
	return s
}

func (d *Decoder) rateLimit(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	info := f.rateLimit
	q := &agentstream.Quota{
		Status:      fields.Str(jsonscan.Get(info, "status")),
		LimitType:   fields.Str(jsonscan.Get(info, "rateLimitType")),
		Utilization: fields.Float(jsonscan.Get(info, "utilization")),
		ResetAt:     fields.EpochSeconds(jsonscan.Get(info, "resetsAt")),
	}
	if len(info) == 0 {
		return append(dst, fields.Raw(line))
	}
	if r := fields.Str(jsonscan.Get(info, "overageDisabledReason")); r != "" && q.Status == "rejected" {
		q.Message = r
	}
	return append(dst, agentstream.E(q))
}

// controlRequest maps a control request: a permission request or a hook
// call from the CLI, a change of mode or model from the host. The host's
// setup, its interrupts and the MCP messages the CLI relays stay raw
// (Deliberate).
func (d *Decoder) controlRequest(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	req := f.request
	reqID := fields.Str(f.requestID)
	switch fields.Str(jsonscan.Get(req, "subtype")) {
	case "can_use_tool":
		p := &agentstream.PermissionRequest{
			RequestID: reqID,
			CallID:    fields.Str(jsonscan.Get(req, "tool_use_id")),
			Name:      fields.Str(jsonscan.Get(req, "tool_name")),
		}
		p.Input, p.Truncated = fields.Input(jsonscan.Get(req, "input"))
		if reqID != "" {
			d.requests[reqID] = p.CallID
		}
		return append(dst, agentstream.E(p))
	case "hook_callback":
		h := &agentstream.Hook{
			Event:  fields.Str(jsonscan.GetPath(req, "input", "hook_event_name")),
			Name:   fields.Str(jsonscan.Get(req, "callback_id")),
			Status: agentstream.SubagentStarted,
		}
		if reqID != "" {
			d.hooks[reqID] = *h
		}
		return append(dst, agentstream.E(h))
	case "set_permission_mode":
		if m := fields.Str(jsonscan.Get(req, "mode")); m != "" {
			return append(dst, agentstream.E(&agentstream.SessionUpdated{PermissionMode: m}))
		}
	case "set_model":
		if m := fields.Str(jsonscan.Get(req, "model")); m != "" {
			return append(dst, agentstream.E(&agentstream.SessionUpdated{Model: m}))
		}
	}
	return append(dst, fields.Raw(line))
}

// controlResponse maps an answer to a control request, told apart by what
// it holds: a permission decision (request.resolved), a hook's outcome, the
// commands or the permission mode the CLI reports, an error. Answers to the
// MCP messages the CLI relays stay raw (Deliberate).
func (d *Decoder) controlResponse(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	resp := f.response
	reqID := fields.Str(jsonscan.Get(resp, "request_id"))
	inner := jsonscan.Get(resp, "response")
	if fields.Str(jsonscan.Get(resp, "subtype")) == "error" {
		msg := fields.Str(jsonscan.Get(resp, "error"))
		if _, ok := d.requests[reqID]; ok {
			delete(d.requests, reqID)
			return append(dst, agentstream.E(&agentstream.RequestResolved{RequestID: reqID, Outcome: agentstream.OutcomeCancelled, Answer: msg}))
		}
		if msg == "" {
			msg = "control request failed"
		}
		msg, _ = agentstream.Clip(msg, agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Error{Message: msg, ErrorType: "control_response"}))
	}
	_, asked := d.requests[reqID]
	switch behavior := fields.Str(jsonscan.Get(inner, "behavior")); {
	case asked || behavior == "allow" || behavior == "deny":
		delete(d.requests, reqID)
		r := &agentstream.RequestResolved{RequestID: reqID, Outcome: agentstream.OutcomeDenied}
		switch behavior {
		case "allow":
			r.Outcome = agentstream.OutcomeAllowed
		case "deny":
			r.Answer = fields.Str(jsonscan.Get(inner, "message"))
		}
		return append(dst, agentstream.E(r))
	}
	if h, ok := d.hooks[reqID]; ok || len(jsonscan.Get(inner, "continue")) > 0 || len(jsonscan.Get(inner, "decision")) > 0 || len(jsonscan.Get(inner, "hookSpecificOutput")) > 0 {
		delete(d.hooks, reqID)
		h.Status = agentstream.SubagentFinished
		h.Outcome = "success"
		if c := jsonscan.Get(inner, "continue"); len(c) > 0 && !fields.Bool(c) || fields.Str(jsonscan.Get(inner, "decision")) == "block" {
			h.Outcome = "blocked"
		}
		h.Output, h.Truncated, _ = fields.Text(firstOf(inner, "reason", "stopReason", "systemMessage"))
		return append(dst, agentstream.E(&h))
	}
	u := &agentstream.SessionUpdated{PermissionMode: fields.Str(jsonscan.Get(inner, "mode"))}
	if cmds := jsonscan.Get(inner, "commands"); len(cmds) > 0 {
		u.Commands = []string{}
		arr, _ := jsonscan.Array(cmds)
		for arr.Next() {
			name := fields.Str(arr.Value())
			if name == "" {
				name = fields.Str(jsonscan.Get(arr.Value(), "name"))
			}
			if name != "" {
				u.Commands = append(u.Commands, name)
			}
		}
	}
	if u.PermissionMode != "" || u.Commands != nil {
		return append(dst, agentstream.E(u))
	}
	return append(dst, fields.Raw(line))
}
