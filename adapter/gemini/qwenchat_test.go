package gemini_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestQwenChatConformance replays the chat files Qwen Code 0.24.4 wrote in
// the lab's runs (testdata/qwenchat/SOURCES.md): their goldens and every
// invariant.
func TestQwenChatConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "qwen-chat",
		Fixtures: []string{"testdata/qwenchat/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeQwenChat(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "qwen-chat", "testdata/qwenchat/*.jsonl")
}
