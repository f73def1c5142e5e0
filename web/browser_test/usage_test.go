package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/agentstreamtest"
)

func i64(n int64) *int64     { return &n }
func f64(f float64) *float64 { return &f }

// usageRow is a row of GET /api/usage, or the same figures read from the
// page's data attributes ("" for a figure nobody reported).
type usageRow struct {
	Key, Sessions, Input, Output, CacheRead, CacheWrite, Cost, Unpriced string
}

func apiRows(t *testing.T, base, query string) (rows []usageRow, total usageRow) {
	t.Helper()
	resp, err := http.Get(base + "/api/usage?" + query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var rep struct {
		Rows  []agentstream.UsageRow `json:"rows"`
		Total agentstream.UsageRow   `json:"total"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /api/usage?%s: %d %v %s", query, resp.StatusCode, err, body)
	}
	conv := func(r agentstream.UsageRow) usageRow {
		n := func(v *int64) string {
			if v == nil {
				return ""
			}
			return strconv.FormatInt(*v, 10)
		}
		c := ""
		if r.CostUSD != nil {
			c = strconv.FormatFloat(*r.CostUSD, 'f', -1, 64)
		}
		return usageRow{r.Key, strconv.Itoa(r.Sessions), n(r.InputTokens), n(r.OutputTokens), n(r.CacheReadTokens), n(r.CacheCreationTokens), c, strconv.Itoa(r.Unpriced)}
	}
	for _, r := range rep.Rows {
		rows = append(rows, conv(r))
	}
	return rows, conv(rep.Total)
}

// pageRows reads the rows a chart or table drew, by their data attributes.
const pageRows = `((sel) => [...document.querySelectorAll(sel)].map((el) => ({
	Key: el.dataset.key || '', Sessions: el.dataset.sessions || '', Input: el.dataset.input || '',
	Output: el.dataset.output || '', CacheRead: el.dataset.cacheRead || '', CacheWrite: el.dataset.cacheWrite || '',
	Cost: el.dataset.cost || '', Unpriced: el.dataset.unpriced || ''})))`

func TestUsagePage(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()
	now := time.Now()
	day := func(n int) time.Time { return now.AddDate(0, 0, -n).Add(-time.Hour) }
	// An opus session whose side calls went to haiku (Claude's modelUsage),
	// a Codex session that reports no cost, a Gemini one.
	sessions := []struct {
		id    string
		start time.Time
		ps    []agentstream.Payload
	}{
		{"s_opus", day(3), []agentstream.Payload{
			&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-opus-5[1m]"},
			&agentstream.Usage{Scope: "session", InputTokens: i64(1200), OutputTokens: i64(5400), CacheReadTokens: i64(250000), CacheCreationTokens: i64(30000), CostUSD: f64(1.25), Turns: i64(12),
				Models: []agentstream.ModelUsage{
					{Model: "claude-opus-5[1m]", InputTokens: i64(1000), OutputTokens: i64(5380), CacheReadTokens: i64(250000), CacheCreationTokens: i64(30000), CostUSD: f64(1.23)},
					{Model: "claude-haiku-4-5-20251001", InputTokens: i64(200), OutputTokens: i64(20), CacheReadTokens: i64(0), CacheCreationTokens: i64(0), CostUSD: f64(0.02)},
				}},
			&agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion},
		}},
		{"s_codex", day(1), []agentstream.Payload{
			&agentstream.SessionStarted{Harness: "codex", Model: "gpt-5-codex"},
			&agentstream.Usage{Scope: "session", InputTokens: i64(30000), OutputTokens: i64(2400), CacheReadTokens: i64(90000)},
			&agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion},
		}},
		{"s_gemini", day(0), []agentstream.Payload{
			&agentstream.SessionStarted{Harness: "gemini-cli", Model: "gemini-2.5-pro"},
			&agentstream.Usage{Scope: "session", InputTokens: i64(8000), OutputTokens: i64(900), CacheReadTokens: i64(20000)},
			&agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: agentstream.ReasonExit},
		}},
	}
	for _, s := range sessions {
		w, err := session(ctx, srv.st, s.id, s.start, s.ps...)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	b := startBrowser(t, chrome)
	tb := b.tab(t)
	tb.open(srv.url+"/usage?period=30&by=model", byID("usage")+".getAttribute('aria-busy') === 'false' && "+byID("chart-tokens-day")+".dataset.bars === '30'")
	zone := eval[string](tb, `Intl.DateTimeFormat().resolvedOptions().timeZone`)
	since := eval[string](tb, `(() => { const d = new Date(); d.setHours(0,0,0,0); d.setDate(d.getDate() - 29);
		return d.getFullYear() + '-' + String(d.getMonth() + 1).padStart(2, '0') + '-' + String(d.getDate()).padStart(2, '0'); })()`)
	q := func(by string) string { return "by=" + by + "&since=" + since + "&tz=" + url.QueryEscape(zone) }

	t.Run("days", func(t *testing.T) {
		want, _ := apiRows(t, srv.url, q("day"))
		if len(want) != 3 {
			t.Fatalf("the API gives %d days, want the 3 of the sessions: %v", len(want), want)
		}
		for _, chart := range []string{"chart-tokens-day", "chart-cost-day"} {
			got := eval[[]usageRow](tb, pageRows+"('#"+chart+" .bar:not([data-empty])')")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s draws %v; the API says %v", chart, got, want)
			}
			if n := eval[int](tb, `document.querySelectorAll('#`+chart+` .bar[data-empty] rect').length`); n != 0 {
				t.Errorf("%s draws %d bars on days without sessions", chart, n)
			}
		}
		// Each token segment is as tall as its share of the axis.
		segs := eval[[]map[string]string](tb, `[...document.querySelectorAll('#chart-tokens-day .bar:not([data-empty]) rect')].map((r) => ({seg: r.dataset.segment, value: r.dataset.value}))`)
		if len(segs) != 3*3+1 {
			t.Errorf("%d token segments, want 10 (opus: 4, codex and gemini: 3 each)", len(segs))
		}
		// The Codex day reported no cost: marked, with no bar.
		codexDay := eval[map[string]any](tb, `(() => { const b = [...document.querySelectorAll('#chart-cost-day .bar')].find((b) => b.dataset.unpriced === '1' && !b.dataset.cost);
			return b ? {rects: b.querySelectorAll('rect').length, marks: b.querySelectorAll('.unpriced-mark').length} : {}; })()`)
		if codexDay["rects"] != float64(0) || codexDay["marks"] != float64(1) {
			t.Errorf("the day of the unpriced session in the cost chart: %v, want no bar and one mark", codexDay)
		}
	})
	t.Run("models", func(t *testing.T) {
		want, total := apiRows(t, srv.url, q("model"))
		got := eval[[]usageRow](tb, `(`+pageRows+`('#chart-tokens-model .bar')).map((r, i) => Object.assign(r, {Key: document.querySelectorAll('#chart-tokens-model .bar')[i].dataset.model}))`)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the tokens per model chart draws %v; the API says %v", got, want)
		}
		keys := map[string]bool{}
		for _, r := range want {
			keys[r.Key] = true
		}
		for _, k := range []string{"claude-opus-5", "claude-haiku-4-5", "gpt-5-codex", "gemini-2.5-pro"} {
			if !keys[k] {
				t.Errorf("no %s among the models %v", k, want)
			}
		}
		table := eval[[]usageRow](tb, pageRows+"('#usage-body tr')")
		if fmt.Sprint(table) != fmt.Sprint(want) {
			t.Errorf("the table shows %v; the API says %v", table, want)
		}
		foot := eval[[]usageRow](tb, pageRows+"('#usage-foot tr')")
		if len(foot) != 1 || fmt.Sprint(foot[0]) != fmt.Sprint(total) {
			t.Errorf("the total row shows %v; the API says %v", foot, total)
		}
		tiles := eval[map[string]string](tb, `Object.fromEntries([...document.querySelectorAll('#usage-tiles .tile')].map((t) => [t.dataset.figure, t.dataset.value]))`)
		if tiles["cost"] != total.Cost || tiles["sessions"] != "3" || tiles["unpriced"] != "2" {
			t.Errorf("tiles %v; the API's total %v", tiles, total)
		}
		text := eval[string](tb, `document.getElementById('usage').textContent`)
		for _, bad := range []string{"inputTokens", "costUsd", "cacheCreationTokens", "$0.00", "NaN", "undefined"} {
			if strings.Contains(text, bad) {
				t.Errorf("the page shows %q", bad)
			}
		}
		tb.do("fit the page", chromedp.EmulateViewport(1280, 1500))
		tb.screenshot("usage-page.png")
		tb.do("back", chromedp.EmulateViewport(1280, 900))
	})
	t.Run("table by session", func(t *testing.T) {
		tb.do("group by session", chromedp.SetValue(chromedp.CSS("#usage-by"), "session"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('usage-by').dispatchEvent(new Event('change'))`))
		tb.waitFor("the session table", `document.querySelectorAll('#usage-body tr').length === 3 && location.search.includes('by=session')`, 10*time.Second)
		want, _ := apiRows(t, srv.url, q("session"))
		got := eval[[]usageRow](tb, pageRows+"('#usage-body tr')")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the table by session shows %v; the API says %v", got, want)
		}
	})
}

