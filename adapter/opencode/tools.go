package opencode

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// toolUse maps a tool part. opencode prints it once the tool completed or
// failed, so the call and its result come from the same line; a part still
// pending or running gives the call alone.
func (d *Decoder) toolUse(dst []agentstream.Event, raw []byte, part *partOf) []agentstream.Event {
	if len(part.state) == 0 || len(part.tool) == 0 {
		return append(dst, fields.Raw(raw))
	}
	st := &part.st
	input, errV, metadata := st.input, st.errorV, st.metadata
	id := fields.Str(part.callID)
	if id == "" {
		id = fields.Str(part.id)
	}
	name := fields.Str(part.tool)
	if !d.called[id] {
		in, trunc := fields.Input(input)
		category, summary := describeTool(name, input)
		dst = append(dst, agentstream.E(&agentstream.ToolCall{
			CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, name),
		}))
		switch name {
		case "todowrite":
			if p := fields.TodoPlan(input, "content", nil); p != nil {
				dst = append(dst, agentstream.E(p))
			}
		case "task":
			desc, _ := agentstream.Clip(fields.Summary(fields.Str(jsonscan.Get(input, "description"))), agentstream.MaxText)
			dst = append(dst, agentstream.E(&agentstream.Subagent{
				ID: subagentID(id, metadata), CallID: id, Name: fields.Str(jsonscan.Get(input, "subagent_type")),
				Status: agentstream.SubagentStarted, Description: desc,
			}))
		}
		if id != "" {
			d.called[id] = true
		}
	}
	s := string(fields.Unquoted(st.status))
	if s != "completed" && s != "error" {
		return dst
	}
	delete(d.called, id)
	r := &agentstream.ToolResult{CallID: id, Name: name, IsError: s == "error"}
	out, outC := st.output, st.outputC
	if r.IsError && len(errV) > 0 {
		out, outC = errV, fields.Clipped{}
	}
	switch {
	case len(out) > 0 && out[0] == '"':
		r.Output, r.Truncated, r.Characters = outC.Or(out)
	case len(out) > 0 && !jsonscan.IsNull(out):
		r.Output, r.Truncated = fields.Input(out)
		r.Characters = int64(agentstream.CountChars(r.Output))
	}
	r.ExitCode = fields.Int(firstOf(metadata, "exit", "exitCode", "exit_code"))
	if r.ExitCode != nil && *r.ExitCode != 0 {
		// A command that failed is a failed call, though opencode says the
		// tool completed.
		r.IsError = true
	}
	if r.IsError {
		if msg := fields.Str(errV); isRejection(msg) {
			d.denied[name] = true
			dst = append(dst, agentstream.E(&agentstream.ToolDenied{CallID: id, Name: name, Reason: fields.Summary(msg)}))
		}
	}
	dst = append(dst, agentstream.E(r))
	if !r.IsError {
		if fc := fileChange(id, name, input, metadata); fc != nil {
			dst = append(dst, agentstream.E(fc))
		}
	}
	if name == "task" {
		sub := agentstream.SubagentFinished
		if r.IsError {
			sub = agentstream.SubagentFailed
		}
		dst = append(dst, agentstream.E(&agentstream.Subagent{ID: subagentID(id, metadata), CallID: id, Status: sub}))
	}
	return dst
}

