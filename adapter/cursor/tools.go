package cursor

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// toolCall is the tool_call member of a tool_call line:
// {"<kind>ToolCall":{"args":{…},"result":{…}}} or, for tools without a kind
// of their own, {"function":{"name","arguments"}}.
type toolCall struct {
	kind   string // the key without "ToolCall", such as "shell"
	name   string // the tool name written in events
	args   []byte
	result []byte
}

// toolCallKey returns the key of the "<kind>ToolCall" member of v.
func toolCallKey(v []byte) []byte {
	obj, _ := jsonscan.Object(v)
	for obj.Next() {
		k := obj.Key()
		if bytes.HasSuffix(k, []byte("ToolCall")) && len(k) > len("ToolCall") {
			if val := obj.Value(); len(val) > 0 && val[0] == '{' {
				return k
			}
		}
	}
	return nil
}

func parseToolCall(v []byte) toolCall {
	var tc toolCall
	obj, _ := jsonscan.Object(v)
	for obj.Next() {
		k, val := obj.Key(), obj.Value()
		if len(val) == 0 || val[0] != '{' {
			continue
		}
		switch {
		case bytes.HasSuffix(k, []byte("ToolCall")) && len(k) > len("ToolCall"):
			tc.kind = unescape(k[:len(k)-len("ToolCall")])
			tc.name = tc.kind
			inner, _ := jsonscan.Object(val)
			for inner.Next() {
				switch string(inner.Key()) {
				case "args":
					tc.args = inner.Value()
				case "result":
					tc.result = inner.Value()
				}
			}
			return tc
		case string(k) == "function":
			tc.name = fields.Str(jsonscan.Get(val, "name"))
			tc.args = jsonscan.Get(val, "arguments")
			if s := fields.Str(tc.args); s != "" && jsonscan.Valid([]byte(s)) {
				tc.args = []byte(s)
			}
			tc.result = jsonscan.Get(val, "result")
		}
	}
	return tc
}

func unescape(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return string(k)
	}
	s, _ := jsonscan.String(append(append([]byte{'"'}, k...), '"'))
	return s
}

// cursorTools says, for each tool kind the adapter knows, its category and
// which argument keys give the safe summary.
var cursorTools = map[string]struct {
	category string
	keys     []string
}{
	"shell":       {agentstream.CategoryExecute, []string{"command"}},
	"read":        {agentstream.CategoryRead, []string{"path", "filePath"}},
	"ls":          {agentstream.CategoryRead, []string{"path"}},
	"edit":        {agentstream.CategoryEdit, []string{"path", "filePath"}},
	"write":       {agentstream.CategoryEdit, []string{"path", "filePath"}},
	"delete":      {agentstream.CategoryDelete, []string{"path", "filePath"}},
	"grep":        {agentstream.CategorySearch, []string{"pattern"}},
	"glob":        {agentstream.CategorySearch, []string{"globPattern", "glob_pattern", "pattern"}},
	"semSearch":   {agentstream.CategorySearch, []string{"query"}},
	"updateTodos": {agentstream.CategoryPlan, nil},
	"mcp":         {agentstream.CategoryMCP, nil},
}

