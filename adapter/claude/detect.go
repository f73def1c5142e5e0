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
	"control_response": true, "command_lifecycle": true,
}

// variant returns which Claude-shaped harness wrote lines: "claude", "qwen",
// "amp", or "" when the lines are not Claude-shaped.
func variant(lines [][]byte) string {
	shaped := false
	for _, l := range lines {
		if len(l) > 0 && l[0] == '[' {
			arr, _ := jsonscan.Array(l)
			if arr.Next() {
				l = arr.Value()
			}
		}
		t := fields.Str(jsonscan.Get(l, "type"))
		if !claudeTypes[t] {
			if t != "" && !shaped {
				return ""
			}
			continue
		}
		shaped = true
		if bytes.Contains(l, []byte(`"qwen_code_version"`)) {
			return "qwen"
		}
		if t == "system" && strings.HasPrefix(fields.Str(jsonscan.Get(l, "session_id")), "T-") {
			return "amp"
		}
	}
	if shaped {
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
