package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/driver"
	"github.com/agentstream/agentstream/runner"
)

// DefaultInterruptTimeout is how long a turn may take to end after an
// interrupt before its harness is stopped, when Config.InterruptTimeout is
// zero.
const DefaultInterruptTimeout = 15 * time.Second

// Config describes a session. Command and Protocol, or Candidates, say what
// runs; the zero value of the other fields is useful.
type Config struct {
	// ID is the session id of the envelopes; empty means a new random one.
	ID string
	// Command, Protocol and Env are the harness to run, when Candidates is
	// empty (they are then its one candidate). The protocol's flags are
	// added to the command; claude-stream gets its permission prompts on
	// stdio.
	Command  []string
	Protocol string
	// Env is the base environment of every candidate (nil means this
	// process's); a candidate's credentials are read from it.
	Env []string
	// Candidates are the harnesses and accounts to run on, in order: the
	// session moves to the next when one's account is exhausted.
	Candidates []Candidate
	// Dir is the harness's working directory; empty means the current one.
	Dir string

	// Prompt, when set, is the first message, sent as soon as the harness
	// takes it. A protocol of one message (claude-json, codex-json, ...)
	// takes only this one.
	Prompt string
	// FollowUps are later messages, queued behind Prompt: each is sent
	// when the turn before it ended.
	FollowUps []string
	// CloseWhenIdle closes the session once a turn ended with no message
	// waiting: a conversation of the messages given, as `agentstream run`
	// holds it.
	CloseWhenIdle bool
	// Resume is the id of a conversation of the harness to continue (the
	// sessionId of its session.started), for the protocols that can.
	Resume string

	// PermissionMode, when set, is the harness's permission mode at the
	// start: Claude Code's --permission-mode (default, acceptEdits, plan,
	// ...), Codex's approval policy (untrusted, on-request, never).
	PermissionMode string

	// Policy answers the permission requests; its zero value asks.
	Policy Policy
	// Budget limits what the session spends; its zero value does not.
	Budget Budget
	// InterruptTimeout is how long an interrupted turn may take to end
	// before the harness is stopped; zero means DefaultInterruptTimeout.
	InterruptTimeout time.Duration

	// IdleTimeout, Timeout, Grace, SoftLimit and MaxLine supervise each
	// harness as runner.Runner's fields do. The idle timeout does not count
	// while the session waits for a message or an answer.
	IdleTimeout, Timeout, Grace time.Duration
	SoftLimit                   int
	MaxLine                     int64

	// Handler receives every envelope of the session, in order, from the
	// session's goroutine, as runner.Runner.Handler does: an error from it
	// stops the harness (reason aborted). Observers of the Manager see the
	// envelopes after it.
	Handler agentstream.Handler
	// Spool, when set, receives each harness's stdout byte for byte.
	Spool io.Writer
	// Redact, when set, masks the secrets of each harness's output and of
	// the messages sent, before anything sees them (runner.Runner.Redact).
	Redact runner.Redactor
	// NewDecoder, when set, decodes stdout instead of the protocol's
	// adapter.
	NewDecoder func() agentstream.Decoder
	// SkipTitle turns off the title probe after a Claude Code session.
	SkipTitle bool
	// Now returns the time of each envelope; nil means time.Now.
	Now func() time.Time
	// Start, when set, starts each harness instead of a process (see
	// runner.Runner.Start): how tests run a session on a fake.
	Start func(args []string, dir string, env []string, withStdin bool) (*runner.Child, error)
}

// Budget limits a session: past one of its limits, the running turn is
// interrupted and the session ends with reason budget. A zero limit is no
// limit.
type Budget struct {
	// MaxCostUSD is the most the session may cost, as the harnesses
	// report it.
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
	// MaxTokens is the most input and output tokens (cache reads and
	// writes not counted) the session may use.
	MaxTokens int64 `json:"maxTokens,omitempty"`
	// MaxTurns is the most turns the session may run.
	MaxTurns int64 `json:"maxTurns,omitempty"`
}

