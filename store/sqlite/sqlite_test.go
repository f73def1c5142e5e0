package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/store/storetest"
)

// TestStore runs the store conformance suite.
func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store {
			return openTest(t, sqlite.Options{BatchSize: 16})
		},
		Reopen: func(t *testing.T, st storetest.Store) storetest.Store {
			return openPath(t, st.(*sqlite.Store).Path(), sqlite.Options{})
		},
		Takeover: func(t *testing.T, st storetest.Store) storetest.Store {
			time.Sleep(2 * time.Millisecond)
			return openPath(t, st.(*sqlite.Store).Path(), sqlite.Options{StaleAfter: time.Nanosecond})
		},
		Repair: func(t *testing.T, st storetest.Store, d store.Dialects) storetest.Store {
			time.Sleep(2 * time.Millisecond)
			return openPath(t, st.(*sqlite.Store).Path(), sqlite.Options{StaleAfter: time.Nanosecond, Dialects: d})
		},
		FollowHook: sqlite.SetFollowHook,
	})
}

func openPath(t testing.TB, path string, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenOptions(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

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

// TestMigrateBodies opens a database of schema 1, whose events were kept
// column by column, and reads its events back as they were written.
func TestMigrateBodies(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL);
		INSERT INTO schema_migrations VALUES (1, 0);`+sqlite.Migration1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (sid, id, status, started_at, last_seq) VALUES (3, 's_v1', 'succeeded', 0, 6)`); err != nil {
		t.Fatal(err)
	}
	envs := sampleEnvelopes("s_v1")
	var want []string
	for _, e := range envs {
		if e.Seq == 0 {
			continue
		}
		want = append(want, string(e.AppendJSON(nil)))
		// As schema 1's writer kept it.
		var ts, parent, origin, stream, line any
		if !e.TS.IsZero() {
			ts = e.TS.UnixMilli()
		}
		if e.ParentCallID != "" {
			parent = e.ParentCallID
		}
		if e.Origin != "" && e.Origin != agentstream.OriginLive {
			origin = e.Origin
		}
		if e.Source != nil {
			stream, line = e.Source.Stream, e.Source.Line
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO events (key, ts, type, harness, turn, origin, parent_call_id, payload, source_stream, source_line)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, 3<<40|e.Seq, ts, e.Type(), e.Harness, e.Turn, origin, parent,
			string(e.Payload.AppendJSON(nil)), stream, line); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	st := openPath(t, path, sqlite.Options{})
	evs, err := st.Events(ctx, "s_v1", store.EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, string(ev.Data))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events after migration (-want +got):\n%s", diff)
	}
	if err := st.IntegrityCheck(ctx); err != nil {
		t.Error(err)
	}
}

// TestMustExist: with MustExist, a missing file is an error wrapping
// fs.ErrNotExist and neither it nor its directory is created; an existing
// database opens.
func TestMustExist(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "typo", "x.db")
	if st, err := sqlite.OpenOptions(missing, sqlite.Options{MustExist: true}); !errors.Is(err, fs.ErrNotExist) {
		if st != nil {
			st.Close()
		}
		t.Fatalf("OpenOptions(missing, MustExist) = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was created: %v", filepath.Dir(missing), err)
	}
	path := filepath.Join(dir, "a.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = sqlite.OpenOptions(path, sqlite.Options{MustExist: true})
	if err != nil {
		t.Fatalf("OpenOptions(existing, MustExist): %v", err)
	}
	st.Close()
}

