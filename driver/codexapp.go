package driver

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// codexApp is the client side of Codex's app-server protocol (`codex
// app-server`: JSON-RPC messages without the "jsonrpc" member, one a line):
// it initializes the server, starts a thread (or resumes one), sends each
// message as turn/start, steers the running turn with turn/steer,
// interrupts it with turn/interrupt, and answers the server's approval
// requests. Requests it cannot serve (dynamic tools, token refreshes, user
// input) are refused with an error that says so.
type codexApp struct {
	opts Options
	h    Host

	nextID  int64
	calls   map[int64]string // method of each request awaiting its response
	thread  string
	turn    string // the running turn's id, once known
	pending map[string]*codexRequest
}

// codexRequest is an approval request awaiting its answer.
type codexRequest struct {
	id        json.RawMessage
	decisions []string // the decisions the server offers, when it says
}

func newCodexApp(opts Options) *codexApp {
	return &codexApp{opts: opts, calls: map[int64]string{}, pending: map[string]*codexRequest{}}
}

func (d *codexApp) Caps() Caps {
	return Caps{Messages: Native, Steer: Native, Interrupt: Native, Permissions: Native,
		Questions: None, Resume: Native, Model: Native, Mode: Native}
}

func (d *codexApp) write(c Conn, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	c.Write(append(b, '\n'))
}

func (d *codexApp) request(c Conn, method string, params any) {
	d.nextID++
	d.calls[d.nextID] = method
	d.write(c, map[string]any{"id": d.nextID, "method": method, "params": params})
}

func (d *codexApp) Start(c Conn, h Host) {
	d.h = h
	d.request(c, "initialize", map[string]any{
		"clientInfo": map[string]string{"name": d.opts.ClientName, "version": d.opts.ClientVersion},
	})
}

func (d *codexApp) Send(c Conn, text string) error {
	if d.thread == "" {
		return ErrNotReady
	}
	d.turn = ""
	d.request(c, "turn/start", map[string]any{"threadId": d.thread, "input": textInput(text)})
	return nil
}

func textInput(text string) []map[string]string {
	return []map[string]string{{"type": "text", "text": text}}
}

// Steer adds text to the running turn; it needs the turn's id, which the
// server gives once the turn started.
func (d *codexApp) Steer(c Conn, text string) error {
	if d.turn == "" {
		return ErrNotReady
	}
	d.request(c, "turn/steer", map[string]any{"threadId": d.thread, "expectedTurnId": d.turn, "input": textInput(text)})
	return nil
}

func (d *codexApp) Interrupt(c Conn) error {
	if d.turn == "" {
		return ErrNotReady
	}
	d.request(c, "turn/interrupt", map[string]string{"threadId": d.thread, "turnId": d.turn})
	return nil
}

// SetMode sets the approval policy of the turns to come (untrusted,
// on-request, never).
func (d *codexApp) SetMode(c Conn, mode string) error {
	d.opts.Mode = mode
	return nil
}

func (d *codexApp) SetModel(c Conn, model string) error {
	d.opts.Model = model
	return nil
}

// Answer answers an approval: accept, acceptForSession (accept when the
// server does not offer it), decline, or cancel for a withdrawn one.
func (d *codexApp) Answer(c Conn, id string, a Answer) (Resolution, error) {
	r, ok := d.pending[id]
	if !ok {
		return Resolution{}, ErrNoRequest
	}
	var decision string
	res := Resolution{Outcome: agentstream.OutcomeAllowed}
	switch {
	case a.Option != "":
		decision = a.Option
		if kind := decisionKind(a.Option); kind != Allow && kind != AllowAlways {
			res.Outcome = agentstream.OutcomeDenied
		}
	case a.Decision == Allow:
		decision = "accept"
	case a.Decision == AllowAlways:
		decision = r.offer("acceptForSession", "accept")
	case a.Decision == Deny:
		// The protocol has decline (the turn goes on) besides cancel (the
		// turn ends), even where availableDecisions lists only cancel.
		decision = "decline"
		res.Outcome = agentstream.OutcomeDenied
	case a.Decision == Cancel:
		decision = "cancel"
		res.Outcome = agentstream.OutcomeCancelled
	default:
		return Resolution{}, errors.New("driver: codex-app: decision " + strconv.Quote(a.Decision))
	}
	delete(d.pending, id)
	res.Answer = decision
	d.write(c, map[string]any{"id": r.id, "result": map[string]string{"decision": decision}})
	return res, nil
}

// offer returns the first of the decisions the server offers, or the first
// when it does not list them.
func (r *codexRequest) offer(decisions ...string) string {
	if len(r.decisions) == 0 {
		return decisions[0]
	}
	for _, d := range decisions {
		for _, o := range r.decisions {
			if o == d {
				return d
			}
		}
	}
	return decisions[len(decisions)-1]
}

