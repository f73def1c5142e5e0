package claude_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// pendingRaw are Claude Code 2.1.328's line types that are raw until their
// mapping lands.
var pendingRaw = map[string]string{
	"system/thinking_tokens":          "mapping under way",
	"system/status":                   "mapping under way",
	"system/background_tasks_changed": "mapping under way",
	"system/task_updated":             "mapping under way",
}

// TestLabCaptures replays the lab's captures of Claude Code and Qwen Code
// (SOURCES.md in testdata/lab and testdata/qwen/lab): their goldens, every
// invariant, and no native line type raw unless the adapter lists it as
// deliberately raw.
func TestLabCaptures(t *testing.T) {
	t.Run("claude", func(t *testing.T) {
		agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
			Protocol: "claude-json", Fixtures: []string{"testdata/lab/*.jsonl"}, Update: *update,
		})
		agentstreamtest.CheckCaptures(t, "claude-json", "testdata/lab/*.jsonl", pendingRaw)
	})
	t.Run("qwen", func(t *testing.T) {
		agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
			Protocol: "qwen-json", Fixtures: []string{"testdata/qwen/lab/*.jsonl"}, Update: *update,
		})
		agentstreamtest.CheckCaptures(t, "qwen-json", "testdata/qwen/lab/*.jsonl", nil)
	})
}
