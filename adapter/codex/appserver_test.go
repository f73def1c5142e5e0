package codex_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestAppServerConformance replays what Codex 0.169.0's app-server printed
// in a live session (session's TestCodexAppServerLive, against the model
// simulator: two approvals, one declined, and a steer): its goldens and
// every invariant.
func TestAppServerConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "codex-app",
		Fixtures: []string{"testdata/appserver/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeAppServer(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "codex-app", "testdata/appserver/*.jsonl")
}
