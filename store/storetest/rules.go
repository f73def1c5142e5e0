package storetest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

func roundTrip(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_round", Protocol: "claude-json", Harness: "claude-code"})
	c.must(err, "Create")
	envs := sample("s_round")
	c.handleAll(w, envs)
	c.must(w.Close(c.ctx), "Close")
	got := c.all(st, "s_round")
	if diff := cmp.Diff(jsonOf(stored(envs)), got); diff != "" {
		c.errorf("stored envelopes differ from AppendJSON (-want +got):\n%s", diff)
	}
	evs, err := st.Events(c.ctx, "s_round", store.EventQuery{})
	c.must(err, "Events")
	for i, ev := range evs {
		if ev.Session != "s_round" || ev.Type != stored(envs)[i].Type() {
			c.errorf("event %d: session %q type %q, want s_round and %q", ev.Seq, ev.Session, ev.Type, stored(envs)[i].Type())
		}
		if _, err := ev.Envelope(); err != nil {
			c.errorf("seq %d: %v", ev.Seq, err)
		}
	}
}

func record(c *check) {
	st := c.h.Open(c.t)
	started := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_rec", Protocol: "claude-json", Harness: "claude-code",
		Command: []string{"claude", "-p", "été"}, Cwd: "/start", Parent: "s_parent",
		Labels: map[string]string{"team": "a", "ci": "yes"}, StartedAt: started})
	c.must(err, "Create")
	running, err := st.Session(c.ctx, "s_rec")
	c.must(err, "Session")
	if running.Status != store.StatusRunning || !running.EndedAt.IsZero() || running.LastSeq != 0 {
		c.errorf("a new session: status %q, endedAt %v, lastSeq %d; want running, zero, 0", running.Status, running.EndedAt, running.LastSeq)
	}
	envs := sample("s_rec")
	c.handleAll(w, envs)
	before := time.Now()
	c.must(w.Close(c.ctx), "Close")
	got, err := st.Session(c.ctx, "s_rec")
	c.must(err, "Session")
	// From the events: session.started gives the version and model (and
	// the cwd, after NewSession's), session.title the title, the latest
	// session.ended the status, reason and error.
	want := store.Session{
		ID: "s_rec", Harness: "claude-code", Protocol: "claude-json", Version: "2.1", Model: "claude-sonnet-5",
		Title: "Fix the Parser", Cwd: "/w", Command: []string{"claude", "-p", "été"}, Status: "failed",
		Reason: "exit", Error: "exit status 3", StartedAt: started, LastSeq: 6, Parent: "s_parent",
		Labels: map[string]string{"team": "a", "ci": "yes"},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(store.Session{}, "EndedAt", "Usage")); diff != "" {
		c.errorf("session (-want +got):\n%s", diff)
	}
	if got.EndedAt.Before(before.Add(-time.Second)) || got.EndedAt.After(time.Now().Add(time.Second)) {
		c.errorf("EndedAt %v is not the time of Close (%v)", got.EndedAt, before)
	}
	var folder agentstream.UsageFolder
	for _, e := range stored(envs) {
		folder.Add(e.Payload)
	}
	if diff := cmp.Diff(folder.Recap(), got.Usage); diff != "" {
		c.errorf("usage recap differs from the events' (-want +got):\n%s", diff)
	}
}

func titleSources(c *check) {
	st := c.h.Open(c.t)
	prompt := &agentstream.SessionTitle{Title: "fix the test", Source: agentstream.TitlePrompt}
	harness := &agentstream.SessionTitle{Title: "Fixing the parser test"}
	for i, tt := range []struct {
		name   string
		titles []*agentstream.SessionTitle
		want   string
	}{
		{"prompt only", []*agentstream.SessionTitle{prompt}, "fix the test"},
		{"the harness's later", []*agentstream.SessionTitle{prompt, harness}, "Fixing the parser test"},
		{"the harness's first", []*agentstream.SessionTitle{harness, prompt}, "Fixing the parser test"},
	} {
		id := fmt.Sprint("s_title_", i)
		w, err := st.Create(c.ctx, store.NewSession{ID: id, Harness: "claude-code"})
		c.must(err, "Create")
		for j, p := range tt.titles {
			c.handleAll(w, []agentstream.Envelope{{Seq: int64(j + 1), Payload: p}})
		}
		c.must(w.Close(c.ctx), "Close")
		s, err := st.Session(c.ctx, id)
		c.must(err, "Session")
		if s.Title != tt.want {
			c.errorf("%s: title %q, want %q", tt.name, s.Title, tt.want)
		}
	}
}

func create(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{})
	c.must(err, "Create without an id")
	if !store.ValidID(w.Session()) || len(w.Session()) != 28 {
		c.errorf("a new session got id %q, want one from store.NewID", w.Session())
	}
	sess, err := st.Session(c.ctx, w.Session())
	c.must(err, "Session")
	if sess.StartedAt.IsZero() || time.Since(sess.StartedAt) > time.Minute {
		c.errorf("StartedAt %v, want now", sess.StartedAt)
	}
	if _, err := st.Create(c.ctx, store.NewSession{ID: w.Session()}); err == nil {
		c.errorf("creating a session with an existing id succeeded")
	}
	if _, err := st.Create(c.ctx, store.NewSession{ID: "bad id"}); err == nil {
		c.errorf("creating a session with an invalid id succeeded")
	}
	if _, err := st.Session(c.ctx, "nope"); !is(err, store.ErrNotFound) {
		c.errorf("Session of an unknown id: %v, want ErrNotFound", err)
	}
	c.must(w.Close(c.ctx), "Close")
}

func ack(c *check) {
	st := c.h.Open(c.t)
	other := c.h.Reopen(c.t, st)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_ack"})
	c.must(err, "Create")
	for i := int64(1); i <= 300; i++ {
		c.must(w.Handle(c.ctx, message("s_ack", i, "x")), "Handle")
		if w.Acked() > w.LastSeq() {
			c.fatalf("Acked %d passed LastSeq %d", w.Acked(), w.LastSeq())
		}
	}
	c.must(w.Flush(c.ctx), "Flush")
	if w.Acked() != 300 || w.LastSeq() != 300 {
		c.errorf("after Flush: Acked %d, LastSeq %d; want 300 and 300", w.Acked(), w.LastSeq())
	}
	evs, err := other.Events(c.ctx, "s_ack", store.EventQuery{Limit: 1000})
	c.must(err, "Events from another process")
	if diff := cmp.Diff(seqRange(1, 300), seqs(evs)); diff != "" {
		c.errorf("what another process sees after Flush (-want +got):\n%s", diff)
	}
	sess, err := other.Session(c.ctx, "s_ack")
	c.must(err, "Session")
	if sess.LastSeq != 300 || sess.Status != store.StatusRunning {
		c.errorf("another process sees lastSeq %d, status %q; want 300, running", sess.LastSeq, sess.Status)
	}
	c.must(w.Close(c.ctx), "Close")
}

