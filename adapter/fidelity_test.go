package adapter_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// Fidelity targets: outside the line types an adapter leaves raw on
// purpose, at most this share of the corpus's lines, and of any one
// dialect's, becomes only raw.
const (
	maxRawShare        = 0.10
	maxDialectRawShare = 0.15
)

// fidelityCount is what TestCorpusFidelity counts for one dialect.
type fidelityCount struct {
	lines      int // non-blank lines
	raw        int // lines whose events are all raw, raw on purpose excepted
	deliberate int // lines of types raw on purpose that became raw
	zero       map[string]int
}

// TestCorpusFidelity holds the adapters to their recordings (every file of
// recordings, fixtures and corpus alike): few lines
// are left only raw that no adapter lists as raw on purpose
// (Adapter.Deliberate), and no line gives zero events unless its adapter
// lists its type as folded into other lines' events (Adapter.Folded).
// Types are named by adapter.NativeType. The table it logs (go test
// ./adapter -run TestCorpusFidelity -v) is the raw share per dialect.
func TestCorpusFidelity(t *testing.T) {
	counts := map[string]*fidelityCount{}
	for protocol := range recordings {
		a, err := adapter.Lookup(protocol)
		if err != nil {
			t.Fatal(err)
		}
		c := &fidelityCount{zero: map[string]int{}}
		counts[protocol] = c
		for _, f := range recorded(t, protocol) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			countFidelity(t, a, filepath.Base(f), data, c)
		}
	}
	var names []string
	for p := range counts {
		names = append(names, p)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %6s %6s %6s %7s\n", "dialect", "lines", "raw", "on-purp", "raw %")
	var lines, raw int
	for _, p := range names {
		c := counts[p]
		lines += c.lines
		raw += c.raw
		share := float64(c.raw) / float64(max(c.lines, 1))
		fmt.Fprintf(&b, "%-14s %6d %6d %6d %6.1f%%\n", p, c.lines, c.raw, c.deliberate, 100*share)
		if share > maxDialectRawShare {
			t.Errorf("%s: %d of %d lines (%.1f%%) are only raw and not raw on purpose; at most %.0f%% may be",
				p, c.raw, c.lines, 100*share, 100*maxDialectRawShare)
		}
		for nt, n := range c.zero {
			t.Errorf("%s: %d lines of type %s give no event, and the adapter does not list the type as folded", p, n, nt)
		}
	}
	share := float64(raw) / float64(max(lines, 1))
	fmt.Fprintf(&b, "%-14s %6d %6d %6s %6.1f%%\n", "all", lines, raw, "", 100*share)
	t.Logf("lines only raw, not counting those raw on purpose:\n%s", b.String())
	if share > maxRawShare {
		t.Errorf("corpus: %d of %d lines (%.1f%%) are only raw and not raw on purpose; at most %.0f%% may be",
			raw, lines, 100*share, 100*maxRawShare)
	}
}

// countFidelity counts the lines of one recording read by a.
func countFidelity(t *testing.T, a adapter.Adapter, name string, data []byte, c *fidelityCount) {
	t.Helper()
	lines := bytes.Split(data, []byte("\n"))
	evs, err := adapter.ParseLines(a.Name, lines, 0)
	if err != nil {
		t.Fatal(err)
	}
	byLine := map[int][]string{}
	for _, e := range evs {
		if e.Line > 0 {
			byLine[e.Line] = append(byLine[e.Line], e.Type())
		}
	}
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		c.lines++
		nt := adapter.NativeType(agentstream.Line{N: int64(i + 1), Bytes: l, Size: int64(len(l))})
		types := byLine[i+1]
		if len(types) == 0 {
			if _, ok := a.FoldedInto(nt); !ok {
				c.zero[nt]++
				t.Logf("%s line %d (%s) gives no event", name, i+1, nt)
			}
			continue
		}
		onlyRaw := true
		for _, typ := range types {
			onlyRaw = onlyRaw && typ == agentstream.TypeRaw
		}
		if !onlyRaw {
			continue
		}
		if _, ok := a.DeliberateRaw(nt); ok {
			c.deliberate++
		} else {
			c.raw++
		}
	}
}
