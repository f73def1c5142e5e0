//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/workload"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// TestRunCrashRepair kills `agentstream run` with SIGKILL at random
// moments while it records a long Claude session, and reopens the store
// after each kill: without the adapters (no repair) stored lines lack
// their events, as the writer commits lines before the events made of
// them; opened as the command opens it, every stored line has its
// events, exactly once, with a dense seq: the events are what normalizing
// the stored lines gives.
func TestRunCrashRepair(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills the command")
	}
	dir := t.TempDir()
	input := filepath.Join(dir, "claude.jsonl")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := workload.Claude(bw, 64<<20, 4); err != nil {
		t.Fatal(err)
	}
	bw.Flush()
	f.Close()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	ctx := context.Background()
	missingBefore := 0
	for round := range 6 {
		db := filepath.Join(dir, fmt.Sprintf("crash%d.db", round))
		cmd := exec.Command(binary, "run", "--db", db, "--quiet", "--protocol", "claude-json", "--", "sh", "-c", "cat "+input)
		cmd.Env = append(os.Environ(), "AGENTSTREAM_DB="+db)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(200+r.IntN(1200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		// Opened without the adapters: marked, not repaired.
		raw, err := sqlite.Open(db)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		page, err := raw.Sessions(ctx, store.SessionQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Sessions) == 0 {
			t.Logf("round %d: killed before the session was created", round)
			raw.Close()
			continue
		}
		id := page.Sessions[0].ID
		lines, events := storedSession(t, raw, id)
		// The events the stored lines make that are not stored.
		before := len(normalizeLines(id, lines, len(lines))) - len(events)
		missingBefore += before
		raw.Close()

		// Opened as the command opens it: repaired.
		st, _, err := openStore(ctx, &env{getenv: func(string) string { return "" }}, db)
		if err != nil {
			t.Fatal(err)
		}
		sess, err := st.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		lines, events = storedSession(t, st, id)
		want := normalizeLines(id, lines, len(lines))
		// A live session shapes its turns and writes events of its own
		// (states, the messages it sent); what the lines themselves give
		// must all be there, once each.
		if diff := cmp.Diff(sourcedKeys(want), sourcedKeys(events)); diff != "" {
			t.Errorf("round %d: the stored events are not those of the stored lines (-want +got):\n%s", round, diff)
		}
		for i, e := range events {
			if e.Seq != int64(i+1) {
				t.Fatalf("round %d: seq %d at %d", round, e.Seq, i+1)
			}
		}
		if sess.LastSeq != int64(len(events)) || sess.Status != store.StatusInterrupted && sess.Status != store.StatusSucceeded {
			t.Errorf("round %d: session %s with last seq %d, %d events", round, sess.Status, sess.LastSeq, len(events))
		}
		t.Logf("round %d: %s, %d lines stored, %d of their events missing before the repair, %d events after", round, sess.Status, len(lines), before, len(events))
		st.Close()
	}
	t.Logf("%d events missing before the repairs", missingBefore)
}

// storedSession returns a session's native lines and stored events.
func storedSession(t *testing.T, st store.Store, id string) ([]store.Line, []agentstream.Envelope) {
	t.Helper()
	ctx := context.Background()
	var lines []store.Line
	if err := st.Lines(ctx, id, func(l store.Line) error {
		l.Data = append([]byte(nil), l.Data...)
		lines = append(lines, l)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var envs []agentstream.Envelope
	var after int64
	for {
		evs, err := st.Events(ctx, id, store.EventQuery{After: after, Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			e, err := ev.Envelope()
			if err != nil {
				t.Fatal(err)
			}
			envs = append(envs, e)
			after = ev.Seq
		}
		if len(evs) < 5000 {
			return lines, envs
		}
	}
}

// normalizeLines returns the stored events Claude's adapter makes of the
// first n lines, as a run writes them (no prompt was sent).
func normalizeLines(id string, lines []store.Line, n int) []agentstream.Envelope {
	a, _ := adapter.Lookup("claude-json")
	norm := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	var out []agentstream.Envelope
	for _, l := range lines[:n] {
		for _, e := range norm.Line(nil, store.AgentLine(l), time.Time{}) {
			if !agentstream.IsLive(e.Type()) {
				out = append(out, e)
			}
		}
	}
	return out
}

// sourcedKeys names each envelope made of a native line, but the turn
// marks, by its source, type and payload.
func sourcedKeys(envs []agentstream.Envelope) []string {
	var out []string
	for _, e := range envs {
		switch e.Type() {
		case agentstream.TypeTurnStarted, agentstream.TypeTurnEnded:
			continue
		}
		if e.Source != nil {
			out = append(out, fmt.Sprintf("%s:%d %s %s", e.Source.Stream, e.Source.Line, e.Type(), e.Payload.AppendJSON(nil)))
		}
	}
	return out
}
