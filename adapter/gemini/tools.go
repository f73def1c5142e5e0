package gemini

import (
	"strconv"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// geminiTools says, for each Gemini CLI built-in tool the adapter knows,
// its category and which parameter gives the safe summary. A tool not
// listed (an MCP tool, an extension's) gets the category other and no
// summary, so that its arguments are never shown by accident.
var geminiTools = map[string]struct {
	category string
	keys     []string
}{
	"run_shell_command":         {agentstream.CategoryExecute, []string{"command"}},
	"read_file":                 {agentstream.CategoryRead, []string{"absolute_path", "file_path", "path"}},
	"read_many_files":           {agentstream.CategoryRead, nil},
	"list_directory":            {agentstream.CategoryRead, []string{"dir_path", "path"}},
	"write_file":                {agentstream.CategoryEdit, []string{"file_path", "absolute_path", "path"}},
	"replace":                   {agentstream.CategoryEdit, []string{"file_path", "absolute_path", "path"}},
	"edit":                      {agentstream.CategoryEdit, []string{"file_path", "absolute_path", "path"}},
	"glob":                      {agentstream.CategorySearch, []string{"pattern"}},
	"search_file_content":       {agentstream.CategorySearch, []string{"pattern"}},
	"grep_search":               {agentstream.CategorySearch, []string{"pattern"}},
	"google_web_search":         {agentstream.CategorySearch, []string{"query"}},
	"web_fetch":                 {agentstream.CategoryFetch, []string{"url", "prompt"}},
	"save_memory":               {agentstream.CategoryOther, nil},
	"write_todos":               {agentstream.CategoryPlan, nil},
	"codebase_investigator":     {agentstream.CategoryDelegate, []string{"objective", "description"}},
	"delegate_to_agent":         {agentstream.CategoryDelegate, []string{"description", "objective", "agent_name"}},
	"invoke_agent":              {agentstream.CategoryDelegate, []string{"agent_name"}},
	"generalist":                {agentstream.CategoryDelegate, []string{"request", "objective"}},
	"update_topic":              {agentstream.CategoryOther, nil},
	"list_background_processes": {agentstream.CategoryExecute, nil},
	"read_background_output":    {agentstream.CategoryExecute, nil},
	"ask_user":                  {agentstream.CategoryAsk, nil},
	"enter_plan_mode":           {agentstream.CategoryPlan, nil},
	"exit_plan_mode":            {agentstream.CategoryPlan, nil},
	"activate_skill":            {agentstream.CategoryOther, []string{"name"}},
}

// describeTool returns the category and safe summary of a tool call.
func describeTool(name string, params []byte) (category, summary string) {
	t, ok := geminiTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	switch name {
	case "write_todos":
		return t.category, fields.TodoSummary(params)
	case "read_many_files":
		for _, k := range []string{"paths", "include"} {
			arr, ok := jsonscan.Array(jsonscan.Get(params, k))
			if !ok || !arr.Next() {
				continue
			}
			s := fields.Summary(fields.Str(arr.Value()))
			n := 1
			for arr.Next() {
				n++
			}
			if n > 1 {
				s += " (+" + strconv.Itoa(n-1) + " more)"
			}
			return t.category, s
		}
		return t.category, ""
	case "save_memory":
		return t.category, "save memory"
	case "ask_user":
		arr, ok := jsonscan.Array(jsonscan.Get(params, "questions"))
		if ok && arr.Next() {
			return t.category, fields.Summary(fields.Str(jsonscan.Get(arr.Value(), "question")))
		}
		return t.category, fields.Summary(fields.Str(jsonscan.Get(params, "question")))
	case "enter_plan_mode":
		return t.category, "enter plan mode"
	case "exit_plan_mode":
		return t.category, "exit plan mode"
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(params, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

// firstOf returns the first of keys that obj holds with a value other than
// null.
func firstOf(obj []byte, keys ...string) []byte {
	for _, k := range keys {
		if v := jsonscan.Get(obj, k); len(v) > 0 && !jsonscan.IsNull(v) {
			return v
		}
	}
	return nil
}