// TestDeleteSession: a running session is not deleted; a closed one goes
// with its events and lines, leaving the others whole, and its id can be
// created again.
func TestDeleteSession(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "d.db")
	st := openPath(t, path, sqlite.Options{})
	for _, id := range []string{"a", "b"} {
		w, err := st.CreateWriter(ctx, store.NewSession{ID: id, Protocol: "jsonl"})
		if err != nil {
			t.Fatal(err)
		}
		writeAll(t, w, sampleEnvelopes(id))
		if err := w.Line(ctx, store.Line{Stream: "stdout", N: 1, Data: []byte(id)}); err != nil {
			t.Fatal(err)
		}
		if id == "a" {
			if err := st.DeleteSession(ctx, "a"); !errors.Is(err, sqlite.ErrRunning) {
				t.Errorf("delete a running session: err = %v, want ErrRunning", err)
			}
		}
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before, err := st.Events(ctx, "b", store.EventQuery{})
	if err != nil || len(before) == 0 {
		t.Fatalf("session b: %d events, %v", len(before), err)
	}
	if err := st.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Session(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted session: err = %v, want ErrNotFound", err)
	}
	if err := st.DeleteSession(ctx, "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete again: err = %v, want ErrNotFound", err)
	}
	evs, err := st.Events(ctx, "b", store.EventQuery{})
	if err != nil || len(evs) != len(before) {
		t.Errorf("the other session's events: %d, %v; want %d", len(evs), err, len(before))
	}
	// No row of the deleted session is left.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var events, lines, sessions int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM lines), (SELECT count(*) FROM sessions)`).Scan(&events, &lines, &sessions); err != nil {
		t.Fatal(err)
	}
	if events != len(before) || lines != 1 || sessions != 1 {
		t.Errorf("after the delete the database holds %d events, %d lines, %d sessions; want session b's %d, 1, 1", events, lines, sessions, len(before))
	}
	// The id is free again.
	w, err := st.CreateWriter(ctx, store.NewSession{ID: "a", Protocol: "jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	st.Lines(ctx, "a", func(store.Line) error { n++; return nil })
	if evs, _ := st.Events(ctx, "a", store.EventQuery{}); n != 0 || len(evs) != 0 {
		t.Errorf("the new session a holds %d lines and %d events of the old one", n, len(evs))
	}
}

// TestGroupCommit has sixteen writers flush one event at a time, at once,
// so that their batches share transactions. The commit hook holds one
// transaction for 100 ms, while the others queue, and only then does
// session s-bad flush its first batch, which fails after writing (the hook
// sets its title, then fails) in the next transaction with the batches
// queued beside it: s-bad's writer gets the error and nothing of its
// batch is kept, and every other session holds each of its events once,
// with a dense seq.
func TestGroupCommit(t *testing.T) {
	st := openTest(t, sqlite.Options{})
	ctx := context.Background()
	errBad := errors.New("the batch of s-bad fails")
	held := make(chan struct{})
	var holdOnce sync.Once
	sqlite.SetCommitHook(func(tx *sql.Tx, session string) error {
		switch session {
		case "s-00":
			holdOnce.Do(func() {
				close(held)
				time.Sleep(100 * time.Millisecond)
			})
		case "s-bad":
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = 'half-written' WHERE id = 's-bad'`); err != nil {
				return err
			}
			return errBad
		}
		return nil
	})
	defer sqlite.SetCommitHook(nil)
	const n = 200
	var wg sync.WaitGroup
	ids := []string{"s-bad"}
	for i := range 15 {
		ids = append(ids, fmt.Sprintf("s-%02d", i))
	}
	for _, id := range ids {
		w, err := st.Create(ctx, store.NewSession{ID: id, Harness: "jsonl"})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			defer w.Close(ctx)
			if id == "s-bad" {
				<-held
				time.Sleep(20 * time.Millisecond) // the others queue meanwhile
			}
			for i := 1; i <= n; i++ {
				env := agentstream.Envelope{Session: id, Seq: int64(i), Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: fmt.Sprint(id, " ", i)}}
				err := w.Handle(ctx, env)
				if err == nil {
					err = w.Flush(ctx)
				}
				if id == "s-bad" {
					if !errors.Is(err, errBad) {
						t.Errorf("s-bad: event %d: %v, want the hook's error", i, err)
					}
					return
				}
				if err != nil {
					t.Errorf("%s: event %d: %v", id, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st.Grouped() == 0 {
		t.Fatal("no transaction held more than one batch: the test did not test grouping")
	}
	t.Logf("%d transactions held more than one batch", st.Grouped())
	for _, id := range ids {
		evs, err := st.Events(ctx, id, store.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := st.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id == "s-bad" {
			if len(evs) != 0 || s.Title == "half-written" {
				t.Errorf("s-bad: %d events stored, title %q; want none of its failed batches", len(evs), s.Title)
			}
			continue
		}
		if len(evs) != n || s.LastSeq != n {
			t.Fatalf("%s: %d events stored, last seq %d; want %d", id, len(evs), s.LastSeq, n)
		}
		for i, e := range evs {
			env, err := e.Envelope()
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprint(id, " ", i+1); e.Seq != int64(i+1) || env.Payload.(*agentstream.Message).Text != want {
				t.Fatalf("%s: event %d: seq %d, %+v; want seq %d, %q", id, i, e.Seq, env.Payload, i+1, want)
			}
		}
	}
}
