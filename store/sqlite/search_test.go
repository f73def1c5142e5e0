package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// TestMigrateSearchIndex opens a database of schema 3, which has no
// full-text index, and finds its events by their words: migration 4
// indexes what was stored before it.
func TestMigrateSearchIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v3.db")
	st := openPath(t, path, sqlite.Options{})
	w, err := st.Create(ctx, store.NewSession{ID: "s_v3", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	envs := []agentstream.Envelope{
		{Seq: 1, Turn: 1, Payload: &agentstream.Message{Role: "user", Text: "where is the quokka"}},
		{Seq: 2, Turn: 1, Payload: &agentstream.ToolResult{CallID: "c", Output: "found a quokka in ./zoo"}},
		{Seq: 3, Turn: 1, Payload: &agentstream.Usage{Scope: agentstream.ScopeCall, Model: "quokka"}},
	}
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// Back to schema 4: no index, no trace of migrations 5 to 7.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `DROP TABLE events_fts; DROP INDEX sessions_unindexed;
		ALTER TABLE sessions DROP COLUMN indexed_seq; ALTER TABLE lines DROP COLUMN codec;
		DELETE FROM schema_migrations WHERE version >= 5`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st = openPath(t, path, sqlite.Options{})
	hits, err := st.Search(ctx, store.SearchQuery{Text: "quokka"})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, h := range hits {
		got = append(got, h.Seq)
	}
	// The tool output and the message, latest first, not the usage's model.
	if len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("hits after migration: seqs %v, want [2 1] (latest first)", got)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}
