package codex

import (
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// AppServerDecoder reads what `codex app-server` prints on stdout (protocol
// codex-app): JSON-RPC messages without the "jsonrpc" member, one a line.
// The server's notifications carry the conversation (thread/started,
// turn/started, item/started, item/completed and their deltas,
// thread/tokenUsage/updated, turn/completed, error, warning); its requests
// ask for approvals; its responses answer the client's requests, which are
// the client's to read.
type AppServerDecoder struct {
	thread  string // the thread announced by session.started
	summary string // the turn's latest agent message, for session.ended
	started map[string]bool
}

// NewAppServerDecoder returns a Decoder for one app-server stream.
func NewAppServerDecoder() *AppServerDecoder {
	return &AppServerDecoder{started: map[string]bool{}}
}

// AppServerFolded lists the app-server lines that may give no event, and
// where what they say goes.
var AppServerFolded = map[string]string{
	"response":                   "the server's answers to the client's requests are the client's (package driver) to read; a thread's start gives session.started",
	"item/started":               "an agent message, a reasoning or a user message is recorded when it is complete (item/completed)",
	"thread/started":             "session.started comes once per thread, from this or from the response to thread/start",
	"thread/status/changed":      "the thread's status (active, idle, waiting on an approval), which the turn, item and request lines say",
	"serverRequest/resolved":     "a request of the server's was answered: the client records its answer (request.resolved)",
	"account/rateLimits/updated": "a rate limit snapshot without a window gives no quota",
}

// Decode appends the events of one line.
func (d *AppServerDecoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	if len(jsonscan.TrimSpace(line)) == 0 {
		return dst
	}
	o, ok := jsonscan.Object(line)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	var id, method, params, result, errV []byte
	for o.Next() {
		switch {
		case o.KeyIs("id"):
			id = o.Value()
		case o.KeyIs("method"):
			method = o.Value()
		case o.KeyIs("params"):
			params = o.Value()
		case o.KeyIs("result"):
			result = o.Value()
		case o.KeyIs("error"):
			errV = o.Value()
		}
	}
	if o.Err() != nil {
		return append(dst, fields.Raw(line))
	}
	m := fields.Str(method)
	switch {
	case m != "" && len(id) > 0 && !jsonscan.IsNull(id):
		return d.request(dst, line, requestText(id), m, params)
	case m != "":
		return d.notification(dst, line, m, params)
	case len(errV) > 0 && !jsonscan.IsNull(errV):
		msg, _ := agentstream.Clip(fields.Str(jsonscan.Get(errV, "message")), agentstream.MaxText)
		e := &agentstream.Error{Message: msg}
		if code := fields.Int(jsonscan.Get(errV, "code")); code != nil {
			e.ErrorType = strconv.FormatInt(*code, 10)
		}
		return append(dst, agentstream.E(e))
	case len(result) > 0:
		if t := jsonscan.Get(result, "thread"); len(t) > 0 && t[0] == '{' {
			return d.threadStarted(dst, t)
		}
		return dst
	}
	return append(dst, fields.Raw(line))
}

// End appends nothing: a stream that stops mid-turn is ended by the runner.
func (d *AppServerDecoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

func requestText(id []byte) string {
	if s, ok := jsonscan.String(id); ok {
		return s
	}
	return string(jsonscan.TrimSpace(id))
}

func (d *AppServerDecoder) threadStarted(dst []agentstream.Event, t []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(t, "id"))
	if id == "" || d.started[id] {
		return dst
	}
	d.started[id] = true
	d.thread = id
	s := &agentstream.SessionStarted{Harness: Harness, SessionID: id, Model: fields.Str(jsonscan.Get(t, "model"))}
	if envs, ok := jsonscan.Array(jsonscan.Get(t, "environments")); ok && envs.Next() {
		s.Cwd = fields.Str(jsonscan.Get(envs.Value(), "cwd"))
	}
	return append(dst, agentstream.E(s))
}

func (d *AppServerDecoder) notification(dst []agentstream.Event, line []byte, m string, params []byte) []agentstream.Event {
	switch m {
	case "thread/started":
		return d.threadStarted(dst, jsonscan.Get(params, "thread"))
	case "turn/started":
		d.summary = ""
		return append(dst, agentstream.E(&agentstream.TurnStarted{}))
	case "turn/completed":
		return d.turnCompleted(dst, jsonscan.Get(params, "turn"))
	case "item/started":
		return d.item(dst, jsonscan.Get(params, "item"), phaseStarted)
	case "item/completed":
		return d.item(dst, jsonscan.Get(params, "item"), phaseCompleted)
	case "item/agentMessage/delta":
		if s := fields.Str(jsonscan.Get(params, "delta")); s != "" {
			return append(dst, agentstream.E(&agentstream.MessageDelta{Role: agentstream.RoleAssistant, Text: s}))
		}
		return dst
	case "item/reasoning/textDelta", "item/reasoning/summaryTextDelta":
		if s := fields.Str(jsonscan.Get(params, "delta")); s != "" {
			return append(dst, agentstream.E(&agentstream.ThinkingDelta{Text: s}))
		}
		return dst
	case "item/commandExecution/outputDelta":
		text, trunc := agentstream.Clip(fields.Str(jsonscan.Get(params, "delta")), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.ToolOutput{
			CallID: fields.Str(jsonscan.Get(params, "itemId")), Channel: "stdout", Text: text, Truncated: trunc,
		}))
	case "thread/tokenUsage/updated":
		return d.tokenUsage(dst, jsonscan.Get(params, "tokenUsage"))
	case "error":
		msg, _ := agentstream.Clip(fields.Str(jsonscan.GetPath(params, "error", "message")), agentstream.MaxText)
		retry, _ := jsonscan.Bool(jsonscan.Get(params, "willRetry"))
		return append(dst, agentstream.E(&agentstream.Error{Message: msg, Recoverable: &retry}))
	case "warning":
		msg, _ := agentstream.Clip(fields.Str(jsonscan.Get(params, "message")), agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Warning{Message: msg}))
	case "thread/status/changed", "serverRequest/resolved":
		return dst
	case "account/rateLimits/updated":
		return rateLimits(dst, jsonscan.Get(params, "rateLimits"))
	}
	return append(dst, fields.Raw(line))
}

