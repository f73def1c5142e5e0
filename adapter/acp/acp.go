// Package acp is the adapter for the Agent Client Protocol (protocol acp):
// what an ACP agent writes on its stdout, JSON-RPC 2.0 messages one per
// line. It maps the agent's session/update notifications, its
// session/request_permission requests, and its responses (initialize,
// session/new, session/prompt, errors). The runner speaks the client side;
// the decoder also reads transcripts holding both directions, and bare
// update objects without their envelope.
package acp

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started when the agent does not
// name itself; an agent that does gives "acp:<name>".
const Harness = "acp"

// Kinds of streamed text.
const (
	textNone = iota
	textAgent
	textUser
	textThought
)

// Decoder reads one ACP stream. It is not safe for concurrent use.
type Decoder struct {
	agent, version string // from the initialize result
	initialized    bool
	started        bool
	sessionID      string
	model, mode    string
	replay         bool // between initialize and the next response: a session/load replay

	inTurn   bool
	turn     int64
	lastText string // the turn's latest agent message, for session.ended

	open       int // the kind of text being streamed
	openID     string
	openReplay bool
	text       fields.Acc

	tools map[string]*tool
	perms map[string]map[string]string // the option kinds of each permission request, by option id
	// waiting are the calls seen but not announced yet, in order: their
	// input had not come.
	waiting []*tool

	// The latest figures of each kind of session usage, restated together.
	tokens  *agentstream.Usage
	cost    *float64
	ctxUsed *int64
	ctxSize *int64

	scratch scratch
	deltas  fields.Deltas
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{tools: map[string]*tool{}}
}

// lineOf is what a line's top level holds, as raw JSON values.
type lineOf struct {
	jsonrpc, id, method, params, result, errorV, sessionUpdate, stopReason, typ []byte
	hasResult                                                                   bool

	paramsRead        bool     // the params of session/update were read in place
	update, sessionID []byte   // params.update and params.sessionId
	up                updateOf // params.update, read in place when an object
	upUsed            bool     // up holds a read: clear it before another
}

// readParams reads the update and session id of session/update's params,
// descending into the update in place.
func (l *lineOf) readParams(p *jsonscan.Obj, s *scratch) {
	l.update, l.sessionID = nil, nil
	for p.NextKey() {
		switch string(p.Key()) {
		case "update":
			if l.upUsed {
				l.up = updateOf{}
			}
			l.upUsed = true
			if uo, ok := p.Object(); ok {
				l.up.read(&uo, s)
				p.LeaveObject(&uo)
			}
			l.update = p.Value()
		case "sessionId":
			l.sessionID = p.Value()
		}
	}
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
		return append(dst, fields.Raw(line))
	}
	var l lineOf
	if d.readChunkHead(line, &l) {
		return d.decodeLine(dst, line, &l)
	}
	obj, _ := jsonscan.Object(line)
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "jsonrpc":
			l.jsonrpc = obj.Value()
		case "id":
			l.id = obj.Value()
		case "method":
			l.method = obj.Value()
		case "params":
			// The params of an update, which may hold a large tool output,
			// are read in place when the method came first.
			l.paramsRead = false
			if string(fields.Unquoted(l.method)) == "session/update" {
				if p, ok := obj.Object(); ok {
					l.readParams(&p, &d.scratch)
					obj.LeaveObject(&p)
					l.paramsRead = true
				}
			}
			l.params = obj.Value()
		case "result":
			l.result, l.hasResult = obj.Value(), true
		case "error":
			l.errorV = obj.Value()
		case "sessionUpdate":
			l.sessionUpdate = obj.Value()
		case "stopReason":
			l.stopReason = obj.Value()
		case "type":
			l.typ = obj.Value()
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(line))
	}
	return d.decodeLine(dst, line, &l)
}

