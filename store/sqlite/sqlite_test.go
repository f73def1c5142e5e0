package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

func openTest(t testing.TB, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenOptions(filepath.Join(t.TempDir(), "test.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ptr[T any](v T) *T { return &v }

// sampleEnvelopes is one session's events, covering the envelope's
// optional parts.
func sampleEnvelopes(session string) []agentstream.Envelope {
	ts := time.Date(2026, 11, 29, 16, 20, 55, 123_000_000, time.UTC)
	return []agentstream.Envelope{
		{Session: session, Seq: 1, TS: ts, Harness: "claude-code", Turn: 1, Origin: "live",
			Payload: &agentstream.SessionStarted{Harness: "claude-code", Model: "claude-sonnet-5", ContextWindow: ptr[int64](1_000_000), Cwd: "/w", SessionID: "ef45", Version: "2.1"},
			Source:  &agentstream.Source{Stream: "stdout", Line: 1}},
		{Session: session, Seq: 2, Harness: "claude-code", Turn: 1, Origin: "replay", ParentCallID: "toolu_1",
			Payload: &agentstream.Message{Role: "user", Text: "quote \" backslash \\ newline \n tab \t é 😀 \u2028"},
			Source:  &agentstream.Source{Stream: "stdout", Line: 2}},
		{Session: session, Seq: 0, TS: ts, Harness: "claude-code", Turn: 1,
			Payload: &agentstream.MessageDelta{Role: "assistant", Text: "par"}},
		{Session: session, Seq: 3, TS: ts, Harness: "claude-code", Turn: 1,
			Payload: &agentstream.Usage{Scope: "call", Model: "claude-sonnet-5", InputTokens: ptr[int64](4), OutputTokens: ptr[int64](126), CacheReadTokens: ptr[int64](41207), CacheCreationTokens: ptr[int64](1183)},
			Source:  &agentstream.Source{Stream: "stdout", Line: 3}},
		{Session: session, Seq: 4, TS: ts, Harness: "claude-code", Turn: 1,
			Payload: &agentstream.SessionTitle{Title: "Fix the Parser"}},
		{Session: session, Seq: 5, TS: ts, Harness: "claude-code", Turn: 1,
			Payload: &agentstream.Stderr{Text: "warn"}, Source: &agentstream.Source{Stream: "stderr", Line: 1}},
		{Session: session, Seq: 6, TS: ts, Harness: "claude-code", Turn: 1,
			Payload: &agentstream.SessionEnded{Status: "succeeded", StopReason: "end_turn", Reason: "completion"},
			Source:  &agentstream.Source{Stream: "stdout", Line: 4}},
	}
}

func writeAll(t testing.TB, w store.Writer, envs []agentstream.Envelope) {
	t.Helper()
	ctx := context.Background()
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{})
	w, err := st.Create(ctx, store.NewSession{ID: "s_round", Protocol: "claude-json", Harness: "claude-code",
		Command: []string{"claude", "-p"}, Cwd: "/w", Labels: map[string]string{"team": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	envs := sampleEnvelopes("s_round")
	writeAll(t, w, envs)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.Events(ctx, "s_round", store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range envs {
		if e.Seq > 0 {
			want = append(want, string(e.AppendJSON(nil)))
		}
	}
	var gotJSON []string
	for _, ev := range got {
		gotJSON = append(gotJSON, string(ev.Data))
		if _, err := ev.Envelope(); err != nil {
			t.Errorf("seq %d: %v", ev.Seq, err)
		}
	}
	if diff := cmp.Diff(want, gotJSON); diff != "" {
		t.Errorf("stored envelopes differ from AppendJSON (-want +got):\n%s", diff)
	}
	sess, err := st.Session(ctx, "s_round")
	if err != nil {
		t.Fatal(err)
	}
	wantSess := store.Session{
		ID: "s_round", Harness: "claude-code", Protocol: "claude-json", Version: "2.1", Model: "claude-sonnet-5",
		Title: "Fix the Parser", Cwd: "/w", Command: []string{"claude", "-p"}, Status: "succeeded", Reason: "completion",
		LastSeq: 6, Labels: map[string]string{"team": "a"},
	}
	if diff := cmp.Diff(wantSess, sess, cmpopts.IgnoreFields(store.Session{}, "StartedAt", "EndedAt", "Usage")); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	if sess.Usage.InputTokens == nil || *sess.Usage.InputTokens != 4 || sess.Usage.TokensFrom != "calls" {
		t.Errorf("usage recap = %+v", sess.Usage)
	}
	if sess.EndedAt.IsZero() {
		t.Error("EndedAt is zero after Close")
	}
}

func TestWriterRejects(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{})
	w, err := st.Create(ctx, store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	msg := &agentstream.Message{Role: "assistant", Text: "hi"}
	if err := w.Handle(ctx, agentstream.Envelope{Seq: 2, Payload: msg}); !errors.Is(err, store.ErrSeq) {
		t.Errorf("seq 2 first: err = %v, want ErrSeq", err)
	}
	if err := w.Handle(ctx, agentstream.Envelope{Seq: 1, Payload: msg}); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(ctx, agentstream.Envelope{Seq: 1, Payload: msg}); !errors.Is(err, store.ErrSeq) {
		t.Errorf("seq 1 twice: err = %v, want ErrSeq", err)
	}
	if _, err := st.Create(ctx, store.NewSession{ID: w.Session()}); err == nil {
		t.Error("creating a session with an existing id succeeded")
	}
	if _, err := st.Create(ctx, store.NewSession{ID: "bad id"}); err == nil {
		t.Error("creating a session with an invalid id succeeded")
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(ctx, agentstream.Envelope{Seq: 2, Payload: msg}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
	sess, _ := st.Session(ctx, w.Session())
	if sess.Status != store.StatusInterrupted {
		t.Errorf("status without session.ended = %q, want interrupted", sess.Status)
	}
}

// fill writes n message events to a new session and closes it.
func fill(t testing.TB, st *sqlite.Store, id string, n int) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, store.NewSession{ID: id, Harness: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		typ := agentstream.Payload(&agentstream.Message{Role: "assistant", Text: fmt.Sprint("m", i)})
		if i%3 == 0 {
			typ = &agentstream.Thinking{Text: fmt.Sprint("t", i)}
		}
		if err := w.Handle(ctx, agentstream.Envelope{Session: id, Seq: int64(i), Turn: 1, Payload: typ}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func seqs(evs []store.Event) []int64 {
	out := []int64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func seqRange(lo, hi int64) []int64 {
	out := []int64{}
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func TestEventWindows(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{BatchSize: 7})
	fill(t, st, "a", 100)
	fill(t, st, "b", 10) // a neighbour whose keys follow a's
	tests := []struct {
		name string
		q    store.EventQuery
		want []int64
	}{
		{"first page", store.EventQuery{Limit: 5}, seqRange(1, 5)},
		{"after", store.EventQuery{After: 95, Limit: 10}, seqRange(96, 100)},
		{"after the end", store.EventQuery{After: 100}, []int64{}},
		{"before", store.EventQuery{Before: 11, Limit: 3}, seqRange(8, 10)},
		{"before the start", store.EventQuery{Before: 3, Limit: 10}, seqRange(1, 2)},
		{"before 1", store.EventQuery{Before: 1, Limit: 10}, []int64{}},
		{"tail", store.EventQuery{Tail: true, Limit: 4}, seqRange(97, 100)},
		{"tail longer than the session", store.EventQuery{Tail: true, Limit: 1000}, seqRange(1, 100)},
		{"types", store.EventQuery{After: 0, Limit: 3, Types: []string{"thinking"}}, []int64{3, 6, 9}},
		{"types before", store.EventQuery{Before: 10, Limit: 2, Types: []string{"thinking"}}, []int64{6, 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.Events(ctx, "a", tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, seqs(got)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := st.Events(ctx, "nope", store.EventQuery{}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown session: err = %v, want ErrNotFound", err)
	}
}

func TestSessionsQuery(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 7 {
		w, err := st.Create(ctx, store.NewSession{ID: fmt.Sprint("s", i), Harness: []string{"codex", "claude-code"}[i%2],
			StartedAt: base.Add(time.Duration(i/2) * time.Hour)}) // pairs share a start time
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, []agentstream.Envelope{{Seq: 1, Payload: &agentstream.SessionTitle{Title: fmt.Sprint("Title_", i, " 100%")}}})
		if i != 6 {
			writeAll(t, w, []agentstream.Envelope{{Seq: 2, Payload: &agentstream.SessionEnded{Status: "succeeded"}}})
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			defer w.Close(ctx)
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	ids := func(q store.SessionQuery) []string {
		var out []string
		for {
			page, err := st.Sessions(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range page.Sessions {
				out = append(out, s.ID)
			}
			if page.Next == "" {
				return out
			}
			q.Cursor = page.Next
		}
	}
	tests := []struct {
		name string
		q    store.SessionQuery
		want []string
	}{
		{"all, pages of 2", store.SessionQuery{Limit: 2}, []string{"s6", "s5", "s4", "s3", "s2", "s1", "s0"}},
		{"all, pages of 3", store.SessionQuery{Limit: 3}, []string{"s6", "s5", "s4", "s3", "s2", "s1", "s0"}},
		{"harness", store.SessionQuery{Harness: "codex"}, []string{"s6", "s4", "s2", "s0"}},
		{"status", store.SessionQuery{Status: "running"}, []string{"s6"}},
		{"title, any case", store.SessionQuery{Q: "tITLE_3"}, []string{"s3"}},
		{"title, wildcard characters literal", store.SessionQuery{Q: "_5 100%"}, []string{"s5"}},
		{"since", store.SessionQuery{Since: base.Add(2 * time.Hour)}, []string{"s6", "s5", "s4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ids(tt.q)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := st.Sessions(ctx, store.SessionQuery{Cursor: "garbage"}); !errors.Is(err, store.ErrBadCursor) {
		t.Errorf("bad cursor: err = %v", err)
	}
}

func TestLines(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{BatchSize: 2})
	w, err := st.Create(ctx, store.NewSession{ID: "l"})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("y"), 100)
	sum := sha256.Sum256(big)
	in := []store.Line{
		{Stream: "stdout", N: 1, Data: []byte(`{"a":1}`)},
		{Stream: "stderr", N: 1, Data: []byte("oops\xff")},
		{Stream: "stdout", N: 2, Data: []byte{}},
		{Stream: "stdout", N: 2, Data: []byte("retried: ignored")},
		{Stream: "stdout", N: 3, Data: big[:10], Size: 100, SHA256: sum[:]},
	}
	for _, l := range in {
		if err := w.Line(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if got := w.LastLine("stdout"); got != 3 {
		t.Errorf("LastLine(stdout) = %d", got)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var got []store.Line
	if err := st.Lines(ctx, "l", func(l store.Line) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []store.Line{
		{Stream: "stdout", N: 1, Data: []byte(`{"a":1}`), Size: 7},
		{Stream: "stderr", N: 1, Data: []byte("oops\xff"), Size: 5},
		{Stream: "stdout", N: 2, Data: []byte{}, Size: 0},
		{Stream: "stdout", N: 3, Data: big[:10], Size: 100, SHA256: sum[:]},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	l, err := st.Line(ctx, "l", "stdout", 3)
	if err != nil || !l.Truncated() || l.Size != 100 {
		t.Errorf("Line(stdout, 3) = %+v, %v", l, err)
	}
	if _, err := st.Line(ctx, "l", "stdout", 4); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing line: err = %v", err)
	}
}

// TestResumeAndReap checks that a session is reaped only once its writer's
// heartbeat went stale, and that a reaped session resumes where it stopped.
// It runs in a synctest bubble, where the heartbeat's age is exact.
func TestResumeAndReap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		dir := t.TempDir()
		path := filepath.Join(dir, "r.db")
		st, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		w, err := st.CreateWriter(ctx, store.NewSession{ID: "r", Protocol: "jsonl"})
		if err != nil {
			t.Fatal(err)
		}
		// The writer stands for a process that stopped: closed only to end
		// its goroutine, after the checks.
		defer w.Close(ctx)
		writeAll(t, w, sampleEnvelopes("r")[:2])
		if err := w.Line(ctx, store.Line{Stream: "stdout", N: 1, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// Another Store in this process does not reap a session whose writer
		// is alive.
		other, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Resume(ctx, "r"); !errors.Is(err, sqlite.ErrRunning) {
			t.Errorf("resume a running session: err = %v, want ErrRunning", err)
		}
		if n, err := other.Reap(ctx); err != nil || n != 0 {
			t.Fatalf("Reap of a live writer's session = %d, %v; want 0", n, err)
		}
		// A writer whose heartbeat went stale is reaped (by Open).
		time.Sleep(2 * time.Millisecond)
		stale, err := sqlite.OpenOptions(path, sqlite.Options{StaleAfter: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer stale.Close()
		sess, _ := stale.Session(ctx, "r")
		if sess.Status != store.StatusInterrupted || sess.EndedAt.IsZero() {
			t.Errorf("after reap: status %q, endedAt %v", sess.Status, sess.EndedAt)
		}
		r, err := stale.Resume(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if r.LastSeq() != 2 || r.LastLine("stdout") != 1 {
			t.Errorf("resumed at seq %d line %d, want 2 and 1", r.LastSeq(), r.LastLine("stdout"))
		}
		writeAll(t, r, []agentstream.Envelope{{Seq: 3, Payload: &agentstream.SessionEnded{Status: "failed", Reason: "exit", Error: "exit status 1"}}})
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		sess, _ = stale.Session(ctx, "r")
		if sess.Status != "failed" || sess.LastSeq != 3 || sess.Error != "exit status 1" {
			t.Errorf("after resume: %+v", sess)
		}
		if _, err := stale.Resume(ctx, "r"); !errors.Is(err, store.ErrClosed) {
			t.Errorf("resume an ended session: err = %v, want ErrClosed", err)
		}
		if _, err := stale.Resume(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("resume an unknown session: err = %v, want ErrNotFound", err)
		}
	})
}

// recorder is a store.Publisher that keeps what it gets.
type recorder struct {
	mu   sync.Mutex
	evs  []store.Event
	ends []string
}

func (r *recorder) Publish(ev store.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *recorder) End(id string) {
	r.mu.Lock()
	r.ends = append(r.ends, id)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]store.Event, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Event(nil), r.evs...), append([]string(nil), r.ends...)
}

// TestFollow checks what Follow publishes: the events of this Store's
// writers as they are written, live deltas in their place, and those of
// another Store (as another process would write them) within one poll
// interval; never the history it found. It runs in a synctest bubble, where
// the interval is exact.
func TestFollow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		path := filepath.Join(t.TempDir(), "f.db")
		st, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fill(t, st, "old", 3) // history: not published
		rec := &recorder{}
		done := make(chan error, 1)
		const interval = 20 * time.Millisecond
		go func() { done <- st.Follow(ctx, rec, interval) }()
		synctest.Wait() // Follow has taken its starting point and waits for its first tick

		// In this Store: published by the writer, live deltas in their place.
		w, err := st.Create(ctx, store.NewSession{ID: "local"})
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, sampleEnvelopes("local"))
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		// In another Store (as another process would): found by polling.
		other, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		fill(t, other, "remote", 50)
		time.Sleep(interval)
		synctest.Wait()
		evs, ends := rec.snapshot()
		var got []string
		for _, e := range evs {
			got = append(got, fmt.Sprintf("%s:%d:%s", e.Session, e.Seq, e.Type))
		}
		want := []string{"local:1:session.started", "local:2:message", "local:0:message.delta", "local:3:usage",
			"local:4:session.title", "local:5:stderr", "local:6:session.ended"}
		for i := 1; i <= 50; i++ {
			typ := "message"
			if i%3 == 0 {
				typ = "thinking"
			}
			want = append(want, fmt.Sprintf("remote:%d:%s", i, typ))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("published one poll interval after the remote session was written (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"local", "remote"}, ends); diff != "" {
			t.Errorf("ends (-want +got):\n%s", diff)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Follow returned %v", err)
		}
	})
}

// TestConcurrent runs writers of several sessions and readers together;
// run it with -race.
func TestConcurrent(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{BatchSize: 16})
	rec := &recorder{}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go st.Follow(fctx, rec, 10*time.Millisecond)
	const writers, events = 4, 300
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fill(t, st, fmt.Sprint("c", i), events)
		}()
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for i := range 3 {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprint("c", i)
				evs, err := st.Events(ctx, id, store.EventQuery{Tail: true, Limit: 50})
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Error(err)
					return
				}
				for k := 1; k < len(evs); k++ {
					if evs[k].Seq != evs[k-1].Seq+1 {
						t.Errorf("%s: seq %d after %d", id, evs[k].Seq, evs[k-1].Seq)
						return
					}
				}
				if _, err := st.Sessions(ctx, store.SessionQuery{Limit: 3}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	for i := range writers {
		evs, err := st.Events(ctx, fmt.Sprint("c", i), store.EventQuery{Limit: events + 10})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(seqRange(1, events), seqs(evs)); diff != "" {
			t.Errorf("c%d seqs (-want +got):\n%s", i, diff)
		}
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestTitleSources checks that a title taken from the first prompt names a
// session only until the harness gives its own, and never replaces it.
func TestTitleSources(t *testing.T) {
	ctx := context.Background()
	st := openTest(t, sqlite.Options{})
	prompt := &agentstream.SessionTitle{Title: "fix the test", Source: agentstream.TitlePrompt}
	harness := &agentstream.SessionTitle{Title: "Fixing the parser test"}
	tests := []struct {
		name   string
		titles []*agentstream.SessionTitle
		want   string
	}{
		{"prompt only", []*agentstream.SessionTitle{prompt}, "fix the test"},
		{"the harness's later", []*agentstream.SessionTitle{prompt, harness}, "Fixing the parser test"},
		{"the harness's first", []*agentstream.SessionTitle{harness, prompt}, "Fixing the parser test"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprint("t", i)
			w, err := st.Create(ctx, store.NewSession{ID: id, Harness: "claude-code"})
			if err != nil {
				t.Fatal(err)
			}
			for j, p := range tt.titles {
				writeAll(t, w, []agentstream.Envelope{{Seq: int64(j + 1), Payload: p}})
			}
			if err := w.Close(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := st.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Title != tt.want {
				t.Errorf("title %q, want %q", s.Title, tt.want)
			}
		})
	}
}