// rateLimits gives a quota of each window of a rate limit snapshot.
func rateLimits(dst []agentstream.Event, rl []byte) []agentstream.Event {
	kind := fields.Str(jsonscan.Get(rl, "limitId"))
	status := "allowed"
	if r := jsonscan.Get(rl, "rateLimitReachedType"); len(r) > 0 && !jsonscan.IsNull(r) {
		status = "rejected"
	}
	for _, w := range []string{"primary", "secondary"} {
		win := jsonscan.Get(rl, w)
		if len(win) == 0 || win[0] != '{' {
			continue
		}
		q := &agentstream.Quota{Status: status, LimitType: kind + "/" + w, ResetAt: fields.EpochSeconds(jsonscan.Get(win, "resetsAt"))}
		if p := fields.Float(jsonscan.Get(win, "usedPercent")); p != nil {
			u := *p / 100
			q.Utilization = &u
		}
		dst = append(dst, agentstream.E(q))
	}
	return dst
}

// turnCompleted ends the turn: turn.ended, then session.ended with the
// turn's status.
func (d *AppServerDecoder) turnCompleted(dst []agentstream.Event, turn []byte) []agentstream.Event {
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, Summary: d.summary}
	reason := agentstream.TurnOK
	switch fields.Str(jsonscan.Get(turn, "status")) {
	case "interrupted":
		end.Status, reason = agentstream.StatusCancelled, agentstream.TurnInterrupt
	case "failed":
		end.Status, reason = agentstream.StatusFailed, agentstream.TurnError
		end.Error, _ = agentstream.Clip(fields.Str(jsonscan.GetPath(turn, "error", "message")), agentstream.MaxText)
		if end.Error == "" {
			end.Error = "turn failed"
		}
	}
	d.summary = ""
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Reason: reason}))
	return append(dst, agentstream.E(end))
}

