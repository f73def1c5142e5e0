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
		return filediff.NewReplace(get("path"), get("oldText"), get("newText"))
	case "write":
		return filediff.NewWrite(get("path"), get("content"))
	}
	return nil
}
