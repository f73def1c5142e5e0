package claude

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// qwenTools says, for each Qwen Code tool the adapter knows (as Qwen Code
// 0.24 offers them), its category and the input keys that give the safe
// summary. Qwen Code uses Gemini CLI's tool names, not Claude Code's.
var qwenTools = map[string]struct {
	category string
	keys     []string
}{
	"run_shell_command": {agentstream.CategoryExecute, []string{"command"}},
	"read_file":         {agentstream.CategoryRead, []string{"file_path", "absolute_path", "path"}},
	"read_many_files":   {agentstream.CategoryRead, nil},
	"list_directory":    {agentstream.CategoryRead, []string{"path"}},
	"write_file":        {agentstream.CategoryEdit, []string{"file_path"}},
	"edit":              {agentstream.CategoryEdit, []string{"file_path"}},
	"notebook_edit":     {agentstream.CategoryEdit, []string{"notebook_path", "file_path"}},
	"glob":              {agentstream.CategorySearch, []string{"pattern"}},
	"grep_search":       {agentstream.CategorySearch, []string{"pattern"}},
	"tool_search":       {agentstream.CategorySearch, []string{"query"}},
	"web_fetch":         {agentstream.CategoryFetch, []string{"url"}},
	"web_search":        {agentstream.CategorySearch, []string{"query"}},
	"agent":             {agentstream.CategoryDelegate, []string{"description"}},
	"todo_write":        {agentstream.CategoryPlan, nil},
	"ask_user_question": {agentstream.CategoryAsk, nil},
	"exit_plan_mode":    {agentstream.CategoryPlan, nil},
}

// describeTool returns the category and safe summary of a tool call, by the
// tool names of the decoder's harness.
func (d *Decoder) describeTool(name string, input []byte) (category, summary string) {
	if d.cfg.Harness != Qwen.Harness {
		return describeTool(name, input)
	}
	t, ok := qwenTools[name]
	if !ok {
		return describeTool(name, input)
	}
	if name == "todo_write" {
		return t.category, fields.TodoSummary(input)
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(input, k))); s != "" {
			return t.category, s
		}
	}
	return t.category, ""
}

// qwenRetry maps Qwen Code's system/retry line: the attempt, the most
// retries and the delay are in its data.
func (d *Decoder) qwenRetry(dst []agentstream.Event, line []byte) []agentstream.Event {
	data := jsonscan.Get(line, "data")
	return append(dst, agentstream.E(&agentstream.Retry{
		Attempt:    fields.Int(jsonscan.Get(data, "attempt")),
		MaxRetries: fields.Int(jsonscan.Get(data, "maxRetries")),
		DelayMs:    fields.Float(jsonscan.Get(data, "delayMs")),
		Error:      fields.Str(jsonscan.Get(data, "reason")),
	}))
}

// qwenExitCode takes the exit code of a Qwen Code shell result from its
// text ("Exit Code: 3"), where Qwen Code gives it.
func (d *Decoder) qwenExitCode(r *agentstream.ToolResult) {
	if d.cfg.Harness != Qwen.Harness || r.Name != "run_shell_command" {
		return
	}
	_, rest, ok := strings.Cut(r.Output, "\nExit Code: ")
	if !ok {
		return
	}
	line, _, _ := strings.Cut(rest, "\n")
	if n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64); err == nil {
		r.ExitCode = &n
	}
}