func seq(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_seq"})
	c.must(err, "Create")
	msg := &agentstream.Message{Role: "assistant", Text: "hi"}
	if err := w.Handle(c.ctx, agentstream.Envelope{Seq: 2, Payload: msg}); !is(err, store.ErrSeq) {
		c.errorf("seq 2 first: %v, want ErrSeq", err)
	}
	c.must(w.Handle(c.ctx, agentstream.Envelope{Seq: 0, Payload: msg}), "seq 0 after a refused seq")
	c.must(w.Handle(c.ctx, agentstream.Envelope{Seq: 2, Payload: msg}), "seq 2")
	if err := w.Handle(c.ctx, agentstream.Envelope{Seq: 4, Payload: msg}); !is(err, store.ErrSeq) {
		c.errorf("seq 4 after 2: %v, want ErrSeq", err)
	}
	c.must(w.Handle(c.ctx, agentstream.Envelope{Payload: msg}), "seq 0")
	if w.LastSeq() != 3 {
		c.errorf("LastSeq %d, want 3", w.LastSeq())
	}
	if err := w.Handle(c.ctx, agentstream.Envelope{Seq: 4}); err == nil {
		c.errorf("an envelope without a payload was taken")
	}
	c.must(w.Close(c.ctx), "Close")
	evs, err := st.Events(c.ctx, "s_seq", store.EventQuery{})
	c.must(err, "Events")
	if diff := cmp.Diff(seqRange(1, 3), seqs(evs)); diff != "" {
		c.errorf("stored seqs (-want +got):\n%s", diff)
	}
}

func replaySame(c *check) {
	st := c.h.Open(c.t)
	rec := &recorder{}
	ctx, cancel := withCancel(c)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, rec, 10*time.Millisecond) }()
	rec.waitReady(c, st)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_same"})
	c.must(err, "Create")
	envs := []agentstream.Envelope{message("s_same", 1, "a"), message("s_same", 2, "b"), message("s_same", 3, "c")}
	c.handleAll(w, envs[:2])
	// Once while buffered, once committed, then a time that differs (the
	// stored time stays).
	c.must(w.Handle(c.ctx, envs[1]), "the same seq 2 while buffered")
	c.must(w.Flush(c.ctx), "Flush")
	c.must(w.Handle(c.ctx, envs[0]), "the same seq 1 once committed")
	moved := envs[1]
	moved.TS = moved.TS.Add(time.Hour)
	c.must(w.Handle(c.ctx, moved), "the same seq 2 at another time")
	c.handleAll(w, envs[2:])
	if w.LastSeq() != 3 {
		c.errorf("LastSeq %d after replays, want 3", w.LastSeq())
	}
	c.must(w.Close(c.ctx), "Close")
	if diff := cmp.Diff(jsonOf(envs), c.all(st, "s_same")); diff != "" {
		c.errorf("stored (-want +got):\n%s", diff)
	}
	c.waitFor("the session's end published", func() bool { return len(rec.ends()) == 2 })
	if diff := cmp.Diff([]string{"1", "2", "3"}, rec.published()); diff != "" {
		c.errorf("published (-want +got):\n%s", diff)
	}
}

func replayConflict(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_conf"})
	c.must(err, "Create")
	envs := []agentstream.Envelope{message("s_conf", 1, "a"), message("s_conf", 2, "b"), message("s_conf", 3, "c")}
	c.handleAll(w, envs[:2])
	other := message("s_conf", 2, "B")
	if err := w.Handle(c.ctx, other); !is(err, store.ErrConflict) {
		c.errorf("another seq 2 while buffered: %v, want ErrConflict", err)
	}
	c.must(w.Flush(c.ctx), "Flush after a conflict")
	turn := envs[0]
	turn.Turn = 2
	if err := w.Handle(c.ctx, turn); !is(err, store.ErrConflict) {
		c.errorf("seq 1 with another turn once committed: %v, want ErrConflict", err)
	}
	c.handleAll(w, envs[2:])
	c.must(w.Close(c.ctx), "Close")
	if diff := cmp.Diff(jsonOf(envs), c.all(st, "s_conf")); diff != "" {
		c.errorf("stored (-want +got):\n%s", diff)
	}
}

