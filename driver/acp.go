package driver

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// acp is the client side of the Agent Client Protocol (JSON-RPC 2.0, one
// message a line on the agent's stdin and stdout): it initializes the
// agent, opens a session (session/new, or session/load to resume one),
// sends each message as a session/prompt, cancels a turn with
// session/cancel, and answers the agent's requests. It offers the agent no
// file system and no terminal, and says so in initialize; a request for
// them is refused with "method not found" and a message that says why.
//
// The session/update notifications are the adapter's to read.
type acp struct {
	opts Options
	h    Host

	nextID    int64
	calls     map[int64]string // method of each request awaiting its response
	sessionID string
	loadable  bool // the agent can load sessions
	prompting bool // a session/prompt awaits its response
	pending   map[string]*acpRequest
	// background holds the tool call ids of the tasks the agent runs in
	// the background and has not yet started a turn for.
	background map[string]bool
}

// acpRequest is a request of the agent's awaiting the client's answer.
type acpRequest struct {
	id      json.RawMessage // the JSON-RPC id, as the agent wrote it
	options []agentstream.PermissionOption
}

// acpProtocolVersion is the protocol version the client speaks.
const acpProtocolVersion = 1

// JSON-RPC error codes the client answers with.
const rpcMethodNotFound = -32601

func newACP(opts Options) *acp {
	return &acp{opts: opts, calls: map[int64]string{}, pending: map[string]*acpRequest{}, background: map[string]bool{}}
}

func (d *acp) Caps() Caps {
	resume := None
	if d.loadable || d.sessionID == "" {
		// Known only once the agent answered initialize.
		resume = Native
	}
	return Caps{Messages: Native, Steer: Emulated, Interrupt: Native, Permissions: Native,
		Questions: None, Resume: resume, Model: None, Mode: Native}
}

func (d *acp) Start(c Conn, h Host) {
	d.h = h
	d.request(c, "initialize", map[string]any{
		"protocolVersion": acpProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": d.opts.ClientName, "version": d.opts.ClientVersion},
	})
}

func (d *acp) request(c Conn, method string, params any) {
	d.nextID++
	d.calls[d.nextID] = method
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", d.nextID, method, params})
	c.Write(append(b, '\n'))
}

func (d *acp) notify(c Conn, method string, params any) {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	c.Write(append(b, '\n'))
}

func (d *acp) respond(c Conn, id json.RawMessage, result any, rpcErr any) {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   any             `json:"error,omitempty"`
	}{"2.0", id, result, rpcErr})
	if err != nil {
		return
	}
	c.Write(append(b, '\n'))
}

func (d *acp) Send(c Conn, text string) error {
	if d.sessionID == "" || d.prompting {
		return ErrNotReady
	}
	d.prompting = true
	d.request(c, "session/prompt", map[string]any{
		"sessionId": d.sessionID,
		"prompt":    []map[string]string{{"type": "text", "text": text}},
	})
	return nil
}

func (d *acp) Steer(Conn, string) error { return ErrUnsupported }

func (d *acp) Interrupt(c Conn) error {
	if d.sessionID == "" {
		return ErrNotReady
	}
	d.notify(c, "session/cancel", map[string]string{"sessionId": d.sessionID})
	return nil
}

func (d *acp) SetMode(c Conn, mode string) error {
	if d.sessionID == "" {
		return ErrNotReady
	}
	d.request(c, "session/set_mode", map[string]string{"sessionId": d.sessionID, "modeId": mode})
	return nil
}

func (d *acp) SetModel(Conn, string) error { return ErrUnsupported }

