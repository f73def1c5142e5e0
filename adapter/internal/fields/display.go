package fields

import "github.com/agentstream/agentstream"

// kindsByName are the native names of the tools whose kind their category
// does not tell: a whole-file write among the edits, a directory listing
// among the reads, a web search among the searches. Names are distinct
// across the harnesses that use them.
var kindsByName = map[string]string{
	"Write": agentstream.ToolWrite, "write": agentstream.ToolWrite, "write_file": agentstream.ToolWrite,
	"create_file": agentstream.ToolWrite, "Create": agentstream.ToolWrite, "create": agentstream.ToolWrite,
	"LS": agentstream.ToolList, "ls": agentstream.ToolList, "list": agentstream.ToolList, "list_directory": agentstream.ToolList,
	"WebSearch": agentstream.ToolWebSearch, "web_search": agentstream.ToolWebSearch, "websearch": agentstream.ToolWebSearch,
	"google_web_search": agentstream.ToolWebSearch,
}

// Display returns the display name of a tool of category called name: the
// one name of its kind (agentstream.ToolShell for every command runner, …),
// else the tool's native name.
func Display(category, name string) string {
	if k, ok := kindsByName[name]; ok && category != agentstream.CategoryOther && category != agentstream.CategoryMCP {
		return k
	}
	switch category {
	case agentstream.CategoryExecute:
		return agentstream.ToolShell
	case agentstream.CategoryRead:
		return agentstream.ToolRead
	case agentstream.CategoryEdit:
		return agentstream.ToolEdit
	case agentstream.CategoryDelete:
		return agentstream.ToolDelete
	case agentstream.CategoryMove:
		return agentstream.ToolMove
	case agentstream.CategorySearch:
		return agentstream.ToolSearch
	case agentstream.CategoryFetch:
		return agentstream.ToolFetch
	case agentstream.CategoryThink:
		return agentstream.ToolThink
	case agentstream.CategoryDelegate:
		return agentstream.ToolAgent
	case agentstream.CategoryPlan:
		return agentstream.ToolPlan
	case agentstream.CategoryAsk:
		return agentstream.ToolAsk
	case agentstream.CategoryMCP:
		return agentstream.ToolMCP
	}
	return name
}
