package jsonscan

// TEMPORARY measurement harness (removed before hand-off).

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuBench(t *testing.T, name string, size int, fn func()) {
	best := time.Duration(1 << 62)
	for rep := 0; rep < 7; rep++ {
		n := 0
		start := cpuNow()
		var el time.Duration
		for {
			for k := 0; k < 10; k++ {
				fn()
			}
			n += 10
			if el = cpuNow() - start; el > 60*time.Millisecond {
				break
			}
		}
		if per := el / time.Duration(n); per < best {
			best = el / time.Duration(n)
		}
	}
	mbs := ""
	if size > 0 {
		mbs = " " + ftoa(float64(size)/best.Seconds()/1e6) + " MB/s"
	}
	t.Logf("%-28s %10d ns/op%s", name, best.Nanoseconds(), mbs)
}

func ftoa(f float64) string { return string(AppendQuote(nil, ""))[:0] + itoa(int(f)) }
func itoa(i int) string {
	b := []byte{}
	if i == 0 {
		return "0"
	}
	for i > 0 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(b)
}

func TestCPUBench(t *testing.T) {
	if os.Getenv("CPUBENCH") == "" {
		t.Skip()
	}
	runtime.GOMAXPROCS(1)
	buf := make([]byte, 0, 4<<20)
	cpuBench(t, "Skip code-2MB", len(string2M), func() { Skip(string2M, 0) })
	cpuBench(t, "Skip prose-2MB", len(prose2M), func() { Skip(prose2M, 0) })
	cpuBench(t, "Skip code-100KB", len(string100K), func() { Skip(string100K, 0) })
	cpuBench(t, "Clip8000 code-2MB", len(string2M), func() { AppendStringClip(buf[:0], string2M, 8000) })
	cpuBench(t, "Clip8000 prose-2MB", len(prose2M), func() { AppendStringClip(buf[:0], prose2M, 8000) })
	cpuBench(t, "ClipAll code-2MB", len(string2M), func() { AppendStringClip(buf[:0], string2M, 1<<40) })
	cpuBench(t, "ClipAll prose-2MB", len(prose2M), func() { AppendStringClip(buf[:0], prose2M, 1<<40) })
	cpuBench(t, "AppendString prose-2MB", len(prose2M), func() { AppendString(buf[:0], prose2M) })
	cpuBench(t, "AppendString code-2MB", len(string2M), func() { AppendString(buf[:0], string2M) })
	cpuBench(t, "Obj top-level 1KB", len(claudeLine), func() {
		o, _ := Object(claudeLine)
		for o.Next() {
			_ = o.KeyIs("type") && StringIs(o.Value(), "assistant")
		}
	})
	cpuBench(t, "extract 1KB", len(claudeLine), func() { extractClaude(claudeLine) })
	cpuBench(t, "Valid 1KB", len(claudeLine), func() { Valid(claudeLine) })
	txt := toolResultText(100 << 10)
	cpuBench(t, "AppendQuote code-100KB", len(txt), func() { AppendQuote(buf[:0], txt) })
	cpuBench(t, "AppendSanitized code-2MB", len(string2M), func() { AppendSanitized(buf[:0], string2M) })
}
