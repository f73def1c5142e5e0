package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ccusageVersion is the ccusage the comparison installs from npm. (The
// registry lacked the linux-x64 native package of 20.0.26.)
const ccusageVersion = "20.0.24"

// ccusageBin returns the ccusage command of a cache: $AGENTSTREAM_CCUSAGE,
// into which it is installed from npm when missing (as scripts/lab installs
// the harnesses; scripts/test's lab step sets it), else
// ~/.cache/agentstream/ccusage if it is installed there already. It skips
// the test when there is none, or npm or the network is not there.
func ccusageBin(t testing.TB) string {
	t.Helper()
	cache := os.Getenv("AGENTSTREAM_CCUSAGE")
	install := cache != ""
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skip("no cache for ccusage:", err)
		}
		cache = filepath.Join(home, ".cache", "agentstream", "ccusage")
	}
	bin := filepath.Join(cache, "node_modules", ".bin", "ccusage")
	var have struct{ Version string }
	if b, err := os.ReadFile(filepath.Join(cache, "node_modules", "ccusage", "package.json")); err == nil {
		json.Unmarshal(b, &have)
	}
	switch {
	case have.Version == ccusageVersion:
		return bin
	case !install:
		t.Skipf("ccusage %s is not in %s: set AGENTSTREAM_CCUSAGE=DIR to install it there from npm (scripts/test's lab step does)", ccusageVersion, cache)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is needed to install ccusage:", err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Skip("no cache for ccusage:", err)
	}
	out, err := exec.Command("npm", "install", "--prefix", cache, "--no-audit", "--no-fund", "--loglevel=error", "ccusage@"+ccusageVersion).CombinedOutput()
	if err != nil {
		t.Skipf("npm install ccusage@%s failed (no network?): %v\n%s", ccusageVersion, err, out)
	}
	return bin
}