func TestContextOverTime(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()
	start := time.Now().Add(-time.Hour)
	// A session whose prompt grows call by call, with a subagent's call
	// (its own conversation, not the session's context) among them.
	ps := []agentstream.Payload{&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-4-5", ContextWindow: i64(200000)}}
	var want []int64
	for i := int64(1); i <= 8; i++ {
		ctxTokens := 20000 * i
		want = append(want, ctxTokens)
		ps = append(ps, &agentstream.Message{Role: "assistant", Text: fmt.Sprint("step ", i)},
			&agentstream.Usage{Scope: "call", Model: "claude-sonnet-4-5", InputTokens: i64(5), OutputTokens: i64(100), CacheReadTokens: i64(ctxTokens - 5), CacheCreationTokens: i64(0), ContextTokens: i64(ctxTokens), MessageID: fmt.Sprint("m", i)})
	}
	w, err := session(ctx, srv.st, "s_context", start, ps...)
	if err != nil {
		t.Fatal(err)
	}
	sub := envelope("s_context", start.Add(time.Second), &agentstream.Usage{Scope: "call", Model: "claude-haiku-4-5", InputTokens: i64(190000), OutputTokens: i64(1), ContextTokens: i64(190000), MessageID: "sub"})
	sub.Seq, sub.ParentCallID = int64(len(ps)+1), "toolu_1"
	if err := w.Handle(ctx, sub); err != nil {
		t.Fatal(err)
	}
	end := envelope("s_context", start.Add(2*time.Second), &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion})
	end.Seq = int64(len(ps) + 2)
	if err := w.Handle(ctx, end); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, chrome)
	tb := b.tab(t)
	tb.open(srv.url+"/sessions/s_context", headerReady+" && "+byID("context-chart")+".dataset.points === '8'")
	got := eval[map[string]string](tb, `(({dataset: d}) => ({points: d.points, peak: d.peak, window: d.window}))(document.getElementById('context-chart'))`)
	if got["peak"] != strconv.FormatInt(want[len(want)-1], 10) || got["window"] != "200000" {
		t.Errorf("context chart %v, want 8 points peaking at %d of 200000 (the subagent's call left out)", got, want[len(want)-1])
	}
	if !eval[bool](tb, visible(`document.querySelector('#context-chart svg path.context-line')`)) {
		t.Error("the context chart draws no line")
	}
	if n := eval[int](tb, `document.querySelector('#context-chart path.context-line').getAttribute('d').split('L').length`); n != 8 {
		t.Errorf("the line has %d points, want 8", n)
	}
	tb.screenshot("session-context.png")
}

