package claude

import (
	"bytes"
	"strings"

	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// claudeTypes are the line types of the Claude-shaped dialects.
var claudeTypes = map[string]bool{
	"system": true, "assistant": true, "user": true, "result": true,
	"stream_event": true, "rate_limit_event": true, "control_request": true,
	"control_response": true, "command_lifecycle": true, "auth_status": true,
	"prompt_suggestion": true, "tool_progress": true, "tool_use_summary": true,
	"conversation_reset": true, "keep_alive": true,
}

// variant returns which Claude-shaped harness wrote lines: "claude", "qwen",
// "amp", or "" when the lines are not Claude-shaped. Cursor's and droid's
// dialects copy some Claude lines too; they are told apart by the line types
// only they use (tool_call, thinking, message), by Cursor's timestamp_ms and
// model_call_id, and by Cursor's display model names, which hold spaces
// where a model id never does. An init alone may be minimal (the format's
// own example has neither MCP servers nor a version); the lines after it
// tell the dialects apart.
func variant(lines [][]byte) string {
	shaped, amp := false, false
	for _, l := range lines {
		if len(l) > 0 && l[0] == '[' {
			arr, _ := jsonscan.Array(l)
			if arr.Next() {
				l = arr.Value()
			}
		}
		t := fields.Str(jsonscan.Get(l, "type"))
		switch {
		case t == "":
			continue
		case t == "tool_use" && len(jsonscan.Get(l, "name")) > 0 && len(jsonscan.Get(l, "input")) > 0:
			// Amp prints bare tool_use blocks as lines of their own.
			amp = true
			continue
		case !claudeTypes[t]:
			return ""
		}
		if len(jsonscan.Get(l, "timestamp_ms")) > 0 || len(jsonscan.Get(l, "model_call_id")) > 0 {
			return ""
		}
		if t == "system" && fields.Str(jsonscan.Get(l, "subtype")) == "init" {
			if strings.Contains(fields.Str(jsonscan.Get(l, "model")), " ") {
				return ""
			}
		}
		shaped = true
		if bytes.Contains(l, []byte(`"qwen_code_version"`)) {
			return "qwen"
		}
		if t == "system" && strings.HasPrefix(fields.Str(jsonscan.Get(l, "session_id")), "T-") {
			amp = true
		}
	}
	switch {
	case amp:
		return "amp"
	case shaped:
		return "claude"
	}
	return ""
}

// ClaimsClaude reports whether lines are Claude Code stream-json.
func ClaimsClaude(lines [][]byte) bool { return variant(lines) == "claude" }

// ClaimsQwen reports whether lines are Qwen Code stream-json.
func ClaimsQwen(lines [][]byte) bool { return variant(lines) == "qwen" }

// ClaimsAmp reports whether lines are Amp stream-json.
func ClaimsAmp(lines [][]byte) bool { return variant(lines) == "amp" }