// TestCCUsage imports the recorded Claude transcripts as import --local
// finds them and compares usage's token totals with ccusage's on the same
// files, and reports the time each took.
func TestCCUsage(t *testing.T) {
	bin := ccusageBin(t)
	home := claudeHome(t)
	claudeDir := filepath.Join(home, ".claude")

	start := time.Now()
	cmd := exec.Command(bin, "daily", "--json", "--offline")
	cmd.Env = localEnv(home, "CLAUDE_CONFIG_DIR="+claudeDir)
	out, err := cmd.Output()
	ccTime := time.Since(start)
	if err != nil {
		t.Fatalf("ccusage: %v\n%s", err, out)
	}
	var cc struct {
		Totals struct {
			Input      int64 `json:"inputTokens"`
			Output     int64 `json:"outputTokens"`
			CacheRead  int64 `json:"cacheReadTokens"`
			CacheWrite int64 `json:"cacheCreationTokens"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out, &cc); err != nil {
		t.Fatalf("ccusage --json: %v: %s", err, out)
	}
	theirs := tokenTotals{cc.Totals.Input, cc.Totals.Output, cc.Totals.CacheRead, cc.Totals.CacheWrite}

	db := filepath.Join(t.TempDir(), "a.db")
	start = time.Now()
	for _, args := range [][]string{
		{"import", "--local", "--db", db},
		{"usage", "--by", "day", "--json", "--db", db},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = localEnv(home, "CLAUDE_CONFIG_DIR="+claudeDir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	asTime := time.Since(start)
	ours := usageTotals(t, db)

	var files []string
	for rel := range localTranscripts {
		files = append(files, filepath.Join(claudeDir, "projects", filepath.FromSlash(rel)))
	}
	fromLines := transcriptTokens(t, files...)
	t.Logf("tokens (input, output, cache read, cache write): agentstream %+v, ccusage %s %+v", ours, ccusageVersion, theirs)
	t.Logf("wall time on %d transcripts: agentstream import --local + usage %v, ccusage daily %v (ratio %.2f)",
		len(files), asTime.Round(time.Millisecond), ccTime.Round(time.Millisecond), float64(asTime)/float64(ccTime))
	if ours != fromLines {
		t.Errorf("agentstream %+v, want %+v from the lines (each call once, its last count)", ours, fromLines)
	}
	// docs/harnesses.md explains where the two part: ccusage counts a
	// call once per message id and request id, keeping its last line's
	// count, but each line when a line has no request id (Claude Code
	// 2.1.328 writes a requestRef instead); and it also counts the
	// subagents' calls that Claude Code 2.1 copies into the parent
	// transcript's progress lines, which agentstream counts in the
	// subagent's own transcript, never twice.
	rule := ccusageRule(t, files...)
	t.Logf("ccusage's rule read from the lines: %+v", rule)
	if rule != theirs {
		t.Errorf("ccusage %+v, want %+v by its rule from the lines", theirs, rule)
	}
}

// ccusageRule sums the usage of transcripts as ccusage counts it: the
// assistant lines, and the messages that progress lines carry, once per
// message id and request id (the last line's figures), every line when it
// has no request id.
func ccusageRule(t *testing.T, files ...string) tokenTotals {
	t.Helper()
	type usage struct {
		Input      int64 `json:"input_tokens"`
		Output     int64 `json:"output_tokens"`
		CacheRead  int64 `json:"cache_read_input_tokens"`
		CacheWrite int64 `json:"cache_creation_input_tokens"`
	}
	type message struct {
		ID    string `json:"id"`
		Usage *usage `json:"usage"`
	}
	byKey := map[string]usage{}
	var order []string
	for _, f := range files {
		for i, l := range strings.Split(readString(t, f), "\n") {
			var line struct {
				Type      string  `json:"type"`
				RequestID string  `json:"requestId"`
				Message   message `json:"message"`
				Data      struct {
					Message struct {
						RequestID string  `json:"requestId"`
						Message   message `json:"message"`
					} `json:"message"`
				} `json:"data"`
			}
			if json.Unmarshal([]byte(l), &line) != nil {
				continue
			}
			m, req := line.Message, line.RequestID
			if line.Type == "progress" {
				m, req = line.Data.Message.Message, line.Data.Message.RequestID
			} else if line.Type != "assistant" {
				continue
			}
			if m.Usage == nil {
				continue
			}
			key := m.ID + ":" + req
			if m.ID == "" || req == "" {
				key = fmt.Sprintf("%s#%d", f, i)
			}
			if _, ok := byKey[key]; !ok {
				order = append(order, key)
			}
			byKey[key] = *m.Usage
		}
	}
	var sum tokenTotals
	for _, k := range order {
		u := byKey[k]
		sum.Input += u.Input
		sum.Output += u.Output
		sum.CacheRead += u.CacheRead
		sum.CacheWrite += u.CacheWrite
	}
	return sum
}

// BenchmarkCCUsage times ccusage daily and import --local followed by
// usage --by day over the same transcripts: the recorded ones, each copied
// into 50 projects. It reports each one's wall time per run and their
// ratio (agentstream's over ccusage's), and the time of agentstream's
// second look (import --local of files it holds, then usage), which only
// hashes the files.
//
//	go test ./cmd/agentstream -run XXX -bench CCUsage -benchtime 1x
func BenchmarkCCUsage(b *testing.B) {
	bin := ccusageBin(b)
	home := b.TempDir()
	claudeDir := filepath.Join(home, ".claude")
	var size int64
	for k := range 50 {
		for rel, fixture := range localTranscripts {
			data, err := os.ReadFile(fixturePath(fixture))
			if err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(claudeDir, "projects", fmt.Sprintf("-copy-%d", k)+rel[strings.Index(rel, "/"):])
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
			size += int64(len(data))
		}
	}
	env := localEnv(home, "CLAUDE_CONFIG_DIR="+claudeDir)
	runs := func(cmds ...[]string) time.Duration {
		start := time.Now()
		for _, args := range cmds {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", args, err, out)
			}
		}
		return time.Since(start)
	}
	var ours, again, theirs time.Duration
	b.ResetTimer()
	for i := range b.N {
		db := filepath.Join(b.TempDir(), fmt.Sprintf("%d.db", i))
		ours += runs([]string{binary, "import", "--local", "--db", db}, []string{binary, "usage", "--by", "day", "--json", "--db", db})
		again += runs([]string{binary, "import", "--local", "--db", db}, []string{binary, "usage", "--by", "day", "--json", "--db", db})
		theirs += runs([]string{bin, "daily", "--json", "--offline"})
	}
	b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "agentstream-ms/op")
	b.ReportMetric(float64(again.Milliseconds())/float64(b.N), "again-ms/op")
	b.ReportMetric(float64(theirs.Milliseconds())/float64(b.N), "ccusage-ms/op")
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
	b.ReportMetric(float64(size)/(1<<20), "MiB")
}
