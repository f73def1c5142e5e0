package adapter_test

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/workload"
)

// benchSize is the size of the generated workload: 200 MB unless
// AGENTSTREAM_BENCH_MB says otherwise.
func benchSize() int64 {
	if s := os.Getenv("AGENTSTREAM_BENCH_MB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return int64(n) << 20
		}
	}
	return 200 << 20
}

var (
	claudeData = sync.OnceValue(func() []byte {
		var b bytes.Buffer
		if err := workload.Claude(&b, benchSize(), 1); err != nil {
			panic(err)
		}
		return b.Bytes()
	})
	deltaData = sync.OnceValue(func() []byte {
		var b bytes.Buffer
		if err := workload.ClaudeDeltas(&b, 32<<20, 2); err != nil {
			panic(err)
		}
		return b.Bytes()
	})
)

// normalizeAll frames data into lines and runs a fresh decoder of protocol
// over them, without encoding output; it returns the number of lines.
func normalizeAll(protocol string, data []byte) int {
	a, err := adapter.Lookup(protocol)
	if err != nil {
		panic(err)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: "s", Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	lr := agentstream.NewLineReader(bytes.NewReader(data))
	var envs []agentstream.Envelope
	lines := 0
	var t time.Time
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		lines++
		envs = n.Line(envs[:0], l, t)
	}
	n.End(envs[:0], t)
	return lines
}

// naiveAll is the baseline: the same framing, and encoding/json into maps.
func naiveAll(data []byte) int {
	lr := agentstream.NewLineReader(bytes.NewReader(data))
	var evs []workload.NaiveEvent
	lines := 0
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		lines++
		evs = workload.NaiveDecode(evs[:0], l.Bytes)
	}
	return lines
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLines runs fn over data b.N times and reports MB/s, ns/line, the
// mean line size (B/line: MB/s compare fairly between workloads of like
// line sizes), allocs/line, and cpu-MB/s: the bytes per second of CPU time
// the process spent (the garbage collector's included), which a machine
// shared with other work does not distort the way it does wall-clock MB/s.
func benchLines(b *testing.B, data []byte, fn func([]byte) int) {
	benchPaired(b, data, fn, nil)
}

// benchPaired is benchLines running between, when not nil, before each
// iteration, outside the clock and the counts. Each of the two then starts
// on a collected heap, so that neither pays for the garbage of the other.
func benchPaired(b *testing.B, data []byte, fn func([]byte) int, between func()) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	lines := 0
	var cpuOut time.Duration // spent in between
	var mallocsOut uint64
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if between != nil {
			b.StopTimer()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			c0 := cpuTime()
			runtime.GC()
			between()
			runtime.GC()
			cpuOut += cpuTime() - c0
			runtime.ReadMemStats(&m1)
			mallocsOut += m1.Mallocs - m0.Mallocs
			b.StartTimer()
		}
		lines += fn(data)
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0 - cpuOut
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(lines), "ns/line")
	b.ReportMetric(float64(len(data))*float64(b.N)/float64(lines), "B/line")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs-mallocsOut)/float64(lines), "allocs/line")
	if cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}

// BenchmarkNormalize measures in-process normalization (framing and adapter,
// no output encoding) of a generated Claude stream-json workload, beside the
// baseline that decodes each line with encoding/json into map[string]any,
// and the small delta lines alone.
func BenchmarkNormalize(b *testing.B) {
	b.Run("claude", func(b *testing.B) {
		benchLines(b, claudeData(), func(d []byte) int { return normalizeAll("claude-json", d) })
	})
	b.Run("baseline-map", func(b *testing.B) {
		benchLines(b, claudeData(), naiveAll)
	})
	b.Run("claude-deltas", func(b *testing.B) {
		benchLines(b, deltaData(), func(d []byte) int { return normalizeAll("claude-json", d) })
	})
}

// dialects are the generated workloads of the other dialects, each read by
// its own adapter.
var dialects = []struct {
	protocol string
	gen      func(io.Writer, int64, int64) error
}{
	{"codex-json", workload.Codex},
	{"gemini-json", workload.Gemini},
	{"opencode-json", workload.Opencode},
	{"cursor-json", workload.Cursor},
	{"copilot-json", workload.Copilot},
	{"droid-json", workload.Droid},
	{"acp", workload.ACP},
}

// BenchmarkDialects measures every adapter on a workload of its own dialect
// with the same heavy-tailed output sizes as the Claude workload, beside
// Claude on a workload of the same size, so their MB/s compare. On a shared
// machine the speed of the whole machine drifts from one second to the
// next, so each dialect's benchmark also runs Claude's workload in turn with
// its own, iteration by iteration, and reports the ratio of the two MB/s
// measured under the same conditions (x-claude), the median over the
// iterations, so that one pair slowed by other work does not sway it.
func BenchmarkDialects(b *testing.B) {
	size := benchSize() / 4
	gen := func(g func(io.Writer, int64, int64) error) []byte {
		var buf bytes.Buffer
		if err := g(&buf, size, 5); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}
	claude := gen(workload.Claude)
	b.Run("claude-json", func(b *testing.B) {
		benchLines(b, claude, func(d []byte) int { return normalizeAll("claude-json", d) })
	})
	for _, d := range dialects {
		data := gen(d.gen)
		b.Run(d.protocol, func(b *testing.B) {
			var other time.Duration
			var ratios []float64
			var last time.Duration // Claude's time in this iteration
			benchPaired(b, data, func(in []byte) int {
				t0 := time.Now()
				n := normalizeAll(d.protocol, in)
				own := time.Since(t0)
				ratios = append(ratios, float64(len(in))/own.Seconds()/(float64(len(claude))/last.Seconds()))
				return n
			}, func() {
				t0 := time.Now()
				normalizeAll("claude-json", claude)
				last = time.Since(t0)
				other += last
			})
			b.ReportMetric(float64(len(claude))*float64(b.N)/1e6/other.Seconds(), "claude-MB/s")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "x-claude")
		})
	}
}

// TestWorkloadNormalizes checks on a small workload that the generated
// lines map to the events they are meant to (a benchmark of a decoder that
// maps nothing would measure nothing).
func TestWorkloadNormalizes(t *testing.T) {
	var b bytes.Buffer
	if err := workload.Claude(&b, 4<<20, 3); err != nil {
		t.Fatal(err)
	}
	evs, err := adapter.ParseLines("claude-json", bytes.Split(b.Bytes(), []byte("\n")), 0)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type()]++
	}
	for _, typ := range []string{"session.started", "message", "thinking", "tool.call", "tool.result", "usage", "message.delta", "quota", "session.ended"} {
		if counts[typ] == 0 {
			t.Errorf("no %s event in the generated workload (counts %v)", typ, counts)
		}
	}
	if counts["raw"] != 0 {
		t.Errorf("%d raw events in the generated workload", counts["raw"])
	}
}
