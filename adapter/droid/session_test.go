package droid_test

import (
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestSessionConformance replays the session files Droid 0.225.2 wrote in
// the lab's runs, each with its settings file (testdata/session/SOURCES.md):
// their goldens and every invariant.
func TestSessionConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "droid-session",
		Fixtures: []string{"testdata/session/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeSession(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "droid-session", "testdata/session/*.jsonl")
}
