package cursor

import (
	"bytes"
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

	// The result, read in one pass: its success and first other member,
	// and the members of the success object, or that object as compact
	// JSON for the kinds whose output it is.
	resultRead       bool
	success, failure []byte
	succ             outcomeOf
	succJSON         fields.Clipped
}

// outcomeOf is what a result's outcome object holds, as raw JSON values
// (the last member of each name, as jsonscan.Get finds it). The texts the
// call's kind makes its output of are also decoded where they were read
// (the C fields), so that a large output is scanned once.
type outcomeOf struct {
	interleaved, stdout, stderr, exitCode, path, content []byte
	diffString, resultForModel, message, isError         []byte
	interleavedC, stdoutC, stderrC, contentC             fields.Clipped
	diffStringC, resultForModelC, messageC               fields.Clipped
}

// readOutcome reads the outcome object of a call of the given kind in one
// pass; buf is scratch space for decoding.
func readOutcome(o *jsonscan.Obj, kind string, buf *[]byte) outcomeOf {
	var of outcomeOf
	shell := kind == "shell"
	edit := kind == "edit" || kind == "write" || kind == "delete"
	for o.NextKey() {
		switch {
		case o.KeyIs("interleavedOutput"):
			of.interleavedC, of.interleaved = clipIf(o, buf, shell)
		case o.KeyIs("stdout"):
			of.stdoutC, of.stdout = clipIf(o, buf, shell && !hasText(of.interleaved))
		case o.KeyIs("stderr"):
			of.stderrC, of.stderr = clipIf(o, buf, shell && !hasText(of.interleaved))
		case o.KeyIs("exitCode"):
			of.exitCode = o.Value()
		case o.KeyIs("path"):
			of.path = o.Value()
		case o.KeyIs("content"):
			of.contentC, of.content = clipIf(o, buf, kind == "read")
		case o.KeyIs("diffString"):
			of.diffStringC, of.diffString = clipIf(o, buf, kind == "edit")
		case o.KeyIs("resultForModel"):
			of.resultForModelC, of.resultForModel = clipIf(o, buf, edit)
		case o.KeyIs("message"):
			of.messageC, of.message = clipIf(o, buf, edit && !isString(of.resultForModel))
		case o.KeyIs("isError"):
			of.isError = o.Value()
		}
	}
	return of
}

// clipIf returns the current member of o decoded and clipped in place when
// want is set (see fields.ClipMember), and its raw value.
func clipIf(o *jsonscan.Obj, buf *[]byte, want bool) (fields.Clipped, []byte) {
	var c fields.Clipped
	if want {
		c = fields.ClipMember(o, buf)
	}
	return c, o.Value()
}

// isString reports whether v is a JSON string.
func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }

// hasText reports whether v is a JSON string that is not empty.
func hasText(v []byte) bool { return len(v) > 2 && v[0] == '"' }

// parseOutcome is readOutcome for an outcome given as a raw value; one that
// is not an object has no members.
func parseOutcome(v []byte, kind string, buf *[]byte) outcomeOf {
	o, ok := jsonscan.Object(v)
	if !ok {
		return outcomeOf{}
	}
	return readOutcome(&o, kind, buf)
}

// compactOutput reports whether a successful call's output is its outcome
// as compact JSON: true for the kinds without a text output of their own.
func (tc *toolCall) compactOutput() bool {
	switch tc.kind {
	case "shell", "read", "edit", "write", "delete", "mcp":
		return false
	}
	return true
}

