package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentstream/agentstream/internal/workload"
)

// BenchmarkNormalizeProcess times `agentstream normalize` end to end on a
// 100 MB generated Claude session, beside a baseline program that decodes
// each line with encoding/json into maps and writes its output with
// encoding/json. It reports both wall times and their ratio.
func BenchmarkNormalizeProcess(b *testing.B) {
	dir := b.TempDir()
	input := filepath.Join(dir, "claude.jsonl")
	f, err := os.Create(input)
	if err != nil {
		b.Fatal(err)
	}
	if err := workload.Claude(f, 100<<20, 7); err != nil {
		b.Fatal(err)
	}
	f.Close()
	naive := filepath.Join(dir, "naive")
	if out, err := exec.Command("go", "build", "-o", naive, "../../internal/workload/testdata/naive").CombinedOutput(); err != nil {
		b.Fatalf("build naive: %v\n%s", err, out)
	}
	timeIt := func(name string, args ...string) time.Duration {
		in, err := os.Open(input)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdin = in
		devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		defer devnull.Close()
		cmd.Stdout = devnull
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		return time.Since(start)
	}
	var ours, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ours += timeIt(binary, "normalize", "--protocol", "claude-json")
		base += timeIt(naive)
	}
	b.ReportMetric(ours.Seconds()/float64(b.N), "agentstream-s")
	b.ReportMetric(base.Seconds()/float64(b.N), "baseline-s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "speedup")
}