// Errors of a session's methods.
var (
	// ErrClosed: the session is closing or ended.
	ErrClosed = errors.New("session: closed")
	// ErrUnknownRequest: no request of the session has that id.
	ErrUnknownRequest = errors.New("session: no such request")
	// ErrAnswered: the request was already answered (or withdrawn); the
	// first answer won.
	ErrAnswered = errors.New("session: request already answered")
	// ErrDecision: the answer's decision is not allow, allow-always or deny.
	ErrDecision = errors.New("session: decision must be allow, allow-always or deny")
	// ErrMode: the message's mode is not queue, steer or interrupt.
	ErrMode = errors.New("session: mode must be queue, steer or interrupt")
	// ErrOneMessage: the protocol takes one message, and it had it.
	ErrOneMessage = errors.New("session: this protocol takes one message")
	// ErrNotRunning: no turn runs to interrupt.
	ErrNotRunning = errors.New("session: no turn runs")
	// ErrUnsupported: the harness's protocol cannot do that.
	ErrUnsupported = driver.ErrUnsupported
)

// Answer answers a request; see driver.Answer.
type Answer = driver.Answer

// Decisions of an Answer.
const (
	Allow       = driver.Allow
	AllowAlways = driver.AllowAlways
	Deny        = driver.Deny
)

// Info is what a session is at one moment.
type Info struct {
	ID       string `json:"id"`
	Protocol string `json:"protocol"`
	Harness  string `json:"harness"`
	// State is the latest session.state ("" before the first) and
	// StateReason why.
	State       string `json:"state"`
	StateReason string `json:"stateReason"`
	// Caps is what the current harness's driver can do.
	Caps driver.Caps `json:"caps"`
	// Pending are the requests waiting for an answer, oldest first.
	Pending []Request `json:"pending"`
	// Running is the id of the message whose turn runs, and Queued those
	// waiting, in order.
	Running string   `json:"running"`
	Queued  []string `json:"queued"`
	// Account and Candidate name the account the session runs on, and its
	// place among the candidates.
	Account   string `json:"account"`
	Candidate int    `json:"candidate"`
	// HarnessSession is the harness's own id of the conversation.
	HarnessSession string `json:"harnessSession"`
	// Turn and LastSeq are those of the latest envelope.
	Turn    int64 `json:"turn"`
	LastSeq int64 `json:"lastSeq"`
	// Usage is what the session spent so far, for its budget.
	CostUSD float64 `json:"costUsd"`
	Tokens  int64   `json:"tokens"`
	Turns   int64   `json:"turns"`
}

// A Request is a request of the harness's waiting for an answer.
type Request struct {
	// ID is the requestId of its permission.request or question event.
	ID string `json:"requestId"`
	// Aliases are other ids that answer it (a question's own requestId).
	Aliases []string `json:"aliases,omitempty"`
	// Kind is "permission" or "question".
	Kind     string                         `json:"kind"`
	Tool     string                         `json:"tool"`
	CallID   string                         `json:"callId"`
	Category string                         `json:"category"`
	Summary  string                         `json:"summary"`
	Input    string                         `json:"input"`
	Options  []agentstream.PermissionOption `json:"options"`
	Since    time.Time                      `json:"since"`
}

// Result is how a session ended.
type Result struct {
	// Run is the result of its last harness run.
	Run runner.Result
	// State and Reason are its final state (closed or failed) and why.
	State, Reason string
}

// A Session is a live conversation with a harness. Its methods are safe for
// concurrent use; each acts on the session's goroutine and returns once it
// did (a Send once the message was accepted, not answered).
type Session struct {
	m   *Manager
	id  string
	cfg Config
	now func() time.Time

	calls     chan func()
	startOnce sync.Once
	started   chan struct{} // closed once the first harness runs (or none will)
	done      chan struct{} // closed once the session ended

	startErr error
	result   Result
	runErr   error

	mu   sync.Mutex
	info Info

	// The fields below belong to the goroutine that runs the session.
	live *live
}

