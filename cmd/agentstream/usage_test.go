package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	// Four Claude Code runs: the lab's text, shell and toolfail captures
	// and a max-turns run. Their results say total_cost_usd 0.00524,
	// 0.01398, 0.0131 and 0.049705; num_turns 1, 2, 2 and 3; the last one's
	// modelUsage has claude-opus-5-5[1m] and claude-haiku-4-5-20251001 (480
	// in, 25 out), the others' claude-opus-5-5.
	fourRuns = "../../adapter/claude/testdata/synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl"
	// A foreground subagent; the result's modelUsage says claude-opus-5[1m]
	// spent 8 in, 330 out, 62893 cache read, 22742 cache write, $0.2157365.
	subagent = "../../adapter/claude/testdata/tandemtechnology-bb-stdout-subagent.jsonl"
)

// codexThread writes the two runs of one Codex thread, the second resumed
// with exec resume: its turn.completed usage is the thread's running total.
func codexThread(t *testing.T, dir string) (first, resumed string) {
	t.Helper()
	first, resumed = filepath.Join(dir, "codex-1.jsonl"), filepath.Join(dir, "codex-2.jsonl")
	for name, total := range map[string]string{
		first:   `{"input_tokens":1000,"cached_input_tokens":400,"output_tokens":50}`,
		resumed: `{"input_tokens":2500,"cached_input_tokens":1400,"output_tokens":90}`,
	} {
		data := `{"type":"thread.started","thread_id":"019a-thread"}` + "\n" + `{"type":"turn.started"}` + "\n" +
			`{"type":"turn.completed","usage":` + total + `}` + "\n"
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return first, resumed
}

func TestUsageRecapOfAFile(t *testing.T) {
	tests := []struct {
		name, file string
		has        []string
	}{
		// in 1200+3200+3000+(2600+480), out 19+42+40+(210+25), cache
		// read 300+1700+1500+4100, cache write 900; cost $0.082025.
		{"four runs add up", fourRuns, []string{"in 10,480, out 336, cache read 7,600, cache write 900", "cost: $0.08", "model calls: 8", "4 runs",
			"claude-opus-5-5 (claude-opus-5-5, claude-opus-5-5[1m])", "claude-haiku-4-5 (claude-haiku-4-5-20251001)"}},
		{"a subagent's calls are in the harness's total", subagent, []string{"in 8, out 330, cache read 62,893, cache write 22,742", "cost: $0.22"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runCLI(t, "", "usage", tt.file)
			if code != 0 {
				t.Fatalf("usage: exit %d: %s", code, errs)
			}
			for _, h := range tt.has {
				if !strings.Contains(out, h) {
					t.Errorf("usage lacks %q:\n%s", h, out)
				}
			}
			if internalName.MatchString(out) {
				t.Errorf("usage prints an internal field name (%s):\n%s", internalName.FindString(out), out)
			}
		})
	}
}

// internalName matches the recap's JSON keys, which people never read.
var internalName = regexp.MustCompile(`\b(inputTokens|outputTokens|cacheReadTokens|cacheCreationTokens|costUsd|contextTokens|contextWindow|durationMs|modelCalls|tokensFrom)\b`)

func TestUsageReport(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "u.db")
	first, resumed := codexThread(t, dir)
	for _, f := range []string{fourRuns, subagent, first, resumed} {
		if _, errs, code := runCLI(t, "", "import", "--db", db, f); code != 0 {
			t.Fatalf("import %s: %s", f, errs)
		}
	}
	type row struct {
		Key                 string   `json:"key"`
		Sessions            int      `json:"sessions"`
		InputTokens         *int64   `json:"inputTokens"`
		OutputTokens        *int64   `json:"outputTokens"`
		CacheReadTokens     *int64   `json:"cacheReadTokens"`
		CacheCreationTokens *int64   `json:"cacheCreationTokens"`
		CostUSD             *float64 `json:"costUsd"`
		Unpriced            int      `json:"unpriced"`
	}
	report := func(t *testing.T, by string) (rows map[string]row, total row) {
		t.Helper()
		out, errs, code := runCLI(t, "", "usage", "--db", db, "--by", by, "--utc", "--json")
		if code != 0 {
			t.Fatalf("usage --by %s: exit %d: %s", by, code, errs)
		}
		var rep struct {
			By    string `json:"by"`
			Rows  []row  `json:"rows"`
			Total row    `json:"total"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.By != by {
			t.Fatalf("usage --by %s --json: %v\n%s", by, err, out)
		}
		rows = map[string]row{}
		for _, r := range rep.Rows {
			rows[r.Key] = r
		}
		return rows, rep.Total
	}
	t.Run("by harness: a resumed thread is counted once", func(t *testing.T) {
		rows, total := report(t, "harness")
		codex := rows["codex"]
		// The thread's latest total: 2500 in, 1400 of them cached, 90 out.
		if codex.Sessions != 2 || *codex.InputTokens != 1100 || *codex.CacheReadTokens != 1400 || *codex.OutputTokens != 90 || codex.CostUSD != nil || codex.Unpriced != 2 {
			t.Errorf("codex row = %+v, want 2 sessions, in 1100, cache read 1400, out 90, no cost, 2 unpriced", codex)
		}
		claude := rows["claude-code"]
		wantCost := 0.00524 + 0.01398 + 0.0131 + 0.049705 + 0.2157365
		if claude.Sessions != 2 || claude.CostUSD == nil || *claude.CostUSD-wantCost > 1e-9 || wantCost-*claude.CostUSD > 1e-9 {
			t.Errorf("claude-code row = %+v, want 2 sessions costing %v", claude, wantCost)
		}
		if total.Sessions != 4 || *total.OutputTokens != *claude.OutputTokens+90 {
			t.Errorf("total = %+v, want the 4 sessions and out %d", total, *claude.OutputTokens+90)
		}
	})
	t.Run("by model: every model of a session, none unknown", func(t *testing.T) {
		rows, _ := report(t, "model")
		// modelUsage of the max-turns run: haiku 480 in, 25 out.
		haiku := rows["claude-haiku-4-5"]
		if haiku.Sessions != 1 || *haiku.InputTokens != 480 || *haiku.OutputTokens != 25 {
			t.Errorf("haiku row = %+v, want 1 session, in 480, out 25", haiku)
		}
		// claude-opus-5-5 in the three captures and claude-opus-5-5[1m]
		// in the max-turns run.
		opus55 := rows["claude-opus-5-5"]
		if opus55.Sessions != 1 || *opus55.InputTokens != 1200+3200+3000+2600 || *opus55.OutputTokens != 19+42+40+210 {
			t.Errorf("claude-opus-5-5 row = %+v, want 1 session, in %d, out %d", opus55, 1200+3200+3000+2600, 19+42+40+210)
		}
		opus := rows["claude-opus-5"]
		if opus.Sessions != 1 || *opus.InputTokens != 8 || *opus.OutputTokens != 330 {
			t.Errorf("claude-opus-5 row (claude-opus-5[1m] and claude-opus-5) = %+v, want in 8, out 330", opus)
		}
		if u, ok := rows["(unknown)"]; ok && u.Sessions != 2 {
			t.Errorf("(unknown) holds %d sessions; only the two Codex ones name no model", u.Sessions)
		}
	})
	for _, by := range []string{"day", "week", "month", "project", "session"} {
		t.Run("by "+by+": rows add up to the total", func(t *testing.T) {
			rows, total := report(t, by)
			n := 0
			for _, r := range rows {
				n += r.Sessions
			}
			if n != 4 || total.Sessions != 4 {
				t.Errorf("rows hold %d sessions, the total %d; want 4", n, total.Sessions)
			}
		})
	}
	t.Run("table", func(t *testing.T) {
		out, errs, code := runCLI(t, "", "usage", "--db", db, "--by", "harness")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if !strings.Contains(lines[0], "CACHE WRITE") || !strings.Contains(lines[0], "UNPRICED") {
			t.Errorf("header %q", lines[0])
		}
		var totalLine, codexLine string
		for _, l := range lines {
			switch strings.Fields(l)[0] {
			case "TOTAL":
				totalLine = l
			case "codex":
				codexLine = l
			}
		}
		if totalLine == "" {
			t.Errorf("no TOTAL row:\n%s", out)
		}
		// Codex reports no cache write and no cost: dashes, never zeros.
		if f := strings.Fields(codexLine); len(f) < 9 || f[5] != "—" || f[7] != "—" {
			t.Errorf("codex row %q: want — for cache write and cost", codexLine)
		}
		if internalName.MatchString(out) {
			t.Errorf("table prints an internal field name:\n%s", out)
		}
	})
	t.Run("csv", func(t *testing.T) {
		out, errs, code := runCLI(t, "", "usage", "--db", db, "--by", "harness", "--csv")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 4 || recs[0][0] != "harness" || recs[0][5] != "cache write tokens" || recs[3][0] != "total" {
			t.Errorf("csv = %q, want a header, two harnesses and the total", recs)
		}
		for _, r := range recs {
			if r[0] == "codex" && (r[5] != "" || r[7] != "") {
				t.Errorf("codex row %q: want empty cells for what it did not report", r)
			}
		}
	})
	t.Run("help", func(t *testing.T) {
		_, errs, _ := runCLI(t, "", "usage", "-h")
		for _, h := range []string{"-since", "-by", "-csv", "day|week|month|model|harness|project|session", "unpriced"} {
			if !strings.Contains(errs, h) {
				t.Errorf("usage -h lacks %q", h)
			}
		}
	})
	t.Run("bad usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"usage", "--db", db, "--by", "year"},
			{"usage", "--db", db, "--by", "day", "--json", "--csv"},
			{"usage", "--db", db, "--since", "yesterday"},
			{"usage", "--csv", fourRuns},
		} {
			if _, _, code := runCLI(t, "", args...); code != exitUsage {
				t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
			}
		}
	})
}