func (d *AppServerDecoder) tokenUsage(dst []agentstream.Event, tu []byte) []agentstream.Event {
	total := jsonscan.Get(tu, "total")
	if len(total) == 0 || total[0] != '{' {
		return dst
	}
	in, cached := fields.Int(jsonscan.Get(total, "inputTokens")), fields.Int(jsonscan.Get(total, "cachedInputTokens"))
	u := &agentstream.Usage{
		Scope:               agentstream.ScopeSession,
		InputTokens:         in,
		OutputTokens:        fields.Int(jsonscan.Get(total, "outputTokens")),
		CacheReadTokens:     cached,
		CacheCreationTokens: fields.Int(jsonscan.Get(total, "cacheWriteInputTokens")),
		ReasoningTokens:     fields.Int(jsonscan.Get(total, "reasoningOutputTokens")),
		ContextWindow:       fields.Int(jsonscan.Get(tu, "modelContextWindow")),
	}
	if in != nil && cached != nil && *cached <= *in {
		n := *in - *cached
		u.InputTokens = &n
	}
	return append(dst, agentstream.E(u))
}

// item maps an item's start or completion.
func (d *AppServerDecoder) item(dst []agentstream.Event, it []byte, phase int) []agentstream.Event {
	typ := fields.Str(jsonscan.Get(it, "type"))
	id := fields.Str(jsonscan.Get(it, "id"))
	switch typ {
	case "agentMessage":
		if phase != phaseCompleted {
			return dst
		}
		text, trunc, _ := fields.Text(jsonscan.Get(it, "text"))
		d.summary = text
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	case "userMessage":
		if phase != phaseCompleted {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: userText(jsonscan.Get(it, "content"))}))
	case "reasoning":
		if phase != phaseCompleted {
			return dst
		}
		text := joined(jsonscan.Get(it, "content"))
		if text == "" {
			text = joined(jsonscan.Get(it, "summary"))
		}
		t, trunc := agentstream.Clip(text, agentstream.MaxText)
		return append(dst, agentstream.E(&agentstream.Thinking{Text: t, Truncated: trunc}))
	case "commandExecution":
		command := jsonscan.Get(it, "command")
		if phase == phaseStarted {
			c := &agentstream.ToolCall{CallID: id, Name: "shell", Category: agentstream.CategoryExecute,
				Summary: fields.Summary(commandLine(command))}
			c.Input, c.Truncated = fields.Input(object(member{"command", command}, member{"cwd", jsonscan.Get(it, "cwd")}))
			c.DisplayName = fields.Display(c.Category, c.Name)
			return append(dst, agentstream.E(c))
		}
		out, trunc, chars := fields.Text(jsonscan.Get(it, "aggregatedOutput"))
		r := &agentstream.ToolResult{CallID: id, Name: "shell", Output: out, Truncated: trunc, Characters: chars,
			ExitCode: fields.Int(jsonscan.Get(it, "exitCode"))}
		st := fields.Str(jsonscan.Get(it, "status"))
		r.IsError = st == "failed" || st == "declined" || r.ExitCode != nil && *r.ExitCode != 0
		if st == "declined" && r.Output == "" {
			r.Output = "declined"
		}
		return append(dst, agentstream.E(r))
	case "fileChange":
		changes := jsonscan.Get(it, "changes")
		if phase == phaseStarted {
			c := &agentstream.ToolCall{CallID: id, Name: "apply_patch"}
			c.Category, c.Summary = describeChanges(changes)
			c.Input, c.Truncated = fields.Input(object(member{"changes", changes}))
			c.DisplayName = fields.Display(c.Category, c.Name)
			return append(dst, agentstream.E(c))
		}
		fc, text := changesOf(id, changes)
		st := fields.Str(jsonscan.Get(it, "status"))
		r := &agentstream.ToolResult{CallID: id, Name: "apply_patch", Output: text, Characters: int64(len([]rune(text))),
			IsError: st == "failed" || st == "declined"}
		dst = append(dst, agentstream.E(r))
		if !r.IsError && len(fc.Changes) > 0 {
			for i, e := range arrayOf(changes) {
				if i < len(fc.Changes) {
					var cut bool
					fc.Changes[i].Diff, cut, _ = fields.Text(jsonscan.Get(e, "diff"))
					fc.Truncated = fc.Truncated || cut
				}
			}
			dst = append(dst, agentstream.E(fc))
		}
		return dst
	case "mcpToolCall", "dynamicToolCall", "webSearch":
		name := fields.Str(jsonscan.Get(it, "tool"))
		if server := fields.Str(jsonscan.Get(it, "server")); server != "" {
			name = server + "." + name
		}
		if typ == "webSearch" {
			name = "web_search"
		}
		if phase == phaseStarted {
			c := &agentstream.ToolCall{CallID: id, Name: name, Category: agentstream.CategoryMCP}
			input := jsonscan.Get(it, "arguments")
			if typ == "webSearch" {
				c.Category = agentstream.CategorySearch
				c.Summary = fields.Summary(fields.Str(jsonscan.Get(it, "query")))
				input = object(member{"query", jsonscan.Get(it, "query")})
			}
			c.Input, c.Truncated = fields.Input(input)
			c.DisplayName = fields.Display(c.Category, c.Name)
			return append(dst, agentstream.E(c))
		}
		out, trunc, chars := fields.Text(jsonscan.Get(it, "result"))
		if len(jsonscan.Get(it, "result")) > 0 && jsonscan.Get(it, "result")[0] != '"' {
			b, _ := jsonscan.AppendCompact(nil, jsonscan.Get(it, "result"))
			out, trunc = agentstream.Clip(string(b), agentstream.MaxText)
			chars = int64(len([]rune(string(b))))
		}
		st := fields.Str(jsonscan.Get(it, "status"))
		return append(dst, agentstream.E(&agentstream.ToolResult{CallID: id, Name: name, Output: out, Truncated: trunc,
			Characters: chars, IsError: st == "failed" || len(jsonscan.Get(it, "error")) > 0 && !jsonscan.IsNull(jsonscan.Get(it, "error"))}))
	}
	if phase == phaseStarted {
		return dst
	}
	return append(dst, fields.Raw(it))
}