// decodeLine maps a well-formed line whose top level l holds.
func (d *Decoder) decodeLine(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	method := string(fields.Unquoted(l.method))
	switch {
	case method != "" && len(l.id) > 0:
		if method == "session/request_permission" {
			return d.permission(dst, line, l)
		}
		switch method {
		case qwenStartTurn:
			// Qwen Code starts a turn of its own, for a background task
			// that ended; _qwencode/end_turn ends it.
			dst = d.flush(dst)
			d.inTurn = false
			return d.openTurn(dst, false)
		case "session/prompt":
			// The client's prompt, in a log of both directions: what
			// follows is live, and it is the user's message.
			d.replay = false
			return d.prompt(dst, line, l.params)
		case "session/set_mode":
			if m := fields.Str(jsonscan.Get(l.params, "modeId")); m != "" {
				d.mode = m
				return append(dst, agentstream.E(&agentstream.SessionUpdated{Mode: m}))
			}
		}
		// fs/*, terminal/* and the client's other requests: raw on
		// purpose (Deliberate).
		return append(dst, fields.Raw(line))
	case method == "session/update":
		if !l.paramsRead {
			if p, ok := jsonscan.Object(l.params); ok {
				l.readParams(&p, &d.scratch)
			}
		}
		u := l.update
		if len(u) == 0 || u[0] != '{' {
			return append(dst, fields.Raw(line))
		}
		return d.update(dst, line, &l.up, l.sessionID)
	case method == qwenEndTurn:
		reason := fields.Str(jsonscan.Get(l.params, "reason"))
		if !d.inTurn {
			return append(dst, fields.Raw(line))
		}
		return d.endTurn(d.flush(dst), reason)
	case method != "":
		return append(dst, fields.Raw(line))
	case l.hasResult && len(l.id) > 0:
		return d.response(dst, line, l.id, l.result)
	case len(l.errorV) > 0 && len(l.id) > 0:
		return d.errorResponse(dst, line, l.errorV)
	case len(l.typ) == 0 && len(l.sessionUpdate) > 0:
		// A bare update object, as some logs print them.
		var up updateOf
		up.parse(line, &d.scratch)
		return d.update(dst, line, &up, nil)
	case len(l.typ) == 0 && len(l.jsonrpc) == 0 && fields.Str(l.stopReason) != "":
		// A bare prompt response.
		return d.promptResult(dst, line)
	}
	return append(dst, fields.Raw(line))
}

// End appends the session.started of an agent that answered initialize
// and nothing else, and the calls whose input never came. Streamed text without its end is flushed by the
// Normalizer from the live deltas, marked partial.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event {
	if d.initialized && !d.started {
		d.started = true
		dst = append(dst, agentstream.E(d.sessionStarted("")))
	}
	return d.announceWaiting(dst)
}

func (d *Decoder) harness() string {
	if d.agent == "" {
		return Harness
	}
	return Harness + ":" + d.agent
}

func (d *Decoder) sessionStarted(sessionID string) *agentstream.SessionStarted {
	s := &agentstream.SessionStarted{Harness: d.harness(), SessionID: sessionID, Version: d.version, Model: d.model}
	if w, ok := agentstream.ContextWindow(s.Model); ok {
		s.ContextWindow = &w
	}
	return s
}

// ensureStarted announces the session before the first event of an agent
// that answered initialize or names its session, when no session result
// did.
func (d *Decoder) ensureStarted(dst []agentstream.Event, sessionID string) []agentstream.Event {
	if d.started || (sessionID == "" && !d.initialized) {
		return dst
	}
	d.started = true
	d.sessionID = sessionID
	return append(dst, agentstream.E(d.sessionStarted(sessionID)))
}

// openTurn starts a turn at the first live output of the agent after a
// prompt response (or in the stream).
func (d *Decoder) openTurn(dst []agentstream.Event, replay bool) []agentstream.Event {
	if replay || d.inTurn {
		return dst
	}
	d.inTurn = true
	d.turn++
	return append(dst, agentstream.E(&agentstream.TurnStarted{Turn: d.turn}))
}

// flush appends the message or thinking streamed so far, when something
// else arrives.
func (d *Decoder) flush(dst []agentstream.Event) []agentstream.Event {
	kind, replay := d.open, d.openReplay
	d.open, d.openID = textNone, ""
	if d.text.N == 0 {
		return dst
	}
	text, trunc := d.text.Text()
	d.text.Reset()
	var p agentstream.Payload
	switch kind {
	case textThought:
		p = &agentstream.Thinking{Text: text, Truncated: trunc}
	case textUser:
		p = &agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}
	default:
		p = &agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}
		if !replay {
			d.lastText = text
		}
	}
	return append(dst, agentstream.Event{Payload: p, Replay: replay})
}

