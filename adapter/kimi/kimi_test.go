package kimi_test

import (
	"flag"
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "kimi-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "kimi-json", "testdata/*.jsonl") }
