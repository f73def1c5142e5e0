package pi

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// piTools says, for each of pi's built-in tools, its category and which
// argument keys give the safe summary. A tool not listed (an extension's)
// gets the category other and no summary.
var piTools = map[string]struct {
	category string
	keys     []string
}{
	"read":  {agentstream.CategoryRead, []string{"path"}},
	"bash":  {agentstream.CategoryExecute, []string{"command"}},
	"edit":  {agentstream.CategoryEdit, []string{"path"}},
	"write": {agentstream.CategoryEdit, []string{"path"}},
	"grep":  {agentstream.CategorySearch, []string{"pattern"}},
	"find":  {agentstream.CategorySearch, []string{"pattern"}},
	"ls":    {agentstream.CategoryRead, []string{"path"}},
}

// describeTool returns the category and safe summary of a call.
func describeTool(name string, args []byte) (category, summary string) {
	t, ok := piTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(args, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

// editOf reads the change an edit tool's arguments describe: edit's old
// and new texts, write's whole content.
func editOf(name string, args []byte) *filediff.Edit {
	get := func(k string) string { return fields.Str(jsonscan.Get(args, k)) }
	switch name {
	case "edit":
		// pi 0.73 takes a list of replacements (edits: [{oldText,
		// newText}]); older versions one pair at the top.
		arr, ok := jsonscan.Array(jsonscan.Get(args, "edits"))
		if !ok {
			return filediff.NewReplace(get("path"), get("oldText"), get("newText"))
		}
		e := &filediff.Edit{Path: get("path")}
		size := 0
		for arr.Next() {
			v := arr.Value()
			f := filediff.Fragment{Old: fields.Str(jsonscan.Get(v, "oldText")), New: fields.Str(jsonscan.Get(v, "newText"))}
			size += len(f.Old) + len(f.New)
			e.Frags = append(e.Frags, f)
		}
		if size > filediff.MaxInput {
			return &filediff.Edit{Path: e.Path, TooLarge: true}
		}
		return e
	case "write":
		return filediff.NewWrite(get("path"), get("content"))
	}
	return nil
}
