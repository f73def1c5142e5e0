package postgres_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/sqlite"
)

// benchEnvelope returns a stored event of about 300 bytes, as
// store/sqlite's BenchmarkAppend writes.
func benchEnvelope(session string, seq int64) agentstream.Envelope {
	return agentstream.Envelope{
		Session: session, Seq: seq, TS: time.UnixMilli(1_764_000_000_000 + seq), Harness: "claude-code",
		Turn: 1, Origin: agentstream.OriginLive,
		Payload: &agentstream.ToolResult{CallID: "toolu_01Su1gEqceMZJJCvrQCx71oT", Output: "# demo\n\nsome output of a tool that was run by the agent, about one hundred and fifty bytes long, give or take a few", Name: "Bash", Characters: 120},
		Source:  &agentstream.Source{Stream: "stdout", Line: seq},
	}
}

// appendAll appends b.N events to a new session of st and returns the
// events a second.
func appendAll(b *testing.B, st store.Store) float64 {
	ctx := context.Background()
	w, err := st.Create(ctx, store.NewSession{Protocol: "claude-json", Harness: "claude-code"})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for i := 1; i <= b.N; i++ {
		if err := w.Handle(ctx, benchEnvelope(w.Session(), int64(i))); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	rate := float64(b.N) / time.Since(start).Seconds()
	b.StopTimer()
	w.Close(ctx)
	return rate
}

// BenchmarkAppend appends b.N events of one session to PostgreSQL, then
// the same to SQLite in the same run, and reports both rates and their
// ratio (postgres-x-sqlite).
func BenchmarkAppend(b *testing.B) {
	pg := open(b, migrated(b), postgres.Options{})
	lite, err := sqlite.Open(filepath.Join(b.TempDir(), "a.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer lite.Close()
	b.ReportAllocs()
	p := appendAll(b, pg)
	b.StartTimer()
	s := appendAll(b, lite)
	b.ReportMetric(p, "postgres-events/s")
	b.ReportMetric(s, "sqlite-events/s")
	b.ReportMetric(p/s, "postgres-x-sqlite")
}
