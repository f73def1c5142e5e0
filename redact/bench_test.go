package redact_test

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/workload"
	"github.com/agentstream/agentstream/redact"
)

// benchData is the Claude workload of the normalize benchmarks: 200 MB
// unless AGENTSTREAM_BENCH_MB says otherwise.
var benchData = sync.OnceValue(func() []byte {
	size := int64(200 << 20)
	if s := os.Getenv("AGENTSTREAM_BENCH_MB"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			size = int64(n) << 20
		}
	}
	var b bytes.Buffer
	if err := workload.Claude(&b, size, 1); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// normalizeAll is BenchmarkNormalize's claude: framing and the adapter.
func normalizeAll(data []byte) {
	a, err := adapter.Lookup("claude-json")
	if err != nil {
		panic(err)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: "s", Harness: a.Harness})
	lr := agentstream.NewLineReader(bytes.NewReader(data))
	var envs []agentstream.Envelope
	var t time.Time
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		envs = n.Line(envs[:0], l, t)
	}
	n.End(envs[:0], t)
}

// maskLines frames data into lines and masks each in place.
func maskLines(r *redact.Redactor, data []byte) {
	lr := agentstream.NewLineReader(bytes.NewReader(data))
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		if l.Oversized {
			r.Head(l.Head)
		} else {
			r.Line(l.Bytes)
		}
	}
}

// BenchmarkRedact measures the scan on the Claude workload of
// BenchmarkNormalize beside normalizing it, iteration by iteration on the
// same bytes: "line" frames and masks every line (what a store's ingest
// adds), "reader" reads the workload through the stream the runner reads
// a harness through, "normalize" is the adapter alone. Besides MB/s, line
// and reader report x-normalize: the median over the iterations of their
// MB/s divided by normalize's in the same iteration, and cpu-x-normalize
// the same of CPU time (steadier on a shared machine), and cpu-MB/s.
//
//	go test ./redact -run XXX -bench Redact -benchtime 5x
func BenchmarkRedact(b *testing.B) {
	data := benchData()
	r := redact.New(redact.Options{Key: testKey})
	// The workload has no secret: the scan writes nothing, and each
	// iteration scans the same bytes.
	paired := func(b *testing.B, fn func()) {
		b.SetBytes(int64(len(data)))
		var ratios, cpuRatios []float64
		var cpu time.Duration
		for b.Loop() {
			b.StopTimer()
			t0, c0 := time.Now(), cpuTime()
			normalizeAll(data)
			norm, normCPU := time.Since(t0), cpuTime()-c0
			b.StartTimer()
			t1, c1 := time.Now(), cpuTime()
			fn()
			own, ownCPU := time.Since(t1), cpuTime()-c1
			cpu += ownCPU
			ratios = append(ratios, norm.Seconds()/own.Seconds())
			cpuRatios = append(cpuRatios, normCPU.Seconds()/ownCPU.Seconds())
		}
		slices.Sort(ratios)
		slices.Sort(cpuRatios)
		b.ReportMetric(ratios[len(ratios)/2], "x-normalize")
		b.ReportMetric(cpuRatios[len(cpuRatios)/2], "cpu-x-normalize")
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
	b.Run("line", func(b *testing.B) { paired(b, func() { maskLines(r, data) }) })
	b.Run("reader", func(b *testing.B) {
		paired(b, func() {
			if _, err := io.Copy(io.Discard, r.Reader(bytes.NewReader(data))); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("normalize", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		c0 := cpuTime()
		for b.Loop() {
			normalizeAll(data)
		}
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/(cpuTime()-c0).Seconds(), "cpu-MB/s")
	})
}

// cpuTime returns the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
