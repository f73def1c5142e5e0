package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// figures are the usage figures every surface must agree on.
type figures struct {
	In, Out, Read, Write string // Thousands, or "—" when not reported
	Cost                 string // FormatCost, or "not reported"
}

func (f figures) String() string {
	return fmt.Sprintf("in %s, out %s, cache read %s, cache write %s, cost %s", f.In, f.Out, f.Read, f.Write, f.Cost)
}

func tokenFigure(v *int64) string {
	if v == nil {
		return "—"
	}
	return agentstream.Thousands(*v)
}

func costFigure(v *float64) string {
	if v == nil {
		return "not reported"
	}
	return agentstream.FormatCost(*v)
}

func expectedFigures(t agentstreamtest.Totals) figures {
	return figures{tokenFigure(t.InputTokens), tokenFigure(t.OutputTokens), tokenFigure(t.CacheReadTokens), tokenFigure(t.CacheCreationTokens), costFigure(t.CostUSD)}
}

func recapFigures(r agentstream.Recap) figures {
	if r.TokensFrom == "" {
		r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens = nil, nil, nil, nil
	}
	return figures{tokenFigure(r.InputTokens), tokenFigure(r.OutputTokens), tokenFigure(r.CacheReadTokens), tokenFigure(r.CacheCreationTokens), costFigure(r.CostUSD)}
}

var (
	renderToken = regexp.MustCompile(`(?:^|· )(in|out|cache read|cache write) ≥?([0-9,—]+)`)
	renderCost  = regexp.MustCompile(`cost (≥?\$[0-9.,]+|not reported)`)
	renderEnd   = regexp.MustCompile(`(?m)^── (succeeded|failed|cancelled|interrupted|unknown|end of input)`)
)

// renderFigures reads the figures of the last recap render printed.
func renderFigures(out string) figures {
	ends := renderEnd.FindAllStringIndex(out, -1)
	if len(ends) == 0 {
		return figures{"—", "—", "—", "—", "not reported"}
	}
	block := out[ends[len(ends)-1][0]:]
	if j := strings.Index(block, "\n"); j >= 0 {
		block = block[j+1:]
	}
	// The recap is the block's first lines, up to an error or the end.
	if j := strings.Index(block, "\nerror: "); j >= 0 {
		block = block[:j]
	}
	block = strings.ReplaceAll(block, "\n", " · ")
	f := figures{"—", "—", "—", "—", "not reported"}
	for _, m := range renderToken.FindAllStringSubmatch(block, -1) {
		switch m[1] {
		case "in":
			f.In = m[2]
		case "out":
			f.Out = m[2]
		case "cache read":
			f.Read = m[2]
		case "cache write":
			f.Write = m[2]
		}
	}
	if m := renderCost.FindStringSubmatch(block); m != nil {
		f.Cost = strings.TrimPrefix(m[1], "≥")
	}
	return f
}

