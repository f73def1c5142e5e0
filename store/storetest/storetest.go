// Package storetest is the conformance suite every session store runs, in
// the spirit of testing/slogtest: each rule of the store.Store and
// store.Writer contracts is a named check, run as a subtest of that name,
// and each failure starts with the name of the rule it broke. Rules lists
// them.
//
// A store's test calls Run with a Harness that opens empty stores, and
// reopens one as another process would (the rules about what other
// processes see, and about a writer whose process is gone, need that).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// Store is what the suite needs of a store: the store.Store interface and
// the live feed of what it and other processes commit.
type Store interface {
	store.Store
	// Follow publishes to pub what is committed from now on, by this Store's
	// writers (live deltas included) and by other processes (stored events
	// only), until ctx is done; see sqlite.Store.Follow.
	Follow(ctx context.Context, pub store.Publisher, interval time.Duration) error
	// Following reports whether a Follow runs, so that what the writers
	// hand over from then on reaches its publisher.
	Following() bool
}

// Replacer is a Store that can replace a stopped session's events (a
// re-normalization); the suite checks it when the store has it.
type Replacer interface {
	ReplaceEvents(ctx context.Context, id string, envs []agentstream.Envelope) error
}

// ProtocolSetter is a Store that records a session's protocol after
// creation; the suite checks it when the store has it.
// Deleter is a Store that can remove a session (import --local replaces a
// session so).
type Deleter interface {
	DeleteSession(ctx context.Context, id string) error
}

type ProtocolSetter interface {
	SetProtocol(ctx context.Context, id, protocol string) error
}

// Harness makes the stores the suite runs on. Every store it returns is
// closed by the harness at the end of the test that asked for it.
type Harness struct {
	// Open returns an empty store.
	Open func(t *testing.T) Store
	// Reopen returns another Store over the same data as st, as another
	// process opening it would.
	Reopen func(t *testing.T, st Store) Store
	// Takeover returns another Store over the same data as st that
	// counts the writers of every other Store as gone (as if their
	// heartbeat were stale), so that it may resume their sessions while
	// they still run.
	Takeover func(t *testing.T, st Store) Store
	// Repair returns another Store over the same data as st, as Takeover
	// does, opened with dialects (Options.Dialects of either store), so
	// that its Open repairs the sessions whose writer it counts as gone.
	// Without it, the repair rule is skipped.
	Repair func(t *testing.T, st Store, dialects store.Dialects) Store
	// FollowHook sets what Follow runs once it has read where the sessions
	// stand, before it looks at the Store's own writers (nil: nothing).
	// Without it, the follow-starting rule is skipped.
	FollowHook func(h func())
}

// A Rule is one check of the suite.
type Rule struct {
	// Name is the subtest's name and the prefix of its failures.
	Name string
	// Doc says what holds.
	Doc string
	run func(c *check)
}

// check is one rule running on one test.
type check struct {
	t    *testing.T
	h    Harness
	name string
	ctx  context.Context
}

func (c *check) errorf(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("%s: "+format, append([]any{c.name}, args...)...)
}

func (c *check) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s: "+format, append([]any{c.name}, args...)...)
}

// must stops the rule on an error the rule does not check.
func (c *check) must(err error, what string) {
	c.t.Helper()
	if err != nil {
		c.fatalf("%s: %v", what, err)
	}
}

// Run runs every rule on stores from h, each as a subtest named by the
// rule.
func Run(t *testing.T, h Harness) {
	for _, r := range Rules() {
		t.Run(r.Name, func(t *testing.T) {
			r.run(&check{t: t, h: h, name: r.Name, ctx: context.Background()})
		})
	}
}

