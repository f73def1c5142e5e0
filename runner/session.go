package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// detectWait is how long "auto" waits, after the first non-blank line of
// stdout, for adapter.DetectLines of them before it decides on what it has.
// Before that first line it waits as long as the harness runs: harnesses
// such as Claude Code and Copilot print nothing for more than a second.
const detectWait = 500 * time.Millisecond

// maxPending bounds the lines held while the protocol is being detected.
const maxPending = 1000

// session is one run. Everything in it belongs to the goroutine running
// run, except activity, which the stdout reader updates.
type session struct {
	r      *Runner
	id     string
	args   []string
	proto  agentstream.Protocol
	auto   bool
	newDec func() agentstream.Decoder
	now    func() time.Time
	grace  time.Duration
	acp    *acpClient

	c        *child
	in       *stdinWriter
	ctx      context.Context // for the handler: never cancelled
	started  time.Time
	activity atomic.Int64 // time of the last stdout read, as nanoseconds since started

	norm         *agentstream.Normalizer
	envs, added  []agentstream.Envelope
	pending      []pendingLine
	pendingBytes int
	nonBlank     int
	promptAt     time.Time

	idle, deadline, kill, drain, detect, linger timer

	folder         agentstream.UsageFolder
	lastEnded      *agentstream.SessionEnded
	workAfterEnd   bool
	harnessSession string
	endedLines     int  // session.ended events seen, to tell whether a line gave one
	followed       int  // follow-up messages sent
	turnDone       bool // the harness reported the end of a turn the runner must answer

	stopped    bool   // the runner signalled the harness
	stopReason string // why, when it was not to end a finished harness
	stopDetail string
	handlerErr error

	exit    exitStatus
	running bool
	res     Result

	hook    Hook
	conn    *Conn
	held    []heldEvent     // hook events written before the protocol was known
	timers  chan *hookTimer // calls of Conn.After that are due
	done    chan struct{}   // closed when the session stops taking calls
	waiting bool            // the hook expects the harness to be silent
}

// pendingLine is a line read before the protocol was known.
type pendingLine struct {
	stderr bool
	line   agentstream.Line
	at     time.Time
}

// lineMsg is what a reader goroutine sends: a line, or the news that the
// stream ended (ok false).
type lineMsg struct {
	line    agentstream.Line
	tooLong bool // the line passed the hard limit; the stream ends after it
}

// timer is a time.Timer whose channel is nil while it is not set, so that a
// select ignores it.
type timer struct {
	t *time.Timer
	C <-chan time.Time
}

func (t *timer) set(d time.Duration) {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
	t.C = t.t.C
}

func (t *timer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
	t.C = nil
}

// wantsStdin reports whether the harness gets a pipe for stdin.
func (s *session) wantsStdin() bool {
	switch s.proto.Prompt {
	case agentstream.PromptStreamJSON, agentstream.PromptACP, agentstream.PromptCodexApp:
		return true
	case agentstream.PromptStdin:
		return s.r.Prompt != ""
	}
	return false
}

