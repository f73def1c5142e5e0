package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
)

// TestMigrateSearchText takes a database back to schema 2, which has no
// search text, and finds its events by their words once Migrate brought
// it up to date: migration 3 fills the text of what was stored before.
func TestMigrateSearchText(t *testing.T) {
	ctx := context.Background()
	u := migrated(t)
	st := open(t, u, postgres.Options{})
	w, err := st.Create(ctx, store.NewSession{ID: "s_v2", Harness: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []agentstream.Envelope{
		{Seq: 1, Turn: 1, Payload: &agentstream.Message{Role: "user", Text: "where is the quokka"}},
		{Seq: 2, Turn: 1, Payload: &agentstream.ToolResult{CallID: "c", Output: "found a quokka in ./zoo"}},
		{Seq: 3, Turn: 1, Payload: &agentstream.Usage{Scope: agentstream.ScopeCall, Model: "quokka"}},
	} {
		if err := w.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ALTER TABLE events DROP COLUMN text; DELETE FROM schema_migrations WHERE version = 4`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if from, _, err := postgres.Migrate(ctx, u); err != nil || from != 3 {
		t.Fatalf("Migrate from %d: %v, want from 3", from, err)
	}
	st = open(t, u, postgres.Options{})
	hits, err := st.Search(ctx, store.SearchQuery{Text: "quokka"})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, h := range hits {
		got = append(got, h.Seq)
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 1 {
		t.Errorf("hits after migration: seqs %v, want [2 1] (latest first)", got)
	}
}
