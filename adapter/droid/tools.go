package droid

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// droidTools says, for each Droid tool the adapter knows, its category and
// which parameter keys give the safe summary. A tool not listed gets the
// category other and no summary.
var droidTools = map[string]struct {
	category string
	keys     []string
}{
	"Read":         {agentstream.CategoryRead, []string{"file_path", "path"}},
	"LS":           {agentstream.CategoryRead, []string{"directory_path", "path"}},
	"Glob":         {agentstream.CategorySearch, []string{"patterns", "pattern"}},
	"Grep":         {agentstream.CategorySearch, []string{"pattern"}},
	"Execute":      {agentstream.CategoryExecute, []string{"command"}},
	"Edit":         {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"MultiEdit":    {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"Create":       {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"ApplyPatch":   {agentstream.CategoryEdit, nil},
	"TodoWrite":    {agentstream.CategoryPlan, nil},
	"WebSearch":    {agentstream.CategorySearch, []string{"query"}},
	"FetchUrl":     {agentstream.CategoryFetch, []string{"url"}},
	"ExitSpecMode": {agentstream.CategoryPlan, nil},
	"Task":         {agentstream.CategoryDelegate, []string{"description"}},
}

func category(name string) string {
	if t, ok := droidTools[name]; ok {
		return t.category
	}
	return agentstream.CategoryOther
}

// describeTool returns the category and safe summary of a call.
func describeTool(name string, params []byte) (string, string) {
	t, ok := droidTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	switch name {
	case "TodoWrite":
		return t.category, fields.TodoSummary(params)
	case "ExitSpecMode":
		return t.category, "exit spec mode"
	case "ApplyPatch":
		return t.category, patchPath(fields.Str(jsonscan.Get(params, "input")))
	}
	for _, k := range t.keys {
		v := jsonscan.Get(params, k)
		if len(v) > 0 && v[0] == '[' {
			// Glob's patterns: the list, joined.
			if s := fields.Summary(strings.Join(fields.Strings(v), ", ")); s != "" {
				return t.category, s
			}
			continue
		}
		if s := fields.Summary(fields.Str(v)); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

// patchPath returns the first file an apply_patch input names.
func patchPath(input string) string {
	for _, line := range strings.Split(input, "\n") {
		for _, p := range []string{"*** Update File:", "*** Add File:", "*** Delete File:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				return fields.Summary(rest)
			}
		}
	}
	return ""
}