// response maps a response of the agent: initialize (remembered for
// session.started), a session result (session/new, load, resume, fork),
// a prompt result, a config option result; others are raw. Any response
// ends a session/load replay.
func (d *Decoder) response(dst []agentstream.Event, line, id, result []byte) []agentstream.Event {
	dst = d.flush(dst)
	d.replay = false
	if len(result) == 0 || result[0] != '{' {
		return append(dst, fields.Raw(line))
	}
	var protocol, agentInfo, sessionID, stopReason, configOptions, modes, models []byte
	obj, _ := jsonscan.Object(result)
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "protocolVersion":
			protocol = v
		case "agentInfo":
			agentInfo = v
		case "sessionId":
			sessionID = v
		case "stopReason":
			stopReason = v
		case "configOptions":
			configOptions = v
		case "modes":
			modes = v
		case "models":
			models = v
		}
	}
	if outcome := jsonscan.Get(result, "outcome"); len(outcome) > 0 && outcome[0] == '{' {
		if r := d.resolved(requestID(id), outcome); r != nil {
			return append(dst, agentstream.E(r))
		}
	}
	switch {
	case len(stopReason) > 0:
		return d.promptResult(dst, result)
	case len(protocol) > 0:
		d.initialized = true
		d.agent = fields.Str(jsonscan.Get(agentInfo, "name"))
		d.version = fields.Str(jsonscan.Get(agentInfo, "version"))
		// Until the next response, updates replay a loaded session.
		d.replay = true
		return dst
	case fields.Str(sessionID) != "":
		return d.sessionResult(dst, fields.Str(sessionID), configOptions, modes, models)
	case len(configOptions) > 0:
		return append(dst, agentstream.E(d.configUpdate(configOptions)))
	}
	return append(dst, fields.Raw(line))
}

// sessionResult maps the result of session/new (or fork): session.started
// for a new session id, then the mode it starts in.
func (d *Decoder) sessionResult(dst []agentstream.Event, sessionID string, configOptions, modes, models []byte) []agentstream.Event {
	model, mode := configValue(configOptions, "model"), configValue(configOptions, "mode")
	if m := fields.Str(jsonscan.Get(models, "currentModelId")); m != "" {
		model = m
	}
	if m := fields.Str(jsonscan.Get(modes, "currentModeId")); m != "" {
		mode = m
	}
	if d.started && sessionID == d.sessionID {
		u := &agentstream.SessionUpdated{}
		if model != "" && model != d.model {
			u.Model, d.model = model, model
		}
		if mode != "" && mode != d.mode {
			u.Mode, d.mode = mode, mode
		}
		return append(dst, agentstream.E(u))
	}
	d.started, d.sessionID = true, sessionID
	if model != "" {
		d.model = model
	}
	dst = append(dst, agentstream.E(d.sessionStarted(sessionID)))
	if mode != "" {
		d.mode = mode
		dst = append(dst, agentstream.E(&agentstream.SessionUpdated{Mode: mode}))
	}
	return dst
}

// configValue returns the current value of the config option of category
// (or id) cat.
func configValue(options []byte, cat string) string {
	arr, _ := jsonscan.Array(options)
	for arr.Next() {
		o := arr.Value()
		if fields.Str(jsonscan.Get(o, "category")) == cat || fields.Str(jsonscan.Get(o, "id")) == cat {
			return fields.Str(jsonscan.Get(o, "currentValue"))
		}
	}
	return ""
}

func (d *Decoder) configUpdate(options []byte) *agentstream.SessionUpdated {
	u := &agentstream.SessionUpdated{}
	if m := configValue(options, "model"); m != "" && m != d.model {
		u.Model, d.model = m, m
	}
	if m := configValue(options, "mode"); m != "" && m != d.mode {
		u.Mode, d.mode = m, m
	}
	return u
}

// errorResponse maps a JSON-RPC error response to error. Which request
// failed is known only to the runner, which decides whether the session
// ended.
func (d *Decoder) errorResponse(dst []agentstream.Event, line, errV []byte) []agentstream.Event {
	dst = d.flush(dst)
	d.replay = false
	if len(errV) == 0 || errV[0] != '{' {
		return append(dst, fields.Raw(line))
	}
	msg, _ := agentstream.Clip(fields.Str(jsonscan.Get(errV, "message")), agentstream.MaxText)
	e := &agentstream.Error{Message: msg}
	if code, ok := jsonscan.Int(jsonscan.Get(errV, "code")); ok {
		e.ErrorType = strconv.FormatInt(code, 10)
	}
	return append(dst, agentstream.E(e))
}

