package runner

import (
	"syscall"
	"time"

	"github.com/agentstream/agentstream"
)

// A Hook drives a run from inside, for a conversation that outlives one
// prompt: it writes what goes on the harness's stdin (the messages, the
// answers to the harness's requests), reads what the harness prints for
// what concerns it, and writes events of its own among the harness's. The
// runner keeps supervising the process (its group, the timeouts, the
// output) as for any run.
//
// With a Hook, the runner sends nothing on stdin by itself (Runner.Prompt
// only goes on the command line of a protocol that takes it as an
// argument), records no prompt, never closes stdin at a session.ended, and
// never stops a harness for lingering after it reported its end: the hook
// decides when the conversation is over. The normalizer counts turns only at
// turn.started events (agentstream.NormalizerConfig.ExplicitTurns), which
// the hook writes for dialects that do not.
//
// Every method is called from the goroutine that runs the session, one at a
// time, and must not block: a hook that waits for something (a person's
// answer) arranges to be called again, through Runner.Calls or Conn.After.
// The Conn is valid until End returns.
type Hook interface {
	// Start is called once the harness started, before its output is read.
	Start(c *Conn)
	// Event is called with each event decoded from a stdout line, before
	// it becomes an envelope. It returns the event to record (ev, or a
	// changed copy) and whether to record it at all. Events it emits are
	// recorded before ev.
	Event(c *Conn, ev agentstream.Event) (agentstream.Event, bool)
	// Line is called once the events of a stdout line were handled, with
	// the line (nil for a line over the soft limit, which was not kept).
	// It must not retain line.
	Line(c *Conn, line []byte)
	// End is called once the harness and its output ended, after the
	// decoder's last events and the title, and before the runner writes the
	// session.ended it owes: the hook's last chance to write events. A
	// session.ended it emits counts as the harness's report.
	End(c *Conn, e Ending)
}

// Ending is how the harness ended, as End sees it.
type Ending struct {
	// Exited is true when the harness exited by itself: nobody signalled it.
	Exited bool
	// ExitCode is its exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal is the signal that ended it, or 0.
	Signal syscall.Signal
	// StopReason and StopDetail say why the runner stopped it, when it did
	// (an agentstream.Reason constant, or "" when the hook stopped it with
	// no reason).
	StopReason, StopDetail string
	// Completed is true when the harness reported the end of its work
	// (a session.ended) and did nothing after.
	Completed bool
}

// Conn is the running harness as a Hook sees it. Its methods belong to the
// goroutine that runs the session: call them only from the hook's methods,
// from functions sent on Runner.Calls, or from functions given to After.
type Conn struct {
	s *session
}

// Write queues b for the harness's stdin; it never blocks. It does nothing
// when the harness has no stdin, or once it was closed. b must not be
// modified afterwards.
func (c *Conn) Write(b []byte) {
	if c.s.in != nil {
		c.s.in.send(b)
	}
}

// CloseInput closes the harness's stdin once what was queued is written.
func (c *Conn) CloseInput() { c.s.closeStdin() }

// Emit records an event the hook writes itself (source null), now, after
// the events recorded so far. Before the protocol of an "auto" run is known,
// the event is held and recorded, with its time, ahead of the first lines.
func (c *Conn) Emit(p agentstream.Payload) { c.s.hookEmit(agentstream.E(p), c.s.now()) }

// Now returns the time the session stamps envelopes with.
func (c *Conn) Now() time.Time { return c.s.now() }

// Turn returns the turn of the latest turn.started recorded.
func (c *Conn) Turn() int64 {
	if c.s.norm == nil {
		return c.s.r.Turn
	}
	return c.s.norm.Turn()
}

// LastSeq returns the sequence number of the last stored envelope.
func (c *Conn) LastSeq() int64 {
	if c.s.norm == nil {
		return c.s.r.LastSeq
	}
	return c.s.norm.LastSeq()
}

// Protocol returns the protocol the stream is read with: the detected one
// for "auto", once it is known.
func (c *Conn) Protocol() string { return c.s.proto.Name }

// HarnessSession returns the harness's own session id, once a
// session.started named it.
func (c *Conn) HarnessSession() string { return c.s.harnessSession }

// Stop stops the harness: stdin closes, SIGTERM goes to its group, and
// SIGKILL follows after the grace period. reason (an agentstream.Reason
// constant) and detail say why, for the session.ended the runner writes when
// the harness did not report its end; an empty reason says the hook ended a
// harness it was done with. The first stop wins.
func (c *Conn) Stop(reason, detail string) { c.s.stop(reason, detail) }

// Running reports whether the harness process still runs.
func (c *Conn) Running() bool { return c.s.running }

// Waiting tells the runner whether the harness's silence is expected: while
// it is (the conversation waits for a message or for an answer), the idle
// timeout does not count; it counts again from the moment it is not.
func (c *Conn) Waiting(w bool) {
	if c.s.waiting && !w {
		c.s.activity.Store(time.Since(c.s.started).Nanoseconds())
	}
	c.s.waiting = w
}

// After calls f on the session's goroutine once d has passed, unless the
// returned function was called first or the run ended. The returned function
// reports whether it stopped the call.
func (c *Conn) After(d time.Duration, f func()) (stop func() bool) {
	s := c.s
	t := &hookTimer{f: f}
	t.t = time.AfterFunc(d, func() {
		select {
		case s.timers <- t:
		case <-s.done:
		}
	})
	return func() bool {
		if t.stopped || t.fired {
			return false
		}
		t.stopped = true
		t.t.Stop()
		return true
	}
}

// hookTimer is a call of After. Its flags belong to the session's goroutine.
type hookTimer struct {
	t       *time.Timer
	f       func()
	stopped bool
	fired   bool
}

// hookEmit records an event of the hook, or holds it until the protocol is
// known.
func (s *session) hookEmit(ev agentstream.Event, at time.Time) {
	if s.norm == nil {
		s.held = append(s.held, heldEvent{ev: ev, at: at})
		return
	}
	s.add(ev, at)
}

// heldEvent is an event a hook wrote before the protocol was known.
type heldEvent struct {
	ev agentstream.Event
	at time.Time
}
