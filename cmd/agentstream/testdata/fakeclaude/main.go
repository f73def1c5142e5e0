// Command fakeclaude plays Claude Code in stream-json input mode with its
// control protocol, for the tests of live sessions: a real child process
// that reads user messages and control messages on stdin and takes its
// script from the messages themselves. A message is a list of steps,
// separated by ";" or new lines:
//
//	run: CMD        a Bash call of CMD, asked for with can_use_tool
//	read: PATH      a Read call of PATH, asked for the same way
//	ask: Q | A | B  an AskUserQuestion call with the options A and B
//	wait            a Bash call ("sleep") that runs until interrupted
//	anything else   said back as the assistant's text
//
// An allowed call's result is "ran CMD" (or "read PATH", or the answers);
// a denied one's is the denial's message, as an error. Each turn ends with a
// result line; an interrupt ends it at once, cancelled. It exits when stdin
// closes.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

const session = "fake-claude-session"

var (
	out    = json.NewEncoder(os.Stdout)
	lines  = make(chan map[string]any, 16)
	nextID int
)

func send(v any) { out.Encode(v) }

func main() {
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	send(map[string]any{"type": "system", "subtype": "init", "session_id": session, "model": "claude-fake-1",
		"cwd": cwd(), "tools": []string{"Bash", "Read", "AskUserQuestion"}, "permissionMode": "default", "claude_code_version": "0.0.0-fake"})
	for m := range lines {
		if m["type"] == "user" {
			turn(userText(m))
		} else {
			control(m)
		}
	}
}

func cwd() string {
	d, _ := os.Getwd()
	return d
}

// userText is the text of a user message line.
func userText(m map[string]any) string {
	msg, _ := m["message"].(map[string]any)
	parts, _ := msg["content"].([]any)
	var b strings.Builder
	for _, p := range parts {
		if p, ok := p.(map[string]any); ok && p["type"] == "text" {
			s, _ := p["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// control answers a control message of the host's outside a turn.
func control(m map[string]any) {
	if m["type"] != "control_request" {
		return
	}
	send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m["request_id"]}})
}

// turn plays one message's steps.
func turn(text string) {
	start := time.Now()
	steps := strings.FieldsFunc(text, func(r rune) bool { return r == ';' || r == '\n' })
	for _, step := range steps {
		step = strings.TrimSpace(step)
		if step == "" {
			continue
		}
		verb, arg, _ := strings.Cut(step, ":")
		arg = strings.TrimSpace(arg)
		var ok bool
		switch strings.TrimSpace(verb) {
		case "run":
			ok = call("Bash", map[string]any{"command": arg, "description": "Run " + arg}, "ran "+arg)
		case "read":
			ok = call("Read", map[string]any{"file_path": arg}, "read "+arg)
		case "ask":
			ok = ask(arg)
		case "wait":
			ok = call("Bash", map[string]any{"command": "sleep 600", "description": "Wait"}, "")
		default:
			say(step)
			ok = true
		}
		if !ok {
			result(start, true)
			return
		}
	}
	say("Done.")
	result(start, false)
}

func say(text string) {
	nextID++
	send(map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", nextID), "role": "assistant", "model": "claude-fake-1",
		"content": []any{map[string]any{"type": "text", "text": text}},
		"usage":   map[string]any{"input_tokens": 10, "output_tokens": 5},
	}})
}

func result(start time.Time, interrupted bool) {
	r := map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "Done.", "num_turns": 1,
		"duration_ms": time.Since(start).Milliseconds(), "session_id": session, "total_cost_usd": 0.001,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
	if interrupted {
		r["subtype"], r["is_error"], r["terminal_reason"], r["result"] = "error_during_execution", true, "aborted_tools", ""
	}
	send(r)
}

// call makes a tool call, asks for permission, and gives its result. It
// returns false when the turn was interrupted. An empty allowed result
// means the call runs until an interrupt.
func call(tool string, input map[string]any, allowed string) bool {
	nextID++
	id := fmt.Sprintf("toolu_%02d", nextID)
	send(map[string]any{"type": "assistant", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
		"id": "msg_" + id, "role": "assistant", "model": "claude-fake-1",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": tool, "input": input}},
	}})
	resp, ok := permission(id, tool, input)
	if !ok {
		return false
	}
	if resp["behavior"] == "allow" {
		if allowed == "" {
			return waitInterrupt(id)
		}
		if tool == "AskUserQuestion" {
			in, _ := resp["updatedInput"].(map[string]any)
			b, _ := json.Marshal(in["answers"])
			allowed = "answers " + string(b)
		}
		toolResult(id, allowed, false)
		return true
	}
	msg, _ := resp["message"].(string)
	toolResult(id, msg, true)
	return true
}

func ask(arg string) bool {
	parts := strings.Split(arg, "|")
	q := strings.TrimSpace(parts[0])
	var opts []any
	for _, o := range parts[1:] {
		opts = append(opts, map[string]any{"label": strings.TrimSpace(o), "description": "Choose " + strings.TrimSpace(o)})
	}
	return call("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
		"question": q, "header": "Choice", "options": opts, "multiSelect": false,
	}}}, "answered")
}

func toolResult(id, content string, isError bool) {
	send(map[string]any{"type": "user", "session_id": session, "parent_tool_use_id": nil, "message": map[string]any{
		"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}},
	}})
}

// permission sends a can_use_tool request and waits for its answer; ok is
// false when an interrupt came first (or stdin closed).
func permission(callID, tool string, input map[string]any) (resp map[string]any, ok bool) {
	rid := "perm-" + callID
	send(map[string]any{"type": "control_request", "request_id": rid, "request": map[string]any{
		"subtype": "can_use_tool", "tool_name": tool, "input": input, "tool_use_id": callID,
	}})
	for m := range lines {
		switch m["type"] {
		case "control_response":
			r, _ := m["response"].(map[string]any)
			if r["request_id"] == rid {
				resp, _ = r["response"].(map[string]any)
				return resp, true
			}
		case "control_request":
			control(m)
			if req, _ := m["request"].(map[string]any); req["subtype"] == "interrupt" {
				send(map[string]any{"type": "control_cancel_request", "request_id": rid})
				return nil, false
			}
		}
	}
	return nil, false
}

// waitInterrupt runs a call until an interrupt ends it.
func waitInterrupt(callID string) bool {
	for m := range lines {
		if m["type"] != "control_request" {
			continue
		}
		control(m)
		if req, _ := m["request"].(map[string]any); req["subtype"] == "interrupt" {
			toolResult(callID, "Interrupted by the user.", true)
			return false
		}
	}
	return false
}
