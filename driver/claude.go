package driver

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// claude drives Claude Code in stream-json input mode with its control
// protocol (`claude -p --input-format stream-json --output-format
// stream-json --verbose --permission-prompt-tool stdio`): user messages and
// control messages go on stdin, one JSON object a line, and the process
// stays up between turns. Permission requests arrive as can_use_tool control
// requests and are answered with control responses; AskUserQuestion asks
// its questions through the same request.
type claude struct {
	h       Host
	nextID  int
	pending map[string]*claudeRequest // by request_id
	mine    map[string]string         // subtype of each control request sent, by request_id
}

// claudeRequest is a can_use_tool request waiting for its answer.
type claudeRequest struct {
	tool        string
	input       []byte // the tool's input, as the CLI sent it
	suggestions []byte // permission_suggestions, for an allow-always
	question    bool
}

// AskUserQuestion is the tool Claude Code asks the person questions with.
const askUserQuestion = "AskUserQuestion"

func newClaude(Options) *claude {
	return &claude{pending: map[string]*claudeRequest{}, mine: map[string]string{}}
}

func (d *claude) Caps() Caps {
	return Caps{Messages: Native, Steer: Emulated, Interrupt: Native, Permissions: Native,
		Questions: Native, Resume: Native, Model: Native, Mode: Native}
}

// ClaudeArgs are the flags the claude-stream protocol needs besides its
// output flags: input in stream-json, and permission requests on stdio.
// Resume, when set, continues that conversation; mode, when set, is the
// permission mode to start in.
func ClaudeArgs(command []string, resume, mode string) []string {
	out := append([]string(nil), command...)
	if !hasFlag(command, "--permission-prompt-tool") {
		out = append(out, "--permission-prompt-tool", "stdio")
	}
	if resume != "" && !hasFlag(command, "--resume") {
		out = append(out, "--resume", resume)
	}
	if mode != "" && !hasFlag(command, "--permission-mode") {
		out = append(out, "--permission-mode", mode)
	}
	return out
}

func hasFlag(command []string, flag string) bool {
	for _, a := range command {
		if a == flag || len(a) > len(flag) && a[:len(flag)+1] == flag+"=" {
			return true
		}
	}
	return false
}

func (d *claude) Start(c Conn, h Host) {
	d.h = h
	h.Ready()
}

func (d *claude) Send(c Conn, text string) error {
	b := []byte(`{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":`)
	b = jsonscan.AppendQuote(b, text)
	c.Write(append(b, "}]},\"parent_tool_use_id\":null}\n"...))
	return nil
}

func (d *claude) Steer(Conn, string) error { return ErrUnsupported }

func (d *claude) Interrupt(c Conn) error {
	d.control(c, "interrupt", nil)
	return nil
}

func (d *claude) SetMode(c Conn, mode string) error {
	d.control(c, "set_permission_mode", map[string]any{"mode": mode})
	return nil
}

func (d *claude) SetModel(c Conn, model string) error {
	d.control(c, "set_model", map[string]any{"model": model})
	return nil
}

// control sends a control request of the host's.
func (d *claude) control(c Conn, subtype string, fields map[string]any) {
	d.nextID++
	id := "agentstream-" + strconv.Itoa(d.nextID)
	d.mine[id] = subtype
	req := map[string]any{"subtype": subtype}
	for k, v := range fields {
		req[k] = v
	}
	b, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": id, "request": req})
	c.Write(append(b, '\n'))
}

func (d *claude) Answer(c Conn, id string, a Answer) (Resolution, error) {
	r, ok := d.pending[id]
	if !ok {
		return Resolution{}, ErrNoRequest
	}
	var resp map[string]any
	var res Resolution
	switch a.Decision {
	case Allow, AllowAlways:
		input := json.RawMessage(r.input)
		if a.Input != "" {
			input = json.RawMessage(a.Input)
		}
		if r.question {
			var err error
			if input, err = withAnswers(input, a.Answers); err != nil {
				return Resolution{}, err
			}
		}
		if !json.Valid(input) {
			return Resolution{}, fmt.Errorf("driver: claude: the tool's input is not JSON")
		}
		resp = map[string]any{"behavior": "allow", "updatedInput": input}
		if a.Decision == AllowAlways && len(r.suggestions) > 0 && r.suggestions[0] == '[' {
			resp["updatedPermissions"] = json.RawMessage(r.suggestions)
		}
		res = Resolution{Outcome: agentstream.OutcomeAllowed}
		if r.question {
			res = Resolution{Outcome: agentstream.OutcomeAnswered, Answer: answersText(a.Answers)}
		}
	case Deny, Cancel:
		msg := a.Message
		if msg == "" {
			msg = "The user denied this."
			if a.Decision == Cancel {
				msg = "The request was withdrawn: the turn is being interrupted."
			}
		}
		resp = map[string]any{"behavior": "deny", "message": msg}
		res = Resolution{Outcome: agentstream.OutcomeDenied, Answer: msg}
		if a.Decision == Cancel {
			res.Outcome = agentstream.OutcomeCancelled
		}
	default:
		return Resolution{}, fmt.Errorf("driver: claude: decision %q", a.Decision)
	}
	delete(d.pending, id)
	b, _ := json.Marshal(map[string]any{"type": "control_response", "response": map[string]any{
		"subtype": "success", "request_id": id, "response": resp,
	}})
	c.Write(append(b, '\n'))
	return res, nil
}

