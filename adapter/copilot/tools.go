package copilot

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// copilotTools says, for each Copilot CLI tool the adapter knows, its
// category and which argument keys give the safe summary. A tool not listed
// gets the category other and no summary.
var copilotTools = map[string]struct {
	category string
	keys     []string
}{
	"bash":                            {agentstream.CategoryExecute, []string{"command"}},
	"powershell":                      {agentstream.CategoryExecute, []string{"command"}},
	"read_bash":                       {agentstream.CategoryExecute, []string{"shellId", "sessionId"}},
	"write_bash":                      {agentstream.CategoryExecute, []string{"shellId", "sessionId"}},
	"stop_bash":                       {agentstream.CategoryExecute, []string{"shellId", "sessionId"}},
	"list_bash":                       {agentstream.CategoryExecute, nil},
	"view":                            {agentstream.CategoryRead, []string{"path"}},
	"create":                          {agentstream.CategoryEdit, []string{"path"}},
	"edit":                            {agentstream.CategoryEdit, []string{"path"}},
	"str_replace_editor":              {agentstream.CategoryEdit, []string{"path"}},
	"apply_patch":                     {agentstream.CategoryEdit, nil},
	"grep":                            {agentstream.CategorySearch, []string{"pattern"}},
	"glob":                            {agentstream.CategorySearch, []string{"pattern"}},
	"web_fetch":                       {agentstream.CategoryFetch, []string{"url"}},
	"web_search":                      {agentstream.CategorySearch, []string{"query"}},
	"task":                            {agentstream.CategoryDelegate, []string{"description"}},
	"update_todo":                     {agentstream.CategoryPlan, nil},
	"report_intent":                   {agentstream.CategoryOther, []string{"intent"}},
	"task_complete":                   {agentstream.CategoryOther, nil},
	"ask_user":                        {agentstream.CategoryAsk, []string{"question"}},
	"fetch_copilot_cli_documentation": {agentstream.CategoryRead, nil},
}

// fileTools are the tools that change one file, with the kind of change.
var fileTools = map[string]string{
	"create": agentstream.ChangeAdd,
	"edit":   agentstream.ChangeModify,
}

// describeTool returns the category and safe summary of a call. For a known
// tool whose arguments give no summary, the request's intentionSummary (one
// line the agent wrote to describe the call), raw, is decoded and used.
func describeTool(name string, args, intention []byte) (category, summary string) {
	t, ok := copilotTools[name]
	if !ok {
		return agentstream.CategoryOther, ""
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(args, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, fields.Summary(fields.Str(intention))
}

// fileChange returns the file.change of a file tool that succeeded. The
// diff is detailed, the result's detailedContent, when it is a unified
// diff.
func fileChange(callID string, c call, detailed []byte) *agentstream.FileChange {
	kind := fileTools[c.name]
	if kind == "" {
		return nil
	}
	path := fields.Str(jsonscan.Get(c.args, "path"))
	if path == "" {
		return nil
	}
	fc := &agentstream.FileChange{CallID: callID}
	item := agentstream.FileChangeItem{Path: path, Kind: kind}
	if diff := fields.Str(detailed); isDiff(diff) {
		item.Diff, fc.Truncated = agentstream.Clip(diff, agentstream.MaxText)
	}
	fc.Changes = []agentstream.FileChangeItem{item}
	return fc
}

func isDiff(s string) bool {
	return strings.HasPrefix(s, "diff --git") || strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "@@")
}