// request maps a request of the server's: an approval is a
// permission.request named by the request's id.
func (d *AppServerDecoder) request(dst []agentstream.Event, line []byte, id, m string, params []byte) []agentstream.Event {
	p := &agentstream.PermissionRequest{RequestID: id, CallID: fields.Str(jsonscan.Get(params, "itemId")), Options: []agentstream.PermissionOption{}}
	switch m {
	case "item/commandExecution/requestApproval":
		p.Name = "shell"
		p.Input, p.Truncated = fields.Input(object(member{"command", jsonscan.Get(params, "command")}, member{"cwd", jsonscan.Get(params, "cwd")}))
	case "item/fileChange/requestApproval":
		p.Name = "apply_patch"
		p.Input, p.Truncated = fields.Input(object(member{"reason", jsonscan.Get(params, "reason")}, member{"grantRoot", jsonscan.Get(params, "grantRoot")}))
	default:
		return append(dst, fields.Raw(line))
	}
	for _, v := range arrayOf(jsonscan.Get(params, "availableDecisions")) {
		if s, ok := jsonscan.String(v); ok {
			p.Options = append(p.Options, agentstream.PermissionOption{ID: s, Label: s, Kind: decisionKind(s)})
		}
	}
	return append(dst, agentstream.E(p))
}

// decisionKind is the ACP-like kind of an approval decision.
func decisionKind(s string) string {
	switch s {
	case "accept":
		return "allow_once"
	case "acceptForSession":
		return "allow_always"
	case "decline", "cancel":
		return "reject_once"
	}
	return ""
}

func arrayOf(v []byte) [][]byte {
	arr, ok := jsonscan.Array(v)
	if !ok {
		return nil
	}
	var out [][]byte
	for arr.Next() {
		out = append(out, arr.Value())
	}
	return out
}

// userText joins the text inputs of a user message.
func userText(content []byte) string {
	var s string
	for _, e := range arrayOf(content) {
		if fields.Str(jsonscan.Get(e, "type")) == "text" {
			if s != "" {
				s += "\n"
			}
			s += fields.Str(jsonscan.Get(e, "text"))
		}
	}
	t, _ := agentstream.Clip(s, agentstream.MaxText)
	return t
}

// joined joins an array of strings with newlines.
func joined(v []byte) string {
	var s string
	for _, e := range arrayOf(v) {
		if t, ok := jsonscan.String(e); ok && t != "" {
			if s != "" {
				s += "\n"
			}
			s += t
		}
	}
	return s
}