// withAnswers adds a question's answers to AskUserQuestion's input, which
// is how the tool receives them.
func withAnswers(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(input, &obj); err != nil {
		return nil, fmt.Errorf("driver: claude: AskUserQuestion input: %w", err)
	}
	if answers == nil {
		answers = map[string]string{}
	}
	b, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("driver: claude: answers: %w", err)
	}
	obj["answers"] = b
	return json.Marshal(obj)
}

// answersText writes a question's answers in one line, for request.resolved.
func answersText(answers map[string]string) string {
	b, _ := json.Marshal(answers)
	return string(b)
}

func (d *claude) Line(c Conn, line []byte) {
	typ, _ := jsonscan.String(jsonscan.Get(line, "type"))
	switch typ {
	case "control_request":
		d.request(c, line)
	case "control_cancel_request":
		id, _ := jsonscan.String(jsonscan.Get(line, "request_id"))
		if _, ok := d.pending[id]; ok {
			delete(d.pending, id)
			d.h.Withdrawn(id)
		}
	case "control_response":
		resp := jsonscan.Get(line, "response")
		id, _ := jsonscan.String(jsonscan.Get(resp, "request_id"))
		sub, ok := d.mine[id]
		if !ok {
			return
		}
		delete(d.mine, id)
		if st, _ := jsonscan.String(jsonscan.Get(resp, "subtype")); st == "error" {
			msg, _ := jsonscan.String(jsonscan.Get(resp, "error"))
			text, _ := agentstream.Clip("claude: "+sub+": "+msg, agentstream.MaxText)
			c.Emit(&agentstream.Error{Message: text, ErrorType: "control"})
		}
	case "result":
		{
			status := agentstream.StatusSucceeded
			sub, _ := jsonscan.String(jsonscan.Get(line, "subtype"))
			isErr, _ := jsonscan.Bool(jsonscan.Get(line, "is_error"))
			if sub != "success" || isErr {
				status = agentstream.StatusFailed
				if t, _ := jsonscan.String(jsonscan.Get(line, "terminal_reason")); len(t) >= 7 && t[:7] == "aborted" {
					status = agentstream.StatusCancelled
				}
			}
			d.h.TurnEnded(status, sub)
		}
	}
}

// request reads a control request of the CLI's.
func (d *claude) request(c Conn, line []byte) {
	id, _ := jsonscan.String(jsonscan.Get(line, "request_id"))
	req := jsonscan.Get(line, "request")
	sub, _ := jsonscan.String(jsonscan.Get(req, "subtype"))
	if sub != "can_use_tool" {
		// Hooks and in-process MCP servers were never registered: say so,
		// or the CLI waits.
		b, _ := json.Marshal(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "error", "request_id": id, "error": "agentstream does not handle control request " + strconv.Quote(sub),
		}})
		c.Write(append(b, '\n'))
		return
	}
	tool, _ := jsonscan.String(jsonscan.Get(req, "tool_name"))
	input := jsonscan.Get(req, "input")
	if len(input) == 0 || input[0] != '{' {
		input = []byte("{}")
	}
	compact, _ := jsonscan.AppendCompact(nil, input)
	r := &claudeRequest{tool: tool, input: compact, question: tool == askUserQuestion}
	if s := jsonscan.Get(req, "permission_suggestions"); len(s) > 0 {
		r.suggestions, _ = jsonscan.AppendCompact(nil, s)
	}
	d.pending[id] = r
	callID, _ := jsonscan.String(jsonscan.Get(req, "tool_use_id"))
	out := Request{ID: id, Kind: KindPermission, Tool: tool, CallID: callID, Input: string(compact)}
	if r.question {
		out.Kind = KindQuestion
		if callID != "" {
			out.Aliases = []string{callID}
		}
	}
	d.h.Request(out)
}

func (d *claude) Close(c Conn) bool {
	c.CloseInput()
	return true
}
