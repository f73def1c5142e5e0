package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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

// benchMB is the size of the Claude workload of BenchmarkImportProcess:
// 200 MB unless AGENTSTREAM_BENCH_MB says otherwise.
func benchMB(b *testing.B) int64 {
	if s := os.Getenv("AGENTSTREAM_BENCH_MB"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("bad AGENTSTREAM_BENCH_MB %q", s)
		}
		return n
	}
	return 200
}

// BenchmarkImportProcess times `agentstream import` of a generated Claude
// session (200 MB by default) into a new SQLite database, beside
// `agentstream normalize` of the same file in the same iteration, and
// reports both wall times and the median of their ratios
// (import-x-normalize: how many times normalize's time import takes), and
// the ratio of their CPU times (cpu-import-x-normalize), steadier on a
// shared machine.
func BenchmarkImportProcess(b *testing.B) {
	dir := b.TempDir()
	input := filepath.Join(dir, "claude.jsonl")
	f, err := os.Create(input)
	if err != nil {
		b.Fatal(err)
	}
	if err := workload.Claude(f, benchMB(b)<<20, 7); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var impCPU, normCPU time.Duration
	timeIt := func(cpu *time.Duration, stdin string, args ...string) time.Duration {
		cmd := exec.Command(binary, args...)
		if stdin != "" {
			in, err := os.Open(stdin)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			cmd.Stdin = in
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		d := time.Since(start)
		*cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		return d
	}
	var imp, norm time.Duration
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db := filepath.Join(dir, fmt.Sprint("import", i, ".db"))
		n := timeIt(&normCPU, input, "normalize", "--protocol", "claude-json")
		m := timeIt(&impCPU, "", "import", "--db", db, "--protocol", "claude-json", input)
		norm, imp = norm+n, imp+m
		ratios = append(ratios, m.Seconds()/n.Seconds())
		b.StopTimer()
		os.Remove(db)
		os.Remove(db + "-wal")
		os.Remove(db + "-shm")
		b.StartTimer()
	}
	sort.Float64s(ratios)
	b.ReportMetric(imp.Seconds()/float64(b.N), "import-s")
	b.ReportMetric(norm.Seconds()/float64(b.N), "normalize-s")
	b.ReportMetric(ratios[len(ratios)/2], "import-x-normalize")
	b.ReportMetric(impCPU.Seconds()/normCPU.Seconds(), "cpu-import-x-normalize")
}