// run supervises the harness c until it and its output have ended.
func (s *session) run(ctx context.Context, c *child) (Result, error) {
	s.c = c
	s.ctx = context.WithoutCancel(ctx)
	s.started = time.Now()
	s.promptAt = s.now()
	s.running = true
	s.res = Result{Session: s.id, Protocol: s.proto.Name, Harness: s.proto.Harness, PID: c.pid}
	done := make(chan struct{})
	s.done = done
	s.timers = make(chan *hookTimer)
	if c.stdin != nil {
		s.in = newStdinWriter(c.stdin)
	}
	if s.hook != nil {
		s.hook.Start(s.conn)
	} else if s.in != nil {
		s.sendPrompt()
	}

	outCh := make(chan lineMsg, 64)
	errCh := make(chan lineMsg, 64)
	var wg sync.WaitGroup
	var out io.Reader = activityReader{r: c.stdout, s: s}
	var errOut io.Reader = c.stderr
	if s.r.Redact != nil {
		out, errOut = s.r.Redact.Reader(out), s.r.Redact.Reader(errOut)
	}
	if s.r.Spool != nil {
		out = io.TeeReader(out, s.r.Spool)
	}
	// Each reader returns at the end of its stream, or when its read end
	// is closed, or when done is closed while it waits to send.
	wg.Go(func() { readLines(out, s.r.SoftLimit, s.r.MaxLine, outCh, done) })
	wg.Go(func() { readLines(errOut, s.r.SoftLimit, 0, errCh, done) })

	if s.r.IdleTimeout > 0 {
		s.idle.set(s.r.IdleTimeout)
	}
	if s.r.Timeout > 0 {
		s.deadline.set(s.r.Timeout)
	}
	if !s.auto {
		s.decide()
	}
	ctxDone := ctx.Done()
	calls := s.r.Calls
	exited := c.exited
	outOpen, errOpen := true, true
	for outOpen || errOpen || s.running {
		select {
		case m, ok := <-outCh:
			if !ok {
				outOpen, outCh = false, nil
				if s.norm == nil {
					s.decide()
				}
				continue
			}
			s.stdout(m)
			s.afterTurn()
			if s.running && !s.stopped && s.hook == nil && s.completed() {
				s.linger.set(s.grace)
			} else {
				s.linger.stop()
			}
		case m, ok := <-errCh:
			if !ok {
				errOpen, errCh = false, nil
				continue
			}
			s.stderr(m)
		case st := <-exited:
			exited = nil
			s.running = false
			s.exit = st
			s.idle.stop()
			s.deadline.stop()
			s.linger.stop()
			if outOpen || errOpen {
				s.drain.set(s.grace)
			}
		case f := <-calls:
			f()
		case t := <-s.timers:
			if !t.stopped {
				t.fired = true
				t.f()
			}
		case <-s.idle.C:
			if since := time.Duration(time.Since(s.started).Nanoseconds() - s.activity.Load()); s.waiting || since < s.r.IdleTimeout {
				if s.waiting {
					since = 0
				}
				s.idle.set(s.r.IdleTimeout - since)
				continue
			}
			s.idle.C = nil
			s.stop(agentstream.ReasonIdleTimeout, "no output for "+s.r.IdleTimeout.String())
		case <-s.deadline.C:
			s.deadline.C = nil
			s.stop(agentstream.ReasonDeadline, "timeout of "+s.r.Timeout.String()+" reached")
		case <-ctxDone:
			ctxDone = nil
			msg := "interrupted"
			if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
				msg = cause.Error()
			}
			s.stop(agentstream.ReasonAborted, msg)
		case <-s.linger.C:
			s.linger.C = nil
			s.stop("", "")
		case <-s.kill.C:
			s.kill.C = nil
			s.c.signal(syscall.SIGKILL)
		case <-s.drain.C:
			// The harness exited but something it left behind holds its
			// output open: stop the group and stop reading.
			s.drain.C = nil
			s.c.signal(syscall.SIGKILL)
			c.stdout.Close()
			c.stderr.Close()
		case <-s.detect.C:
			s.detect.C = nil
			if s.norm == nil {
				s.decide()
			}
		}
	}
	close(done)
	c.stdout.Close()
	c.stderr.Close()
	wg.Wait()
	for _, t := range []*timer{&s.idle, &s.deadline, &s.kill, &s.drain, &s.detect, &s.linger} {
		t.stop()
	}
	if s.in != nil {
		s.in.abort()
	}
	s.reap()
	s.finish(ctx)
	return s.res, s.handlerErr
}