// Rules returns the rules of the suite, in the order Run runs them.
func Rules() []Rule {
	return []Rule{
		{"round-trip", "a stored event reads back byte for byte as Envelope.AppendJSON wrote it; live deltas are not stored", roundTrip},
		{"record", "the session record holds what NewSession gave and what the events said: harness, version, model, title, cwd, command, parent, labels, reason, error, last seq, usage recap", record},
		{"title-sources", "a title taken from the first prompt (session.title with source prompt) never replaces the harness's own, and the harness's replaces it", titleSources},
		{"create", "Create gives a new id when none is given, and refuses an invalid id and one that exists", create},
		{"ack", "Acked never passes LastSeq; after Flush, Acked is LastSeq and another process sees every event handed over", ack},
		{"seq", "a stored event with seq 0 gets LastSeq()+1; a seq past LastSeq()+1 is ErrSeq and leaves the writer usable", seq},
		{"replay-same", "an event handed over again with the same seq and body is a no-op: not stored twice, not published twice", replaySame},
		{"replay-conflict", "an event handed over again with another body is ErrConflict; the stored event stays and the writer stays usable", replayConflict},
		{"replay-resumed", "a writer resumed after a crash can be handed again the events and lines already stored, and goes on with a dense seq and no duplicate", replayResumed},
		{"line-replay", "a line at or below its stream's last line is a no-op when the store holds the same bytes or not at all, and ErrConflict with other bytes", lineReplay},
		{"stale-writer", "a writer whose session another Store took over fails with a sticky ErrConflict when it commits something else at a stored key, and skips what is the same", staleWriter},
		{"close", "Close sets the status of the latest session.ended (failed for a status that is not final), else interrupted, and EndedAt; the writer then returns ErrClosed", closeRule},
		{"resume", "Resume continues an interrupted session where it stands (LastSeq, LastLine, usage recap); it returns ErrRunning, ErrClosed and ErrNotFound as the contract says", resume},
		{"event-windows", "Events pages both ways: After, Before, Tail, Limit and Types, in ascending seq, never crossing into another session; ErrNotFound for an unknown session", eventWindows},
		{"session-query", "Sessions pages newest first through Cursor, filtered by Status, Harness, Q (a substring of the title, ASCII case folded, wildcards literal), Since and IDPrefix (byte for byte); ErrBadCursor for a cursor the store did not make", sessionQuery},
		{"resolve-id", "store.ResolveID takes a whole id, else a unique prefix of one (with or without s_); ErrNotFound for none, ErrAmbiguous naming them for several", resolveID},
		{"lines", "native lines read back in the order kept, whole or as head, size and SHA-256, any bytes; Line is ErrNotFound for a line not held", lines},
		{"follow", "Follow publishes in commit order what this Store's writers commit (live deltas in their place) and what another process commits, and calls End when a session's writer closes; what existed before is not published", follow},
		{"following", "Following is false until Follow runs and after it returns; while it is true, a live delta handed to a writer with nothing buffered reaches the publisher before Handle returns", following},
		{"follow-starting", "sessions written while Follow starts, one that ends and one that goes on, reach the publisher once: each stored event, the live delta and the end", followStarting},
		{"concurrent", "writers of several sessions and readers run at once; every session ends with a dense seq", concurrent},
		{"replace-events", "ReplaceEvents replaces a stopped session's events and its record, and refuses a running session", replaceEvents},
		{"delete-session", "DeleteSession removes a stopped session with its events and lines, leaves the others whole, frees its id, and refuses a running session", deleteSession},
		{"set-protocol", "SetProtocol records a session's protocol, and is ErrNotFound for an unknown session", setProtocol},
		{"repair", "a session whose writer died with native lines stored before their events gets, when a repairing store opens, the events of those lines: seq dense, each line's events exactly once, then never again", repairRule},
		{"tokens", "a credential reads back by the hash of its secret and in the list as it was stored (times to the millisecond); names are unique among tokens not revoked, ids and hashes among all; revoking by id or name keeps the first revocation time; TouchToken records the last use", tokens},
		{"search", "Search finds the events whose message, thinking, tool input and output or title hold every word, phrase and prefix of the query, without case, latest first (the session created last first, then its last events first), filtered by harness, model, status, project and time; a bad query is ErrBadQuery; re-normalized events replace what is found", searchRule},
		{"search-replay", "an event committed again by a stale writer, the same, is found once", searchReplay},
		{"keys", "a key is KeySize bytes made on first use, the same on every call and for every process, another for another name or another store", keys},
	}
}

func ptr[T any](v T) *T { return &v }

// sample is one session's events covering the envelope's optional parts,
// with a live delta among them.
func sample(session string) []agentstream.Envelope {
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
			Payload: &agentstream.SessionEnded{Status: "failed", StopReason: "end_turn", Reason: "exit", Error: "exit status 3"},
			Source:  &agentstream.Source{Stream: "stdout", Line: 4}},
	}
}

// stored returns the stored events of envs (live deltas left out).
func stored(envs []agentstream.Envelope) []agentstream.Envelope {
	var out []agentstream.Envelope
	for _, e := range envs {
		if !agentstream.IsLive(e.Type()) {
			out = append(out, e)
		}
	}
	return out
}

// message is the stored event seq of a session of messages.
func message(session string, seq int64, text string) agentstream.Envelope {
	var p agentstream.Payload = &agentstream.Message{Role: "assistant", Text: text}
	if seq%3 == 0 {
		p = &agentstream.Thinking{Text: text}
	}
	return agentstream.Envelope{Session: session, Seq: seq, Turn: 1, Harness: "jsonl",
		TS: time.UnixMilli(1_764_000_000_000 + seq).UTC(), Payload: p}
}

func (c *check) handleAll(w store.Writer, envs []agentstream.Envelope) {
	c.t.Helper()
	for _, e := range envs {
		if err := w.Handle(c.ctx, e); err != nil {
			c.fatalf("Handle seq %d: %v", e.Seq, err)
		}
	}
}

// fill writes n messages to a new session and closes it.
func (c *check) fill(st Store, id string, n int) {
	c.t.Helper()
	w, err := st.Create(c.ctx, store.NewSession{ID: id, Harness: "jsonl"})
	c.must(err, "Create")
	for i := int64(1); i <= int64(n); i++ {
		c.must(w.Handle(c.ctx, message(id, i, fmt.Sprint("m", i))), "Handle")
	}
	c.must(w.Close(c.ctx), "Close")
}

// all returns every stored event of a session, as JSON.
func (c *check) all(st store.Store, id string) []string {
	c.t.Helper()
	var out []string
	var after int64
	for {
		evs, err := st.Events(c.ctx, id, store.EventQuery{After: after, Limit: 1000})
		c.must(err, "Events")
		for _, ev := range evs {
			out = append(out, string(ev.Data))
			after = ev.Seq
		}
		if len(evs) < 1000 {
			return out
		}
	}
}

func jsonOf(envs []agentstream.Envelope) []string {
	out := []string{}
	for _, e := range envs {
		out = append(out, string(e.AppendJSON(nil)))
	}
	return out
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

// waitFor waits up to ten seconds for cond.
func (c *check) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.fatalf("%s: not in 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func is(err, target error) bool { return errors.Is(err, target) }
