package gitleaks_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/agentstream/agentstream/redact/gitleaks"
)

// BenchmarkScan measures the deep scan on a recorded Claude session.
func BenchmarkScan(b *testing.B) {
	s, err := gitleaks.New()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("../../adapter/claude/testdata/corpus/tandemtechnology-bb-stdout-turn-tools.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		for _, l := range lines {
			s.Scan(l)
		}
	}
}
