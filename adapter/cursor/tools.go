package cursor

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"

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

	// The result, when read in place: its success and first other member,
	// and the members of the success object.
	resultRead       bool
	success, failure []byte
	succ             outcomeOf
}

// outcomeOf is what a result's outcome object holds, as raw JSON values
// (the last member of each name, as jsonscan.Get finds it).
type outcomeOf struct {
	interleaved, stdout, stderr, exitCode, path, content []byte
	diffString, resultForModel, message, isError         []byte
}

// readOutcome reads an outcome object in one pass.
func readOutcome(o *jsonscan.Obj) outcomeOf {
	var of outcomeOf
	for o.NextKey() {
		switch {
		case o.KeyIs("interleavedOutput"):
			of.interleaved = o.Value()
		case o.KeyIs("stdout"):
			of.stdout = o.Value()
		case o.KeyIs("stderr"):
			of.stderr = o.Value()
		case o.KeyIs("exitCode"):
			of.exitCode = o.Value()
		case o.KeyIs("path"):
			of.path = o.Value()
		case o.KeyIs("content"):
			of.content = o.Value()
		case o.KeyIs("diffString"):
			of.diffString = o.Value()
		case o.KeyIs("resultForModel"):
			of.resultForModel = o.Value()
		case o.KeyIs("message"):
			of.message = o.Value()
		case o.KeyIs("isError"):
			of.isError = o.Value()
		}
	}
	return of
}

// parseOutcome is readOutcome for an outcome given as a raw value; one that
// is not an object has no members.
func parseOutcome(v []byte) outcomeOf {
	o, ok := jsonscan.Object(v)
	if !ok {
		return outcomeOf{}
	}
	return readOutcome(&o)
}

// readResult reads a result object in place: its success, read in one
// pass when an object, and its first other member.
func (tc *toolCall) readResult(r *jsonscan.Obj) {
	tc.success, tc.failure, tc.succ = nil, nil, outcomeOf{}
	for r.NextKey() {
		if string(r.Key()) == "success" {
			tc.succ = outcomeOf{}
			if so, ok := r.Object(); ok {
				tc.succ = readOutcome(&so)
				r.LeaveObject(&so)
			}
			tc.success = r.Value()
		} else if tc.failure == nil {
			tc.failure = r.Value()
		}
	}
	tc.resultRead = true
}