// announceWaiting announces the calls whose input never came, before the
// turn ends.
func (d *Decoder) announceWaiting(dst []agentstream.Event) []agentstream.Event {
	for _, t := range d.waiting {
		if !t.announced {
			dst = t.announce(dst)
		}
	}
	d.waiting = d.waiting[:0]
	return dst
}

// promptResult maps the response to session/prompt: the turn's usage when
// the agent reports it, turn.ended and session.ended.
func (d *Decoder) promptResult(dst []agentstream.Event, result []byte) []agentstream.Event {
	dst = d.flush(dst)
	dst = d.announceWaiting(dst)
	d.replay = false
	stop := fields.Str(jsonscan.Get(result, "stopReason"))
	if tc := jsonscan.GetPath(result, "_meta", "quota", "token_count"); len(tc) > 0 && tc[0] == '{' {
		// Gemini CLI gives the turn's prompt size (cache included) and
		// output, nothing more: the size is the context, the input not
		// read from cache is unknown.
		turn := &agentstream.Usage{Scope: agentstream.ScopeSession,
			ContextTokens: fields.Int(jsonscan.Get(tc, "input_tokens")), OutputTokens: fields.Int(jsonscan.Get(tc, "output_tokens"))}
		if d.tokens != nil && d.tokens.OutputTokens != nil && turn.OutputTokens != nil {
			n := *d.tokens.OutputTokens + *turn.OutputTokens
			turn.OutputTokens = &n
		}
		d.tokens = turn
		dst = append(dst, agentstream.E(d.sessionUsage()))
	} else if u := jsonscan.Get(result, "usage"); len(u) > 0 && u[0] == '{' {
		// The schema's PromptResponse.usage is the turn's (claude-agent-acp
		// 0.23.1 reports each turn apart): the session's total is their sum.
		d.tokens = addTokens(d.tokens, promptUsage(u))
		dst = append(dst, agentstream.E(d.sessionUsage()))
	}
	dst = d.openTurn(dst, false)
	return d.endTurn(dst, stop)
}

// Qwen Code's turns of its own: a request that starts one (answered
// accepted, or deferred), a notification that ends it with a stop reason.
const (
	qwenStartTurn = "_qwencode/start_turn"
	qwenEndTurn   = "_qwencode/end_turn"
)

// endTurn ends the open turn with the agent's stop reason.
func (d *Decoder) endTurn(dst []agentstream.Event, stop string) []agentstream.Event {
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, StopReason: stop, Reason: agentstream.ReasonCompletion}
	end.Summary, end.Truncated = agentstream.Clip(d.lastText, agentstream.MaxText)
	reason := agentstream.TurnOK
	switch stop {
	case "end_turn":
	case "cancelled":
		end.Status, reason = agentstream.StatusCancelled, agentstream.TurnInterrupt
	default:
		end.Status, reason = agentstream.StatusFailed, agentstream.TurnError
		end.Error = stop
		if stop == "" {
			end.Error = "no stop reason"
		}
	}
	d.inTurn, d.lastText = false, ""
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// promptUsage reads PromptResponse.usage. Its counters are totals whose
// cache accounting varies by agent: when totalTokens shows that
// inputTokens already counted the cache reads (total = input + output,
// with or without thought tokens), they are taken out of the input.
func promptUsage(v []byte) *agentstream.Usage {
	var total, in, out, thought, read, write *int64
	obj, _ := jsonscan.Object(v)
	for obj.Next() {
		n := fields.Int(obj.Value())
		switch string(obj.Key()) {
		case "totalTokens":
			total = n
		case "inputTokens":
			in = n
		case "outputTokens":
			out = n
		case "thoughtTokens":
			thought = n
		case "cachedReadTokens":
			read = n
		case "cachedWriteTokens":
			write = n
		}
	}
	u := &agentstream.Usage{Scope: agentstream.ScopeSession, InputTokens: in, OutputTokens: out,
		CacheReadTokens: read, CacheCreationTokens: write, ReasoningTokens: thought}
	if total != nil && in != nil && out != nil && read != nil && *read > 0 {
		sum := *in + *out
		withThought := sum
		if thought != nil {
			withThought += *thought
		}
		if *total == sum || *total == withThought {
			n := max(*in-*read, 0)
			u.InputTokens = &n
		}
	}
	return u
}