// TestUsageConsistency holds every surface to the figures of each recorded
// Claude Code, Codex and Gemini CLI session of the repository, read from
// the recorded lines (the harness's own totals) apart from the adapters:
// the recap of `usage FILE`, render's recap, and, imported into a store,
// `usage SESSION`, the API's session and `usage --by session`. The web page's
// header and session-total row are held to the same in web/browser_test.
func TestUsageConsistency(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := agentstreamtest.UsageRecordings(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d recordings, want the repository's Claude, Codex and Gemini ones", len(files))
	}
	measured := 0
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			// Each recording is a store of its own: recordings that share a
			// Codex thread id are not one resumed thread.
			proto := protocolOf(f)
			if proto == "codex-app" {
				// Read as codex-json, as it was before render and usage
				// refused a protocol that understands no line, it
				// compared nothing with nothing.
				t.Skip("agentstreamtest.RecordedUsage does not read app-server lines")
			}
			db := filepath.Join(t.TempDir(), "c.db")
			out, errs, code := runCLI(t, "", "import", "--db", db, "--protocol", proto, filepath.Join(root, f))
			if code != 0 {
				t.Fatalf("import: %s", errs)
			}
			id := strings.TrimSpace(out)
			st, err := sqlite.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			srv := httptest.NewServer(api.New(st, hub.New(hub.Options{}), api.Options{}))
			defer srv.Close()
			out, errs, code = runCLI(t, "", "usage", "--db", db, "--by", "session", "--json")
			var rep agentstream.UsageReport
			if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
				t.Fatalf("usage --by session: %v %s", err, errs)
			}
			var row agentstream.UsageRow
			for _, r := range rep.Rows {
				if r.Key == id {
					row = r
				}
			}
			data, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			want := agentstreamtest.RecordedUsage(data)
			wantF := expectedFigures(want)
			if want.From != "" {
				measured++
			}
			var fileRecap agentstream.Recap
			out, errs, code = runCLI(t, "", "usage", "--json", "--protocol", proto, filepath.Join(root, f))
			if err := json.Unmarshal([]byte(out), &fileRecap); code != 0 || err != nil {
				t.Fatalf("usage --json: %v %s", err, errs)
			}
			rendered, errs, code := runCLI(t, "", "render", "--protocol", proto, "--color", "never", "--width", "200", filepath.Join(root, f))
			if code != 0 {
				t.Fatalf("render: %s", errs)
			}
			var stored agentstream.Recap
			out, errs, code = runCLI(t, "", "usage", "--db", db, "--json", id)
			if err := json.Unmarshal([]byte(out), &stored); code != 0 || err != nil {
				t.Fatalf("usage SESSION: %v %s", err, errs)
			}
			apiRecap := apiUsage(t, srv.URL, id)
			rowF := figures{tokenFigure(row.InputTokens), tokenFigure(row.OutputTokens), tokenFigure(row.CacheReadTokens), tokenFigure(row.CacheCreationTokens), costFigure(row.CostUSD)}
			for _, s := range []struct {
				name string
				got  figures
			}{
				{"usage FILE", recapFigures(fileRecap)},
				{"render", renderFigures(rendered)},
				{"usage SESSION", recapFigures(stored)},
				{"GET /api/sessions/{id}", recapFigures(apiRecap)},
				{"usage --by session", rowF},
			} {
				if s.got != wantF {
					t.Errorf("%s says %v; the recorded lines say %v", s.name, s.got, wantF)
				}
			}
			if want.CostUSD != nil && fileRecap.CostUSD != nil && math.Abs(*want.CostUSD-*fileRecap.CostUSD) > 1e-9 {
				t.Errorf("cost %v, the recorded lines say %v", *fileRecap.CostUSD, *want.CostUSD)
			}
			if want.From != "" && fileRecap.Runs != int64(want.Runs) {
				t.Errorf("%d runs, the recorded lines hold %d", fileRecap.Runs, want.Runs)
			}
			if got := fileRecap.IsEstimated(agentstream.FigureOutputTokens); got != want.Estimated {
				t.Errorf("output estimated = %v, the recorded lines say %v", got, want.Estimated)
			}
		})
	}
	t.Logf("%d recordings, %d with usage", len(files), measured)
}

// protocolOf is the protocol of a recording, from the adapter it is kept
// for: detection is not under test here (a Claude transcript has no init).
func protocolOf(path string) string {
	switch {
	case strings.Contains(path, "/codex/testdata/appserver/"):
		return "codex-app"
	case strings.Contains(path, "/codex/testdata/rollout/"):
		return "codex-rollout"
	case strings.Contains(path, "/codex/"):
		return "codex-json"
	case strings.Contains(path, "/gemini/testdata/chats/"):
		return "gemini-chat"
	case strings.Contains(path, "/gemini/"):
		return "gemini-json"
	}
	return "claude-json"
}

func apiUsage(t *testing.T, base, id string) agentstream.Recap {
	t.Helper()
	resp, err := http.Get(base + "/api/sessions/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var s struct {
		Usage agentstream.Recap `json:"usage"`
	}
	if err := json.Unmarshal(b, &s); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET session %s: %s %v", id, strconv.Quote(string(b)), err)
	}
	return s.Usage
}