// readToolCall is parseToolCall reading the tool_call object from its
// iterator, descending into the call and its result in place.
func readToolCall(o *jsonscan.Obj) toolCall {
	var tc toolCall
	for o.NextKey() {
		k := o.Key()
		switch {
		case bytes.HasSuffix(k, []byte("ToolCall")) && len(k) > len("ToolCall"):
			inner, ok := o.Object()
			if !ok {
				continue
			}
			tc.kind = unescape(k[:len(k)-len("ToolCall")])
			tc.name = tc.kind
			for inner.NextKey() {
				switch string(inner.Key()) {
				case "args":
					tc.args = inner.Value()
				case "result":
					tc.resultRead = false
					if r, ok := inner.Object(); ok {
						tc.readResult(&r)
						inner.LeaveObject(&r)
					}
					tc.result = inner.Value()
				}
			}
			o.LeaveObject(&inner)
			return tc
		case string(k) == "function":
			val := o.Value()
			if len(val) == 0 || val[0] != '{' {
				continue
			}
			tc.name = fields.Str(jsonscan.Get(val, "name"))
			tc.args = jsonscan.Get(val, "arguments")
			if s := fields.Str(tc.args); s != "" && jsonscan.Valid([]byte(s)) {
				tc.args = []byte(s)
			}
			tc.result = jsonscan.Get(val, "result")
			tc.resultRead = false
		}
	}
	return tc
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
		return t.category, fields.TodoSummary(tc.args)
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
func (tc *toolCall) results(callID string, buf *[]byte) []agentstream.Event {
	r := &agentstream.ToolResult{CallID: callID, Name: tc.name}
	// The result is {"success":{…}}, or {"error":{…}} (or "failure",
	// "rejected", …) when the tool did not do its work.
	if !tc.resultRead {
		tc.success, tc.failure, tc.succ = nil, nil, outcomeOf{}
		if obj, ok := jsonscan.Object(tc.result); ok {
			tc.readResult(&obj)
		}
	}
	outcome, failure, of := tc.success, tc.failure, &tc.succ
	if outcome == nil && failure != nil {
		outcome, r.IsError = failure, true
		f := parseOutcome(failure)
		of = &f
	}
	switch {
	case len(outcome) == 0:
	case r.IsError && tc.kind != "shell":
		r.Output, r.Truncated, r.Characters = errorText(outcome)
	case tc.kind == "shell":
		r.Output, r.Truncated, r.Characters = shellOutput(of, buf)
		r.ExitCode = fields.Int(of.exitCode)
		if r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
	case tc.kind == "read":
		r.Output, r.Truncated, r.Characters = clipText(buf, of.content)
	case tc.kind == "edit" || tc.kind == "write" || tc.kind == "delete":
		r.Output, r.Truncated, r.Characters = clipText(buf, firstStr(of.resultForModel, of.message))
	case tc.kind == "mcp":
		r.Output, r.Truncated, r.Characters = mcpText(outcome)
		r.IsError = r.IsError || fields.Bool(of.isError)
	default:
		r.Output, r.Truncated, r.Characters = jsonTextBuf(buf, outcome)
	}
	evs := []agentstream.Event{agentstream.E(r)}
	if r.IsError || len(outcome) == 0 {
		return evs
	}
	path := fields.Str(of.path)
	if path == "" {
		path = fields.Str(jsonscan.Get(tc.args, "path"))
	}
	switch tc.kind {
	case "edit":
		diff := fields.Str(of.diffString)
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

// firstStr returns the first of vs that is a JSON string.
func firstStr(vs ...[]byte) []byte {
	for _, v := range vs {
		if len(v) > 0 && v[0] == '"' {
			return v
		}
	}
	return nil
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
func shellOutput(of *outcomeOf, buf *[]byte) (string, bool, int64) {
	if v := of.interleaved; len(v) > 2 && v[0] == '"' {
		return clipText(buf, v)
	}
	out, outTrunc, outChars := clipText(buf, of.stdout)
	errText, errTrunc, errChars := clipText(buf, of.stderr)
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

// clipText is fields.Text decoding into the scratch buffer buf, so that a
// large output costs one allocation, the string kept.
func clipText(buf *[]byte, v []byte) (text string, truncated bool, chars int64) {
	if len(v) == 0 || v[0] != '"' {
		return "", false, 0
	}
	out, total, trunc, ok := jsonscan.AppendStringClip((*buf)[:0], v, agentstream.MaxText)
	if !ok {
		return "", false, 0
	}
	*buf = out[:0]
	return string(out), trunc, int64(total)
}

// runeCount is utf8.RuneCount (a code point per invalid byte), counted
// without copying b to a string.
func runeCount(b []byte) int {
	n := 0
	for i := 0; i < len(b); n++ {
		// Eight ASCII bytes at a time.
		for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
			n += 8
		}
		if i >= len(b) {
			return n
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, w := utf8.DecodeRune(b[i:])
		i += w
	}
	return n
}

// compactBuf receives a compacted value piece by piece: the first pieces,
// until they pass limit bytes, are kept; the code points of the rest are
// only counted. Past limit the kept bytes hold more than MaxText code
// points, so clipping them gives what clipping the whole would. Every piece
// boundary has an ASCII byte on one side (key text sits between quotes), so
// counting piece by piece counts what counting the whole would.
type compactBuf struct {
	b     []byte
	rest  int // code points of the pieces not kept
	limit int
}

func (c *compactBuf) add(p []byte) {
	if len(c.b) > c.limit {
		c.rest += runeCount(p)
		return
	}
	c.b = append(c.b, p...)
}

func (c *compactBuf) addByte(p byte) {
	if len(c.b) > c.limit {
		c.rest++
		return
	}
	c.b = append(c.b, p)
}

// compactObj writes the object o iterates with insignificant whitespace
// removed and every other byte kept, as jsonscan.AppendCompact does, reading
// each value once.
func compactObj(c *compactBuf, o *jsonscan.Obj) {
	c.addByte('{')
	for n := 0; o.NextKey(); n++ {
		if n > 0 {
			c.addByte(',')
		}
		c.addByte('"')
		c.add(o.Key())
		c.addByte('"')
		c.addByte(':')
		if v, ok := o.Object(); ok {
			compactObj(c, &v)
			o.LeaveObject(&v)
		} else if v, ok := o.Array(); ok {
			compactArr(c, &v)
			o.LeaveArray(&v)
		} else {
			c.add(o.Value())
		}
	}
	c.addByte('}')
}

func compactArr(c *compactBuf, a *jsonscan.Arr) {
	c.addByte('[')
	for n := 0; a.NextElem(); n++ {
		if n > 0 {
			c.addByte(',')
		}
		if v, ok := a.Object(); ok {
			compactObj(c, &v)
			a.LeaveObject(&v)
		} else if v, ok := a.Array(); ok {
			compactArr(c, &v)
			a.LeaveArray(&v)
		} else {
			c.add(a.Value())
		}
	}
	c.addByte(']')
}

// jsonTextBuf is jsonText compacting into the scratch buffer buf. v is a
// value of a line already found valid, so an object is compacted in one
// pass over it, keeping only the bytes the clipped text can need.
func jsonTextBuf(buf *[]byte, v []byte) (string, bool, int64) {
	o, ok := jsonscan.Object(v)
	if !ok {
		return jsonText(v)
	}
	c := compactBuf{b: (*buf)[:0], limit: utf8.UTFMax*agentstream.MaxText + utf8.UTFMax}
	compactObj(&c, &o)
	if !o.Complete() {
		return jsonText(v)
	}
	*buf = c.b[:0]
	s, trunc := agentstream.ClipBytes(c.b, agentstream.MaxText)
	return s, trunc, int64(runeCount(c.b) + c.rest)
}

// jsonText is the output of a tool whose result has no text of its own: the
// result as compact JSON.
func jsonText(v []byte) (string, bool, int64) {
	b, ok := jsonscan.AppendCompact(nil, v)
	if !ok {
		return "", false, 0
	}
	s, trunc := agentstream.ClipBytes(b, agentstream.MaxText)
	return s, trunc, int64(runeCount(b))
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