// fileChange is the file.change of a completed edit tool part: edit gives
// its own patch (metadata.diff) or its old and new texts, multiedit its
// replacements, write its whole content (metadata.exists false: a new
// file). Other tools change no file here.
func fileChange(id, name string, input, metadata []byte) *agentstream.FileChange {
	path := fields.Str(firstOf(input, "filePath", "path"))
	str := func(v []byte, k string) string { return fields.Str(jsonscan.Get(v, k)) }
	switch name {
	case "edit":
		if patch := str(metadata, "diff"); patch != "" {
			item, trunc := filediff.Patch(path, agentstream.ChangeModify, patch)
			return &agentstream.FileChange{CallID: id, Changes: []agentstream.FileChangeItem{item}, Truncated: trunc}
		}
		return filediff.NewReplace(path, str(input, "oldString"), str(input, "newString")).Change(id, false)
	case "multiedit":
		if len(input) > filediff.MaxInput {
			return (&filediff.Edit{Path: path, TooLarge: true}).Change(id, false)
		}
		e := &filediff.Edit{Path: path}
		arr, _ := jsonscan.Array(jsonscan.Get(input, "edits"))
		for arr.Next() {
			v := arr.Value()
			e.Frags = append(e.Frags, filediff.Fragment{Old: str(v, "oldString"), New: str(v, "newString")})
		}
		return e.Change(id, false)
	case "write":
		exists, known := jsonscan.Bool(jsonscan.Get(metadata, "exists"))
		return filediff.NewWrite(path, str(input, "content")).Change(id, known && !exists)
	}
	return nil
}

// subagentID is the child session a task call ran, else the call's id.
func subagentID(callID string, metadata []byte) string {
	if s := fields.Str(firstOf(metadata, "sessionId", "sessionID")); s != "" {
		return s
	}
	return callID
}

// isRejection reports whether a tool error says a permission was refused.
func isRejection(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "rejected permission") || strings.Contains(m, "permission denied by") ||
		strings.Contains(m, "auto-reject")
}

func firstOf(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && !jsonscan.IsNull(v) {
			return v
		}
	}
	return nil
}

// opencodeTools says, for each opencode built-in tool the adapter knows, its
// category and which input key gives the safe summary. A tool not listed
// (an MCP tool, a plugin's) gets the category other and no summary.
var opencodeTools = map[string]struct {
	category string
	keys     []string
}{
	"bash":        {agentstream.CategoryExecute, []string{"command"}},
	"read":        {agentstream.CategoryRead, []string{"filePath", "path"}},
	"list":        {agentstream.CategoryRead, []string{"path"}},
	"write":       {agentstream.CategoryEdit, []string{"filePath", "path"}},
	"edit":        {agentstream.CategoryEdit, []string{"filePath", "path"}},
	"multiedit":   {agentstream.CategoryEdit, []string{"filePath", "path"}},
	"patch":       {agentstream.CategoryEdit, nil},
	"apply_patch": {agentstream.CategoryEdit, nil},
	"glob":        {agentstream.CategorySearch, []string{"pattern"}},
	"grep":        {agentstream.CategorySearch, []string{"pattern"}},
	"codesearch":  {agentstream.CategorySearch, []string{"query"}},
	"websearch":   {agentstream.CategorySearch, []string{"query"}},
	"webfetch":    {agentstream.CategoryFetch, []string{"url"}},
	"task":        {agentstream.CategoryDelegate, []string{"description"}},
	"todowrite":   {agentstream.CategoryPlan, nil},
	"todoread":    {agentstream.CategoryPlan, nil},
	"question":    {agentstream.CategoryAsk, nil},
	"skill":       {agentstream.CategoryOther, []string{"name"}},
}

// describeTool returns the category and safe summary of a tool call.
func describeTool(name string, input []byte) (category, summary string) {
	t, ok := opencodeTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	switch name {
	case "todowrite":
		return t.category, fields.TodoSummary(input)
	case "todoread":
		return t.category, "read todos"
	case "patch", "apply_patch":
		return t.category, patchSummary(fields.Str(firstOf(input, "patchText", "patch", "input")))
	case "question":
		arr, ok := jsonscan.Array(jsonscan.Get(input, "questions"))
		if ok && arr.Next() {
			return t.category, fields.Summary(fields.Str(jsonscan.Get(arr.Value(), "question")))
		}
		return t.category, ""
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(input, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

// patchSummary names the first file of an apply_patch text ("*** Update
// File: path") and how many more it touches.
func patchSummary(patch string) string {
	first, n := "", 0
	for line := range strings.Lines(patch) {
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: "} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				n++
				if first == "" {
					first = strings.TrimSpace(rest)
				}
			}
		}
	}
	s := fields.Summary(first)
	if n > 1 {
		s += " (+" + strconv.Itoa(n-1) + " more)"
	}
	return s
}
