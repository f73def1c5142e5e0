package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// costState reads the latest cost-state line of a transcript with
// encoding/json: the cost Claude Code reported for the process, or ok
// false when the transcript has none.
func costState(t *testing.T, path string) (cost float64, unknown, ok bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		var line struct {
			Type                string  `json:"type"`
			TotalCostUSD        float64 `json:"totalCostUSD"`
			HasUnknownModelCost bool    `json:"hasUnknownModelCost"`
		}
		if json.Unmarshal(l, &line) == nil && line.Type == "cost-state" {
			cost, unknown, ok = line.TotalCostUSD, line.HasUnknownModelCost, true
		}
	}
	return cost, unknown, ok
}

// TestImportLocalCost: an imported transcript's cost is the one its
// cost-state line reports (usage SESSION --json), a transcript without one
// (a subagent's) reports none, the report's total cost is their sum, and
// the tokens stay each call once, from the lines.
func TestImportLocalCost(t *testing.T) {
	home := claudeHome(t)
	localHome(t, home)
	db := filepath.Join(t.TempDir(), "a.db")
	out, stderr, code := runCLI(t, "", "import", "--local", "--db", db)
	if code != exitOK {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	ids := map[string]string{} // path → session id
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(l, "\t")
		if len(f) >= 4 {
			ids[f[3]] = f[0]
		}
	}
	var files []string
	var want float64
	priced := 0
	for rel := range localTranscripts {
		path := filepath.Join(home, ".claude", "projects", filepath.FromSlash(rel))
		files = append(files, path)
		id := ids[path]
		if id == "" {
			t.Fatalf("no session printed for %s:\n%s", path, out)
		}
		cost, unknown, ok := costState(t, path)
		recapOut, stderr, code := runCLI(t, "", "usage", "--db", db, "--json", id)
		if code != exitOK {
			t.Fatalf("usage %s: exit %d: %s", id, code, stderr)
		}
		var r struct {
			CostUSD             *float64
			InputTokens         *int64
			OutputTokens        *int64
			CacheReadTokens     *int64
			CacheCreationTokens *int64
			TokensFrom          string
			Estimated           []string
		}
		if err := json.Unmarshal([]byte(recapOut), &r); err != nil {
			t.Fatalf("usage %s --json: %v: %s", id, err, recapOut)
		}
		tok := transcriptTokens(t, path)
		got := tokenTotals{}
		for _, p := range []struct {
			dst *int64
			v   *int64
		}{{&got.Input, r.InputTokens}, {&got.Output, r.OutputTokens}, {&got.CacheRead, r.CacheReadTokens}, {&got.CacheWrite, r.CacheCreationTokens}} {
			if p.v != nil {
				*p.dst = *p.v
			}
		}
		if got != tok {
			t.Errorf("%s: tokens %+v, want the calls' %+v", rel, got, tok)
		}
		switch {
		case !ok && r.CostUSD != nil:
			t.Errorf("%s: cost %v, want none: the transcript has no cost-state", rel, *r.CostUSD)
		case ok && (r.CostUSD == nil || math.Abs(*r.CostUSD-cost) > 1e-12):
			t.Errorf("%s: cost %v, want the cost-state's totalCostUSD %v", rel, r.CostUSD, cost)
		case ok:
			priced++
			want += cost
			if est := strings.Contains(strings.Join(r.Estimated, ","), "costUsd"); est != unknown {
				t.Errorf("%s: cost estimated %v, want %v (hasUnknownModelCost)", rel, est, unknown)
			}
		}
	}
	if priced == 0 {
		t.Fatal("no transcript with a cost-state")
	}
	rep, stderr, code := runCLI(t, "", "usage", "--db", db, "--by", "day", "--json")
	if code != exitOK {
		t.Fatalf("usage --by day: exit %d: %s", code, stderr)
	}
	var total struct {
		Total struct{ CostUSD *float64 }
	}
	if err := json.Unmarshal([]byte(rep), &total); err != nil {
		t.Fatal(err)
	}
	if total.Total.CostUSD == nil || math.Abs(*total.Total.CostUSD-want) > 1e-12 {
		t.Errorf("report's total cost %v, want the cost-states' sum %v", total.Total.CostUSD, want)
	}
	if got, want := usageTotals(t, db), transcriptTokens(t, files...); got != want {
		t.Errorf("usage totals %+v, want %+v (each call once, from the lines)", got, want)
	}
}
