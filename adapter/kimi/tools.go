package kimi

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// kimiTools says, for each of Kimi CLI's built-in tools, its category and
// which argument keys give the safe summary. A tool not listed (an MCP
// tool's) gets the category other and no summary.
var kimiTools = map[string]struct {
	category string
	keys     []string
}{
	"Shell":          {agentstream.CategoryExecute, []string{"command"}},
	"ReadFile":       {agentstream.CategoryRead, []string{"path"}},
	"WriteFile":      {agentstream.CategoryEdit, []string{"path"}},
	"StrReplaceFile": {agentstream.CategoryEdit, []string{"path"}},
	"Glob":           {agentstream.CategorySearch, []string{"pattern"}},
	"Grep":           {agentstream.CategorySearch, []string{"pattern"}},
	"SearchWeb":      {agentstream.CategorySearch, []string{"query"}},
	"FetchURL":       {agentstream.CategoryFetch, []string{"url"}},
	"Task":           {agentstream.CategoryDelegate, []string{"description"}},
	"SetTodoList":    {agentstream.CategoryPlan, nil},
	"Think":          {agentstream.CategoryThink, nil},
}

// describeTool returns the category and safe summary of a call.
func describeTool(name string, args []byte) (category, summary string) {
	t, ok := kimiTools[name]
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

// plan reads SetTodoList's todos ({title, status}) as the plan.
func plan(name string, args []byte) *agentstream.Plan {
	if name != "SetTodoList" {
		return nil
	}
	return fields.TodoPlan(args, "title", func(s string) string {
		if s == "done" {
			return agentstream.StepCompleted
		}
		return fields.KnownStatus(s)
	})
}

// editOf reads the change an edit tool's arguments describe: WriteFile's
// content, StrReplaceFile's replacements ({old, new}, one or a list).
func editOf(name string, args []byte) *filediff.Edit {
	if name != "WriteFile" && name != "StrReplaceFile" {
		return nil
	}
	path := fields.Str(jsonscan.Get(args, "path"))
	switch name {
	case "WriteFile":
		return filediff.NewWrite(path, fields.Str(jsonscan.Get(args, "content")))
	case "StrReplaceFile":
		if len(args) > filediff.MaxInput {
			return &filediff.Edit{Path: path, TooLarge: true}
		}
		e := &filediff.Edit{Path: path}
		edit := jsonscan.Get(args, "edit")
		add := func(v []byte) {
			e.Frags = append(e.Frags, filediff.Fragment{Old: fields.Str(jsonscan.Get(v, "old")), New: fields.Str(jsonscan.Get(v, "new"))})
		}
		if arr, ok := jsonscan.Array(edit); ok {
			for arr.Next() {
				add(arr.Value())
			}
		} else if len(edit) > 0 {
			add(edit)
		}
		return e
	}
	return nil
}
