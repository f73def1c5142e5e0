package lab

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/modelsim"
)

// captureDirs are where each protocol's captures go: the testdata of its
// adapter, which replays them in the ordinary test suite.
var captureDirs = map[string]string{
	"claude-json":   "../adapter/claude/testdata/lab",
	"claude-stream": "../adapter/claude/testdata/lab",
	"qwen-json":     "../adapter/claude/testdata/qwen/lab",
	"codex-json":    "../adapter/codex/testdata/lab",
	"gemini-json":   "../adapter/gemini/testdata/lab",
	"opencode-json": "../adapter/opencode/testdata/lab",
	"copilot-json":  "../adapter/copilot/testdata/lab",
	"droid-json":    "../adapter/droid/testdata/lab",
	"acp":           "../adapter/acp/testdata/lab",
}

// maxCapture bounds a capture's size: a longer one keeps its first and last
// lines, so that the fixture stays small and still ends as the run did.
const maxCapture = 256 << 10

// capture writes a run's stdout as a fixture of its adapter, named
// <harness>-<version>-<scenario>.jsonl, with the run's directory, port and
// temporary paths written the same way every time.
func (lc *labCase) capture(t *testing.T, out *runOutput) {
	dir := captureDirs[lc.h.Protocol]
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := stable(out.spool, out.base, out.url)
	if len(data) > maxCapture {
		data = cut(data, maxCapture)
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.jsonl", lc.h.Name, lc.version, lc.s.Name))
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// stable rewrites what differs from run to run in a way no adapter reads:
// the run's directory (also as Claude Code names its project folder) and
// the simulator's port.
func stable(data []byte, base, url string) []byte {
	r := strings.NewReplacer(
		base, "/lab",
		strings.NewReplacer("/", "-", ".", "-").Replace(base), "-lab",
		strings.TrimPrefix(url, "http://"), "127.0.0.1:8080",
	)
	return []byte(r.Replace(string(data)))
}

// cut keeps whole lines from the head and the tail of data, about max
// bytes in all, half each.
func cut(data []byte, max int) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	i, size := 0, 0
	for i < len(lines) && size+len(lines[i]) <= max/2 {
		size += len(lines[i])
		i++
	}
	j := len(lines)
	for j > i && size+len(lines[j-1]) <= max {
		size += len(lines[j-1])
		j--
	}
	return bytes.Join(append(lines[:i:i], lines[j:]...), nil)
}

// writeSources writes the SOURCES.md of each capture directory: the
// provenance of every capture in it.
func writeSources(t *testing.T) {
	dirs := map[string]bool{}
	for _, d := range captureDirs {
		dirs[d] = true
	}
	for dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(files) == 0 {
			continue
		}
		sort.Strings(files)
		var b strings.Builder
		b.WriteString("# Sources of these fixtures\n\n")
		b.WriteString("Captured by the lab (`scripts/lab --update`, package `lab`): the stdout of the real harness CLI,\n")
		b.WriteString("installed from npm at the version named, run by `agentstream run` against the model simulator\n")
		b.WriteString("(`modelsim`) playing the named scenario (`modelsim/scenarios/<scenario>.json`), with a fresh\n")
		b.WriteString("HOME and working directory, rewritten to `/lab/home` and `/lab/work`; the simulator's address is\n")
		b.WriteString("written `127.0.0.1:8080`. Nothing in them comes from a real model. Captures longer than 256 KiB\n")
		b.WriteString("keep their first and last lines.\n\n")
		b.WriteString("| file | harness | package@version | scenario |\n|---|---|---|---|\n")
		for _, f := range files {
			base := filepath.Base(f)
			h, ver, sc := parseCapture(base)
			if h.Name == "" {
				continue
			}
			fmt.Fprintf(&b, "| `%s` | %s | `%s@%s` | %s |\n", base, h.Title, h.Package, ver, sc)
		}
		fmt.Fprintf(&b, "\nLast written %s.\n", time.Now().UTC().Format("2006-01-02"))
		if err := os.WriteFile(filepath.Join(dir, "SOURCES.md"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// parseCapture reads a capture's name: <harness>-<version>-<scenario>.jsonl.
func parseCapture(name string) (modelsim.Harness, string, string) {
	name = strings.TrimSuffix(name, ".jsonl")
	var best modelsim.Harness
	for _, h := range modelsim.Harnesses() {
		if strings.HasPrefix(name, h.Name+"-") && len(h.Name) > len(best.Name) {
			rest := name[len(h.Name)+1:]
			if rest != "" && rest[0] >= '0' && rest[0] <= '9' {
				best = h
			}
		}
	}
	if best.Name == "" {
		return best, "", ""
	}
	rest := name[len(best.Name)+1:]
	i := strings.LastIndexByte(rest, '-')
	if i < 0 {
		return modelsim.Harness{}, "", ""
	}
	return best, rest[:i], rest[i+1:]
}
