package pi_test

import (
	"flag"
	"testing"

	"github.com/agentstream/agentstream/agentstreamtest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "pi-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "pi-json", "testdata/*.jsonl") }
