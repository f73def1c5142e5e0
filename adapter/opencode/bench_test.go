package opencode_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/opencode"
	"github.com/agentstream/agentstream/internal/workload"
)

// BenchmarkDecode decodes about 64 MB of generated opencode output, every line
// with one fresh decoder per pass, and reports ns/line and allocs/line.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	if err := workload.Opencode(&buf, 64<<20, 1); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	var evs []agentstream.Event
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs := 0
	for b.Loop() {
		d := opencode.NewDecoder()
		for _, l := range lines {
			evs = d.Decode(evs[:0], l)
		}
		evs = d.End(evs[:0])
		runs++
	}
	runtime.ReadMemStats(&after)
	n := float64(runs) * float64(len(lines))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/line")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/line")
}

// TestWorkload checks on a small generated workload that its lines map to
// the events they are meant to, and none to raw: a benchmark of a decoder
// that maps nothing would measure nothing.
func TestWorkload(t *testing.T) {
	var buf bytes.Buffer
	if err := workload.Opencode(&buf, 4<<20, 3); err != nil {
		t.Fatal(err)
	}
	d := opencode.NewDecoder()
	var evs []agentstream.Event
	for _, l := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		evs = d.Decode(evs, l)
	}
	evs = d.End(evs)
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type()]++
	}
	for _, typ := range []string{"session.started", "message", "thinking", "tool.call", "tool.result", "usage", "session.ended"} {
		if counts[typ] == 0 {
			t.Errorf("no %s event in the generated workload (counts %v)", typ, counts)
		}
	}
	if counts["raw"] != 0 {
		t.Errorf("%d raw events in the generated workload", counts["raw"])
	}
}
