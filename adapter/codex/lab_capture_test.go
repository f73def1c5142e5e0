package codex_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestLabCaptures replays the lab's captures of the real CLI (SOURCES.md
// in testdata/lab): their goldens, every invariant, and no native line type raw
// unless the adapter lists it as deliberately raw.
func TestLabCaptures(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "codex-json",
		Fixtures: []string{"testdata/lab/*.jsonl"},
		Update:   *update,
	})
	agentstreamtest.CheckCaptures(t, "codex-json", "testdata/lab/*.jsonl", nil)
}
