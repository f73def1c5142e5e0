package adapter

import "github.com/agentstream/agentstream/internal/jsonscan"

// LineType names the type of a native line as the drift counts of
// normalize --stats do: its type (with the subtype of a line that has one,
// as "system/init"), else its JSON-RPC method, else the type of a legacy
// {"id","msg"} line's msg ("msg/" + type); "(blank)", "(no type)" or
// "(not json)" otherwise.
func LineType(line []byte) string {
	b := jsonscan.TrimSpace(line)
	if len(b) == 0 {
		return "(blank)"
	}
	if !jsonscan.Valid(b) {
		return "(not json)"
	}
	if t, ok := jsonscan.String(jsonscan.Get(b, "type")); ok {
		if sub, ok := jsonscan.String(jsonscan.Get(b, "subtype")); ok && sub != "" {
			return t + "/" + sub
		}
		return t
	}
	if m, ok := jsonscan.String(jsonscan.Get(b, "method")); ok {
		return m
	}
	if t, ok := jsonscan.String(jsonscan.GetPath(b, "msg", "type")); ok {
		return "msg/" + t
	}
	return "(no type)"
}
