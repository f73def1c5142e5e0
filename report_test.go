package agentstream_test

import (
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// session folds payloads into a report's session.
func session(id, harness, cwd string, start string, ps ...agentstream.Payload) agentstream.UsageSession {
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		panic(err)
	}
	return agentstream.UsageSession{ID: id, Harness: harness, Cwd: cwd, StartedAt: t, Usage: fold(ps...)}
}

// rowFigures is what a test says of a report row.
type rowFigures struct {
	Key      string
	Sessions int
	In, Out  *int64
	Cost     *float64
	Unpriced int
}

func figuresOf(rows []agentstream.UsageRow) []rowFigures {
	out := []rowFigures{}
	for _, r := range rows {
		out = append(out, rowFigures{r.Key, r.Sessions, r.InputTokens, r.OutputTokens, r.CostUSD, r.Unpriced})
	}
	return out
}

func TestUsageReport(t *testing.T) {
	// The max-turns result of synthetic-claude-2.1.328-three-runs-and-max-turns.jsonl:
	// an opus session whose side calls went to haiku (480 + 2600 in, 25 +
	// 210 out).
	opusHaiku := withModels(total(0, 3080, 235, 4100, 900, 0.049705, 3),
		modelUsage("claude-haiku-4-5-20251001", 480, 25, 0, 0, 0.000605),
		modelUsage("claude-opus-5-5[1m]", 2600, 210, 4100, 900, 0.0491))
	sessions := []agentstream.UsageSession{
		session("a", "claude-code", "/w/app", "2026-11-29T23:30:00Z", opusHaiku),
		session("b", "claude-code", "/w/app", "2026-11-30T08:00:00Z",
			&agentstream.SessionStarted{Model: "claude-opus-5-5"}, call("claude-opus-5-5", 10, 20, 0, 0)),
		session("c", "codex", "", "2026-12-01T09:00:00Z",
			&agentstream.SessionStarted{Model: "gpt-5-codex"}, &agentstream.Usage{Scope: "session", InputTokens: ptr[int64](100), OutputTokens: ptr[int64](5), Thread: "t1"}),
		// The same thread resumed: its totals include the 100 and 5 above.
		session("d", "codex", "", "2026-12-01T10:00:00Z",
			&agentstream.SessionStarted{Model: "gpt-5-codex"}, &agentstream.Usage{Scope: "session", InputTokens: ptr[int64](160), OutputTokens: ptr[int64](9), Thread: "t1"}),
	}
	costA := 0.049705
	tests := []struct {
		name string
		opt  agentstream.UsageReportOptions
		want []rowFigures
	}{
		{
			name: "by day, in UTC",
			opt:  agentstream.UsageReportOptions{By: agentstream.ByDay},
			want: []rowFigures{
				{"2026-11-29", 1, ptr[int64](3080), ptr[int64](235), &costA, 0},
				{"2026-11-30", 1, ptr[int64](10), ptr[int64](20), nil, 1},
				{"2026-12-01", 2, ptr[int64](160), ptr[int64](9), nil, 2},
			},
		},
		{
			name: "by day, where the day is another",
			opt:  agentstream.UsageReportOptions{By: agentstream.ByDay, Location: time.FixedZone("UTC+2", 2*3600)},
			want: []rowFigures{
				{"2026-11-30", 2, ptr[int64](3080 + 10), ptr[int64](235 + 20), &costA, 1},
				{"2026-12-01", 2, ptr[int64](160), ptr[int64](9), nil, 2},
			},
		},
		{
			name: "by week, from Monday",
			opt:  agentstream.UsageReportOptions{By: agentstream.ByWeek},
			want: []rowFigures{
				{"2026-11-23", 1, ptr[int64](3080), ptr[int64](235), &costA, 0},
				{"2026-11-30", 3, ptr[int64](170), ptr[int64](29), nil, 3},
			},
		},
		{
			name: "by model, a session split over its models",
			opt:  agentstream.UsageReportOptions{By: agentstream.ByModel},
			want: []rowFigures{
				{"claude-opus-5-5", 2, ptr[int64](2600 + 10), ptr[int64](210 + 20), ptr(0.0491), 1},
				{"claude-haiku-4-5", 1, ptr[int64](480), ptr[int64](25), ptr(0.000605), 0},
				{"gpt-5-codex", 2, ptr[int64](160), ptr[int64](9), nil, 2},
			},
		},
		{
			name: "by project",
			opt:  agentstream.UsageReportOptions{By: agentstream.ByProject},
			want: []rowFigures{
				{"/w/app", 2, ptr[int64](3080 + 10), ptr[int64](235 + 20), &costA, 1},
				{agentstream.Unknown, 2, ptr[int64](160), ptr[int64](9), nil, 2},
			},
		},
		{
			name: "since leaves the earlier sessions out but still knows the thread",
			opt:  agentstream.UsageReportOptions{By: agentstream.BySession, Since: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)},
			want: []rowFigures{
				{"d", 1, ptr[int64](60), ptr[int64](4), nil, 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := agentstream.NewUsageReport(sessions, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, figuresOf(rep.Rows), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			// The total is the sum of the sessions, each once.
			var wantTotal rowFigures
			wantTotal.Key = "total"
			for _, r := range tt.want {
				if tt.opt.By != agentstream.ByModel {
					wantTotal.Sessions += r.Sessions
				}
			}
			if tt.opt.By == agentstream.ByModel {
				wantTotal.Sessions = len(sessions)
			}
			if got := rep.Total.Sessions; got != wantTotal.Sessions {
				t.Errorf("total sessions = %d, want %d", got, wantTotal.Sessions)
			}
		})
	}
	t.Run("the total counts each session once, a resumed thread's increment", func(t *testing.T) {
		rep, _ := agentstream.NewUsageReport(sessions, agentstream.UsageReportOptions{By: agentstream.ByModel})
		want := rowFigures{"total", 4, ptr[int64](3080 + 10 + 160), ptr[int64](235 + 20 + 9), &costA, 3}
		if diff := cmp.Diff(want, figuresOf([]agentstream.UsageRow{rep.Total})[0], cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("total (-want +got):\n%s", diff)
		}
		if !rep.Total.IsEstimated(agentstream.FigureCostUSD) {
			t.Errorf("total cost %v is a sum over part of the sessions, and must say so (estimated %v)", *rep.Total.CostUSD, rep.Total.Estimated)
		}
	})
	t.Run("a bad grouping", func(t *testing.T) {
		if _, err := agentstream.NewUsageReport(sessions, agentstream.UsageReportOptions{By: "year"}); err == nil {
			t.Error("by year: no error")
		}
	})
}