// readResult reads a result object in place: its success, read in one
// pass when an object, and its first other member. buf is scratch space.
func (tc *toolCall) readResult(r *jsonscan.Obj, buf *[]byte) {
	tc.success, tc.failure, tc.succ, tc.succJSON = nil, nil, outcomeOf{}, fields.Clipped{}
	for r.NextKey() {
		if string(r.Key()) == "success" {
			tc.succ, tc.succJSON = outcomeOf{}, fields.Clipped{}
			if so, ok := r.Object(); ok {
				if tc.compactOutput() {
					tc.succJSON = compactText(buf, &so)
				} else {
					tc.succ = readOutcome(&so, tc.kind, buf)
				}
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
// iterator into tc, descending into the call and its result in place; buf
// is scratch space for decoding the result.
func readToolCall(o *jsonscan.Obj, tc *toolCall, buf *[]byte) {
	*tc = toolCall{}
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
						tc.readResult(&r, buf)
						inner.LeaveObject(&r)
					}
					tc.result = inner.Value()
				}
			}
			o.LeaveObject(&inner)
			return
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

// unescape decodes the raw bytes of a key; a kind of cursorTools is given
// as its key there, without allocating.
func unescape(k []byte) string {
	if bytes.IndexByte(k, '\\') < 0 {
		if kind, ok := knownKinds[string(k)]; ok {
			return kind
		}
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

// knownKinds maps each kind of cursorTools to itself.
var knownKinds = func() map[string]string {
	m := make(map[string]string, len(cursorTools))
	for kind := range cursorTools {
		m[kind] = kind
	}
	return m
}()

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

func (tc *toolCall) call(callID string, buf *[]byte) *agentstream.ToolCall {
	in, trunc := fields.InputBuf(buf, tc.args)
	category, summary := tc.describe()
	return &agentstream.ToolCall{CallID: callID, Name: tc.name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: tc.display(category)}
}

// results appends the events of a completed call to dst: tool.result,
// plus file.change for an edit with a diff or a delete that succeeded. buf
// is scratch space for decoding.
func (tc *toolCall) results(dst []agentstream.Event, callID string, buf *[]byte) []agentstream.Event {
	r := &agentstream.ToolResult{CallID: callID, Name: tc.name}
	// The result is {"success":{…}}, or {"error":{…}} (or "failure",
	// "rejected", …) when the tool did not do its work.
	if !tc.resultRead {
		tc.success, tc.failure, tc.succ, tc.succJSON = nil, nil, outcomeOf{}, fields.Clipped{}
		if obj, ok := jsonscan.Object(tc.result); ok {
			tc.readResult(&obj, buf)
		}
	}
	outcome, failure, of := tc.success, tc.failure, &tc.succ
	if outcome == nil && failure != nil {
		outcome, r.IsError = failure, true
		f := parseOutcome(failure, tc.kind, buf)
		of = &f
	}
	switch {
	case len(outcome) == 0:
	case r.IsError && tc.kind != "shell":
		r.Output, r.Truncated, r.Characters = errorText(outcome)
	case tc.kind == "shell":
		r.Output, r.Truncated, r.Characters = shellOutput(of)
		r.ExitCode = fields.Int(of.exitCode)
		if r.ExitCode != nil && *r.ExitCode != 0 {
			r.IsError = true
		}
	case tc.kind == "read":
		r.Output, r.Truncated, r.Characters = of.contentC.Or(of.content)
	case tc.kind == "edit" || tc.kind == "write" || tc.kind == "delete":
		switch {
		case isString(of.resultForModel):
			r.Output, r.Truncated, r.Characters = of.resultForModelC.Or(of.resultForModel)
		case isString(of.message):
			r.Output, r.Truncated, r.Characters = of.messageC.Or(of.message)
		}
	case tc.kind == "mcp":
		r.Output, r.Truncated, r.Characters = mcpText(outcome)
		r.IsError = r.IsError || fields.Bool(of.isError)
	case tc.succJSON.OK:
		r.Output, r.Truncated, r.Characters = tc.succJSON.Text, tc.succJSON.Truncated, tc.succJSON.Chars
	default:
		r.Output, r.Truncated, r.Characters = jsonText(outcome)
	}
	dst = append(dst, agentstream.E(r))
	if r.IsError || len(outcome) == 0 {
		return dst
	}
	switch tc.kind {
	case "edit":
		diff, trunc, chars := of.diffStringC.Or(of.diffString)
		if chars == 0 {
			return dst
		}
		fc := &agentstream.FileChange{CallID: callID, Truncated: trunc}
		fc.Changes = []agentstream.FileChangeItem{{Path: tc.changedPath(of), Kind: agentstream.ChangeModify, Diff: diff}}
		dst = append(dst, agentstream.E(fc))
	case "delete":
		dst = append(dst, agentstream.E(&agentstream.FileChange{
			CallID:  callID,
			Changes: []agentstream.FileChangeItem{{Path: tc.changedPath(of), Kind: agentstream.ChangeDelete}},
		}))
	}
	return dst
}

// changedPath is the path a file.change names: the outcome's, else the
// arguments'.
func (tc *toolCall) changedPath(of *outcomeOf) string {
	if path := fields.Str(of.path); path != "" {
		return path
	}
	return fields.Str(jsonscan.Get(tc.args, "path"))
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
func shellOutput(of *outcomeOf) (string, bool, int64) {
	if hasText(of.interleaved) {
		return of.interleavedC.Or(of.interleaved)
	}
	out, outTrunc, outChars := of.stdoutC.Or(of.stdout)
	errText, errTrunc, errChars := of.stderrC.Or(of.stderr)
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

// compactBuf receives a compacted value piece by piece: its first bytes,
// until they pass limit, are kept; the code points of the rest are only
// counted. Past limit the kept bytes hold more than MaxText code points, so
// clipping them gives what clipping the whole would. Every piece boundary
// has an ASCII byte on one side (key text sits between quotes), and a piece
// is only cut before a byte that starts a code point, so counting piece by
// piece counts what counting the whole would.
type compactBuf struct {
	b     []byte
	rest  int // code points of the bytes not kept
	limit int
}

// add keeps p, or as much of it as takes the kept bytes past limit, cut
// before a byte that starts a code point (no code point, valid or not,
// spans that cut), and counts the code points of the rest.
func (c *compactBuf) add(p []byte) {
	room := c.limit + 1 - len(c.b)
	if room <= 0 {
		c.rest += jsonscan.RuneCount(p)
		return
	}
	if room < len(p) {
		for room < len(p) && !utf8.RuneStart(p[room]) {
			room++
		}
		c.rest += jsonscan.RuneCount(p[room:])
		p = p[:room]
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
// each value once. It returns o run to its end, for its parent to leave.
// Iterators are passed by value: a pointer to one would make every nested
// value's iterator escape to the heap through the recursion.
func compactObj(c *compactBuf, o jsonscan.Obj) jsonscan.Obj {
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
			v = compactObj(c, v)
			o.LeaveObject(&v)
		} else if v, ok := o.Array(); ok {
			v = compactArr(c, v)
			o.LeaveArray(&v)
		} else {
			c.add(o.Value())
		}
	}
	c.addByte('}')
	return o
}

// compactArr is compactObj for an array.
func compactArr(c *compactBuf, a jsonscan.Arr) jsonscan.Arr {
	c.addByte('[')
	for n := 0; a.NextElem(); n++ {
		if n > 0 {
			c.addByte(',')
		}
		if v, ok := a.Object(); ok {
			v = compactObj(c, v)
			a.LeaveObject(&v)
		} else if v, ok := a.Array(); ok {
			v = compactArr(c, v)
			a.LeaveArray(&v)
		} else {
			c.add(a.Value())
		}
	}
	c.addByte(']')
	return a
}

// compactText is the output of a tool whose outcome has no text of its
// own, read from the outcome's iterator: the object compacted in one pass
// into the scratch buffer buf, keeping only the bytes the clipped text can
// need, then clipped. It is valid once the object is found well-formed.
func compactText(buf *[]byte, o *jsonscan.Obj) fields.Clipped {
	c := compactBuf{b: (*buf)[:0], limit: utf8.UTFMax*agentstream.MaxText + utf8.UTFMax}
	*o = compactObj(&c, *o)
	*buf = c.b[:0]
	s, trunc := agentstream.ClipBytes(c.b, agentstream.MaxText)
	return fields.Clipped{Text: s, Truncated: trunc, Chars: int64(jsonscan.RuneCount(c.b) + c.rest), OK: true}
}

// jsonText is the output of a tool whose result has no text of its own: the
// result as compact JSON.
func jsonText(v []byte) (string, bool, int64) {
	b, ok := jsonscan.AppendCompact(nil, v)
	if !ok {
		return "", false, 0
	}
	s, trunc := agentstream.ClipBytes(b, agentstream.MaxText)
	return s, trunc, int64(jsonscan.RuneCount(b))
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

// display is the display name of a call of category: its kind's, else the
// tool's own name.
func (tc *toolCall) display(category string) string {
	if category == agentstream.CategoryOther {
		return tc.name
	}
	return fields.Display(category, tc.kind)
}
