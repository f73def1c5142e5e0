package api_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// TestIngesterRelease releases a session an Ingester is writing: it is
// left interrupted, not ended, and a second Ingester on the same store (a
// node taking the session over) resumes it; lines sent again are skipped,
// and the session ends whole with a dense seq. A released session that
// match refuses is kept.
func TestIngesterRelease(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "release.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lines := func(from, to int) []api.LineIn {
		var ls []api.LineIn
		for i := from; i <= to; i++ {
			ls = append(ls, api.LineIn{Stream: store.Stdout, N: int64(i), Text: fmt.Sprintf(`{"type":"x","i":%d}`, i)})
		}
		return ls
	}
	a := api.NewIngester(st, api.Options{HeartbeatTimeout: -1})
	for _, id := range []string{"s_moved", "s_kept"} {
		if _, err := a.Create(ctx, api.CreateRequest{ID: id, Protocol: "jsonl"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Lines(ctx, id, lines(1, 5), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Release(ctx, func(id string) bool { return id == "s_moved" }); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"s_moved": store.StatusInterrupted, "s_kept": store.StatusRunning} {
		if s, err := st.Session(ctx, id); err != nil || s.Status != want {
			t.Errorf("session %s: %q, %v; want %s", id, s.Status, err, want)
		}
	}
	b := api.NewIngester(st, api.Options{HeartbeatTimeout: -1})
	code := 0
	if _, err := b.Lines(ctx, "s_moved", lines(4, 9), &api.End{ExitCode: &code}); err != nil {
		t.Fatalf("the second ingester: %v", err)
	}
	if _, err := b.Lines(ctx, "s_kept", lines(6, 6), nil); err == nil {
		t.Error("the second ingester took lines of a session the first still writes")
	}
	s, err := st.Session(ctx, "s_moved")
	if err != nil || s.Status != store.StatusSucceeded {
		t.Fatalf("session s_moved: %q, %v; want succeeded", s.Status, err)
	}
	var got []int64
	if err := st.Lines(ctx, "s_moved", func(l store.Line) error { got = append(got, l.N); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 9 {
		t.Errorf("lines %v, want 1..9 once each", got)
	}
	for i, n := range got {
		if n != int64(i+1) {
			t.Errorf("lines %v, want 1..9 once each", got)
			break
		}
	}
	evs, err := st.Events(ctx, "s_moved", store.EventQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: not dense", i, ev.Seq)
		}
	}
	if int64(len(evs)) != s.LastSeq || len(evs) == 0 {
		t.Errorf("%d events, lastSeq %d", len(evs), s.LastSeq)
	}
}
