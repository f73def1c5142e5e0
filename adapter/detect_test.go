package adapter_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream/adapter"
)

// recordings are, per protocol, the globs of its dialect's recorded files,
// kept in the test data of the adapter package that reads them: fixtures
// with goldens, and recordings without goldens under corpus/.
var recordings = map[string][]string{
	"claude-json":      {"claude/testdata/*.jsonl", "claude/testdata/corpus/*.jsonl"},
	"qwen-json":        {"claude/testdata/qwen/*.jsonl"},
	"amp-json":         {"claude/testdata/amp/*.jsonl"},
	"codex-json":       {"codex/testdata/*.jsonl"},
	"gemini-json":      {"gemini/testdata/*.jsonl"},
	"opencode-json":    {"opencode/testdata/*.jsonl"},
	"cursor-json":      {"cursor/testdata/*.jsonl"},
	"copilot-json":     {"copilot/testdata/*.jsonl"},
	"droid-json":       {"droid/testdata/*.jsonl"},
	"acp":              {"acp/testdata/*.jsonl"},
	"codex-rollout":    {"codex/testdata/rollout/*.jsonl"},
	"gemini-chat":      {"gemini/testdata/chats/*.jsonl"},
	"opencode-storage": {"opencode/testdata/storage/*.jsonl"},
	"qwen-chat":        {"gemini/testdata/qwenchat/*.jsonl"},
	"droid-session":    {"droid/testdata/session/*.jsonl"},
	"kimi-json":        {"kimi/testdata/*.jsonl"},
	"pi-json":          {"pi/testdata/*.jsonl"},
}

// undetectable are recordings that hold no line of their dialect.
var undetectable = map[string]bool{
	"sortie-ai-sortie-copilot-auth-failure.jsonl": true, // one plain-text line
	// a transcript, which import --local reads as claude-json by its place;
	// its bookkeeping lines (queue-operation, attachment) are no stream's.
	"synthetic-claude-2.1.328-transcript-resumed-cost-state.jsonl": true,
}

// recorded returns the files of protocol's recordings, failing the test when
// a glob matches nothing.
func recorded(t *testing.T, protocol string) []string {
	t.Helper()
	var files []string
	for _, g := range recordings[protocol] {
		m, err := filepath.Glob(g)
		if err != nil || len(m) == 0 {
			t.Fatalf("recordings of %s: glob %q matches no file (%v)", protocol, g, err)
		}
		files = append(files, m...)
	}
	return files
}

// TestDetectCorpus proves that every recorded file is detected as its own
// dialect, and that no other adapter claims it.
func TestDetectCorpus(t *testing.T) {
	for want := range recordings {
		for _, f := range recorded(t, want) {
			if undetectable[filepath.Base(f)] {
				continue
			}
			t.Run(want+"/"+filepath.Base(f), func(t *testing.T) {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				lines := bytes.Split(data, []byte("\n"))
				if got := adapter.Detect(lines); got != want {
					t.Errorf("Detect = %s, want %s", got, want)
				}
				var sample [][]byte
				for _, l := range lines {
					if l = bytes.TrimSpace(l); len(l) > 0 && len(sample) < adapter.DetectLines {
						sample = append(sample, l)
					}
				}
				for _, a := range adapter.All() {
					if a.Claims != nil && a.Name != want && a.Claims(sample) {
						t.Errorf("%s also claims it", a.Name)
					}
				}
			})
		}
	}
}

// TestDetectFallsBackToNone checks that prose and unknown JSON are left to
// the none protocol.
func TestDetectFallsBackToNone(t *testing.T) {
	for _, in := range []string{"", "hello world\nsecond line", `{"foo":1}`, "[1,2,3]"} {
		if got := adapter.Detect(bytes.Split([]byte(in), []byte("\n"))); got != "none" {
			t.Errorf("Detect(%q) = %s, want none", in, got)
		}
	}
}

// TestDetectMinimalClaudeInit checks that the Claude inits of the format's
// own examples, which list no MCP servers and name no version, are read as
// Claude Code.
func TestDetectMinimalClaudeInit(t *testing.T) {
	tests := map[string]string{
		"format example": `{"type":"system","subtype":"init","cwd":"/workspace/demo","session_id":"ef45799e-d353-4d47-9cab-edac253e5cb4","tools":["Task","Bash","Read"],"model":"claude-sonnet-5","permissionMode":"bypassPermissions"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_01Su1gEqceMZJJCvrQCx71oT","name":"Bash","input":{"command":"cat README.md 2>/dev/null || ls"}}]}}`,
		"init alone": `{"type":"system","subtype":"init","session_id":"s","model":"claude-opus-5"}`,
		"init and result": `{"type":"system","subtype":"init","session_id":"s","model":"x"}
{"type":"result","subtype":"success","result":"done"}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if got := adapter.Detect(bytes.Split([]byte(in), []byte("\n"))); got != "claude-json" {
				t.Errorf("Detect = %s, want claude-json", got)
			}
		})
	}
}