// addTokens adds a turn's token counts to the session's, a counter unknown
// in both staying unknown.
func addTokens(total, turn *agentstream.Usage) *agentstream.Usage {
	if total == nil {
		return turn
	}
	add := func(a, b *int64) *int64 {
		if a == nil {
			return b
		}
		if b == nil {
			return a
		}
		n := *a + *b
		return &n
	}
	return &agentstream.Usage{Scope: agentstream.ScopeSession,
		InputTokens: add(total.InputTokens, turn.InputTokens), OutputTokens: add(total.OutputTokens, turn.OutputTokens),
		CacheReadTokens: add(total.CacheReadTokens, turn.CacheReadTokens), CacheCreationTokens: add(total.CacheCreationTokens, turn.CacheCreationTokens),
		ReasoningTokens: add(total.ReasoningTokens, turn.ReasoningTokens)}
}

// sessionUsage restates the session's usage: the sum of the prompt
// responses' token counts with the latest context occupancy and cost of
// usage_update.
func (d *Decoder) sessionUsage() *agentstream.Usage {
	u := &agentstream.Usage{Scope: agentstream.ScopeSession}
	if d.tokens != nil {
		*u = *d.tokens
	}
	u.CostUSD, u.ContextWindow = d.cost, d.ctxSize
	if d.ctxUsed != nil || u.ContextTokens == nil {
		u.ContextTokens = d.ctxUsed
	}
	return u
}

// permission maps session/request_permission to permission.request.
func (d *Decoder) permission(dst []agentstream.Event, line []byte, l *lineOf) []agentstream.Event {
	dst = d.flush(dst)
	params := l.params
	tc := jsonscan.Get(params, "toolCall")
	if len(tc) == 0 || tc[0] != '{' {
		return append(dst, fields.Raw(line))
	}
	dst = d.ensureStarted(dst, fields.Str(jsonscan.Get(params, "sessionId")))
	replay := d.replay
	dst = d.openTurn(dst, replay)
	var u updateOf
	u.parse(tc, &d.scratch)
	t := d.tool(u.toolCallID)
	id := t.id
	t.merge(&u)
	if !t.announced && hasInput(t.input) {
		// The call the agent asks about, once its input is known, comes
		// before the request.
		dst = t.announce(dst)
	}
	p := &agentstream.PermissionRequest{
		RequestID: requestID(l.id),
		CallID:    id,
		Name:      t.name(),
		Options:   []agentstream.PermissionOption{},
	}
	if len(t.input) > 0 {
		p.Input, p.Truncated = fields.Input(t.input)
	}
	kinds := map[string]string{}
	arr, _ := jsonscan.Array(jsonscan.Get(params, "options"))
	for arr.Next() {
		o := arr.Value()
		label, _ := agentstream.Clip(fields.Str(jsonscan.Get(o, "name")), agentstream.MaxText)
		opt := agentstream.PermissionOption{
			ID:    fields.Str(jsonscan.Get(o, "optionId")),
			Label: label,
			Kind:  fields.Str(jsonscan.Get(o, "kind")),
		}
		p.Options = append(p.Options, opt)
		kinds[opt.ID] = opt.Kind
	}
	if p.RequestID != "" {
		if d.perms == nil {
			d.perms = map[string]map[string]string{}
		}
		d.perms[p.RequestID] = kinds
	}
	return append(dst, agentstream.Event{Payload: p, Replay: replay})
}

// prompt maps the client's session/prompt, in a log of both directions:
// the user's message, which opens the turn.
func (d *Decoder) prompt(dst []agentstream.Event, line, params []byte) []agentstream.Event {
	arr, ok := jsonscan.Array(jsonscan.Get(params, "prompt"))
	if !ok {
		return append(dst, fields.Raw(line))
	}
	var parts []string
	for arr.Next() {
		if s := blockText(arr.Value()); s != "" {
			parts = append(parts, s)
		}
	}
	dst = d.flush(dst)
	dst = d.ensureStarted(dst, fields.Str(jsonscan.Get(params, "sessionId")))
	dst = d.openTurn(dst, false)
	text, trunc := agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
	return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
}

