package claude

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// toolSpec says what the adapter knows of one tool of a Claude-shaped
// harness: its category, which input keys give the safe summary (the first
// one set wins), its display name when the category does not tell it, how
// its input describes a file change, and how it changes the plan. A tool
// not listed gets the category other, its own name as display name, and no
// summary, so that its arguments are never shown by accident.
type toolSpec struct {
	category string
	keys     []string
	display  string
	edit     editKind
	plan     planKind
}

// editKind is how a tool's input describes the change it makes to a file.
type editKind int

const (
	noEdit      editKind = iota
	editReplace          // a path, an old and a new text (Edit)
	editMulti            // a path and a list of replacements (MultiEdit)
	editWrite            // a path and the whole new content (Write)
)

// planKind is how a tool changes the plan.
type planKind int

const (
	noPlan     planKind = iota
	planTodos           // its input is the whole list (TodoWrite)
	planCreate          // it adds one task (TaskCreate)
	planUpdate          // it changes one task (TaskUpdate)
)

var (
	pathKeys = []string{"file_path", "path", "absolute_path", "notebook_path"}
	cmdKeys  = []string{"command", "cmd"}
)

// claudeTools are Claude Code's tools.
var claudeTools = map[string]toolSpec{
	"Bash":            {category: agentstream.CategoryExecute, keys: []string{"command"}},
	"BashOutput":      {category: agentstream.CategoryExecute, keys: []string{"bash_id", "shell_id"}},
	"KillBash":        {category: agentstream.CategoryExecute, keys: []string{"shell_id", "bash_id"}},
	"KillShell":       {category: agentstream.CategoryExecute, keys: []string{"shell_id", "bash_id"}},
	"Read":            {category: agentstream.CategoryRead, keys: pathKeys},
	"Write":           {category: agentstream.CategoryEdit, keys: pathKeys, display: agentstream.ToolWrite, edit: editWrite},
	"Edit":            {category: agentstream.CategoryEdit, keys: pathKeys, edit: editReplace},
	"MultiEdit":       {category: agentstream.CategoryEdit, keys: pathKeys, edit: editMulti},
	"NotebookEdit":    {category: agentstream.CategoryEdit, keys: []string{"notebook_path"}},
	"NotebookRead":    {category: agentstream.CategoryRead, keys: []string{"notebook_path"}},
	"Grep":            {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"Glob":            {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"LS":              {category: agentstream.CategoryRead, keys: []string{"path"}, display: agentstream.ToolList},
	"WebFetch":        {category: agentstream.CategoryFetch, keys: []string{"url"}},
	"WebSearch":       {category: agentstream.CategorySearch, keys: []string{"query"}, display: agentstream.ToolWebSearch},
	"ToolSearch":      {category: agentstream.CategorySearch, keys: []string{"query"}},
	"Task":            {category: agentstream.CategoryDelegate, keys: []string{"description"}},
	"Agent":           {category: agentstream.CategoryDelegate, keys: []string{"description"}},
	"TodoWrite":       {category: agentstream.CategoryPlan, plan: planTodos},
	"TaskCreate":      {category: agentstream.CategoryPlan, keys: []string{"subject"}, plan: planCreate},
	"TaskUpdate":      {category: agentstream.CategoryPlan, plan: planUpdate},
	"TaskList":        {category: agentstream.CategoryPlan},
	"TaskGet":         {category: agentstream.CategoryPlan, keys: []string{"taskId"}},
	"AskUserQuestion": {category: agentstream.CategoryAsk},
	"ExitPlanMode":    {category: agentstream.CategoryPlan},
	"EnterPlanMode":   {category: agentstream.CategoryPlan},
}

// ampTools are Amp's tools (it names some as Claude Code does, some in
// snake case).
var ampTools = map[string]toolSpec{
	"Bash":                  {category: agentstream.CategoryExecute, keys: cmdKeys},
	"bash":                  {category: agentstream.CategoryExecute, keys: cmdKeys},
	"Read":                  {category: agentstream.CategoryRead, keys: pathKeys},
	"read_file":             {category: agentstream.CategoryRead, keys: pathKeys},
	"list_directory":        {category: agentstream.CategoryRead, keys: pathKeys, display: agentstream.ToolList},
	"create_file":           {category: agentstream.CategoryEdit, keys: pathKeys, display: agentstream.ToolWrite, edit: editWrite},
	"edit_file":             {category: agentstream.CategoryEdit, keys: pathKeys, edit: editReplace},
	"undo_edit":             {category: agentstream.CategoryEdit, keys: pathKeys},
	"format_file":           {category: agentstream.CategoryEdit, keys: pathKeys},
	"Grep":                  {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"grep":                  {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"glob":                  {category: agentstream.CategorySearch, keys: []string{"filePattern", "pattern"}},
	"finder":                {category: agentstream.CategorySearch, keys: []string{"query"}},
	"codebase_search_agent": {category: agentstream.CategorySearch, keys: []string{"query"}},
	"web_search":            {category: agentstream.CategorySearch, keys: []string{"query"}, display: agentstream.ToolWebSearch},
	"read_web_page":         {category: agentstream.CategoryFetch, keys: []string{"url"}},
	"oracle":                {category: agentstream.CategoryDelegate, keys: []string{"task"}},
	"librarian":             {category: agentstream.CategoryDelegate, keys: []string{"query"}},
	"task":                  {category: agentstream.CategoryDelegate, keys: []string{"description", "prompt"}},
	"Task":                  {category: agentstream.CategoryDelegate, keys: []string{"description", "prompt"}},
	"handoff":               {category: agentstream.CategoryDelegate, keys: []string{"goal"}},
	"read_thread":           {category: agentstream.CategoryRead, keys: []string{"threadID", "threadId"}},
	"find_thread":           {category: agentstream.CategorySearch, keys: []string{"query"}},
	"todo_write":            {category: agentstream.CategoryPlan, plan: planTodos},
	"todo_read":             {category: agentstream.CategoryPlan},
	"mermaid":               {category: agentstream.CategoryOther},
	"painter":               {category: agentstream.CategoryOther},
}

// qwenTools are Qwen Code's tools.
var qwenTools = map[string]toolSpec{
	"run_shell_command": {category: agentstream.CategoryExecute, keys: []string{"command"}},
	"read_file":         {category: agentstream.CategoryRead, keys: pathKeys},
	"read_many_files":   {category: agentstream.CategoryRead},
	"list_directory":    {category: agentstream.CategoryRead, keys: pathKeys, display: agentstream.ToolList},
	"write_file":        {category: agentstream.CategoryEdit, keys: pathKeys, display: agentstream.ToolWrite, edit: editWrite},
	"edit":              {category: agentstream.CategoryEdit, keys: pathKeys, edit: editReplace},
	"notebook_edit":     {category: agentstream.CategoryEdit, keys: pathKeys},
	"grep_search":       {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"glob":              {category: agentstream.CategorySearch, keys: []string{"pattern"}},
	"tool_search":       {category: agentstream.CategorySearch, keys: []string{"query"}},
	"web_search":        {category: agentstream.CategorySearch, keys: []string{"query"}, display: agentstream.ToolWebSearch},
	"web_fetch":         {category: agentstream.CategoryFetch, keys: []string{"url"}},
	"agent":             {category: agentstream.CategoryDelegate, keys: []string{"description"}},
	"task":              {category: agentstream.CategoryDelegate, keys: []string{"description"}},
	"todo_write":        {category: agentstream.CategoryPlan, plan: planTodos},
	"task_create":       {category: agentstream.CategoryPlan, keys: []string{"subject"}, plan: planCreate},
	"task_update":       {category: agentstream.CategoryPlan, plan: planUpdate},
	"task_list":         {category: agentstream.CategoryPlan},
	"exit_plan_mode":    {category: agentstream.CategoryPlan},
	"enter_plan_mode":   {category: agentstream.CategoryPlan},
	"ask_user_question": {category: agentstream.CategoryAsk},
	"save_memory":       {category: agentstream.CategoryThink, keys: []string{"fact"}},
}

// toolTables are the tool tables of each harness.
var toolTables = map[string]map[string]toolSpec{
	Claude.Harness: claudeTools,
	Amp.Harness:    ampTools,
	Qwen.Harness:   qwenTools,
}

// spec returns what the adapter knows of the tool called name, and whether
// it knows it.
func (d *Decoder) spec(name string) (toolSpec, bool) {
	t, ok := toolTables[d.cfg.Harness][name]
	return t, ok
}

// describeTool returns the category, safe summary and display name of a
// tool call.
func (d *Decoder) describeTool(name string, input []byte) (category, summary, display string) {
	if strings.HasPrefix(name, "mcp__") {
		server, tool, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		if tool == "" {
			return agentstream.CategoryMCP, server, agentstream.ToolMCP
		}
		return agentstream.CategoryMCP, server + ": " + tool, agentstream.ToolMCP
	}
	t, ok := d.spec(name)
	if !ok {
		return agentstream.CategoryOther, "", name
	}
	display = t.display
	if display == "" {
		display = fields.Display(t.category, name)
	}
	switch {
	case t.plan == planTodos:
		return t.category, fields.TodoSummary(input), display
	case t.plan == planUpdate:
		id, status := fields.Str(jsonscan.Get(input, "taskId")), fields.Str(jsonscan.Get(input, "status"))
		if id == "" {
			return t.category, "", display
		}
		return t.category, strings.TrimSpace("task " + id + " " + status), display
	case t.category == agentstream.CategoryAsk:
		arr, ok := jsonscan.Array(jsonscan.Get(input, "questions"))
		if ok && arr.Next() {
			return t.category, fields.Summary(fields.Str(jsonscan.Get(arr.Value(), "question"))), display
		}
		return t.category, "", display
	case name == "ExitPlanMode" || name == "exit_plan_mode":
		return t.category, "exit plan mode", display
	case name == "EnterPlanMode" || name == "enter_plan_mode":
		return t.category, "enter plan mode", display
	}
	for _, k := range t.keys {
		if s := fields.Summary(fields.Str(jsonscan.Get(input, k))); s != "" {
			return t.category, s, display
		}
	}
	return t.category, "", display
}
