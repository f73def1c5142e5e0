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
	for dir, want := range corpusProtocols {
		files, _ := filepath.Glob(corpus + dir + "/*.jsonl")
		if len(files) == 0 {
			t.Errorf("no corpus files for %s", dir)
		}
		for _, f := range files {
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
