package lab

import (
	"bytes"
	"fmt"
	"github.com/agentstream/agentstream"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/modelsim"
)

// knownLineTypes returns the native line types of a harness's captures, of
// every version kept: what the adapters were last shown.
func knownLineTypes(h modelsim.Harness) map[string]bool {
	seen := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(captureDirs[h.Protocol], h.Name+"-*.jsonl"))
	for _, f := range files {
		if got, _, _ := parseCapture(filepath.Base(f)); got.Name != h.Name {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				seen[adapter.NativeType(agentstream.Line{Bytes: l})] = true
			}
		}
	}
	return seen
}

// writeDrift writes the drift report: per harness, its version, the runs'
// raw share, the native line types no capture shows, those that fell to
// raw without being deliberately raw, and the checks that failed.
func writeDrift(t *testing.T, outcomes []*outcome, wall time.Duration) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Drift report\n\nThe lab's scenarios on the newest published versions (`scripts/lab --latest`), %s, %d runs in %s.\n\n",
		time.Now().UTC().Format("2006-01-02"), len(outcomes), wall.Round(time.Second))
	b.WriteString("| harness | version | runs passed or known | raw share (deliberate included) | new native line types | unmapped raw line types | failed checks |\n|---|---|---|---|---|---|---|\n")
	byHarness := map[string][]*outcome{}
	for _, o := range outcomes {
		byHarness[o.Harness] = append(byHarness[o.Harness], o)
	}
	for _, h := range modelsim.Harnesses() {
		runs := byHarness[h.Name]
		if len(runs) == 0 {
			continue
		}
		seen := knownLineTypes(h)
		newTypes, rawTypes, failed := map[string]bool{}, map[string]bool{}, map[string]bool{}
		lines, raw, passed, ran := 0, 0, 0, 0
		version := ""
		for _, o := range runs {
			version = o.Version
			lines += o.Lines
			raw += o.RawLines
			if o.Seconds > 0 {
				ran++
				if st := o.status(); st == pass || st == known || st == na {
					passed++
				}
			}
			for _, lt := range o.LineTypes {
				if !seen[lt] {
					newTypes[lt] = true
				}
			}
			for _, rt := range o.RawTypes {
				rawTypes[rt] = true
			}
			for _, r := range o.Results {
				if r.Status == fail {
					failed[o.Scenario+"/"+r.Check] = true
				}
			}
		}
		share := "-"
		if lines > 0 {
			share = fmt.Sprintf("%.0f%% (%d of %d lines)", 100*float64(raw)/float64(lines), raw, lines)
		}
		fmt.Fprintf(&b, "| %s | %s | %d of %d | %s | %s | %s | %s |\n", h.Name, version, passed, ran, share,
			list(newTypes), list(rawTypes), list(failed))
	}
	b.WriteString("\nNew native line types are those no capture of the harness (adapter testdata/lab) shows; unmapped raw line types became raw without their adapter listing them as deliberately raw.\n")
	if err := os.WriteFile(*driftFile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func list(m map[string]bool) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for k := range m {
		out = append(out, "`"+k+"`")
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
