package api_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
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

// TestIngesterResume resumes the sessions left without an end: of the
// sessions another Ingester released, ended, or timed out, only those
// released (not ended) that match and keep accept are running again,
// held by the Ingester that resumed them, which goes on with their next
// lines and end.
func TestIngesterResume(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "resume.db"))
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
	a := api.NewIngester(st, api.Options{HeartbeatTimeout: 200 * time.Millisecond})
	ids := []string{"p_released", "p_ended", "p_timeout", "p_refused", "q_released"}
	for _, id := range ids {
		if _, err := a.Create(ctx, api.CreateRequest{ID: id, Protocol: "jsonl"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Lines(ctx, id, lines(1, 5), nil); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	if _, err := a.Lines(ctx, "p_ended", nil, &api.End{ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, func(id string) bool { return id != "p_timeout" }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := st.Session(ctx, "p_timeout")
		if err != nil {
			t.Fatal(err)
		}
		if !s.Running() {
			if s.Status != store.StatusInterrupted || s.Reason != agentstream.ReasonHeartbeatTimeout {
				t.Fatalf("session p_timeout: %s (%s), want interrupted by its heartbeat timeout", s.Status, s.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("session p_timeout did not time out")
		}
		time.Sleep(20 * time.Millisecond)
	}

	b := api.NewIngester(st, api.Options{HeartbeatTimeout: -1})
	match := func(id string) bool { return strings.HasPrefix(id, "p_") }
	var asked []string
	keep := func(_ context.Context, id string) bool {
		asked = append(asked, id)
		return id != "p_refused"
	}
	n, waiting, err := b.Resume(ctx, match, keep)
	if err != nil || n != 1 || waiting != 0 {
		t.Fatalf("resume: %d, %d waiting, %v; want 1 session", n, waiting, err)
	}
	slices.Sort(asked)
	if want := []string{"p_refused", "p_released"}; !slices.Equal(asked, want) {
		t.Errorf("keep asked of %v, want %v (the interrupted sessions without an end that match)", asked, want)
	}
	want := map[string]string{"p_released": store.StatusRunning, "p_ended": store.StatusSucceeded,
		"p_timeout": store.StatusInterrupted, "p_refused": store.StatusInterrupted, "q_released": store.StatusInterrupted}
	for id, w := range want {
		if s, err := st.Session(ctx, id); err != nil || s.Status != w {
			t.Errorf("session %s: %q, %v; want %s", id, s.Status, err, w)
		}
	}
	// Held now: neither resumed again nor taken by another Ingester.
	if n, waiting, err := b.Resume(ctx, match, keep); err != nil || n != 0 || waiting != 0 {
		t.Errorf("second resume: %d, %d waiting, %v; want none", n, waiting, err)
	}
	// Another Ingester finds it running, written by another (b).
	if n, waiting, err := api.NewIngester(st, api.Options{HeartbeatTimeout: -1}).Resume(ctx, match, keep); err != nil || n != 0 || waiting != 1 {
		t.Errorf("resume by a third ingester: %d, %d waiting, %v; want 1 waiting", n, waiting, err)
	}
	c := api.NewIngester(st, api.Options{HeartbeatTimeout: -1})
	if _, err := c.Lines(ctx, "p_released", lines(6, 6), nil); err == nil {
		t.Error("another ingester took lines of a session resumed by the first")
	}
	if _, err := b.Lines(ctx, "p_released", lines(4, 9), &api.End{ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	s, err := st.Session(ctx, "p_released")
	if err != nil || s.Status != store.StatusSucceeded {
		t.Fatalf("session p_released: %q, %v; want succeeded", s.Status, err)
	}
	var got []int64
	if err := st.Lines(ctx, "p_released", func(l store.Line) error { got = append(got, l.N); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("lines %v, want 1..9 once each", got)
	}
	evs, err := st.Events(ctx, "p_released", store.EventQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d: not dense", i, ev.Seq)
		}
	}
}
