package gemini

import (
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Claims reports whether the first non-blank lines of a stream are Gemini
// CLI output: the first JSON object decides. It is an init line with a
// session_id and a model; a message with a role and a string content (and
// no session id, which Droid's messages have); a tool_use with tool_name
// and tool_id; a tool_result with tool_id and status; an error with a
// severity; a result with stats and no subtype (Claude's has one); or the
// {response, stats} object of --output-format json.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		obj, ok := jsonscan.Object(l)
		if !ok {
			continue
		}
		var typ, sessionID, model, role, content, toolName, toolID, status, severity, stats, response, subtype []byte
		others := false
		for obj.Next() {
			v := obj.Value()
			switch string(obj.Key()) {
			case "type":
				typ = v
			case "session_id":
				sessionID = v
			case "model":
				model = v
			case "role":
				role = v
			case "content":
				content = v
			case "tool_name":
				toolName = v
			case "tool_id":
				toolID = v
			case "status":
				status = v
			case "severity":
				severity = v
			case "stats":
				stats = v
			case "response":
				response = v
			case "subtype":
				subtype = v
			case "timestamp", "delta", "parameters", "output", "error", "message":
			default:
				others = true
			}
		}
		if !obj.Complete() {
			continue
		}
		str := func(v []byte) bool { return len(v) > 0 && v[0] == '"' }
		switch fields.Str(typ) {
		case "init":
			return str(sessionID) && str(model)
		case "message":
			r := fields.Str(role)
			return (r == "user" || r == "assistant") && str(content) && len(sessionID) == 0 && !others
		case "tool_use":
			return str(toolName) && str(toolID)
		case "tool_result":
			return str(toolID) && str(status)
		case "error":
			return str(severity) && len(sessionID) == 0
		case "result":
			return len(stats) > 0 && str(status) && len(subtype) == 0
		case "":
			if len(typ) == 0 {
				return len(response) > 0 && len(stats) > 0 && stats[0] == '{'
			}
		}
		return false
	}
	return false
}