// describe returns the category and safe summary of a call.
func (tc *toolCall) describe() (category, summary string) {
	t, ok := cursorTools[tc.kind]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	switch tc.kind {
	case "updateTodos":
		arr, ok := jsonscan.Array(jsonscan.Get(tc.args, "todos"))
		n := 0
		for ok && arr.Next() {
			n++
		}
		if n == 1 {
			return t.category, "1 todo"
		}
		return t.category, strconv.Itoa(n) + " todos"
	case "mcp":
		server := fields.Str(jsonscan.Get(tc.args, "providerIdentifier"))
		tool := fields.Str(jsonscan.Get(tc.args, "toolName"))
		if tool == "" {
			tool = fields.Str(jsonscan.Get(tc.args, "name"))
		}
		switch {
		case server != "" && tool != "":
			return t.category, fields.Summary(server + ": " + tool)
		default:
			return t.category, fields.Summary(server + tool)
		}
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(tc.args, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

func (tc *toolCall) call(callID string) *agentstream.ToolCall {
	in, trunc := fields.Input(tc.args)
	category, summary := tc.describe()
	return &agentstream.ToolCall{CallID: callID, Name: tc.name, Input: in, Truncated: trunc, Category: category, Summary: summary}
}

// results returns the events of a completed call: tool.result, plus
// file.change for an edit with a diff or a delete that succeeded.
func (tc *toolCall) results(callID string) []agentstream.Event {
	r := &agentstream.ToolResult{CallID: callID, Name: tc.name}
	// The result is {"success":{…}}, or {"error":{…}} (or "failure",
	// "rejected", …) when the tool did not do its work.
	var outcome, failure []byte
	obj, _ := jsonscan.Object(tc.result)
	for obj.Next() {
		if string(obj.Key()) == "success" {
			outcome = obj.Value()
		} else if failure == nil {
			failure = obj.Value()
		}
	}
	if outcome == nil && failure != nil {
		outcome, r.IsError = failure, true
	}
	switch {
	case len(outcome) == 0:
	case r.IsError && tc.kind != "shell":
		r.Output, r.Truncated, r.Characters = errorText(outcome)
	case tc.kind == "shell":
		r.Output, r.Truncated, r.Characters = shellOutput(outcome)
		r.ExitCode = fields.Int(jsonscan.Get(outcome, "exitCode"))
		if r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
	case tc.kind == "read":
		r.Output, r.Truncated, r.Characters = fields.Text(jsonscan.Get(outcome, "content"))
	case tc.kind == "edit" || tc.kind == "write" || tc.kind == "delete":
		r.Output, r.Truncated, r.Characters = fields.Text(firstString(outcome, "resultForModel", "message"))
	case tc.kind == "mcp":
		r.Output, r.Truncated, r.Characters = mcpText(outcome)
		r.IsError = r.IsError || fields.Bool(jsonscan.Get(outcome, "isError"))
	default:
		r.Output, r.Truncated, r.Characters = jsonText(outcome)
	}
	evs := []agentstream.Event{agentstream.E(r)}
	if r.IsError || len(outcome) == 0 {
		return evs
	}
	path := fields.Str(jsonscan.Get(outcome, "path"))
	if path == "" {
		path = fields.Str(jsonscan.Get(tc.args, "path"))
	}
	switch tc.kind {
	case "edit":
		diff := fields.Str(jsonscan.Get(outcome, "diffString"))
		if diff == "" {
			return evs
		}
		fc := &agentstream.FileChange{CallID: callID}
		diff, fc.Truncated = agentstream.Clip(diff, agentstream.MaxText)
		fc.Changes = []agentstream.FileChangeItem{{Path: path, Kind: agentstream.ChangeModify, Diff: diff}}
		evs = append(evs, agentstream.E(fc))
	case "delete":
		evs = append(evs, agentstream.E(&agentstream.FileChange{
			CallID:  callID,
			Changes: []agentstream.FileChangeItem{{Path: path, Kind: agentstream.ChangeDelete}},
		}))
	}
	return evs
}

func firstString(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && v[0] == '"' {
			return v
		}
	}
	return nil
}

// errorText reads an error outcome: its message, else the outcome as JSON.
func errorText(outcome []byte) (string, bool, int64) {
	if len(outcome) > 0 && outcome[0] == '"' {
		return fields.Text(outcome)
	}
	if v := firstString(outcome, "errorMessage", "message", "error", "stderr"); v != nil {
		return fields.Text(v)
	}
	return jsonText(outcome)
}

// shellOutput joins a shell outcome's stdout and stderr (its interleaved
// output when it has one).
func shellOutput(outcome []byte) (string, bool, int64) {
	if v := jsonscan.Get(outcome, "interleavedOutput"); len(v) > 2 && v[0] == '"' {
		return fields.Text(v)
	}
	out, outTrunc, outChars := fields.Text(jsonscan.Get(outcome, "stdout"))
	errText, errTrunc, errChars := fields.Text(jsonscan.Get(outcome, "stderr"))
	switch {
	case errChars == 0:
		return out, outTrunc, outChars
	case outChars == 0:
		return errText, errTrunc, errChars
	}
	s, trunc := agentstream.Clip(out+"\n"+errText, agentstream.MaxText)
	return s, trunc || outTrunc || errTrunc, outChars + 1 + errChars
}

// mcpText joins the text items of an MCP outcome's content
// ([{"text":{"text":…}}] or [{"type":"text","text":…}]).
func mcpText(outcome []byte) (string, bool, int64) {
	arr, ok := jsonscan.Array(jsonscan.Get(outcome, "content"))
	if !ok {
		return jsonText(outcome)
	}
	var parts []string
	var chars int64
	for arr.Next() {
		t := jsonscan.Get(arr.Value(), "text")
		if len(t) > 0 && t[0] == '{' {
			t = jsonscan.Get(t, "text")
		}
		s, _, n := fields.Text(t)
		if n == 0 {
			continue
		}
		parts = append(parts, s)
		chars += n
	}
	if len(parts) > 1 {
		chars += int64(len(parts) - 1)
	}
	s, trunc := agentstream.Clip(strings.Join(parts, "\n"), agentstream.MaxText)
	return s, trunc || chars > int64(agentstream.CountChars(s)), chars
}

// jsonText is the output of a tool whose result has no text of its own: the
// result as compact JSON.
func jsonText(v []byte) (string, bool, int64) {
	b, ok := jsonscan.AppendCompact(nil, v)
	if !ok {
		return "", false, 0
	}
	s, trunc := agentstream.ClipBytes(b, agentstream.MaxText)
	return s, trunc, int64(agentstream.CountChars(string(b)))
}

// todoPlan reads updateTodos' todos as a plan. Cursor writes statuses such
// as "pending", "in_progress" or "TODO_STATUS_COMPLETED".
func todoPlan(args []byte) *agentstream.Plan {
	arr, ok := jsonscan.Array(jsonscan.Get(args, "todos"))
	if !ok {
		return nil
	}
	p := &agentstream.Plan{Steps: []agentstream.PlanStep{}}
	for arr.Next() {
		e := arr.Value()
		text, _, _ := fields.Text(jsonscan.Get(e, "content"))
		p.Steps = append(p.Steps, agentstream.PlanStep{Text: text, Status: stepStatus(fields.Str(jsonscan.Get(e, "status")))})
	}
	return p
}

func stepStatus(s string) string {
	s = strings.ToLower(strings.TrimPrefix(strings.ToUpper(s), "TODO_STATUS_"))
	switch s {
	case "in_progress", "inprogress", "in-progress":
		return agentstream.StepInProgress
	case "completed", "done", "complete":
		return agentstream.StepCompleted
	case "cancelled", "canceled":
		return agentstream.StepCancelled
	}
	return agentstream.StepPending
}