func replayResumed(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_rr", Protocol: "jsonl"})
	c.must(err, "Create")
	var envs []agentstream.Envelope
	for i := int64(1); i <= 10; i++ {
		envs = append(envs, message("s_rr", i, fmt.Sprint("e", i)))
	}
	line := func(n int64) store.Line {
		return store.Line{Stream: store.Stdout, N: n, Data: fmt.Appendf(nil, `{"n":%d}`, n)}
	}
	for i := range envs[:6] {
		c.must(w.Line(c.ctx, line(int64(i+1))), "Line")
		c.must(w.Handle(c.ctx, envs[i]), "Handle")
	}
	// The writer committed 6 events and lines, then its process died
	// before anyone heard of it: the session stops, not ended.
	c.must(w.Close(c.ctx), "Close")
	rec := &recorder{}
	ctx, cancel := withCancel(c)
	defer cancel()
	go st.Follow(ctx, rec, 10*time.Millisecond)
	rec.waitReady(c, st)
	r, err := st.Resume(c.ctx, "s_rr")
	c.must(err, "Resume")
	if r.LastSeq() != 6 || r.LastLine(store.Stdout) != 6 {
		c.errorf("resumed at seq %d, line %d; want 6 and 6", r.LastSeq(), r.LastLine(store.Stdout))
	}
	// The new writer is handed everything from the start again, with the
	// live deltas the replayed lines give.
	delta := agentstream.Envelope{Session: "s_rr", Payload: &agentstream.MessageDelta{Role: "assistant", Text: "replayed"}}
	for i := range envs {
		c.must(r.Line(c.ctx, line(int64(i+1))), fmt.Sprint("Line ", i+1, " again"))
		if i < 5 {
			c.must(r.Handle(c.ctx, delta), "a live delta while replaying")
		}
		c.must(r.Handle(c.ctx, envs[i]), fmt.Sprint("Handle seq ", i+1, " again"))
	}
	c.must(r.Close(c.ctx), "Close")
	c.waitFor("the session's end published", func() bool { return len(rec.ends()) == 2 })
	if diff := cmp.Diff([]string{"7", "8", "9", "10"}, rec.published()); diff != "" {
		c.errorf("published after the resume: only what was new (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jsonOf(envs), c.all(st, "s_rr")); diff != "" {
		c.errorf("stored (-want +got):\n%s", diff)
	}
	var ns []int64
	c.must(st.Lines(c.ctx, "s_rr", func(l store.Line) error { ns = append(ns, l.N); return nil }), "Lines")
	if diff := cmp.Diff(seqRange(1, 10), ns); diff != "" {
		c.errorf("stored lines (-want +got):\n%s", diff)
	}
}

func lineReplay(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_lr"})
	c.must(err, "Create")
	l := func(stream string, n int64, data string) store.Line {
		return store.Line{Stream: stream, N: n, Data: []byte(data), TS: time.UnixMilli(1_764_000_000_000 + n)}
	}
	c.must(w.Line(c.ctx, l("stdout", 1, "one")), "Line")
	c.must(w.Line(c.ctx, l("stdout", 3, "three")), "Line 3 after 1")
	c.must(w.Line(c.ctx, l("stdout", 1, "one")), "line 1 again while buffered")
	if err := w.Line(c.ctx, l("stdout", 1, "uno")); !is(err, store.ErrConflict) {
		c.errorf("line 1 with other bytes while buffered: %v, want ErrConflict", err)
	}
	c.must(w.Flush(c.ctx), "Flush")
	again := l("stdout", 3, "three")
	again.TS = again.TS.Add(time.Hour)
	c.must(w.Line(c.ctx, again), "line 3 again, at another time")
	c.must(w.Line(c.ctx, l("stdout", 2, "two")), "line 2, below the last and never kept")
	if err := w.Line(c.ctx, l("stdout", 3, "tres")); !is(err, store.ErrConflict) {
		c.errorf("line 3 with other bytes once committed: %v, want ErrConflict", err)
	}
	c.must(w.Line(c.ctx, l("stderr", 1, "err")), "stderr line 1 after a conflict")
	if got := w.LastLine("stdout"); got != 3 {
		c.errorf("LastLine(stdout) = %d, want 3", got)
	}
	if err := w.Line(c.ctx, l("stdin", 1, "x")); err == nil {
		c.errorf("a line of an unknown stream was taken")
	}
	if err := w.Line(c.ctx, l("stdout", 0, "x")); err == nil {
		c.errorf("line 0 was taken")
	}
	c.must(w.Close(c.ctx), "Close")
	var got []string
	c.must(st.Lines(c.ctx, "s_lr", func(l store.Line) error {
		got = append(got, fmt.Sprintf("%s:%d:%s:%d", l.Stream, l.N, l.Data, l.TS.UnixMilli()))
		return nil
	}), "Lines")
	want := []string{"stdout:1:one:1764000000001", "stdout:3:three:1764000000003", "stderr:1:err:1764000000001"}
	if diff := cmp.Diff(want, got); diff != "" {
		c.errorf("lines (-want +got):\n%s", diff)
	}
}

func staleWriter(c *check) {
	st := c.h.Open(c.t)
	a, err := st.Create(c.ctx, store.NewSession{ID: "s_stale", Protocol: "jsonl"})
	c.must(err, "Create")
	c.handleAll(a, []agentstream.Envelope{message("s_stale", 1, "a"), message("s_stale", 2, "b")})
	c.must(a.Flush(c.ctx), "Flush")
	if _, err := c.h.Reopen(c.t, st).Resume(c.ctx, "s_stale"); !is(err, store.ErrRunning) {
		c.errorf("Resume of a session whose writer is alive: %v, want ErrRunning", err)
	}
	taker := c.h.Takeover(c.t, st)
	b, err := taker.Resume(c.ctx, "s_stale")
	c.must(err, "Resume by the taker")
	c.handleAll(b, []agentstream.Envelope{message("s_stale", 3, "c"), message("s_stale", 4, "d")})
	c.must(b.Flush(c.ctx), "Flush by the taker")
	// The stale writer goes on: seq 3 the same, seq 4 different.
	c.handleAll(a, []agentstream.Envelope{message("s_stale", 3, "c")})
	c.must(a.Flush(c.ctx), "Flush of the same seq 3 by the stale writer")
	c.handleAll(a, []agentstream.Envelope{message("s_stale", 4, "D")})
	err = a.Flush(c.ctx)
	if !is(err, store.ErrConflict) {
		c.errorf("Flush of another seq 4 by the stale writer: %v, want ErrConflict", err)
	}
	if err2 := a.Handle(c.ctx, message("s_stale", 5, "e")); err2 == nil || err2.Error() != fmt.Sprint(err) {
		c.errorf("Handle after a failed commit: %v, want the same error (sticky)", err2)
	}
	if err2 := a.Flush(c.ctx); err2 == nil {
		c.errorf("Flush after a failed commit succeeded")
	}
	c.handleAll(b, []agentstream.Envelope{message("s_stale", 5, "e")})
	c.must(b.Close(c.ctx), "Close by the taker")
	_ = a.Close(c.ctx)
	want := []agentstream.Envelope{message("s_stale", 1, "a"), message("s_stale", 2, "b"), message("s_stale", 3, "c"),
		message("s_stale", 4, "d"), message("s_stale", 5, "e")}
	if diff := cmp.Diff(jsonOf(want), c.all(st, "s_stale")); diff != "" {
		c.errorf("stored (-want +got):\n%s", diff)
	}
	sess, err := st.Session(c.ctx, "s_stale")
	c.must(err, "Session")
	if sess.LastSeq != 5 {
		c.errorf("lastSeq %d, want 5", sess.LastSeq)
	}
}

func closeRule(c *check) {
	st := c.h.Open(c.t)
	for i, tt := range []struct {
		name   string
		ended  *agentstream.SessionEnded
		status string
	}{
		{"no session.ended", nil, store.StatusInterrupted},
		{"succeeded", &agentstream.SessionEnded{Status: "succeeded", Reason: "completion"}, store.StatusSucceeded},
		{"cancelled", &agentstream.SessionEnded{Status: "cancelled", Reason: "aborted"}, store.StatusCancelled},
		{"a status that is not final", &agentstream.SessionEnded{Status: "running"}, store.StatusFailed},
		{"an unknown status", &agentstream.SessionEnded{Status: "weird"}, store.StatusFailed},
	} {
		id := fmt.Sprint("s_close_", i)
		w, err := st.Create(c.ctx, store.NewSession{ID: id})
		c.must(err, "Create")
		c.handleAll(w, []agentstream.Envelope{message(id, 1, "x")})
		if tt.ended != nil {
			c.handleAll(w, []agentstream.Envelope{{Payload: tt.ended}})
		}
		c.must(w.Close(c.ctx), "Close")
		sess, err := st.Session(c.ctx, id)
		c.must(err, "Session")
		if sess.Status != tt.status || sess.EndedAt.IsZero() || sess.Running() {
			c.errorf("%s: status %q, endedAt %v; want %q and a time", tt.name, sess.Status, sess.EndedAt, tt.status)
		}
		if err := w.Handle(c.ctx, message(id, 3, "late")); !is(err, store.ErrClosed) {
			c.errorf("%s: Handle after Close: %v, want ErrClosed", tt.name, err)
		}
		if err := w.Line(c.ctx, store.Line{Stream: "stdout", N: 9}); !is(err, store.ErrClosed) {
			c.errorf("%s: Line after Close: %v, want ErrClosed", tt.name, err)
		}
		if err := w.Close(c.ctx); !is(err, store.ErrClosed) {
			c.errorf("%s: Close twice: %v, want ErrClosed", tt.name, err)
		}
	}
}

func resume(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_res", Protocol: "jsonl", Harness: "claude-code"})
	c.must(err, "Create")
	envs := sample("s_res")
	c.handleAll(w, envs[:4]) // session.started, a message, a delta, usage
	c.must(w.Line(c.ctx, store.Line{Stream: "stdout", N: 1, Data: []byte("x")}), "Line")
	c.must(w.Line(c.ctx, store.Line{Stream: "stderr", N: 2, Data: []byte("e")}), "Line")
	c.must(w.Close(c.ctx), "Close")
	if _, err := st.Resume(c.ctx, "nope"); !is(err, store.ErrNotFound) {
		c.errorf("Resume of an unknown session: %v, want ErrNotFound", err)
	}
	r, err := st.Resume(c.ctx, "s_res")
	c.must(err, "Resume of an interrupted session")
	if r.Session() != "s_res" || r.LastSeq() != 3 || r.Acked() != 3 || r.LastLine("stdout") != 1 || r.LastLine("stderr") != 2 {
		c.errorf("resumed %q at seq %d (acked %d), lines %d and %d; want s_res at 3 (3), 1 and 2",
			r.Session(), r.LastSeq(), r.Acked(), r.LastLine("stdout"), r.LastLine("stderr"))
	}
	sess, err := st.Session(c.ctx, "s_res")
	c.must(err, "Session")
	if !sess.Running() || !sess.EndedAt.IsZero() {
		c.errorf("a resumed session: status %q, endedAt %v; want running and zero", sess.Status, sess.EndedAt)
	}
	if _, err := c.h.Reopen(c.t, st).Resume(c.ctx, "s_res"); !is(err, store.ErrRunning) {
		c.errorf("Resume of a resumed session from another process: %v, want ErrRunning", err)
	}
	more := []agentstream.Envelope{
		{Seq: 4, Payload: &agentstream.Usage{Scope: "call", InputTokens: ptr[int64](10), OutputTokens: ptr[int64](1)}},
		{Seq: 5, Payload: &agentstream.SessionEnded{Status: "succeeded", Reason: "completion"}},
	}
	c.handleAll(r, more)
	c.must(r.Close(c.ctx), "Close")
	sess, err = st.Session(c.ctx, "s_res")
	c.must(err, "Session")
	if sess.Status != store.StatusSucceeded || sess.LastSeq != 5 || sess.Model != "claude-sonnet-5" || sess.Version != "2.1" {
		c.errorf("after resume: status %q, lastSeq %d, model %q, version %q", sess.Status, sess.LastSeq, sess.Model, sess.Version)
	}
	var folder agentstream.UsageFolder
	for _, e := range append(stored(envs[:4]), more...) {
		folder.Add(e.Payload)
	}
	if diff := cmp.Diff(folder.Recap(), sess.Usage); diff != "" {
		c.errorf("usage recap across the resume (-want +got):\n%s", diff)
	}
	if _, err := st.Resume(c.ctx, "s_res"); !is(err, store.ErrClosed) {
		c.errorf("Resume of a session that ended: %v, want ErrClosed", err)
	}
}

func eventWindows(c *check) {
	st := c.h.Open(c.t)
	c.fill(st, "a", 100)
	c.fill(st, "b", 10) // a neighbour
	tests := []struct {
		name string
		q    store.EventQuery
		want []int64
	}{
		{"default", store.EventQuery{}, seqRange(1, 100)},
		{"first page", store.EventQuery{Limit: 5}, seqRange(1, 5)},
		{"after", store.EventQuery{After: 95, Limit: 10}, seqRange(96, 100)},
		{"after the end", store.EventQuery{After: 100}, []int64{}},
		{"before", store.EventQuery{Before: 11, Limit: 3}, seqRange(8, 10)},
		{"before the start", store.EventQuery{Before: 3, Limit: 10}, seqRange(1, 2)},
		{"before 1", store.EventQuery{Before: 1, Limit: 10}, []int64{}},
		{"before past the end", store.EventQuery{Before: 1000, Limit: 2}, seqRange(99, 100)},
		{"tail", store.EventQuery{Tail: true, Limit: 4}, seqRange(97, 100)},
		{"tail longer than the session", store.EventQuery{Tail: true, Limit: 1000}, seqRange(1, 100)},
		{"types", store.EventQuery{Limit: 3, Types: []string{"thinking"}}, []int64{3, 6, 9}},
		{"types after", store.EventQuery{After: 90, Types: []string{"thinking"}}, []int64{93, 96, 99}},
		{"types before", store.EventQuery{Before: 10, Limit: 2, Types: []string{"thinking"}}, []int64{6, 9}},
		{"types tail", store.EventQuery{Tail: true, Limit: 2, Types: []string{"thinking", "nothing"}}, []int64{96, 99}},
		{"types none", store.EventQuery{Types: []string{"nothing"}}, []int64{}},
	}
	for _, tt := range tests {
		got, err := st.Events(c.ctx, "a", tt.q)
		c.must(err, tt.name)
		if diff := cmp.Diff(tt.want, seqs(got)); diff != "" {
			c.errorf("%s: seqs (-want +got):\n%s", tt.name, diff)
		}
		for _, e := range got {
			if e.Session != "a" {
				c.errorf("%s: an event of session %q", tt.name, e.Session)
			}
		}
	}
	big := c.h.Open(c.t)
	c.fill(big, "big", 1200)
	if got, err := big.Events(c.ctx, "big", store.EventQuery{}); err != nil || len(got) != 500 {
		c.errorf("the default limit: %d events, %v; want 500", len(got), err)
	}
	if _, err := st.Events(c.ctx, "nope", store.EventQuery{}); !is(err, store.ErrNotFound) {
		c.errorf("unknown session: %v, want ErrNotFound", err)
	}
}

func sessionQuery(c *check) {
	st := c.h.Open(c.t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var open store.Writer
	for i := range 7 {
		id := fmt.Sprint("s", i)
		w, err := st.Create(c.ctx, store.NewSession{ID: id, Harness: []string{"codex", "claude-code"}[i%2],
			StartedAt: base.Add(time.Duration(i/2) * time.Hour)}) // pairs share a start time
		c.must(err, "Create")
		c.handleAll(w, []agentstream.Envelope{{Seq: 1, Payload: &agentstream.SessionTitle{Title: fmt.Sprint("Title_", i, " 100%")}}})
		if i == 6 {
			c.must(w.Flush(c.ctx), "Flush")
			open = w
			continue
		}
		c.handleAll(w, []agentstream.Envelope{{Seq: 2, Payload: &agentstream.SessionEnded{Status: "succeeded"}}})
		c.must(w.Close(c.ctx), "Close")
	}
	defer open.Close(c.ctx)
	ids := func(q store.SessionQuery) []string {
		var out []string
		for range 100 {
			page, err := st.Sessions(c.ctx, q)
			c.must(err, "Sessions")
			if q.Limit > 0 && len(page.Sessions) > q.Limit {
				c.errorf("a page of %d sessions, limit %d", len(page.Sessions), q.Limit)
			}
			for _, s := range page.Sessions {
				out = append(out, s.ID)
			}
			if page.Next == "" {
				return out
			}
			q.Cursor = page.Next
		}
		c.fatalf("no end of pages")
		return nil
	}
	all := []string{"s6", "s5", "s4", "s3", "s2", "s1", "s0"}
	tests := []struct {
		name string
		q    store.SessionQuery
		want []string
	}{
		{"all", store.SessionQuery{}, all},
		{"all, pages of 1", store.SessionQuery{Limit: 1}, all},
		{"all, pages of 2", store.SessionQuery{Limit: 2}, all},
		{"all, pages of 3", store.SessionQuery{Limit: 3}, all},
		{"all, one full page", store.SessionQuery{Limit: 7}, all},
		{"harness", store.SessionQuery{Harness: "codex"}, []string{"s6", "s4", "s2", "s0"}},
		{"harness, pages of 1", store.SessionQuery{Harness: "codex", Limit: 1}, []string{"s6", "s4", "s2", "s0"}},
		{"status running", store.SessionQuery{Status: "running"}, []string{"s6"}},
		{"status succeeded", store.SessionQuery{Status: "succeeded", Limit: 4}, []string{"s5", "s4", "s3", "s2", "s1", "s0"}},
		{"title, any case", store.SessionQuery{Q: "tITLE_3"}, []string{"s3"}},
		{"title, wildcard characters literal", store.SessionQuery{Q: "_5 100%"}, []string{"s5"}},
		{"title, no match", store.SessionQuery{Q: "Title%5"}, nil},
		{"since", store.SessionQuery{Since: base.Add(2 * time.Hour)}, []string{"s6", "s5", "s4"}},
		{"everything", store.SessionQuery{Since: base.Add(time.Hour), Harness: "claude-code", Status: "succeeded", Q: "title"}, []string{"s5", "s3"}},
		{"id prefix", store.SessionQuery{IDPrefix: "s"}, all},
		{"id prefix, pages of 2", store.SessionQuery{IDPrefix: "s", Limit: 2}, all},
		{"id prefix, one", store.SessionQuery{IDPrefix: "s4"}, []string{"s4"}},
		{"id prefix, case", store.SessionQuery{IDPrefix: "S"}, nil},
		{"id prefix, underscore literal", store.SessionQuery{IDPrefix: "s_"}, nil},
		{"id prefix, percent literal", store.SessionQuery{IDPrefix: "%"}, nil},
		{"id prefix, longer than the ids", store.SessionQuery{IDPrefix: "s40"}, nil},
		{"id prefix and harness", store.SessionQuery{IDPrefix: "s", Harness: "claude-code"}, []string{"s5", "s3", "s1"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(tt.q)); diff != "" {
			c.errorf("%s: ids (-want +got):\n%s", tt.name, diff)
		}
	}
	page, err := st.Sessions(c.ctx, store.SessionQuery{Q: "nothing"})
	c.must(err, "Sessions")
	if page.Sessions == nil || page.Next != "" {
		c.errorf("an empty page: %#v, want no sessions (not nil) and no cursor", page)
	}
	for _, bad := range []string{"garbage", "1.", ".1", "x.y", "1.-1"} {
		if _, err := st.Sessions(c.ctx, store.SessionQuery{Cursor: bad}); !is(err, store.ErrBadCursor) {
			c.errorf("cursor %q: %v, want ErrBadCursor", bad, err)
		}
	}
}

func resolveID(c *check) {
	st := c.h.Open(c.t)
	for _, id := range []string{"s_01ABC", "s_01ABD", "s_7XY", "s_7"} {
		w, err := st.Create(c.ctx, store.NewSession{ID: id})
		c.must(err, "Create")
		c.must(w.Close(c.ctx), "Close")
	}
	for _, tt := range []struct{ in, want string }{
		{"s_01ABC", "s_01ABC"},
		{"s_01ABD", "s_01ABD"},
		{"s_01ABC"[:6] + "C", "s_01ABC"},
		{"01ABD", "s_01ABD"},
		{"s_7X", "s_7XY"},
		{"s_7", "s_7"}, // a whole id, though a prefix of another
		{"7X", "s_7XY"},
	} {
		got, err := store.ResolveID(c.ctx, st, tt.in)
		if err != nil || got != tt.want {
			c.errorf("ResolveID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"s_01AB", "01A", "s_0", "s"} {
		_, err := store.ResolveID(c.ctx, st, in)
		if !is(err, store.ErrAmbiguous) || !strings.Contains(err.Error(), "s_01ABC") || !strings.Contains(err.Error(), "s_01ABD") {
			c.errorf("ResolveID(%q): %v, want ErrAmbiguous naming s_01ABC and s_01ABD", in, err)
		}
	}
	for _, in := range []string{"", "s_02", "x", "S_01ABC", "s_01abc", "%", "s_01AB_"} {
		if got, err := store.ResolveID(c.ctx, st, in); !is(err, store.ErrNotFound) {
			c.errorf("ResolveID(%q) = %q, %v; want ErrNotFound", in, got, err)
		}
	}
}

func lines(c *check) {
	st := c.h.Open(c.t)
	w, err := st.Create(c.ctx, store.NewSession{ID: "l"})
	c.must(err, "Create")
	big := bytes.Repeat([]byte("y"), 100)
	sum := sha256.Sum256(big)
	ts := time.Date(2026, 5, 6, 7, 8, 9, 10_000_000, time.UTC)
	in := []store.Line{
		{Stream: "stdout", N: 1, Data: []byte(`{"a":1}`), TS: ts},
		{Stream: "stderr", N: 1, Data: []byte("oops\xff\x00")},
		{Stream: "stdout", N: 2, Data: []byte{}},
		{Stream: "stdout", N: 3, Data: big[:10], Size: 100, SHA256: sum[:]},
		{Stream: "stdout", N: 4, Data: big[:10], Size: 100},
	}
	for i := range 1500 { // past one page of Lines
		in = append(in, store.Line{Stream: "stderr", N: int64(i + 2), Data: fmt.Append(nil, i)})
	}
	for _, l := range in {
		c.must(w.Line(c.ctx, l), "Line")
	}
	c.must(w.Close(c.ctx), "Close")
	var got []store.Line
	c.must(st.Lines(c.ctx, "l", func(l store.Line) error { got = append(got, l); return nil }), "Lines")
	want := []store.Line{
		{Stream: "stdout", N: 1, Data: []byte(`{"a":1}`), Size: 7, TS: ts},
		{Stream: "stderr", N: 1, Data: []byte("oops\xff\x00"), Size: 6},
		{Stream: "stdout", N: 2, Data: []byte{}, Size: 0},
		{Stream: "stdout", N: 3, Data: big[:10], Size: 100, SHA256: sum[:]},
		{Stream: "stdout", N: 4, Data: big[:10], Size: 100},
	}
	for _, l := range in[5:] {
		l.Size = int64(len(l.Data))
		want = append(want, l)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		c.errorf("lines (-want +got):\n%s", diff)
	}
	l, err := st.Line(c.ctx, "l", "stdout", 3)
	c.must(err, "Line")
	if !l.Truncated() || l.Size != 100 || !bytes.Equal(l.SHA256, sum[:]) {
		c.errorf("Line(stdout, 3) = %+v, want its head, size 100 and SHA-256", l)
	}
	stop := fmt.Errorf("stop")
	n := 0
	if err := st.Lines(c.ctx, "l", func(store.Line) error { n++; return stop }); err != stop || n != 1 {
		c.errorf("Lines with fn failing: %v after %d lines, want fn's error after 1", err, n)
	}
	if _, err := st.Line(c.ctx, "l", "stdout", 5); !is(err, store.ErrNotFound) {
		c.errorf("a line not held: %v, want ErrNotFound", err)
	}
	if _, err := st.Line(c.ctx, "nope", "stdout", 1); !is(err, store.ErrNotFound) {
		c.errorf("a line of an unknown session: %v, want ErrNotFound", err)
	}
	if err := st.Lines(c.ctx, "nope", func(store.Line) error { return nil }); !is(err, store.ErrNotFound) {
		c.errorf("Lines of an unknown session: %v, want ErrNotFound", err)
	}
}

func follow(c *check) {
	st := c.h.Open(c.t)
	c.fill(st, "old", 3) // history: not published
	rec := &recorder{}
	ctx, cancel := withCancel(c)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, rec, 20*time.Millisecond) }()
	rec.waitReady(c, st)

	w, err := st.Create(c.ctx, store.NewSession{ID: "local"})
	c.must(err, "Create")
	envs := sample("local")
	c.handleAll(w, envs)
	c.must(w.Close(c.ctx), "Close")
	// Another process writes a session: found without its writer's help.
	other := c.h.Reopen(c.t, st)
	c.fill(other, "remote", 50)
	c.waitFor("both sessions' ends published", func() bool { return len(rec.ends()) >= 3 })
	var want []string
	for _, e := range envs {
		want = append(want, string(e.AppendJSON(nil)))
	}
	for i := int64(1); i <= 50; i++ {
		e := message("remote", i, fmt.Sprint("m", i))
		want = append(want, string(e.AppendJSON(nil)))
	}
	var got []string
	for _, e := range rec.events() {
		if e.Session == "ready" {
			continue
		}
		got = append(got, string(e.Data))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		c.errorf("published (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ready", "local", "remote"}, rec.ends()); diff != "" {
		c.errorf("ends (-want +got):\n%s", diff)
	}
	for _, e := range rec.events() {
		if e.Seq == 0 && e.Prev != 2 {
			c.errorf("the live delta has Prev %d, want 2 (the stored event before it)", e.Prev)
		}
	}
	cancel()
	if err := <-done; !is(err, ctx.Err()) {
		c.errorf("Follow returned %v after its context ended", err)
	}
}

func following(c *check) {
	st := c.h.Open(c.t)
	if st.Following() {
		c.errorf("Following before Follow runs")
	}
	rec := &recorder{}
	ctx, cancel := withCancel(c)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, rec, 10*time.Millisecond) }()
	c.waitFor("Following", st.Following)
	w, err := st.Create(c.ctx, store.NewSession{ID: "at_once"})
	c.must(err, "Create")
	delta := agentstream.Envelope{Session: "at_once", Payload: &agentstream.MessageDelta{Role: "assistant", Text: "first"}}
	c.must(w.Handle(c.ctx, delta), "Handle")
	if evs := rec.events(); len(evs) != 1 || evs[0].Session != "at_once" || evs[0].Type != "message.delta" {
		c.errorf("published when Handle returned: %+v, want the delta alone", evs)
	}
	c.must(w.Close(c.ctx), "Close")
	cancel()
	<-done
	if st.Following() {
		c.errorf("Following after Follow returned")
	}
}

func followStarting(c *check) {
	if c.h.FollowHook == nil {
		c.t.Skip("the harness has no hook in Follow")
	}
	st := c.h.Open(c.t)
	ctx, cancel := withCancel(c)
	defer cancel()
	// The hook runs in Follow's goroutine: it reports what fails, and
	// leaves stopping the test to this one.
	var running store.Writer
	hookErr := make(chan error, 1)
	c.h.FollowHook(func() {
		hookErr <- func() error {
			w, err := st.Create(c.ctx, store.NewSession{ID: "ended"})
			if err != nil {
				return err
			}
			for i := int64(1); i <= 3; i++ {
				if err := w.Handle(c.ctx, message("ended", i, fmt.Sprint("m", i))); err != nil {
					return err
				}
			}
			if err := w.Close(c.ctx); err != nil {
				return err
			}
			if running, err = st.Create(c.ctx, store.NewSession{ID: "open"}); err != nil {
				return err
			}
			delta := agentstream.Envelope{Session: "open", Payload: &agentstream.MessageDelta{Role: "assistant", Text: "t"}}
			for _, e := range []agentstream.Envelope{message("open", 1, "one"), delta, message("open", 2, "two")} {
				if err := running.Handle(c.ctx, e); err != nil {
					return err
				}
			}
			return running.Flush(c.ctx)
		}()
	})
	defer c.h.FollowHook(nil)
	rec := &recorder{}
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, rec, 10*time.Millisecond) }()
	c.must(<-hookErr, "writing while Follow starts")
	c.waitFor("the end of the session that ended", func() bool { return len(rec.ends()) > 0 })
	// A session another process writes next is found by polling: by then,
	// a second copy of the others would have come.
	c.fill(c.h.Reopen(c.t, st), "later", 1)
	c.waitFor("the end of the session another process wrote", func() bool { return slices.Contains(rec.ends(), "later") })
	var got []string
	for _, e := range rec.events() {
		got = append(got, fmt.Sprintf("%s:%d:%s", e.Session, e.Seq, e.Type))
	}
	want := []string{"ended:1:message", "ended:2:message", "ended:3:thinking",
		"open:1:message", "open:0:message.delta", "open:2:message", "later:1:message"}
	if diff := cmp.Diff(want, got); diff != "" {
		c.errorf("published (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ended", "later"}, rec.ends()); diff != "" {
		c.errorf("ends (-want +got):\n%s", diff)
	}
	c.must(running.Close(c.ctx), "Close")
	cancel()
	<-done
}

