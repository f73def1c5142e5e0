// Package runnertest gives tests a harness made of in-memory pipes
// (runner.Runner.Start), so that a run, and the session over it, can be
// driven line by line inside a testing/synctest bubble, where time is
// exact. A fake is for a unit test of one piece; the proof that a driver
// works is a run of the real harness.
package runnertest

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"syscall"

	"github.com/agentstream/agentstream/runner"
)

// A Fake is a harness that a test plays: it writes the harness's stdout and
// stderr, reads what was written on its stdin, and exits when told, or when
// signalled (unless IgnoreTerm).
type Fake struct {
	// Args, Dir and Env are what the run started it with.
	Args []string
	Dir  string
	Env  []string

	outW, errW *io.PipeWriter
	in         *bufio.Reader
	inR        *io.PipeReader
	exited     chan runner.ExitStatus

	mu         sync.Mutex
	signals    []syscall.Signal
	ignoreTerm bool
	exitOnce   sync.Once
}

// Starter returns a runner.Runner.Start that starts a new Fake on each call
// and hands it to started, from the run's goroutine, before the run reads
// its output. A test plays the fake from a goroutine of its own.
func Starter(started func(*Fake)) func(args []string, dir string, env []string, withStdin bool) (*runner.Child, error) {
	return func(args []string, dir string, env []string, withStdin bool) (*runner.Child, error) {
		f, c := New(withStdin)
		f.Args, f.Dir, f.Env = args, dir, env
		started(f)
		return c, nil
	}
}

// New returns a Fake and the runner.Child it plays.
func New(withStdin bool) (*Fake, *runner.Child) {
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	f := &Fake{outW: outW, errW: errW, exited: make(chan runner.ExitStatus, 1)}
	c := &runner.Child{
		Stdout: outR, Stderr: errR, Exited: f.exited,
		Signal: f.signal, Alive: func() bool { return false },
	}
	if withStdin {
		inR, inW := io.Pipe()
		f.inR = inR
		f.in = bufio.NewReader(inR)
		c.Stdin = inW
	}
	return f, c
}

// IgnoreTerm makes SIGTERM do nothing, as a harness that ignores it.
func (f *Fake) IgnoreTerm() {
	f.mu.Lock()
	f.ignoreTerm = true
	f.mu.Unlock()
}

func (f *Fake) signal(sig syscall.Signal) {
	f.mu.Lock()
	f.signals = append(f.signals, sig)
	ignore := f.ignoreTerm && sig == syscall.SIGTERM
	f.mu.Unlock()
	if !ignore {
		f.Exit(runner.ExitStatus{Code: -1, Signal: sig})
	}
}

// Signals returns the signals sent so far.
func (f *Fake) Signals() []syscall.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]syscall.Signal(nil), f.signals...)
}

// Line writes one stdout line. It blocks until the run read it, and
// reports false once the run stopped reading.
func (f *Fake) Line(s string) bool {
	_, err := f.outW.Write([]byte(s + "\n"))
	return err == nil
}

// Stderr writes one stderr line.
func (f *Fake) Stderr(s string) bool {
	_, err := f.errW.Write([]byte(s + "\n"))
	return err == nil
}

// ErrNoStdin is returned by ReadLine when the harness has no stdin.
var ErrNoStdin = errors.New("runnertest: the fake has no stdin")

// ReadLine returns the next line written on the fake's stdin, without its
// newline, or io.EOF once stdin was closed.
func (f *Fake) ReadLine() (string, error) {
	if f.in == nil {
		return "", ErrNoStdin
	}
	s, err := f.in.ReadString('\n')
	if err != nil {
		if s != "" {
			return s, nil
		}
		return "", err
	}
	return s[:len(s)-1], nil
}

// ReadAll returns what is written on stdin until it closes.
func (f *Fake) ReadAll() (string, error) {
	if f.in == nil {
		return "", ErrNoStdin
	}
	b, err := io.ReadAll(f.in)
	return string(b), err
}

// Exit ends the fake with st: its output closes, then it has exited. Later
// calls do nothing.
func (f *Fake) Exit(st runner.ExitStatus) {
	f.exitOnce.Do(func() {
		f.outW.Close()
		f.errW.Close()
		if f.inR != nil {
			f.inR.Close()
		}
		f.exited <- st
		close(f.exited)
	})
}
