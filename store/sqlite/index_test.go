package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// wordEvents returns n message events of a session, the i-th holding the
// words word and w<i>.
func wordEvents(id, word string, n int) []agentstream.Envelope {
	var envs []agentstream.Envelope
	for i := 1; i <= n; i++ {
		envs = append(envs, agentstream.Envelope{Session: id, Seq: int64(i), Turn: 1,
			Payload: &agentstream.Message{Role: "assistant", Text: fmt.Sprintf("%s w%d", word, i)}})
	}
	return envs
}

// indexRows returns the rows of the full-text index and the sessions'
// watermarks, read from the file as another program would.
func indexRows(t *testing.T, path string) (rows int, unindexed int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// One transaction: both from the same snapshot.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.QueryRow(`SELECT count(*) FROM events_fts`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(`SELECT coalesce(sum(last_seq - indexed_seq), 0) FROM sessions`).Scan(&unindexed); err != nil {
		t.Fatal(err)
	}
	return rows, unindexed
}

// checkClosed closes st and runs SQLite's integrity check (which covers
// the full-text index) on its file, with no merge of the index running
// beside it.
func checkClosed(t *testing.T, st *sqlite.Store) {
	t.Helper()
	st.Close()
	db, err := sql.Open("sqlite", st.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity check: %q, %v", res, err)
	}
}

func searchSeqs(t *testing.T, st *sqlite.Store, text string) []int64 {
	t.Helper()
	hits, err := st.Search(context.Background(), store.SearchQuery{Text: text, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for _, h := range hits {
		seqs = append(seqs, h.Seq)
	}
	return seqs
}

// TestIndexAfterCommit: commits do not wait for the index; the indexer
// adds the events once the session pauses, each once, and a search that
// comes before it finds them all the same.
func TestIndexAfterCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "i.db")
	// An indexer that never gets to it: the commits alone index nothing.
	st := openPath(t, path, sqlite.Options{IndexDelay: time.Hour})
	w, err := st.CreateWriter(ctx, store.NewSession{ID: "s_a", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	writeAll(t, w, wordEvents("s_a", "quokka", n))
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if rows, unindexed := indexRows(t, path); rows != 0 || unindexed != n {
		t.Fatalf("after the commits: %d index rows and %d unindexed events, want 0 and %d", rows, unindexed, n)
	}
	// A search indexes what is pending first.
	if got := searchSeqs(t, st, "quokka"); len(got) != n || got[0] != n || got[n-1] != 1 {
		t.Fatalf("search before the indexer: %d hits (%v…), want %d, latest first", len(got), got[:min(3, len(got))], n)
	}
	if rows, unindexed := indexRows(t, path); rows != n || unindexed != 0 {
		t.Errorf("after the search: %d index rows and %d unindexed events, want %d and 0", rows, unindexed, n)
	}
	// The indexer of a store with the default delay indexes another
	// session without a search.
	st2 := openPath(t, path, sqlite.Options{IndexDelay: 10 * time.Millisecond})
	w2, err := st2.CreateWriter(ctx, store.NewSession{ID: "s_b", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w2, wordEvents("s_b", "wombat", n))
	if err := w2.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rows, unindexed := indexRows(t, path)
		if rows == 2*n && unindexed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the indexer left %d index rows and %d unindexed events, want %d and 0", rows, unindexed, 2*n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := searchSeqs(t, st, "wombat w7"); len(got) != 1 || got[0] != 7 {
		t.Errorf("wombat w7: %v, want [7]", got)
	}
	st2.Close()
	checkClosed(t, st)
}

// TestIndexResumes: events a process committed and never indexed (it
// exited, or crashed, first) are indexed by the next process to open the
// file, from the watermark, each once.
func TestIndexResumes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "r.db")
	st := openPath(t, path, sqlite.Options{IndexDelay: time.Hour})
	w, err := st.CreateWriter(ctx, store.NewSession{ID: "s_a", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000 // more than one indexing transaction
	envs := wordEvents("s_a", "numbat", n)
	writeAll(t, w, envs[:100])
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Half indexed, then more committed, then the process goes.
	if err := st.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, envs[100:])
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if rows, unindexed := indexRows(t, path); rows != 100 || unindexed != n-100 {
		t.Fatalf("before reopening: %d index rows and %d unindexed events, want 100 and %d", rows, unindexed, n-100)
	}
	st = openPath(t, path, sqlite.Options{IndexDelay: 10 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows, unindexed := indexRows(t, path)
		if unindexed == 0 {
			if rows != n {
				t.Fatalf("%d index rows, want %d", rows, n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the indexer of the next process left %d unindexed events", unindexed)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := searchSeqs(t, st, "numbat w4999"); len(got) != 1 || got[0] != 4999 {
		t.Errorf("numbat w4999: %v, want [4999]", got)
	}
	checkClosed(t, st)
}

// TestIndexDeleteSession: a deleted session leaves nothing in the index,
// not even for a session created after it with the same internal key.
func TestIndexDeleteSession(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{})
	w, err := st.CreateWriter(ctx, store.NewSession{ID: "s_old", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, wordEvents("s_old", "dugong", 3))
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := searchSeqs(t, st, "dugong"); len(got) != 3 {
		t.Fatalf("dugong before the delete: %v, want 3 hits", got)
	}
	if err := st.DeleteSession(ctx, "s_old"); err != nil {
		t.Fatal(err)
	}
	// The only session gone, the next one takes its place.
	w, err = st.CreateWriter(ctx, store.NewSession{ID: "s_new", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, wordEvents("s_new", "manatee", 3))
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := searchSeqs(t, st, "dugong"); len(got) != 0 {
		t.Errorf("dugong after its session was deleted: %v, want none", got)
	}
	if got := searchSeqs(t, st, "manatee"); len(got) != 3 {
		t.Errorf("manatee: %v, want 3 hits", got)
	}
	checkClosed(t, st)
}

// TestIndexPendingWhileWriting: IndexPending indexes what was committed
// before it was called and returns, while a writer goes on committing.
func TestIndexPendingWhileWriting(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{IndexDelay: time.Hour})
	w, err := st.CreateWriter(ctx, store.NewSession{ID: "s_busy", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error, 1)
	envs := wordEvents("s_busy", "kiwi", 1_000_000)
	go func() {
		for i := 0; ; i += 100 {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			for _, e := range envs[i : i+100] {
				if err := w.Handle(ctx, e); err != nil {
					done <- err
					return
				}
			}
			if err := w.Flush(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	for w.Acked() < 2000 {
		time.Sleep(time.Millisecond)
	}
	acked := w.Acked()
	if err := st.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", st.Path())
	if err != nil {
		t.Fatal(err)
	}
	var indexed int64
	err = db.QueryRow(`SELECT indexed_seq FROM sessions WHERE id = 's_busy'`).Scan(&indexed)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if indexed < acked {
		t.Errorf("IndexPending returned with seq %d indexed, want at least %d (acknowledged before the call)", indexed, acked)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w.Close(ctx)
	for _, seq := range []int64{1, acked} {
		if got := searchSeqs(t, st, fmt.Sprintf("kiwi w%d", seq)); len(got) != 1 || got[0] != seq {
			t.Errorf("kiwi w%d: %v, want [%d]", seq, got, seq)
		}
	}
}
