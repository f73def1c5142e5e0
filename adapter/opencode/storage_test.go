package opencode_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestStorageConformance replays the records opencode 1.18.33 kept of the
// lab's sessions in its database (testdata/storage/SOURCES.md): their
// goldens and every invariant.
func TestStorageConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "opencode-storage",
		Fixtures: []string{"testdata/storage/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeStorage(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "opencode-storage", "testdata/storage/*.jsonl")
}