func concurrent(c *check) {
	st := c.h.Open(c.t)
	rec := &recorder{}
	ctx, cancel := withCancel(c)
	defer cancel()
	go st.Follow(ctx, rec, 10*time.Millisecond)
	const writers, events = 4, 300
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			id := fmt.Sprint("c", i)
			w, err := st.Create(c.ctx, store.NewSession{ID: id})
			if err != nil {
				c.errorf("Create: %v", err)
				return
			}
			for k := int64(1); k <= events; k++ {
				if err := w.Handle(c.ctx, message(id, k, "x")); err != nil {
					c.errorf("Handle: %v", err)
					break
				}
				if k%50 == 0 {
					_ = w.Line(c.ctx, store.Line{Stream: "stdout", N: k / 50, Data: []byte("l")})
				}
			}
			if err := w.Close(c.ctx); err != nil {
				c.errorf("Close: %v", err)
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for i := range 3 {
		rg.Go(func() {
			id := fmt.Sprint("c", i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				evs, err := st.Events(c.ctx, id, store.EventQuery{Tail: true, Limit: 50})
				if err != nil && !is(err, store.ErrNotFound) {
					c.errorf("Events: %v", err)
					return
				}
				for k := 1; k < len(evs); k++ {
					if evs[k].Seq != evs[k-1].Seq+1 {
						c.errorf("%s: seq %d after %d", id, evs[k].Seq, evs[k-1].Seq)
						return
					}
				}
				if _, err := st.Sessions(c.ctx, store.SessionQuery{Limit: 3}); err != nil {
					c.errorf("Sessions: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	for i := range writers {
		evs, err := st.Events(c.ctx, fmt.Sprint("c", i), store.EventQuery{Limit: events + 10})
		c.must(err, "Events")
		if diff := cmp.Diff(seqRange(1, events), seqs(evs)); diff != "" {
			c.errorf("c%d seqs (-want +got):\n%s", i, diff)
		}
	}
}

func replaceEvents(c *check) {
	st := c.h.Open(c.t)
	r, ok := st.(Replacer)
	if !ok {
		c.t.Skip("the store has no ReplaceEvents")
	}
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_rep", Harness: "claude-code"})
	c.must(err, "Create")
	envs := stored(sample("s_rep"))
	c.handleAll(w, envs)
	if err := r.ReplaceEvents(c.ctx, "s_rep", envs[:2]); !is(err, store.ErrRunning) {
		c.errorf("ReplaceEvents of a running session: %v, want ErrRunning", err)
	}
	c.must(w.Close(c.ctx), "Close")
	fresh := []agentstream.Envelope{
		{Session: "s_rep", Seq: 1, Harness: "claude-code", Payload: &agentstream.SessionStarted{Harness: "claude-code", Model: "opus-9"}},
		{Session: "s_rep", Seq: 2, Harness: "claude-code", Payload: &agentstream.SessionEnded{Status: "succeeded", Reason: "completion"}},
	}
	if err := r.ReplaceEvents(c.ctx, "s_rep", []agentstream.Envelope{fresh[1]}); !is(err, store.ErrSeq) {
		c.errorf("ReplaceEvents not from seq 1: %v, want ErrSeq", err)
	}
	c.must(r.ReplaceEvents(c.ctx, "s_rep", fresh), "ReplaceEvents")
	if diff := cmp.Diff(jsonOf(fresh), c.all(st, "s_rep")); diff != "" {
		c.errorf("stored (-want +got):\n%s", diff)
	}
	sess, err := st.Session(c.ctx, "s_rep")
	c.must(err, "Session")
	if sess.LastSeq != 2 || sess.Model != "opus-9" || sess.Title != "" || sess.Status != "succeeded" || sess.Reason != "completion" {
		c.errorf("record after ReplaceEvents: %+v", sess)
	}
	if err := r.ReplaceEvents(c.ctx, "nope", fresh); !is(err, store.ErrNotFound) {
		c.errorf("ReplaceEvents of an unknown session: %v, want ErrNotFound", err)
	}
}

func deleteSession(c *check) {
	st := c.h.Open(c.t)
	d, ok := st.(Deleter)
	if !ok {
		c.t.Skip("the store has no DeleteSession")
	}
	for _, id := range []string{"s_del", "s_keep"} {
		w, err := st.Create(c.ctx, store.NewSession{ID: id, Harness: "claude-code"})
		c.must(err, "Create")
		c.handleAll(w, stored(sample(id)))
		c.must(w.Line(c.ctx, store.Line{Stream: store.Stdout, N: 1, Data: []byte(id)}), "Line")
		if id == "s_del" {
			c.must(w.Flush(c.ctx), "Flush")
			if err := d.DeleteSession(c.ctx, id); !is(err, store.ErrRunning) {
				c.errorf("DeleteSession of a running session: %v, want ErrRunning", err)
			}
		}
		c.must(w.Close(c.ctx), "Close")
	}
	keep := c.all(st, "s_keep")
	c.must(d.DeleteSession(c.ctx, "s_del"), "DeleteSession")
	if _, err := st.Session(c.ctx, "s_del"); !is(err, store.ErrNotFound) {
		c.errorf("Session after DeleteSession: %v, want ErrNotFound", err)
	}
	if _, err := st.Line(c.ctx, "s_del", store.Stdout, 1); !is(err, store.ErrNotFound) {
		c.errorf("Line after DeleteSession: %v, want ErrNotFound", err)
	}
	if err := d.DeleteSession(c.ctx, "s_del"); !is(err, store.ErrNotFound) {
		c.errorf("DeleteSession again: %v, want ErrNotFound", err)
	}
	if diff := cmp.Diff(keep, c.all(st, "s_keep")); diff != "" {
		c.errorf("the other session's events changed (-want +got):\n%s", diff)
	}
	if l, err := st.Line(c.ctx, "s_keep", store.Stdout, 1); err != nil || string(l.Data) != "s_keep" {
		c.errorf("the other session's line: %q, %v", l.Data, err)
	}
	// The id is free again, and the new session holds nothing of the old.
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_del", Harness: "claude-code"})
	c.must(err, "Create again")
	c.must(w.Close(c.ctx), "Close")
	if got := c.all(st, "s_del"); len(got) != 0 {
		c.errorf("the new session holds %d events of the old one", len(got))
	}
	if _, err := st.Line(c.ctx, "s_del", store.Stdout, 1); !is(err, store.ErrNotFound) {
		c.errorf("the new session holds the old one's line: %v", err)
	}
}

func setProtocol(c *check) {
	st := c.h.Open(c.t)
	p, ok := st.(ProtocolSetter)
	if !ok {
		c.t.Skip("the store has no SetProtocol")
	}
	w, err := st.Create(c.ctx, store.NewSession{ID: "s_proto", Protocol: "auto"})
	c.must(err, "Create")
	c.must(p.SetProtocol(c.ctx, "s_proto", "codex-json"), "SetProtocol")
	c.must(w.Close(c.ctx), "Close")
	sess, err := st.Session(c.ctx, "s_proto")
	c.must(err, "Session")
	if sess.Protocol != "codex-json" {
		c.errorf("protocol %q, want codex-json", sess.Protocol)
	}
	if err := p.SetProtocol(c.ctx, "nope", "x"); !is(err, store.ErrNotFound) {
		c.errorf("SetProtocol of an unknown session: %v, want ErrNotFound", err)
	}
}

func keys(c *check) {
	st := c.h.Open(c.t)
	k, ok := st.(store.Keys)
	if !ok {
		c.t.Skip("the store keeps no keys")
	}
	a, err := k.Key(c.ctx, store.RedactKey)
	c.must(err, "Key")
	if len(a) != store.KeySize {
		c.errorf("a key of %d bytes, want %d", len(a), store.KeySize)
	}
	again, err := k.Key(c.ctx, store.RedactKey)
	c.must(err, "Key")
	other, err := c.h.Reopen(c.t, st).(store.Keys).Key(c.ctx, store.RedactKey)
	c.must(err, "Key of another process")
	if string(again) != string(a) || string(other) != string(a) {
		c.errorf("the key changed: %x, then %x, and %x for another process", a, again, other)
	}
	b, err := k.Key(c.ctx, "another")
	c.must(err, "Key")
	if string(b) == string(a) {
		c.errorf("two names have the same key")
	}
	if fresh, err := c.h.Open(c.t).(store.Keys).Key(c.ctx, store.RedactKey); err == nil && string(fresh) == string(a) {
		c.errorf("two stores have the same key")
	}
}

// wordsDecoder is the dialect of the repair rule: a line "say TEXT" is an
// assistant message, "twice TEXT" two of them, "delta TEXT" a live delta
// only, anything else nothing.
type wordsDecoder struct{}

func (wordsDecoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	word, text, _ := strings.Cut(string(line), " ")
	switch word {
	case "say":
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text}))
	case "twice":
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text + " (1)"}),
			agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text + " (2)"}))
	case "delta":
		dst = append(dst, agentstream.E(&agentstream.MessageDelta{Role: agentstream.RoleAssistant, Text: text}))
	}
	return dst
}