// TestUsageAgreesEverywhere holds the session page's header and its
// session-total rows to the figures of every recorded Claude Code, Codex and
// Gemini CLI session in the repository, read from the recorded lines
// (agentstreamtest.RecordedUsage), and to the API's recap of the session.
// cmd/agentstream's TestUsageConsistency holds the other surfaces to them.
func TestUsageAgreesEverywhere(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t)
	ctx := context.Background()
	root := filepath.Join("..", "..")
	files, err := agentstreamtest.UsageRecordings(root)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for i, f := range files {
		if strings.Contains(f, "/codex/testdata/appserver/") {
			// agentstreamtest.RecordedUsage does not read app-server
			// lines: there is nothing to compare the page with.
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		proto := "claude-json"
		switch {
		case strings.Contains(f, "/codex/testdata/rollout/"):
			proto = "codex-rollout"
		case strings.Contains(f, "/codex/"):
			proto = "codex-json"
		case strings.Contains(f, "/gemini/testdata/chats/"):
			proto = "gemini-chat"
		case strings.Contains(f, "/gemini/"):
			proto = "gemini-json"
		}
		id, _, err := importRecordingAs(ctx, srv.st, data, proto, time.Now().Add(-time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("import %s: %v", f, err)
		}
		ids[f] = id
	}
	b := startBrowser(t, chrome)
	tb := b.tab(t)
	type figures struct{ Input, Output, CacheRead, CacheWrite, Cost string }
	rowsChecked := 0
	for _, f := range files {
		if ids[f] == "" {
			continue // not imported, above
		}
		t.Run(f, func(t *testing.T) {
			data, _ := os.ReadFile(filepath.Join(root, f))
			want := agentstreamtest.RecordedUsage(data)
			n := func(v *int64) string {
				if v == nil || want.From == "" {
					return ""
				}
				return strconv.FormatInt(*v, 10)
			}
			wantF := figures{n(want.InputTokens), n(want.OutputTokens), n(want.CacheReadTokens), n(want.CacheCreationTokens), ""}
			tb.open(srv.url+"/sessions/"+ids[f], headerReady+" && document.getElementById('timeline').getAttribute('aria-busy') === 'false'")
			head := eval[map[string]string](tb, `(({dataset: d}) => ({input: d.input, output: d.output, cacheRead: d.cacheRead,
				cacheWrite: d.cacheWrite, cost: d.cost, tokensFrom: d.tokensFrom}))(document.getElementById('recap'))`)
			if head["tokensFrom"] == "" {
				head["input"], head["output"], head["cacheRead"], head["cacheWrite"] = "", "", "", ""
			}
			got := figures{head["input"], head["output"], head["cacheRead"], head["cacheWrite"], ""}
			if got != wantF {
				t.Errorf("the header says %+v; the recorded lines say %+v", got, wantF)
			}
			if (want.CostUSD == nil) != (head["cost"] == "") {
				t.Errorf("the header's cost %q; the recorded lines say %v", head["cost"], want.CostUSD)
			} else if want.CostUSD != nil {
				c, _ := strconv.ParseFloat(head["cost"], 64)
				if math.Abs(c-*want.CostUSD) > 1e-9 {
					t.Errorf("the header's cost %v; the recorded lines say %v", c, *want.CostUSD)
				}
			}
			// With every event on the page and the harness's totals last,
			// the latest session-total row of each run adds up to the
			// header.
			if head["tokensFrom"] != "session" || !eval[bool](tb, `!!document.querySelector('#timeline .event[data-seq="1"]')`) {
				return
			}
			runs := eval[[]map[string]string](tb, `(() => { const last = new Map();
				for (const el of document.querySelectorAll('#timeline .event[data-type="usage"][data-scope="session"]')) last.set(el.dataset.run, el.dataset);
				return [...last.values()].map((d) => ({input: d.input, output: d.output, cacheRead: d.cacheRead, cacheWrite: d.cacheWrite, cost: d.cost})); })()`)
			sum := map[string]*float64{}
			for _, r := range runs {
				for k, v := range r {
					if v == "" {
						continue
					}
					x, _ := strconv.ParseFloat(v, 64)
					if sum[k] == nil {
						sum[k] = new(float64)
					}
					*sum[k] += x
				}
			}
			for k, hv := range map[string]string{"input": head["input"], "output": head["output"], "cacheRead": head["cacheRead"], "cacheWrite": head["cacheWrite"], "cost": head["cost"]} {
				s := ""
				if sum[k] != nil {
					s = strconv.FormatFloat(*sum[k], 'f', -1, 64)
				}
				hx, _ := strconv.ParseFloat(hv, 64)
				if (s == "") != (hv == "") || sum[k] != nil && math.Abs(*sum[k]-hx) > 1e-9 {
					t.Errorf("the session-total rows add up to %s %s; the header says %s", k, s, hv)
				}
			}
			rowsChecked++
		})
	}
	t.Logf("%d recordings; the session-total rows checked on %d", len(files), rowsChecked)
}
