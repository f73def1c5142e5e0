package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// record stores a closed session of the given payloads.
func (ts *testServer) record(t *testing.T, id, harness, cwd string, start time.Time, ps ...agentstream.Payload) {
	t.Helper()
	ctx := context.Background()
	w, err := ts.st.Create(ctx, store.NewSession{ID: id, Harness: harness, Protocol: "jsonl", Cwd: cwd, StartedAt: start})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if err := w.Handle(ctx, agentstream.Envelope{Session: id, Seq: int64(i + 1), Turn: 1, Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func i64(n int64) *int64     { return &n }
func f64(f float64) *float64 { return &f }

func TestUsageAPI(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	day := time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC)
	// An opus session whose side calls went to haiku, as Claude's
	// modelUsage reports it.
	ts.record(t, "a", "claude-code", "/w/app", day,
		&agentstream.SessionStarted{Harness: "claude-code", Model: "claude-opus-5[1m]"},
		&agentstream.Usage{Scope: "session", InputTokens: i64(12), OutputTokens: i64(110), CostUSD: f64(0.5), Turns: i64(3),
			Models: []agentstream.ModelUsage{
				{Model: "claude-opus-5[1m]", InputTokens: i64(10), OutputTokens: i64(100), CostUSD: f64(0.45)},
				{Model: "claude-haiku-4-5-20251001", InputTokens: i64(2), OutputTokens: i64(10), CostUSD: f64(0.05)},
			}})
	ts.record(t, "b", "codex", "/w/lib", day.Add(2*time.Hour),
		&agentstream.Usage{Scope: "session", InputTokens: i64(100), OutputTokens: i64(5)})

	type row struct {
		Key      string   `json:"key"`
		Sessions int      `json:"sessions"`
		In       *int64   `json:"inputTokens"`
		Out      *int64   `json:"outputTokens"`
		Cost     *float64 `json:"costUsd"`
		Unpriced int      `json:"unpriced"`
	}
	tests := []struct {
		query string
		rows  []row
		total row
	}{
		{"/api/usage", []row{{"2026-11-29", 1, i64(12), i64(110), f64(0.5), 0}, {"2026-11-30", 1, i64(100), i64(5), nil, 1}},
			row{"total", 2, i64(112), i64(115), f64(0.5), 1}},
		{"/api/usage?by=day&tz=Asia/Tokyo", []row{{"2026-11-30", 2, i64(112), i64(115), f64(0.5), 1}},
			row{"total", 2, i64(112), i64(115), f64(0.5), 1}},
		{"/api/usage?by=model", []row{{"claude-opus-5", 1, i64(10), i64(100), f64(0.45), 0}, {"claude-haiku-4-5", 1, i64(2), i64(10), f64(0.05), 0},
			{"(unknown)", 1, i64(100), i64(5), nil, 1}}, row{"total", 2, i64(112), i64(115), f64(0.5), 1}},
		{"/api/usage?by=project&since=2026-11-30", []row{{"/w/lib", 1, i64(100), i64(5), nil, 1}},
			row{"total", 1, i64(100), i64(5), nil, 1}},
		{"/api/usage?by=harness&until=2026-11-30T00:00:00Z", []row{{"claude-code", 1, i64(12), i64(110), f64(0.5), 0}},
			row{"total", 1, i64(12), i64(110), f64(0.5), 0}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, hdr, body := ts.get(t, tt.query)
			if code != 200 || hdr.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d (%s): %s", code, hdr.Get("Content-Type"), body)
			}
			var rep struct {
				Rows  []row `json:"rows"`
				Total row   `json:"total"`
			}
			if err := json.Unmarshal(body, &rep); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.rows, rep.Rows); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.total, rep.Total); diff != "" {
				t.Errorf("total (-want +got):\n%s", diff)
			}
		})
	}
	for _, q := range []string{"?by=year", "?since=yesterday", "?until=29/11/2026", "?tz=Mars/Olympus"} {
		t.Run("bad "+q, func(t *testing.T) {
			if code, _, body := ts.get(t, "/api/usage"+q); code != 400 || !json.Valid(body) {
				t.Errorf("status %d, want 400 with a JSON error: %s", code, body)
			}
		})
	}
}
