package opencode

import (
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Claims reports whether the first non-blank lines of a stream are opencode
// output: the first JSON object decides. It has one of opencode's line
// types and a camel-case sessionID, with the part (or, for error, the error
// object) opencode prints beside it.
func Claims(lines [][]byte) bool {
	for _, l := range lines {
		obj, ok := jsonscan.Object(l)
		if !ok {
			continue
		}
		var typ, sessionID, part, errV []byte
		for obj.Next() {
			switch string(obj.Key()) {
			case "type":
				typ = obj.Value()
			case "sessionID":
				sessionID = obj.Value()
			case "part":
				part = obj.Value()
			case "error":
				errV = obj.Value()
			}
		}
		if !obj.Complete() {
			continue
		}
		if len(sessionID) == 0 || sessionID[0] != '"' {
			return false
		}
		switch fields.Str(typ) {
		case "step_start", "step_finish", "text", "reasoning", "tool_use":
			return len(part) > 0 && part[0] == '{'
		case "error":
			return len(errV) > 0
		case "done":
			return true
		}
		return false
	}
	return false
}