func decisionKind(s string) string {
	switch s {
	case "accept":
		return Allow
	case "acceptForSession":
		return AllowAlways
	}
	return Deny
}

func (d *codexApp) Line(c Conn, line []byte) {
	msg, ok := parseRPC(line)
	if !ok {
		return
	}
	id, method, result, rpcErr, params := msg.id, msg.method, msg.result, msg.err, msg.params
	m, _ := jsonscan.String(method)
	hasID := len(id) > 0 && !jsonscan.IsNull(id)
	switch {
	case m != "" && hasID:
		d.serverRequest(c, id, m, params)
	case m != "":
		d.notification(m, params)
	case hasID:
		d.response(c, id, result, rpcErr)
	}
}

func (d *codexApp) notification(m string, params []byte) {
	switch m {
	case "turn/started":
		d.turn, _ = jsonscan.String(jsonscan.GetPath(params, "turn", "id"))
	case "turn/completed":
		d.turn = ""
		turn := jsonscan.Get(params, "turn")
		st, _ := jsonscan.String(jsonscan.Get(turn, "status"))
		switch st {
		case "completed":
			d.h.TurnEnded(agentstream.StatusSucceeded, "")
		case "interrupted":
			d.h.TurnEnded(agentstream.StatusCancelled, "interrupted")
		default:
			msg, _ := jsonscan.String(jsonscan.GetPath(turn, "error", "message"))
			d.h.TurnEnded(agentstream.StatusFailed, msg)
		}
	case "serverRequest/resolved":
		rid := requestID(jsonscan.Get(params, "requestId"))
		if _, ok := d.pending[rid]; ok {
			delete(d.pending, rid)
			d.h.Withdrawn(rid)
		}
	}
}

func (d *codexApp) response(c Conn, id, result, rpcErr []byte) {
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
		switch call {
		case "initialize", "thread/start", "thread/resume":
			d.h.Failed(errors.New("codex-app: " + call + ": " + msg))
		case "turn/start":
			d.h.TurnEnded(agentstream.StatusFailed, msg)
		}
		return
	}
	switch call {
	case "initialize":
		d.write(c, map[string]string{"method": "initialized"})
		params := map[string]any{"cwd": d.opts.Cwd}
		if d.opts.Mode != "" {
			params["approvalPolicy"] = d.opts.Mode
		}
		if d.opts.Model != "" {
			params["model"] = d.opts.Model
		}
		if d.opts.Resume != "" {
			params["threadId"] = d.opts.Resume
			d.request(c, "thread/resume", params)
			return
		}
		d.request(c, "thread/start", params)
	case "thread/start", "thread/resume":
		d.thread, _ = jsonscan.String(jsonscan.GetPath(result, "thread", "id"))
		if d.thread == "" {
			d.h.Failed(errors.New("codex-app: " + call + ": no thread id in the response"))
			return
		}
		d.h.Ready()
	case "turn/start":
		if t, ok := jsonscan.String(jsonscan.GetPath(result, "turn", "id")); ok && d.turn == "" {
			d.turn = t
		}
	}
}

// serverRequest answers a request of the server's: an approval is the
// host's to answer, anything else is refused.
func (d *codexApp) serverRequest(c Conn, id []byte, method string, params []byte) {
	switch method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
	default:
		d.write(c, map[string]any{"id": json.RawMessage(id), "error": map[string]any{
			"code": rpcMethodNotFound, "message": "agentstream does not serve " + method,
		}})
		return
	}
	r := &codexRequest{id: append(json.RawMessage(nil), id...)}
	arr, _ := jsonscan.Array(jsonscan.Get(params, "availableDecisions"))
	var opts []agentstream.PermissionOption
	for arr.Next() {
		if s, ok := jsonscan.String(arr.Value()); ok {
			r.decisions = append(r.decisions, s)
			opts = append(opts, agentstream.PermissionOption{ID: s, Label: s})
		}
	}
	rid := requestID(id)
	d.pending[rid] = r
	callID, _ := jsonscan.String(jsonscan.Get(params, "itemId"))
	req := Request{ID: rid, Kind: KindPermission, CallID: callID, Options: opts}
	if method == "item/commandExecution/requestApproval" {
		req.Tool, req.Category = "shell", "execute"
		cmd, _ := jsonscan.String(jsonscan.Get(params, "command"))
		req.Input = string(mustJSON(map[string]string{"command": cmd}))
	} else {
		req.Tool, req.Category = "apply_patch", "edit"
	}
	d.h.Request(req)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Close closes stdin; the server exits when it closes.
func (d *codexApp) Close(c Conn) bool {
	c.CloseInput()
	return true
}
