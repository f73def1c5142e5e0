package claude

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// claudeTools says, for each Claude Code tool the adapter knows, its category
// and which input key gives the safe summary. A tool not listed gets the
// category other and no summary, so that its arguments are never shown by
// accident.
var claudeTools = map[string]struct {
	category string
	keys     []string
}{
	"Bash":            {agentstream.CategoryExecute, []string{"command"}},
	"BashOutput":      {agentstream.CategoryExecute, []string{"bash_id", "shell_id"}},
	"KillBash":        {agentstream.CategoryExecute, []string{"shell_id", "bash_id"}},
	"KillShell":       {agentstream.CategoryExecute, []string{"shell_id", "bash_id"}},
	"Read":            {agentstream.CategoryRead, []string{"file_path", "path"}},
	"Write":           {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"Edit":            {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"MultiEdit":       {agentstream.CategoryEdit, []string{"file_path", "path"}},
	"NotebookEdit":    {agentstream.CategoryEdit, []string{"notebook_path"}},
	"NotebookRead":    {agentstream.CategoryRead, []string{"notebook_path"}},
	"Grep":            {agentstream.CategorySearch, []string{"pattern"}},
	"Glob":            {agentstream.CategorySearch, []string{"pattern"}},
	"LS":              {agentstream.CategoryRead, []string{"path"}},
	"WebFetch":        {agentstream.CategoryFetch, []string{"url"}},
	"WebSearch":       {agentstream.CategorySearch, []string{"query"}},
	"ToolSearch":      {agentstream.CategorySearch, []string{"query"}},
	"Task":            {agentstream.CategoryDelegate, []string{"description"}},
	"Agent":           {agentstream.CategoryDelegate, []string{"description"}},
	"TodoWrite":       {agentstream.CategoryPlan, nil},
	"AskUserQuestion": {agentstream.CategoryAsk, nil},
	"ExitPlanMode":    {agentstream.CategoryPlan, nil},
	"EnterPlanMode":   {agentstream.CategoryPlan, nil},
}

// describeTool returns the category and safe summary of a tool call.
func describeTool(name string, input []byte) (category, summary string) {
	if strings.HasPrefix(name, "mcp__") {
		server, tool, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		if tool == "" {
			return agentstream.CategoryMCP, server
		}
		return agentstream.CategoryMCP, server + ": " + tool
	}
	t, ok := claudeTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	switch name {
	case "TodoWrite":
		return t.category, fields.TodoSummary(input)
	case "AskUserQuestion":
		arr, ok := jsonscan.Array(jsonscan.Get(input, "questions"))
		if ok && arr.Next() {
			return t.category, fields.Summary(fields.Str(jsonscan.Get(arr.Value(), "question")))
		}
		return t.category, ""
	case "ExitPlanMode":
		return t.category, "exit plan mode"
	case "EnterPlanMode":
		return t.category, "enter plan mode"
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(input, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}
