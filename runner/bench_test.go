package runner

import (
	"context"
	"io"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
)

// pipeChild is a harness whose stdout is the read end of a real pipe that
// the benchmark writes to.
func pipeChild(b *testing.B) (*child, *os.File, chan exitStatus) {
	b.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	errW.Close()
	exited := make(chan exitStatus, 1)
	c := &child{
		stdout: outR, stderr: errR, exited: exited,
		signal: func(syscall.Signal) {},
		alive:  func() bool { return false },
	}
	return c, outW, exited
}

// BenchmarkLatency measures the time from a line written on the harness's
// stdout pipe to the handler having its event, one line at a time.
func BenchmarkLatency(b *testing.B) {
	c, w, exited := pipeChild(b)
	got := make(chan time.Time, 1)
	r := &Runner{
		Command: []string{"bench"}, Protocol: "jsonl", SkipTitle: true,
		Handler: agentstream.HandlerFunc(func(_ context.Context, e agentstream.Envelope) error {
			if e.Source != nil {
				got <- time.Now()
			}
			return nil
		}),
	}
	s, err := r.newSession()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		s.run(context.Background(), c)
		close(done)
	}()
	line := []byte(`{"type":"message.delta","role":"assistant","text":"tok"}` + "\n")
	var lat []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(t0))
	}
	b.StopTimer()
	w.Close()
	exited <- exitStatus{}
	<-done
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// deltaEnvelopes is n small message.delta envelopes.
func deltaEnvelopes(n int) []agentstream.Envelope {
	words := []string{"The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog.\n"}
	envs := make([]agentstream.Envelope, n)
	for i := range envs {
		envs[i] = agentstream.Envelope{Session: "s", Turn: 1, Harness: "claude-code",
			Payload: &agentstream.MessageDelta{Role: "assistant", Text: words[i%len(words)]},
			Source:  &agentstream.Source{Stream: "stdout", Line: int64(i + 1)}}
	}
	return envs
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRenderDeltas renders 100,000 small message.delta envelopes per
// iteration to io.Discard, and reports what the renderer keeps afterwards.
func BenchmarkRenderDeltas(b *testing.B) {
	const n = 100_000
	envs := deltaEnvelopes(n)
	r := console.New(io.Discard, console.Options{Width: 80, Color: true})
	ctx := context.Background()
	before := heapInUse()
	b.ReportAllocs()
	for b.Loop() {
		for i := range envs {
			r.Handle(ctx, envs[i])
		}
	}
	b.StopTimer()
	retained := int64(heapInUse()) - int64(before)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(max(retained, 0)), "retained-B")
	if retained > 1<<20 {
		b.Errorf("the renderer kept %d bytes after %d deltas", retained, b.N*n)
	}
	runtime.KeepAlive(r)
}

// BenchmarkPipelineDeltas sends 100,000 Claude stream-json text deltas
// through a real pipe, the session (reader, adapter, normalizer) and the
// console renderer, per iteration.
func BenchmarkPipelineDeltas(b *testing.B) {
	const n = 100_000
	line := []byte(`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"tok "}},"session_id":"d8785ba1-3fa6-4606-b465-f13165cc441f","parent_tool_use_id":null,"uuid":"6f1c2a9e-1111-4d7e-9b1e-2f3a4b5c6d7e"}` + "\n")
	chunk := make([]byte, 0, 1000*len(line))
	for range 1000 {
		chunk = append(chunk, line...)
	}
	b.ReportAllocs()
	for b.Loop() {
		c, w, exited := pipeChild(b)
		r := &Runner{Command: []string{"bench"}, Protocol: "claude-json", SkipTitle: true,
			Handler: console.New(io.Discard, console.Options{Width: 80})}
		s, err := r.newSession()
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			for range n / 1000 {
				w.Write(chunk)
			}
			w.Close()
			exited <- exitStatus{}
		}()
		s.run(context.Background(), c)
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "lines/s")
}

// TestSessionRetainsNothing sends many lines through a session and checks
// that the heap does not grow with them.
func TestSessionRetainsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 lines")
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, _ := os.Pipe()
	errW.Close()
	exited := make(chan exitStatus, 1)
	c := &child{stdout: outR, stderr: errR, exited: exited, signal: func(syscall.Signal) {}, alive: func() bool { return false }}
	heap := make(chan uint64, 2)
	n := 0
	r := &Runner{Command: []string{"x"}, Protocol: "jsonl", SkipTitle: true,
		Handler: agentstream.HandlerFunc(func(_ context.Context, e agentstream.Envelope) error {
			if n++; n == 20_000 || n == 220_000 {
				heap <- heapInUse()
			}
			return nil
		})}
	s, _ := r.newSession()
	go func() {
		line := []byte(`{"type":"tick","n":1}` + "\n")
		for range 220_000 {
			outW.Write(line)
		}
		outW.Close()
		exited <- exitStatus{}
	}()
	s.run(context.Background(), c)
	before, after := <-heap, <-heap
	if after > before && after-before > 1<<20 {
		t.Errorf("heap grew by %d bytes over 200,000 lines", after-before)
	}
}
