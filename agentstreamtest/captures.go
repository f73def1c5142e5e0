package agentstreamtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// CheckCaptures checks the lab's captures of real harness runs (rule
// "deliberate"): no native line type falls to raw unless the adapter of
// protocol lists it in Deliberate, or pending names it (a mapping being
// written, with the reason). It fails when glob matches no file.
func CheckCaptures(t *testing.T, protocol, glob string, pending map[string]string) {
	t.Helper()
	a, err := adapter.Lookup(protocol)
	if err != nil {
		t.Fatalf("agentstreamtest: %v", err)
	}
	files := expand(t, []string{glob})
	for _, f := range files {
		t.Run("deliberate/"+filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(data, []byte("\n"))
			evs, err := adapter.ParseLines(protocol, lines, 0)
			if err != nil {
				t.Fatal(err)
			}
			raw, other := map[int]bool{}, map[int]bool{}
			for _, e := range evs {
				if e.Line == 0 {
					continue
				}
				if e.Type() == agentstream.TypeRaw {
					raw[e.Line] = true
				} else {
					other[e.Line] = true
				}
			}
			reported := map[string]bool{}
			for n := range raw {
				if other[n] {
					continue
				}
				lt := adapter.NativeType(agentstream.Line{Bytes: lines[n-1]})
				if a.Deliberate[lt] != "" || pending[lt] != "" || reported[lt] {
					continue
				}
				reported[lt] = true
				t.Errorf("deliberate: %s line %d: native line type %s fell to raw, and the adapter does not list it as deliberately raw", filepath.Base(f), n, lt)
			}
		})
	}
}