// Answer answers a permission request with the agent's own option: allow
// once (or always) when allowing, reject once when denying; Cancel answers
// the outcome cancelled, as a client must for the requests of a turn it
// cancels.
func (d *acp) Answer(c Conn, id string, a Answer) (Resolution, error) {
	r, ok := d.pending[id]
	if !ok {
		return Resolution{}, ErrNoRequest
	}
	var opt *agentstream.PermissionOption
	switch {
	case a.Option != "":
		for i := range r.options {
			if r.options[i].ID == a.Option {
				opt = &r.options[i]
			}
		}
		if opt == nil {
			return Resolution{}, errors.New("driver: acp: no option " + strconv.Quote(a.Option) + " in the request")
		}
	case a.Decision == Allow:
		opt = pick(r.options, "allow_once", "allow_always")
	case a.Decision == AllowAlways:
		opt = pick(r.options, "allow_always", "allow_once")
	case a.Decision == Deny:
		opt = pick(r.options, "reject_once", "reject_always")
	case a.Decision == Cancel:
	default:
		return Resolution{}, errors.New("driver: acp: decision " + strconv.Quote(a.Decision))
	}
	delete(d.pending, id)
	if opt == nil {
		d.respond(c, r.id, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}, nil)
		return Resolution{Outcome: agentstream.OutcomeCancelled}, nil
	}
	d.respond(c, r.id, map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": opt.ID}}, nil)
	out := agentstream.OutcomeDenied
	if opt.Kind == "allow_once" || opt.Kind == "allow_always" {
		out = agentstream.OutcomeAllowed
	}
	return Resolution{Outcome: out, Answer: opt.ID}, nil
}

// pick returns the first option of the first kind that has one.
func pick(opts []agentstream.PermissionOption, kinds ...string) *agentstream.PermissionOption {
	for _, k := range kinds {
		for i := range opts {
			if opts[i].Kind == k && opts[i].ID != "" {
				return &opts[i]
			}
		}
	}
	return nil
}

func (d *acp) Line(c Conn, line []byte) {
	msg, ok := parseRPC(line)
	if !ok {
		return
	}
	id, method, result, rpcErr, params := msg.id, msg.method, msg.result, msg.err, msg.params
	m, _ := jsonscan.String(method)
	if len(id) == 0 || jsonscan.IsNull(id) {
		if m == "$/cancel_request" {
			rid := requestID(jsonscan.Get(params, "requestId"))
			if _, ok := d.pending[rid]; ok {
				delete(d.pending, rid)
				d.h.Withdrawn(rid)
			}
		}
		if m == "session/update" {
			d.update(params)
		}
		return // a notification: the adapter's
	}
	if m != "" {
		d.agentRequest(c, id, m, params)
		return
	}
	n, ok := jsonscan.Int(id)
	if !ok {
		return
	}
	call, ok := d.calls[n]
	if !ok {
		return
	}
	delete(d.calls, n)
	if len(rpcErr) > 0 && !jsonscan.IsNull(rpcErr) {
		msg, _ := jsonscan.String(jsonscan.Get(rpcErr, "message"))
		if msg == "" {
			msg = string(rpcErr)
		}
		d.failed(call, msg)
		return
	}
	switch call {
	case "initialize":
		d.loadable, _ = jsonscan.Bool(jsonscan.GetPath(result, "agentCapabilities", "loadSession"))
		if d.opts.Resume != "" {
			if !d.loadable {
				d.h.Failed(errors.New("acp: the agent cannot load a session (agentCapabilities.loadSession is false)"))
				return
			}
			d.request(c, "session/load", map[string]any{"sessionId": d.opts.Resume, "cwd": d.opts.Cwd, "mcpServers": []any{}})
			return
		}
		d.request(c, "session/new", map[string]any{"cwd": d.opts.Cwd, "mcpServers": []any{}})
	case "session/new":
		d.sessionID, _ = jsonscan.String(jsonscan.Get(result, "sessionId"))
		if d.sessionID == "" {
			d.h.Failed(errors.New("acp: session/new: no sessionId in the response"))
			return
		}
		d.h.Ready()
	case "session/load":
		d.sessionID = d.opts.Resume
		d.h.Ready()
	case "session/prompt":
		d.prompting = false
		stop, _ := jsonscan.String(jsonscan.Get(result, "stopReason"))
		switch stop {
		case "end_turn":
			d.h.TurnEnded(agentstream.StatusSucceeded, "")
		case "cancelled":
			d.h.TurnEnded(agentstream.StatusCancelled, stop)
		default:
			d.h.TurnEnded(agentstream.StatusFailed, "stop reason "+stop)
		}
	}
}

