package adapter_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream/adapter"
)

const corpus = "../../shared/corpus/"

// corpusProtocols maps each corpus folder to the protocol of its harness.
var corpusProtocols = map[string]string{
	"claude-code": "claude-json",
	"codex":       "codex-json",
	"gemini":      "gemini-json",
	"qwen":        "qwen-json",
	"amp":         "amp-json",
	"opencode":    "opencode-json",
	"cursor":      "cursor-json",
	"copilot":     "copilot-json",
	"droid":       "droid-json",
	"acp":         "acp",
}

// TestDetectCorpus proves that every recorded file is detected as its own
// dialect, and that no other adapter claims it.
func TestDetectCorpus(t *testing.T) {
	dirs := []string{"other"}
	for dir := range corpusProtocols {
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		files, _ := filepath.Glob(corpus + dir + "/*.jsonl")
		if len(files) == 0 {
			t.Errorf("no corpus files for %s", dir)
		}
		for _, f := range files {
			want := corpusFileProtocol(dir, f)
			t.Run(dir+"/"+filepath.Base(f), func(t *testing.T) {
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

// otherProtocols maps a part of the name of a file in the corpus folder
// "other", which holds several harnesses, to its protocol.
var otherProtocols = map[string]string{"kimi-cli": "kimi-json", "-pi-": "pi-json"}

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
