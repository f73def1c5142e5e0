package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// DefaultGrace is how long a harness has to exit after SIGTERM before it is
// sent SIGKILL, when Runner.Grace is zero.
const DefaultGrace = 5 * time.Second

// Policies for permission requests of an ACP agent (Runner.Approve).
const (
	// ApproveNone rejects every request (the default).
	ApproveNone = "none"
	// ApproveAll allows every request.
	ApproveAll = "all"
)

// A Runner runs one harness. Set the fields, then call Run once. The zero
// value of every field but Command is useful.
type Runner struct {
	// Command is the harness and its arguments. The protocol's flags are
	// appended to it (agentstream.ApplyProtocol), and the prompt too when
	// the protocol takes it as an argument.
	Command []string
	// Protocol names the harness's dialect, one of agentstream.Protocols.
	// "" or "auto" detects it from the first lines of stdout (up to
	// adapter.DetectLines non-blank lines, or half a second after the
	// first one); the prompt then goes on stdin as text.
	Protocol string
	// NewDecoder, when set, decodes stdout instead of the protocol's
	// adapter; the harness is still driven as Protocol says. It serves
	// programs with an adapter of their own.
	NewDecoder func() agentstream.Decoder
	// Prompt is what the agent is asked. Empty means none is sent: the
	// command carries its own, and stdin is closed at once.
	Prompt string
	// FollowUps are the later messages of a conversation, for the
	// protocols that hold one (claude-stream and acp): each is sent once the
	// harness reported the end of the previous turn, and the session ends
	// after the last.
	FollowUps []string
	// Dir is the harness's working directory; empty means the current one.
	Dir string
	// Env is the harness's environment; nil means this process's. The
	// runner adds MarkVar to it, by which it finds the harness's
	// descendants.
	Env []string

	// IdleTimeout, when positive, stops the harness when its stdout has
	// been silent that long (reason idle-timeout).
	IdleTimeout time.Duration
	// Timeout, when positive, stops the harness when the run has lasted
	// that long (reason deadline).
	Timeout time.Duration
	// Grace is how long the harness has between SIGTERM and SIGKILL, how
	// long a harness that reported the end of its work may linger before
	// it is stopped, and how long output may keep coming after the harness
	// exited (from a process it left behind). Zero means DefaultGrace.
	Grace time.Duration

	// SoftLimit is the line size above which a stdout line becomes raw
	// with reason oversized instead of being decoded; zero means
	// agentstream.DefaultSoftLimit.
	SoftLimit int
	// MaxLine, when positive, is the hard limit: a stdout line longer than
	// it stops the run (reason oversized-event).
	MaxLine int64

	// Approve is the policy for an ACP agent's permission requests:
	// ApproveAll or ApproveNone (the default, also for ""). Each answer is
	// recorded as request.resolved with auto set.
	Approve string

	// Handler receives every envelope, live deltas included, in order,
	// synchronously, from the one goroutine that runs the session; a slow
	// handler slows the harness down rather than losing events. An error
	// from it stops the harness (reason aborted) and is returned by Run;
	// the handler still receives the rest of the session.
	Handler agentstream.Handler
	// Spool, when set, receives the harness's stdout byte for byte as it is
	// read, oversized lines included. It is written from a goroutine of its
	// own, never concurrently with itself.
	Spool io.Writer
	// Redact, when set, masks the secrets of the harness's stdout and
	// stderr before anything reads them, and of the prompt recorded as the
	// user's message: the Spool, the decoder and the Handler see only
	// masked lines (package redact provides one).
	Redact Redactor
	// Session is the session id written in every envelope; empty means a
	// new random one.
	Session string
	// Now returns the time of each envelope; nil means time.Now.
	Now func() time.Time
	// SkipTitle turns off the title probe run after a Claude Code session
	// (agentstream.SessionTitleProbe).
	SkipTitle bool

	// Hook, when set, drives the run from inside (see Hook): it, not the
	// runner, speaks the harness's input protocol. Approve is then unused.
	Hook Hook
	// Calls, when set, carries functions to run on the session's goroutine
	// while the harness runs, between lines: how the owner of a Hook acts
	// on the run from another goroutine. The runner stops receiving once
	// the harness and its output ended; a sender must not wait for it then
	// (select on something the hook closes at End).
	Calls <-chan func()
	// Start, when set, starts the harness instead of a process of its
	// own, with the command line, directory, environment and whether it
	// gets a stdin: how tests give a run a harness made of pipes
	// (runnertest.Fake).
	Start func(args []string, dir string, env []string, withStdin bool) (*Child, error)
	// LastSeq and Turn continue a session that an earlier run started
	// (agentstream.NormalizerConfig): the first stored envelope gets
	// LastSeq+1, and envelopes stay in turn Turn until the next starts.
	LastSeq, Turn int64
}

// A Redactor masks secrets in place, keeping lengths. Reader is called
// once for each of the harness's streams, and the readers it returns are
// read from their own goroutines.
type Redactor interface {
	// Reader returns r's bytes with the secrets of every line masked.
	Reader(r io.Reader) io.Reader
	// Line masks the secrets of one line in place and returns it.
	Line(b []byte) []byte
}