func (wordsDecoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

func wordsDialects(protocol string) (store.Dialect, bool) {
	if protocol != "words" {
		return store.Dialect{}, false
	}
	return store.Dialect{New: func() agentstream.Decoder { return wordsDecoder{} }}, true
}

// normalizeWords returns the stored envelopes the words dialect makes of
// lines, numbered from 1.
func normalizeWords(id string, lines []string) []agentstream.Envelope {
	n := agentstream.NewNormalizer(wordsDecoder{}, agentstream.NormalizerConfig{Session: id, Harness: "words"})
	var out []agentstream.Envelope
	for i, l := range lines {
		for _, e := range n.Line(nil, agentstream.Line{N: int64(i + 1), Bytes: []byte(l), Size: int64(len(l))}, time.Time{}) {
			if !agentstream.IsLive(e.Type()) {
				out = append(out, e)
			}
		}
	}
	return out
}

func repairRule(c *check) {
	if c.h.Repair == nil {
		c.t.Skip("the harness opens no repairing store")
	}
	lines := []string{"say one", "twice two", "noise", "say three", "twice four", "say five", "delta six", "say seven", "delta eight"}
	all := normalizeWords("s_repair", lines)
	for _, tc := range []struct {
		name string
		// stored is how many of the events are stored, lines how many
		// lines (all of them have their events when stored is len(all)).
		stored, lines int
	}{
		{"no event stored", 0, 4},
		{"events of a line cut in two", 4, 6},
		{"lines after the last event", 3, len(lines)},
		{"all stored", len(all), len(lines)},
	} {
		id := "s_repair_" + strings.ReplaceAll(tc.name, " ", "_")
		want := normalizeWords(id, lines[:tc.lines])
		st := c.h.Open(c.t)
		w, err := st.Create(c.ctx, store.NewSession{ID: id, Protocol: "words", Harness: "words"})
		c.must(err, "Create")
		for i, l := range lines[:tc.lines] {
			c.must(w.Line(c.ctx, store.Line{Stream: store.Stdout, N: int64(i + 1), Data: []byte(l), Size: int64(len(l))}), "Line")
		}
		c.handleAll(w, normalizeWords(id, lines)[:min(tc.stored, len(want))])
		c.must(w.Flush(c.ctx), "Flush")
		// The writer's process dies here: another Store takes the session
		// over and repairs it as it opens.
		other := c.h.Repair(c.t, st, wordsDialects)
		if diff := cmp.Diff(jsonOf(want), c.all(other, id)); diff != "" {
			c.errorf("%s: the events after the repair (-want +got):\n%s", tc.name, diff)
		}
		sess, err := other.Session(c.ctx, id)
		c.must(err, "Session")
		if sess.Status != store.StatusInterrupted || sess.LastSeq != int64(len(want)) {
			c.errorf("%s: status %s, last seq %d after the repair, want interrupted and %d", tc.name, sess.Status, sess.LastSeq, len(want))
		}
		// Repaired once: another repairing Store finds nothing to do, and
		// the session resumes where it stands.
		again := c.h.Repair(c.t, other, wordsDialects)
		if got := c.all(again, id); len(got) != len(want) {
			c.errorf("%s: %d events after a second repair, want %d", tc.name, len(got), len(want))
		}
		rw, err := again.Resume(c.ctx, id)
		c.must(err, "Resume after the repair")
		if rw.LastSeq() != int64(len(want)) || rw.LastLine(store.Stdout) != int64(tc.lines) {
			c.errorf("%s: resumed at seq %d, line %d, want %d and %d", tc.name, rw.LastSeq(), rw.LastLine(store.Stdout), len(want), tc.lines)
		}
		c.must(rw.Close(c.ctx), "Close")
		_ = w.Close(c.ctx) // the stale writer: its session was taken over
	}
}
