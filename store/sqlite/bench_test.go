package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// benchEnvelope returns a stored event of about 300 bytes, a tool result
// whose output search indexes.
func benchEnvelope(session string, seq int64) agentstream.Envelope {
	return agentstream.Envelope{
		Session: session, Seq: seq, TS: time.UnixMilli(1_764_000_000_000 + seq), Harness: "claude-code",
		Turn: 1, Origin: agentstream.OriginLive,
		Payload: &agentstream.ToolResult{CallID: "toolu_01Su1gEqceMZJJCvrQCx71oT", Output: "# demo\n\nsome output of a tool that was run by the agent, about one hundred and fifty bytes long, give or take a few", Name: "Bash", Characters: 120},
		Source:  &agentstream.Source{Stream: "stdout", Line: seq},
	}
}

// benchUsage returns a stored event of about the same size without search
// text: a raw line, whose text search does not index.
func benchUsage(session string, seq int64) agentstream.Envelope {
	e := benchEnvelope(session, seq)
	e.Payload = &agentstream.Raw{Reason: "unknown-type", Text: "some output of a tool that was run by the agent, about one hundred and fifty bytes long, give or take a few, unindexed", Bytes: 120}
	return e
}

// BenchmarkAppend appends events to one session in batches (the default
// 512) and reports events/s, until every event is acknowledged: "text"
// events carry search text, "notext" ones none. Indexing is the
// indexer's, after the commits, so both should run at the same speed.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name string
		ev   func(string, int64) agentstream.Envelope
	}{{"text", benchEnvelope}, {"notext", benchUsage}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "a.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w, err := st.CreateWriter(ctx, store.NewSession{Protocol: "claude-json", Harness: "claude-code"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			start := time.Now()
			for i := 1; i <= b.N; i++ {
				if err := w.Handle(ctx, bc.ev(w.Session(), int64(i))); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
			b.StopTimer()
			w.Close(ctx)
		})
	}
}

var (
	tailOnce sync.Once
	tailDir  string
	tailErr  error
)

// TestMain removes the database BenchmarkTailPage builds once.
func TestMain(m *testing.M) {
	code := m.Run()
	if tailDir != "" {
		os.RemoveAll(tailDir)
	}
	os.Exit(code)
}

// tailDB returns a database holding one session "big" of 1,000,000 events,
// built once per run.
func tailDB(b *testing.B) string {
	tailOnce.Do(func() {
		tailDir, tailErr = os.MkdirTemp("", "agentstream-bench-")
		if tailErr != nil {
			return
		}
		path := filepath.Join(tailDir, "tail.db")
		ctx := context.Background()
		st, err := sqlite.OpenOptions(path, sqlite.Options{BatchSize: 4096})
		if err != nil {
			tailErr = err
			return
		}
		defer st.Close()
		w, err := st.CreateWriter(ctx, store.NewSession{ID: "big", Harness: "claude-code"})
		if err != nil {
			tailErr = err
			return
		}
		for i := int64(1); i <= 1_000_000; i++ {
			if err := w.Handle(ctx, benchEnvelope("big", i)); err != nil {
				tailErr = err
				return
			}
		}
		if tailErr = w.Close(ctx); tailErr != nil {
			return
		}
		// Indexed now, so that the first search does not do it.
		tailErr = st.IndexPending(ctx)
	})
	if tailErr != nil {
		b.Fatal(tailErr)
	}
	return filepath.Join(tailDir, "tail.db")
}

// BenchmarkTailPage reads the last 500 events of a 1,000,000-event session
// (and a page of 500 before a seq in its middle), as the API's ?tail=500
// and ?before= do.
func BenchmarkTailPage(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 1,000,000-event database")
	}
	path := tailDB(b)
	st, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, q := range []struct {
		name string
		q    store.EventQuery
	}{
		{"tail", store.EventQuery{Tail: true, Limit: 500}},
		{"before", store.EventQuery{Before: 500_000, Limit: 500}},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evs, err := st.Events(ctx, "big", q.q)
				if err != nil || len(evs) != 500 {
					b.Fatal(len(evs), err)
				}
			}
		})
	}
}

// BenchmarkSearch searches the 1,000,000-event session of BenchmarkTailPage
// for a word every event holds (the first 50 of a million matches) and
// for one no event holds.
func BenchmarkSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 1,000,000-event database")
	}
	path := tailDB(b)
	st, err := sqlite.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, q := range []struct {
		name string
		text string
		n    int
	}{{"every", "demo", 50}, {"none", "zanzibar", 0}, {"phrase", `"hundred and fifty"`, 50}} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				hits, err := st.Search(ctx, store.SearchQuery{Text: q.text})
				if err != nil || len(hits) != q.n {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}
