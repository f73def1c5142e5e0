package adapter

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// NativeType names the type of a native line, the key under which drift is
// counted and deliberate raw lines are listed: its type (with the subtype of
// a system line, "system/status", and the inner discriminator of the lines
// that wrap another message, "stream_event/message_delta",
// "control_request/can_use_tool", a Codex rollout's
// "event_msg/token_count"), else its JSON-RPC method, else the type
// of a legacy {"id","msg"} line's msg ("msg/agent_message"); "(blank)",
// "(no type)", "(not json)" or "(oversized)" otherwise.
func NativeType(l agentstream.Line) string {
	if l.Oversized {
		return "(oversized)"
	}
	b := jsonscan.TrimSpace(l.Bytes)
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
		var inner []byte
		switch t {
		case "stream_event":
			inner = jsonscan.GetPath(b, "event", "type")
		case "control_request":
			inner = jsonscan.GetPath(b, "request", "subtype")
		case "event_msg", "response_item":
			inner = jsonscan.GetPath(b, "payload", "type")
		}
		if sub, ok := jsonscan.String(inner); ok && sub != "" {
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

// FoldedInto returns where what lines of the native type nt say goes, when
// such lines may give no event of their own, and whether they may.
func (a Adapter) FoldedInto(nt string) (where string, ok bool) {
	where, ok = a.Folded[nt]
	return where, ok
}

// DeliberateRaw returns why lines of the native type nt stay raw on purpose
// in this adapter's dialect, and whether they do. Raw lines of any other
// type are unmapped: drift to look at.
func (a Adapter) DeliberateRaw(nt string) (reason string, ok bool) {
	reason, ok = a.Deliberate[nt]
	return reason, ok
}
