package runner

import (
	"encoding/json"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// acpClient is the client side of the Agent Client Protocol (JSON-RPC 2.0,
// one message per line on the agent's stdin and stdout): it opens a
// session, sends the prompt, answers the agent's requests, and ends the
// session when the prompt's response arrives. The session/update
// notifications themselves are the adapter's to read; the client sees each
// stdout line after the adapter did.
//
// It belongs to the session's goroutine.
type acpClient struct {
	cwd     string
	prompt  string
	approve bool

	nextID    int64
	pending   map[int64]string // method of each request awaiting its response
	sessionID string
	finished  bool
}

// acpProtocolVersion is the protocol version the client speaks.
const acpProtocolVersion = 1

// JSON-RPC error codes the client answers with.
const rpcMethodNotFound = -32601

// start sends initialize. The client advertises no file system and no
// terminal, so the agent does not ask for them.
func (c *acpClient) start(s *session) {
	c.request(s, "initialize", map[string]any{
		"protocolVersion": acpProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "agentstream", "version": ClientVersion},
	})
}

func (c *acpClient) request(s *session, method string, params any) {
	c.nextID++
	if c.pending == nil {
		c.pending = map[int64]string{}
	}
	c.pending[c.nextID] = method
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", c.nextID, method, params})
	s.in.send(append(b, '\n'))
}

func (c *acpClient) respond(s *session, id []byte, result any, rpcErr any) {
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   any             `json:"error,omitempty"`
	}{"2.0", json.RawMessage(id), result, rpcErr}
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	s.in.send(append(b, '\n'))
}

// line reads one stdout line for what concerns the client: responses to
// its requests and requests from the agent. endedByLine says whether the
// adapter already wrote a session.ended for this line.
func (c *acpClient) line(s *session, b []byte, endedByLine bool) {
	o, ok := jsonscan.Object(b)
	if !ok {
		return
	}
	var id, method, result, rpcErr, params []byte
	for o.Next() {
		switch {
		case o.KeyIs("id"):
			id = o.Value()
		case o.KeyIs("method"):
			method = o.Value()
		case o.KeyIs("result"):
			result = o.Value()
		case o.KeyIs("error"):
			rpcErr = o.Value()
		case o.KeyIs("params"):
			params = o.Value()
		}
	}
	if o.Err() != nil || len(id) == 0 || jsonscan.IsNull(id) {
		return // a notification, or not JSON-RPC
	}
	if m, ok := jsonscan.String(method); ok && m != "" {
		c.answer(s, id, m, params)
		return
	}
	n, ok := jsonscan.Int(id)
	if !ok {
		return
	}
	m, ok := c.pending[n]
	if !ok {
		return
	}
	delete(c.pending, n)
	if len(rpcErr) > 0 && !jsonscan.IsNull(rpcErr) {
		msg, _ := jsonscan.String(jsonscan.Get(rpcErr, "message"))
		if msg == "" {
			msg = string(rpcErr)
		}
		c.fail(s, m, msg, endedByLine)
		return
	}
	switch m {
	case "initialize":
		c.request(s, "session/new", map[string]any{"cwd": c.cwd, "mcpServers": []any{}})
	case "session/new":
		c.sessionID, _ = jsonscan.String(jsonscan.Get(result, "sessionId"))
		if c.sessionID == "" {
			c.fail(s, m, "no sessionId in the response", endedByLine)
			return
		}
		c.send(s, c.prompt)
	case "session/prompt":
		stop, _ := jsonscan.String(jsonscan.Get(result, "stopReason"))
		c.end(s, stop, endedByLine)
	}
}

// send sends a prompt in the session and records it. The adapter opens the
// turn at the agent's first output.
func (c *acpClient) send(s *session, text string) {
	c.finished = false
	c.request(s, "session/prompt", map[string]any{
		"sessionId": c.sessionID,
		"prompt":    []map[string]string{{"type": "text", "text": text}},
	})
	s.recordText(text, s.now())
}

// end records the end of the turn the prompt started.
func (c *acpClient) end(s *session, stopReason string, endedByLine bool) {
	if c.finished {
		return
	}
	c.finished = true
	if endedByLine {
		return
	}
	status := agentstream.StatusFailed
	switch stopReason {
	case "end_turn":
		status = agentstream.StatusSucceeded
	case "cancelled":
		status = agentstream.StatusCancelled
	}
	s.add(agentstream.E(&agentstream.SessionEnded{
		Status: status, StopReason: stopReason, Reason: agentstream.ReasonCompletion,
	}), s.now())
}

// fail records an error response, which ends the run: the agent reported
// that it cannot do the work.
func (c *acpClient) fail(s *session, method, msg string, endedByLine bool) {
	text, _ := agentstream.Clip("acp: "+method+": "+msg, agentstream.MaxText)
	s.add(agentstream.E(&agentstream.Error{Message: text, ErrorType: "acp"}), s.now())
	if c.finished {
		return
	}
	c.finished = true
	if !endedByLine {
		s.add(agentstream.E(&agentstream.SessionEnded{
			Status: agentstream.StatusFailed, Reason: agentstream.ReasonCompletion, Error: text,
		}), s.now())
	}
}

// acpOption is one option of a permission request.
type acpOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// answer answers a request from the agent: a permission request by the
// policy, anything else (the client offers no file system and no terminal)
// with "method not found".
func (c *acpClient) answer(s *session, id []byte, method string, params []byte) {
	if method != "session/request_permission" {
		c.respond(s, id, nil, map[string]any{"code": rpcMethodNotFound, "message": "method not found: " + method})
		return
	}
	var p struct {
		Options []acpOption `json:"options"`
	}
	json.Unmarshal(params, &p)
	choice := choose(p.Options, c.approve)
	resolved := &agentstream.RequestResolved{RequestID: requestID(id), Auto: true}
	if choice == nil {
		resolved.Outcome = agentstream.OutcomeCancelled
		c.respond(s, id, map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}, nil)
	} else {
		resolved.Outcome = agentstream.OutcomeDenied
		if choice.Kind == "allow_once" || choice.Kind == "allow_always" {
			resolved.Outcome = agentstream.OutcomeAllowed
		}
		resolved.Answer = choice.OptionID
		c.respond(s, id, map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": choice.OptionID}}, nil)
	}
	s.add(agentstream.E(resolved), s.now())
}

// choose picks the option the policy wants: allow once rather than always
// when allowing, reject once rather than always when not. Nil means no
// option fits; the request is then answered as cancelled.
func choose(opts []acpOption, allow bool) *acpOption {
	kinds := []string{"reject_once", "reject_always"}
	if allow {
		kinds = []string{"allow_once", "allow_always"}
	}
	for _, k := range kinds {
		for i := range opts {
			if opts[i].Kind == k && opts[i].OptionID != "" {
				return &opts[i]
			}
		}
	}
	return nil
}

// requestID is a JSON-RPC id as text: a string's value, a number's digits.
func requestID(id []byte) string {
	if s, ok := jsonscan.String(id); ok {
		return s
	}
	if n, ok := jsonscan.Int(id); ok {
		return strconv.FormatInt(n, 10)
	}
	return string(id)
}

// ClientVersion is the version agentstream gives where a protocol asks for
// the client's (ACP's clientInfo, which agents refuse without one): the
// module's version when the binary was built from a released module, else
// "devel".
var ClientVersion = clientVersion()

func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "devel"
}