// Result is how a run ended.
type Result struct {
	// Session is the session id of the envelopes.
	Session string
	// Protocol is the protocol the stream was read with (the detected one
	// for "auto").
	Protocol string
	// Harness is the harness named in the last envelope.
	Harness string
	// PID is the harness's process id, which is also its process group id.
	PID int
	// Ended is the session's last session.ended payload: the harness's own
	// report, or the one the runner wrote.
	Ended agentstream.SessionEnded
	// Exited is true when the harness exited by itself: nobody signalled
	// it. When it is false, the runner stopped the harness.
	Exited bool
	// ExitCode is the harness's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal is the signal that ended the harness, or 0.
	Signal syscall.Signal
	// Recap is the usage of the session (agentstream.SummarizeUsage).
	Recap agentstream.Recap
	// LastSeq is the sequence number of the last stored envelope.
	LastSeq int64
	// Duration is how long the run took, from start to the last event.
	Duration time.Duration
}

// StartError is returned by Run when the harness could not be started, for
// instance because the command was not found (errors.Is(err,
// exec.ErrNotFound)). No envelope was produced.
type StartError struct {
	Command string
	Err     error
}

func (e *StartError) Error() string { return "runner: start " + e.Command + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *StartError) Unwrap() error { return e.Err }

// ErrNoCommand is returned by Run when Command is empty.
var ErrNoCommand = errors.New("runner: no command")

// Run starts the harness, passes its envelopes to the Handler as they come,
// and returns once the harness and every process of its group have ended and
// the last envelope was handled. Cancelling ctx stops the harness (reason
// aborted); Run still returns the whole session.
//
// The error is a *StartError when the harness could not be started, the
// Handler's first error, or a configuration error; a harness that failed
// is not an error, its Result says how it ended.
func (r *Runner) Run(ctx context.Context) (Result, error) {
	if len(r.Command) == 0 {
		return Result{}, ErrNoCommand
	}
	s, err := r.newSession()
	if err != nil {
		return Result{}, err
	}
	var c *child
	if r.Start != nil {
		pc, err := r.Start(s.args, r.Dir, r.Env, s.wantsStdin())
		if err != nil {
			return Result{}, &StartError{Command: s.args[0], Err: err}
		}
		c = fromChild(pc)
	} else if c, err = startChild(s.args, r.Dir, r.Env, s.wantsStdin()); err != nil {
		return Result{}, &StartError{Command: s.args[0], Err: err}
	}
	return s.run(ctx, c)
}

// newSession settles the protocol, the decoder and the command line.
func (r *Runner) newSession() (*session, error) {
	name := r.Protocol
	if name == "" {
		name = "auto"
	}
	s := &session{r: r, auto: name == "auto", now: r.Now, grace: r.Grace, hook: r.Hook}
	s.conn = &Conn{s: s}
	if s.now == nil {
		s.now = time.Now
	}
	if s.grace <= 0 {
		s.grace = DefaultGrace
	}
	switch r.Approve {
	case "", ApproveNone, ApproveAll:
	default:
		return nil, fmt.Errorf("runner: approve %q: want %q or %q", r.Approve, ApproveAll, ApproveNone)
	}
	if s.auto {
		s.proto = agentstream.Protocol{Name: "auto", Prompt: agentstream.PromptStdin}
	} else {
		p, ok := agentstream.LookupProtocol(name)
		if !ok {
			return nil, fmt.Errorf("runner: unknown protocol %q", name)
		}
		s.proto = p
		s.newDec = r.NewDecoder
		if s.newDec == nil {
			a, err := adapter.Lookup(name)
			if err != nil {
				return nil, fmt.Errorf("runner: %w", err)
			}
			s.newDec = a.New
		}
	}
	s.id = r.Session
	if s.id == "" {
		var b [13]byte
		rand.Read(b[:])
		s.id = "s_" + hex.EncodeToString(b[:])
	}
	args := agentstream.ApplyProtocol(r.Command, s.proto.Name)
	if r.Prompt != "" {
		switch s.proto.Prompt {
		case agentstream.PromptArgument:
			args = agentstream.AppendPrompt(args, s.proto.Name, r.Prompt)
		case agentstream.PromptStdin:
			if s.proto.StdinArg != "" {
				args = append(args, s.proto.StdinArg)
			}
		}
	}
	s.args = args
	if len(r.FollowUps) > 0 && s.proto.Prompt != agentstream.PromptStreamJSON && s.proto.Prompt != agentstream.PromptACP {
		return nil, fmt.Errorf("runner: protocol %s takes one prompt; follow-up messages need claude-stream or acp", s.proto.Name)
	}
	if len(r.FollowUps) > 0 && r.Prompt == "" {
		return nil, fmt.Errorf("runner: follow-up messages without a prompt")
	}
	if s.proto.Prompt == agentstream.PromptCodexApp && r.Hook == nil {
		return nil, fmt.Errorf("runner: protocol %s is spoken by a live session (package session), not by a run of one prompt", s.proto.Name)
	}
	if s.proto.Prompt == agentstream.PromptACP && r.Hook == nil {
		if r.Prompt == "" {
			return nil, fmt.Errorf("runner: protocol %s needs a prompt", s.proto.Name)
		}
		cwd := r.Dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
		s.acp = &acpClient{cwd: cwd, prompt: r.Prompt, approve: r.Approve == ApproveAll}
	}
	return s, nil
}