func newSession(m *Manager, cfg Config) (*Session, error) {
	if len(cfg.Candidates) == 0 {
		if len(cfg.Command) == 0 {
			return nil, errors.New("session: no command")
		}
		cfg.Candidates = []Candidate{{Command: cfg.Command, Protocol: cfg.Protocol}}
	}
	for i, c := range cfg.Candidates {
		if len(c.Command) == 0 {
			return nil, fmt.Errorf("session: candidate %d: no command", i+1)
		}
		p := c.Protocol
		if p == "" {
			p = "auto"
		}
		if _, ok := agentstream.LookupProtocol(p); !ok && p != "auto" {
			return nil, fmt.Errorf("session: candidate %d: unknown protocol %q", i+1, p)
		}
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if _, err := cfg.Candidates[0].environ(cfg.Env); err != nil {
		return nil, err
	}
	if cfg.ID == "" {
		var b [13]byte
		rand.Read(b[:])
		cfg.ID = "s_" + hex.EncodeToString(b[:])
	}
	if cfg.InterruptTimeout <= 0 {
		cfg.InterruptTimeout = DefaultInterruptTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = runner.DefaultGrace
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Session{
		m: m, id: cfg.ID, cfg: cfg, now: now,
		calls: make(chan func()), started: make(chan struct{}), done: make(chan struct{}),
	}
	s.live = newLive(s)
	if cfg.Prompt != "" {
		s.live.enqueue(cfg.Prompt, agentstream.ModeQueue)
		for _, f := range cfg.FollowUps {
			s.live.enqueue(f, agentstream.ModeQueue)
		}
	} else if len(cfg.FollowUps) > 0 {
		return nil, errors.New("session: follow-up messages without a first one")
	}
	s.live.publish()
	return s, nil
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Info returns what the session is now.
func (s *Session) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.info
	i.Pending = append([]Request(nil), i.Pending...)
	i.Queued = append([]string(nil), i.Queued...)
	return i
}

// Done is closed once the session ended.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Wait waits for the session to end and returns how it ended, and the
// first error of its Handler, if any.
func (s *Session) Wait(ctx context.Context) (Result, error) {
	select {
	case <-s.done:
		return s.result, s.runErr
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

// do runs f on the session's goroutine and returns its error.
func (s *Session) do(ctx context.Context, f func() error) error {
	reply := make(chan error, 1)
	select {
	case s.calls <- func() {
		err := f()
		s.live.afterChange()
		reply <- err
	}:
		return <-reply
	case <-s.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Send sends a message with a mode (agentstream.ModeQueue, ModeSteer or
// ModeInterrupt; "" is queue) and returns its id once the session accepted
// it. Its message.accepted, message.started and message.completed events
// tell the rest.
func (s *Session) Send(ctx context.Context, text, mode string) (string, error) {
	if mode == "" {
		mode = agentstream.ModeQueue
	}
	switch mode {
	case agentstream.ModeQueue, agentstream.ModeSteer, agentstream.ModeInterrupt:
	default:
		return "", ErrMode
	}
	var id string
	err := s.do(ctx, func() error {
		var err error
		id, err = s.live.send(text, mode)
		return err
	})
	return id, err
}

// Interrupt ends the running turn. The session is interrupting until the
// turn ended; a harness that does not end it within the interrupt timeout
// is stopped. It returns ErrNotRunning when no turn runs.
func (s *Session) Interrupt(ctx context.Context) error {
	return s.do(ctx, func() error { return s.live.interrupt("interrupted") })
}

// Answer answers a pending request by the id of its permission.request or
// question event. The first answer wins: a request already answered gives
// ErrAnswered, an id the session never saw ErrUnknownRequest.
func (s *Session) Answer(ctx context.Context, requestID string, a Answer) error {
	switch a.Decision {
	case Allow, AllowAlways, Deny:
	default:
		return ErrDecision
	}
	return s.do(ctx, func() error { return s.live.answer(requestID, a, agentstream.ResolvedByPerson) })
}

// SetMode changes the harness's permission mode between turns.
func (s *Session) SetMode(ctx context.Context, mode string) error {
	return s.do(ctx, func() error { return s.live.setMode(mode) })
}

// SetModel changes the harness's model between turns.
func (s *Session) SetModel(ctx context.Context, model string) error {
	return s.do(ctx, func() error { return s.live.setModel(model) })
}

// Close ends the session: queued messages are cancelled, a running turn is
// stopped with its harness, an idle harness is told there is no more and
// stopped if it does not exit. It returns once closing began; Wait waits
// for the end. Closing a closed session does nothing.
func (s *Session) Close(ctx context.Context) error {
	err := s.do(ctx, func() error { s.live.close("closed"); return nil })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// run runs the candidates in turn until one ends the session.
func (s *Session) run(ctx context.Context) {
	defer close(s.done)
	l := s.live
	for {
		c := s.cfg.Candidates[l.candidate]
		r, err := s.runner(c)
		if err == nil {
			l.beginRun(c)
			var res runner.Result
			res, err = r.Run(ctx)
			var se *runner.StartError
			if !errors.As(err, &se) {
				if l.next >= 0 {
					continue
				}
				s.finish(res, err)
				return
			}
		}
		// The candidate could not start.
		if !s.isStarted() {
			if l.fallBack(err.Error()) {
				continue
			}
			s.startErr = err
			return
		}
		if l.fallBack(err.Error()) {
			continue
		}
		l.failWithoutHarness(err)
		s.finish(runner.Result{}, nil)
		return
	}
}

// markStarted says that a harness of the session runs (or that none will).
func (s *Session) markStarted() { s.startOnce.Do(func() { close(s.started) }) }

func (s *Session) isStarted() bool {
	select {
	case <-s.started:
		return true
	default:
		return false
	}
}

// runner builds the run of one candidate.
func (s *Session) runner(c Candidate) (*runner.Runner, error) {
	env, err := c.environ(s.cfg.Env)
	if err != nil {
		return nil, err
	}
	protocol := c.Protocol
	if protocol == "" {
		protocol = "auto"
	}
	l := s.live
	resume := l.resumeID()
	cwd := s.cfg.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	d, err := driver.For(protocol, driver.Options{Cwd: cwd, Resume: resume, Mode: s.cfg.PermissionMode, ClientVersion: runner.ClientVersion})
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	command := c.Command
	if protocol == "claude-stream" {
		command = driver.ClaudeArgs(command, resume, s.cfg.PermissionMode)
	}
	l.drv = d
	r := &runner.Runner{
		Command:     command,
		Protocol:    protocol,
		NewDecoder:  s.cfg.NewDecoder,
		Dir:         s.cfg.Dir,
		Env:         env,
		IdleTimeout: s.cfg.IdleTimeout,
		Timeout:     s.cfg.Timeout,
		Grace:       s.cfg.Grace,
		SoftLimit:   s.cfg.SoftLimit,
		MaxLine:     s.cfg.MaxLine,
		Handler:     agentstream.HandlerFunc(s.handle),
		Spool:       s.cfg.Spool,
		Redact:      s.cfg.Redact,
		Session:     s.id,
		Now:         s.now,
		SkipTitle:   s.cfg.SkipTitle,
		Start:       s.cfg.Start,
		Hook:        l,
		Calls:       s.calls,
		LastSeq:     l.lastSeq,
		Turn:        l.turn,
	}
	if d.Caps().Messages == driver.None {
		// A protocol of one message takes it on its command line or stdin
		// when it starts: the runner puts it on the command line when the
		// protocol wants it there.
		r.Prompt = l.firstText()
	}
	return r, nil
}

// handle passes an envelope to the session's Handler, then to the
// Manager's observers.
func (s *Session) handle(ctx context.Context, e agentstream.Envelope) error {
	s.live.seen(&e)
	var err error
	if s.cfg.Handler != nil {
		err = s.cfg.Handler.Handle(ctx, e)
	}
	if s.m != nil {
		s.m.notify(ctx, e)
	}
	return err
}

func (s *Session) finish(res runner.Result, err error) {
	s.result = Result{Run: res, State: s.live.state, Reason: s.live.stateReason}
	s.runErr = err
	s.live.publish()
}