// failed handles an error response: the handshake's ends the conversation,
// a prompt's ends its turn. The adapter records the error itself.
func (d *acp) failed(call, msg string) {
	switch call {
	case "initialize", "session/new", "session/load":
		d.h.Failed(errors.New("acp: " + call + ": " + msg))
	case "session/prompt":
		d.prompting = false
		d.h.TurnEnded(agentstream.StatusFailed, msg)
	}
}

// update follows, in a session/update, the tasks the agent runs in the
// background: Qwen Code's agent tool answers at once when it launches its
// subagent in the background (rawOutput status "background"), and starts a
// turn of its own when the subagent ends (_qwencode/start_turn).
func (d *acp) update(params []byte) {
	u := jsonscan.Get(params, "update")
	if s, _ := jsonscan.String(jsonscan.Get(u, "sessionUpdate")); s != "tool_call_update" {
		return
	}
	if st, _ := jsonscan.String(jsonscan.GetPath(u, "rawOutput", "status")); st != "background" {
		return
	}
	if id, _ := jsonscan.String(jsonscan.Get(u, "toolCallId")); id != "" && !d.background[id] {
		d.background[id] = true
		d.h.Background(len(d.background))
	}
}

// qwenStartTurn is Qwen Code's request to start a turn of its own, for a
// background task that ended; the client may defer it (accepted false) or
// take it (accepted true, or method not found).
const qwenStartTurn = "_qwencode/start_turn"

// agentRequest answers a request of the agent's: a permission request is
// the host's to answer, a turn the agent starts by itself is taken;
// anything else is refused.
func (d *acp) agentRequest(c Conn, id []byte, method string, params []byte) {
	if method == qwenStartTurn {
		d.respond(c, id, map[string]bool{"accepted": true}, nil)
		if t, _ := jsonscan.String(jsonscan.Get(params, "toolUseId")); d.background[t] {
			delete(d.background, t)
			d.h.Background(len(d.background))
		}
		return
	}
	if method != "session/request_permission" {
		msg := "method not found: " + method
		switch {
		case len(method) > 3 && method[:3] == "fs/":
			msg += " (agentstream offers agents no file system: its clientCapabilities.fs are false)"
		case len(method) > 9 && method[:9] == "terminal/":
			msg += " (agentstream offers agents no terminal: its clientCapabilities.terminal is false)"
		}
		d.respond(c, id, nil, map[string]any{"code": rpcMethodNotFound, "message": msg})
		return
	}
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Name     string `json:"name"`
			Kind     string `json:"kind"`
		} `json:"options"`
		ToolCall struct {
			ToolCallID string          `json:"toolCallId"`
			Title      string          `json:"title"`
			Kind       string          `json:"kind"`
			RawInput   json.RawMessage `json:"rawInput"`
		} `json:"toolCall"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		// Without its options the request cannot be answered but as
		// cancelled; the adapter keeps the line.
		d.respond(c, id, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}, nil)
		c.Emit(&agentstream.Warning{Message: "acp: session/request_permission: " + err.Error() + ": answered cancelled"})
		return
	}
	r := &acpRequest{id: append(json.RawMessage(nil), id...)}
	for _, o := range p.Options {
		r.options = append(r.options, agentstream.PermissionOption{ID: o.OptionID, Label: o.Name, Kind: o.Kind})
	}
	rid := requestID(id)
	d.pending[rid] = r
	input := ""
	if len(p.ToolCall.RawInput) > 0 {
		if b, ok := jsonscan.AppendCompact(nil, p.ToolCall.RawInput); ok {
			input = string(b)
		}
	}
	d.h.Request(Request{
		ID: rid, Kind: KindPermission, Tool: p.ToolCall.Title, CallID: p.ToolCall.ToolCallID,
		Category: p.ToolCall.Kind, Summary: p.ToolCall.Title, Input: input, Options: r.options,
	})
}

// requestID is a JSON-RPC id as text: a string's value, a number's digits,
// as the acp adapter writes it in permission.request.
func requestID(id []byte) string {
	if s, ok := jsonscan.String(id); ok {
		return s
	}
	if n, ok := jsonscan.Int(id); ok {
		return strconv.FormatInt(n, 10)
	}
	return string(id)
}

// Close closes stdin; an ACP agent does not exit when it closes, so the
// host stops it.
func (d *acp) Close(c Conn) bool {
	c.CloseInput()
	return false
}