// resolved maps the client's answer to a permission request, in a log of
// both directions: the option it selected, by the kind the request gave
// that option, or cancelled.
func (d *Decoder) resolved(reqID string, outcome []byte) *agentstream.RequestResolved {
	kinds, ok := d.perms[reqID]
	if !ok {
		return nil
	}
	delete(d.perms, reqID)
	r := &agentstream.RequestResolved{RequestID: reqID, Outcome: agentstream.OutcomeCancelled}
	if fields.Str(jsonscan.Get(outcome, "outcome")) == "selected" {
		id := fields.Str(jsonscan.Get(outcome, "optionId"))
		r.Answer = id
		r.Outcome = agentstream.OutcomeDenied
		if strings.HasPrefix(kinds[id], "allow") {
			r.Outcome = agentstream.OutcomeAllowed
		}
	}
	return r
}

// requestID returns a JSON-RPC id as text: a string's value, a number's
// digits.
func requestID(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return fields.Str(v)
	}
	if jsonscan.IsNull(v) {
		return ""
	}
	return strings.TrimSpace(string(v))
}

// Claims reports whether lines are ACP: JSON-RPC 2.0 messages with an ACP
// method (session/*, initialize, authenticate, fs/*, terminal/*) or a
// result an ACP agent gives (protocolVersion, sessionId, stopReason), or
// bare update objects ({"sessionUpdate":…}) and prompt results
// ({"stopReason":…}) without a type.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		var jsonrpc, method, result, sessionUpdate, stopReason []byte
		typed, others := false, false
		obj, ok := jsonscan.Object(l)
		if !ok {
			continue
		}
		for obj.Next() {
			switch string(obj.Key()) {
			case "jsonrpc":
				jsonrpc = obj.Value()
			case "method":
				method = obj.Value()
			case "result":
				result = obj.Value()
			case "sessionUpdate":
				sessionUpdate = obj.Value()
			case "stopReason":
				stopReason = obj.Value()
			case "type":
				typed = true
			case "usage", "_meta":
			default:
				others = true
			}
		}
		if obj.Err() != nil {
			continue
		}
		if fields.Str(jsonrpc) == "2.0" {
			m := fields.Str(method)
			if m == "initialize" || m == "authenticate" || strings.HasPrefix(m, "session/") ||
				strings.HasPrefix(m, "fs/") || strings.HasPrefix(m, "terminal/") {
				return true
			}
			for _, k := range []string{"protocolVersion", "sessionId", "stopReason"} {
				if len(jsonscan.Get(result, k)) > 0 {
					return true
				}
			}
			continue
		}
		if typed {
			continue
		}
		if fields.Str(sessionUpdate) != "" {
			return true
		}
		if fields.Str(stopReason) != "" && !others {
			return true
		}
	}
	return false
}

// clientRequest is why the client's own requests stay raw.
const clientRequest = "the client's own request, in a log of both directions: the agent's answer says what came of it"

// agentUse is why the agent's use of the client's files and terminals
// stays raw.
const agentUse = "the agent's use of the client's files or terminals, done for a tool call whose tool_call and tool_call_update lines report it"

// Deliberate lists the native line types (as adapter.NativeType names them)
// that the ACP adapter leaves raw on purpose, each with the reason.
var Deliberate = map[string]string{
	"initialize": clientRequest, "authenticate": clientRequest, "session/new": clientRequest,
	"session/load": clientRequest, "session/resume": clientRequest, "session/close": clientRequest,
	"session/list": clientRequest, "session/cancel": clientRequest, "session/set_config_option": clientRequest,
	"session/set_model": clientRequest,
	"fs/read_text_file": agentUse, "fs/write_text_file": agentUse, "terminal/create": agentUse,
	"terminal/output": agentUse, "terminal/wait_for_exit": agentUse, "terminal/kill": agentUse,
	"terminal/release":                      agentUse,
	"qwen/notify/session/prompt-suggestion": "a prompt Qwen Code suggests the person send next, for a client's input box",
	"craft/drainMidTurnQueue":               "Qwen Code asking the client for messages queued during the turn; what the client sends then is its own prompt",
	"(no type)":                             "answers to requests the adapter does not follow (acknowledgements, file contents and terminal output given to the agent, session lists)",
}

// Folded lists the native line types of ACP whose lines may give no event
// of their own, with where what they say goes.
var Folded = map[string]string{
	"(no type)":      "the initialize answer, whose agent name and version go into session.started",
	"session/update": "an update that changes nothing the adapter reports: a message chunk repeating the whole text so far, a tool call already announced",
}