// reap stops whatever is left of the harness's process tree: SIGTERM, then
// SIGKILL after the grace period; then it waits for those of them that
// ended as this process's children.
func (s *session) reap() {
	if s.c.reap != nil {
		defer s.c.reap()
	}
	if !s.c.alive() {
		return
	}
	s.c.signal(syscall.SIGTERM)
	deadline := time.Now().Add(s.grace)
	for s.c.alive() {
		if time.Now().After(deadline) {
			s.c.signal(syscall.SIGKILL)
			// Give the kernel a moment to turn them into zombies.
			for i := 0; i < 50 && s.c.alive(); i++ {
				time.Sleep(10 * time.Millisecond)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop stops the harness: stdin closes, SIGTERM goes to its group, and
// SIGKILL follows after the grace period. The first reason wins; an empty
// reason stops a harness that lingers after reporting its end.
func (s *session) stop(reason, detail string) {
	if s.stopped {
		return
	}
	s.stopped = true
	s.stopReason, s.stopDetail = reason, detail
	s.closeStdin()
	s.idle.stop()
	s.deadline.stop()
	s.linger.stop()
	s.c.signal(syscall.SIGTERM)
	s.kill.set(s.grace)
}

func (s *session) closeStdin() {
	if s.in != nil {
		s.in.close()
	}
}

// activityReader records when stdout last gave bytes, for the idle timeout:
// a long line that is still arriving is output too.
type activityReader struct {
	r io.Reader
	s *session
}

func (a activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.activity.Store(time.Since(a.s.started).Nanoseconds())
	}
	return n, err
}

// readLines reads the lines of r and sends them on ch, copied, until the
// stream ends, then closes ch. A line over hard (when positive) is sent with
// tooLong set; the rest of the stream is then read and dropped, so that the
// harness never blocks on a full pipe while it is being stopped.
func readLines(r io.Reader, soft int, hard int64, ch chan<- lineMsg, done <-chan struct{}) {
	defer close(ch)
	lr := agentstream.NewLineReader(r)
	lr.SoftLimit = soft
	lr.HardLimit = hard
	for {
		l, err := lr.Next()
		var m lineMsg
		switch {
		case err == nil:
			if l.Bytes != nil {
				l.Bytes = append([]byte(nil), l.Bytes...)
			}
			m.line = l
		case errors.Is(err, agentstream.ErrLineTooLong):
			m = lineMsg{line: l, tooLong: true}
		default:
			return
		}
		select {
		case ch <- m:
		case <-done:
			return
		}
		if m.tooLong {
			io.Copy(io.Discard, r)
			return
		}
	}
}

// sendPrompt writes the prompt on stdin the way the protocol wants it.
func (s *session) sendPrompt() {
	switch s.proto.Prompt {
	case agentstream.PromptACP:
		s.acp.start(s)
	case agentstream.PromptStreamJSON:
		if s.r.Prompt != "" {
			s.in.send(streamJSONUser(s.r.Prompt))
		}
	default:
		if s.r.Prompt != "" {
			s.in.send([]byte(s.r.Prompt))
		}
		s.in.close()
	}
}

// streamJSONUser is a Claude Code stream-json user message carrying text.
func streamJSONUser(text string) []byte {
	b := []byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":`)
	b = jsonscan.AppendQuote(b, text)
	return append(b, "}]}}\n"...)
}

// decide settles the protocol of an "auto" run from the lines read so far,
// starts the normalizer, and processes the lines held until then.
func (s *session) decide() {
	s.detect.stop()
	if s.auto {
		var sample [][]byte
		for _, p := range s.pending {
			if !p.stderr {
				sample = append(sample, lineBytes(p.line))
			}
		}
		a, err := adapter.Lookup(adapter.Detect(sample))
		if err != nil {
			a, _ = adapter.Lookup("none")
		}
		s.proto, s.newDec = a.Protocol, a.New
		if s.r.NewDecoder != nil {
			s.newDec = s.r.NewDecoder
		}
		s.res.Protocol, s.res.Harness = a.Name, a.Harness
	}
	s.norm = agentstream.NewNormalizer(s.newDec(), agentstream.NormalizerConfig{
		Session: s.id, Harness: s.proto.Harness, ExplicitTurns: s.proto.ExplicitTurns || s.hook != nil,
		LastSeq: s.r.LastSeq, Turn: s.r.Turn,
	})
	if s.hook == nil && s.r.Prompt != "" && s.proto.Prompt != agentstream.PromptACP {
		s.recordPrompt(s.promptAt)
	}
	held := s.held
	s.held = nil
	for _, h := range held {
		s.add(h.ev, h.at)
	}
	pending := s.pending
	s.pending = nil
	for _, p := range pending {
		switch {
		case p.stderr:
			s.emit(s.norm.Stderr(s.envs[:0], p.line, p.at))
		case s.hook != nil:
			s.hookLine(p.line, p.at)
		default:
			s.emit(s.norm.Line(s.envs[:0], p.line, p.at))
		}
	}
}

func lineBytes(l agentstream.Line) []byte {
	if l.Oversized {
		return l.Head
	}
	return l.Bytes
}

// recordPrompt records the prompt that was sent as a user message.
func (s *session) recordPrompt(at time.Time) { s.recordText(s.r.Prompt, at) }

// recordText records a message that was sent, its secrets masked.
func (s *session) recordText(msg string, at time.Time) {
	if s.r.Redact != nil {
		msg = string(s.r.Redact.Line([]byte(msg)))
	}
	text, trunc := agentstream.Clip(msg, agentstream.MaxText)
	s.add(agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}), at)
}

// hold keeps a line until the protocol is detected, and decides once enough
// is held.
func (s *session) hold(p pendingLine) {
	s.pending = append(s.pending, p)
	b := lineBytes(p.line)
	s.pendingBytes += len(b)
	if !p.stderr && len(jsonscan.TrimSpace(b)) > 0 {
		s.nonBlank++
		if s.nonBlank == 1 {
			s.detect.set(detectWait)
		}
	}
	if s.nonBlank >= adapter.DetectLines || s.pendingBytes >= adapter.DetectPeek || len(s.pending) >= maxPending {
		s.decide()
	}
}

func (s *session) stdout(m lineMsg) {
	now := s.now()
	l := m.line
	if m.tooLong {
		l = agentstream.Line{N: l.N, Size: l.Size, Oversized: true}
	}
	if s.norm == nil {
		s.hold(pendingLine{line: l, at: now})
	} else if s.hook != nil {
		s.hookLine(l, now)
	} else {
		ended := s.endedLines
		s.emit(s.norm.Line(s.envs[:0], l, now))
		if s.acp != nil && !l.Oversized {
			s.acp.line(s, l.Bytes, s.endedLines > ended)
		}
	}
	if m.tooLong {
		s.stop(agentstream.ReasonOversizedEvent, fmt.Sprintf("line %d is longer than %d bytes", l.N, s.r.MaxLine))
	}
}

// hookLine records the events of a stdout line through the hook, then
// gives it the line.
func (s *session) hookLine(l agentstream.Line, now time.Time) {
	evs, src := s.norm.Decode(l)
	// The hook may record events of its own while it looks at these, which
	// reuses the buffer of added events, never that of the decoded ones.
	for _, ev := range evs {
		ev, keep := s.hook.Event(s.conn, ev)
		if keep {
			s.emit(s.norm.StampLine(s.envs[:0], ev, src, now))
		}
	}
	var line []byte
	if !l.Oversized {
		line = l.Bytes
	}
	s.hook.Line(s.conn, line)
}

func (s *session) stderr(m lineMsg) {
	now := s.now()
	if s.norm == nil {
		s.hold(pendingLine{stderr: true, line: m.line, at: now})
		return
	}
	s.emit(s.norm.Stderr(s.envs[:0], m.line, now))
}

// add emits an event the runner writes itself (source null).
func (s *session) add(ev agentstream.Event, at time.Time) {
	s.added = s.norm.Add(s.added[:0], ev, at)
	s.emit(s.added)
}

// emit passes envelopes to the handler, after noting what the session needs
// to know of them.
func (s *session) emit(envs []agentstream.Envelope) {
	for i := range envs {
		s.observe(&envs[i])
		if s.r.Handler == nil {
			continue
		}
		if err := s.r.Handler.Handle(s.ctx, envs[i]); err != nil && s.handlerErr == nil {
			s.handlerErr = err
			if s.running {
				s.stop(agentstream.ReasonAborted, "handler: "+err.Error())
			}
		}
	}
}

func (s *session) observe(e *agentstream.Envelope) {
	p := agentstream.Typed(e.Payload)
	switch p := p.(type) {
	case *agentstream.SessionStarted:
		if p.SessionID != "" {
			s.harnessSession = p.SessionID
		}
	case *agentstream.SessionEnded:
		s.lastEnded = p
		s.workAfterEnd = false
		s.endedLines++
		// An interactive harness that ended its turn gets the next message,
		// or is told there is no more (afterTurn). A hook decides for itself.
		if s.hook == nil && (s.proto.Prompt == agentstream.PromptStreamJSON || s.proto.Prompt == agentstream.PromptACP) {
			s.turnDone = true
		}
	case *agentstream.TurnStarted, *agentstream.Thinking, *agentstream.ToolCall,
		*agentstream.MessageDelta, *agentstream.ThinkingDelta:
		if s.lastEnded != nil {
			s.workAfterEnd = true
		}
	case *agentstream.Message:
		if s.lastEnded != nil && p.Role == agentstream.RoleAssistant {
			s.workAfterEnd = true
		}
	}
	s.folder.AddEnvelope(e)
	if e.Seq > 0 {
		s.res.LastSeq = e.Seq
	}
	if e.Harness != "" {
		s.res.Harness = e.Harness
	}
	if !e.TS.IsZero() && !s.promptAt.IsZero() {
		s.res.Duration = e.TS.Sub(s.promptAt)
	}
}

// completed reports whether the harness reported the end of its work, with
// no work after it and no message left to send.
func (s *session) completed() bool {
	return s.lastEnded != nil && !s.workAfterEnd && s.followed == len(s.r.FollowUps)
}

// afterTurn answers the end of a turn of an interactive harness, once the
// line that reported it was handled: the next follow-up message, or stdin
// closed when there is none.
func (s *session) afterTurn() {
	if !s.turnDone {
		return
	}
	s.turnDone = false
	if s.followed == len(s.r.FollowUps) || s.stopped || !s.running {
		s.closeStdin()
		return
	}
	text := s.r.FollowUps[s.followed]
	s.followed++
	s.workAfterEnd = true // the next turn is coming
	switch s.proto.Prompt {
	case agentstream.PromptStreamJSON:
		s.in.send(streamJSONUser(text))
		s.recordText(text, s.now())
	case agentstream.PromptACP:
		s.acp.send(s, text)
	}
}

// finish writes what the session owes at its end: the decoder's last
// events and the flush of unfinished deltas, the session title, and the
// runner's own session.ended unless the harness reported its end.
func (s *session) finish(ctx context.Context) {
	if s.norm == nil {
		s.decide()
	}
	now := s.now()
	if s.hook != nil {
		// The decoder's last events (a turn and a session it ends at the
		// end of the stream) go through the hook as a line's do.
		for _, evs := range []func() []agentstream.Event{s.norm.DecodeEnd, s.norm.FlushPartial} {
			for _, ev := range evs() {
				ev, keep := s.hook.Event(s.conn, ev)
				if keep {
					s.emit(s.norm.StampLine(s.envs[:0], ev, nil, now))
				}
			}
		}
	} else {
		s.emit(s.norm.End(s.envs[:0], now))
	}
	if !s.r.SkipTitle && ctx.Err() == nil && s.harnessSession != "" {
		if title := probeTitle(s.proto.Name, s.harnessSession, s.r.Dir, s.r.Env); title != "" {
			title, _ = agentstream.Clip(title, agentstream.MaxText)
			s.add(agentstream.E(&agentstream.SessionTitle{Title: title}), s.now())
		}
	}
	if s.hook != nil {
		s.hook.End(s.conn, Ending{
			Exited: !s.stopped, ExitCode: s.exit.code, Signal: s.exit.sig,
			StopReason: s.stopReason, StopDetail: s.stopDetail, Completed: s.completed(),
		})
	}
	if !s.completed() {
		s.add(agentstream.E(s.endedEvent()), s.now())
	}
	s.res.Ended = *s.lastEnded
	s.res.Exited = !s.stopped
	s.res.ExitCode, s.res.Signal = s.exit.code, s.exit.sig
	s.res.Recap = s.folder.Recap()
}

// endedEvent is the session.ended the runner writes when the harness did
// not report its end.
func (s *session) endedEvent() *agentstream.SessionEnded {
	switch s.stopReason {
	case "":
		if s.exit.code == 0 && s.exit.sig == 0 {
			return &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonExit}
		}
		return &agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: agentstream.ReasonExit, Error: s.exit.String()}
	case agentstream.ReasonAborted:
		return &agentstream.SessionEnded{Status: agentstream.StatusCancelled, Reason: s.stopReason, Error: s.stopDetail}
	default:
		return &agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: s.stopReason, Error: s.stopDetail}
	}
}

// String says how the process ended, as "exit status 3" or "signal:
// killed".
func (e exitStatus) String() string {
	if e.sig != 0 {
		return "signal: " + e.sig.String()
	}
	return fmt.Sprintf("exit status %d", e.code)
}
