package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/google/go-cmp/cmp"
)

// TestStatsDeliberate holds the drift count to the adapter's list: raw lines
// of a type listed as raw on purpose are counted apart, the others are not.
func TestStatsDeliberate(t *testing.T) {
	a, err := adapter.Lookup("claude-json")
	if err != nil {
		t.Fatal(err)
	}
	a.Deliberate = map[string]string{"vendor_quiet": "carries nothing a reader needs"}
	in := []string{
		`{"type":"vendor_quiet","n":1}`,
		`{"type":"vendor_quiet","n":2}`,
		`{"type":"vendor_new","n":3}`,
		`{"type":"result","subtype":"success","result":"ok"}`,
	}
	st := newNormalizeStats()
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: "s", Harness: a.Harness})
	for i, l := range in {
		line := agentstream.Line{N: int64(i + 1), Bytes: []byte(l)}
		st.line(a, line, n.Line(nil, line, zeroTime))
	}
	want := map[string]lineCount{
		"vendor_quiet":   {Lines: 2, Raw: 2, Deliberate: 2},
		"vendor_new":     {Lines: 1, Raw: 1},
		"result/success": {Lines: 1},
	}
	got := map[string]lineCount{}
	for k, c := range st.Lines {
		got[k] = *c
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("line counts (-want +got):\n%s", d)
	}
	var out bytes.Buffer
	st.print(&out)
	for _, w := range []string{"raw on purpose", "unmapped raw lines: 1 of 4 (25.0%)"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("printed stats lack %q:\n%s", w, out.String())
		}
	}
}
