package runner

import (
	"context"
	"io"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/google/go-cmp/cmp"
)

// fake is a harness made of in-memory pipes, for tests of the session's
// supervision in a synctest bubble, where time is exact.
type fake struct {
	outW, errW *io.PipeWriter
	exited     chan exitStatus

	mu        sync.Mutex
	signals   []syscall.Signal
	ignore    bool // SIGTERM does nothing
	keepOpen  bool // exiting leaves stdout open, as a grandchild would
	exitOnce  sync.Once
	closeOnce sync.Once
}

func newFake() (*fake, *child) {
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	f := &fake{outW: outW, errW: errW, exited: make(chan exitStatus, 1)}
	c := &child{
		pid:    0,
		stdout: outR,
		stderr: errR,
		exited: f.exited,
		signal: f.signal,
		alive:  func() bool { return false },
	}
	return f, c
}

func (f *fake) signal(sig syscall.Signal) {
	f.mu.Lock()
	f.signals = append(f.signals, sig)
	ignore := f.ignore && sig == syscall.SIGTERM
	f.mu.Unlock()
	if !ignore {
		f.exit(exitStatus{code: -1, sig: sig})
	}
}

// exit ends the fake process with st.
func (f *fake) exit(st exitStatus) {
	f.exitOnce.Do(func() {
		if !f.keepOpen {
			f.closePipes()
		}
		f.exited <- st
	})
}

func (f *fake) closePipes() {
	f.closeOnce.Do(func() {
		f.outW.Close()
		f.errW.Close()
	})
}

func (f *fake) line(s string) { f.outW.Write([]byte(s + "\n")) }

func (f *fake) sent() []syscall.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]syscall.Signal(nil), f.signals...)
}

type events struct{ envs []agentstream.Envelope }

func (e *events) Handle(_ context.Context, env agentstream.Envelope) error {
	e.envs = append(e.envs, env)
	return nil
}

// runFake runs a session of r against f and returns its result and how long
// it took in the bubble's time.
func runFake(t *testing.T, r *Runner, c *child) (Result, time.Duration) {
	t.Helper()
	r.Command = []string{"fake"}
	r.SkipTitle = true
	s, err := r.newSession()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := s.run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return res, time.Since(start)
}

const (
	msgLine   = `{"type":"message","role":"assistant","text":"working"}`
	endedLine = `{"type":"session.ended","status":"succeeded","reason":"completion"}`
)

func TestIdleTimeoutExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		go func() {
			for range 3 {
				f.line(msgLine)
				time.Sleep(200 * time.Millisecond)
			}
		}()
		res, took := runFake(t, &Runner{Protocol: "jsonl", IdleTimeout: 300 * time.Millisecond, Grace: time.Second}, c)
		// Lines at 0, 200ms and 400ms; silence from 400ms; stopped at 700ms.
		if took != 700*time.Millisecond {
			t.Errorf("stopped after %v, want 700ms", took)
		}
		if res.Ended.Reason != agentstream.ReasonIdleTimeout || res.Exited {
			t.Errorf("ended %+v, exited %v", res.Ended, res.Exited)
		}
	})
}

func TestStderrIsNotActivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			for range 10 {
				if _, err := f.errW.Write([]byte("still here\n")); err != nil {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
		res, took := runFake(t, &Runner{Protocol: "jsonl", IdleTimeout: 250 * time.Millisecond}, c)
		if took != 250*time.Millisecond || res.Ended.Reason != agentstream.ReasonIdleTimeout {
			t.Errorf("after %v: %+v", took, res.Ended)
		}
	})
}

func TestDeadlineExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			for {
				if _, err := f.outW.Write([]byte(msgLine + "\n")); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
		res, took := runFake(t, &Runner{Protocol: "jsonl", IdleTimeout: time.Second, Timeout: 2 * time.Second}, c)
		if took != 2*time.Second || res.Ended.Reason != agentstream.ReasonDeadline {
			t.Errorf("after %v: %+v", took, res.Ended)
		}
	})
}

// TestCompletionWins: a deadline or an idle timeout after the harness
// reported its end still ends the session by completion.
func TestCompletionWins(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Runner
		want time.Duration
	}{
		{"deadline", Runner{Timeout: time.Second, Grace: 5 * time.Second}, time.Second},
		{"idle", Runner{IdleTimeout: 500 * time.Millisecond, Grace: 5 * time.Second}, 500 * time.Millisecond},
		{"linger", Runner{Grace: 2 * time.Second}, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, c := newFake()
				go f.line(endedLine)
				r := tc.r
				r.Protocol = "jsonl"
				rec := &events{}
				r.Handler = rec
				res, took := runFake(t, &r, c)
				if took != tc.want {
					t.Errorf("stopped after %v, want %v", took, tc.want)
				}
				if res.Ended.Reason != agentstream.ReasonCompletion || res.Ended.Status != agentstream.StatusSucceeded || res.Exited {
					t.Errorf("ended %+v, exited %v", res.Ended, res.Exited)
				}
				for _, e := range rec.envs {
					if e.Type() == agentstream.TypeSessionEnded && e.Source == nil {
						t.Errorf("the runner wrote a session.ended after the harness's own")
					}
				}
			})
		})
	}
}

// TestWorkAfterEnd: a harness that wakes after reporting its end (a
// background task finished) and is then stopped did not complete.
func TestWorkAfterEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		go func() {
			f.line(endedLine)
			f.line(`{"type":"turn.started","turn":2}`)
			f.line(msgLine)
		}()
		res, took := runFake(t, &Runner{Protocol: "jsonl", Timeout: 3 * time.Second, Grace: 5 * time.Second}, c)
		if took != 3*time.Second || res.Ended.Reason != agentstream.ReasonDeadline {
			t.Errorf("after %v: %+v", took, res.Ended)
		}
	})
}

func TestKillAfterGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		f.ignore = true
		res, took := runFake(t, &Runner{Protocol: "jsonl", IdleTimeout: 100 * time.Millisecond, Grace: time.Second}, c)
		if took != 1100*time.Millisecond {
			t.Errorf("ended after %v, want 1.1s", took)
		}
		want := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
		if got := f.sent(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("signals %v, want %v", got, want)
		}
		if res.Signal != syscall.SIGKILL {
			t.Errorf("signal %v", res.Signal)
		}
	})
}

// TestDrain: output held open after the harness exited is read for the
// grace period, then the group is killed and the output abandoned.
func TestDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		f.keepOpen = true
		go func() {
			f.line(msgLine)
			f.exit(exitStatus{code: 0})
			time.Sleep(100 * time.Millisecond)
			f.line(msgLine) // from the process left behind
		}()
		rec := &events{}
		res, took := runFake(t, &Runner{Protocol: "jsonl", Grace: 500 * time.Millisecond, Handler: rec}, c)
		if took != 500*time.Millisecond {
			t.Errorf("ended after %v, want 500ms", took)
		}
		if res.Ended.Reason != agentstream.ReasonExit || res.Ended.Status != agentstream.StatusSucceeded || !res.Exited {
			t.Errorf("ended %+v, exited %v", res.Ended, res.Exited)
		}
		n := 0
		for _, e := range rec.envs {
			if e.Type() == agentstream.TypeMessage {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d messages, want the 2 written before the drain ended", n)
		}
		f.closePipes()
	})
}

func TestAbortExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, c := newFake()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		r := &Runner{Command: []string{"fake"}, Protocol: "jsonl", SkipTitle: true}
		s, _ := r.newSession()
		start := time.Now()
		res, _ := s.run(ctx, c)
		if took := time.Since(start); took != time.Second || res.Ended.Reason != agentstream.ReasonAborted || res.Ended.Status != agentstream.StatusCancelled {
			t.Errorf("after %v: %+v", took, res.Ended)
		}
	})
}

// TestDetect: "auto" decides after DetectLines lines, or after detectWait
// with fewer, and processes the held lines in order, stderr included.
func TestDetect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		go func() {
			f.errW.Write([]byte("warming up\n"))
			time.Sleep(10 * time.Millisecond)
			f.line(`{"type":"session.started","harness":"jsonl","sessionId":"x"}`)
			time.Sleep(2 * time.Second)
			f.exit(exitStatus{})
		}()
		rec := &events{}
		res, _ := runFake(t, &Runner{Handler: rec, Prompt: "hello"}, c)
		if res.Protocol != "jsonl" {
			t.Errorf("protocol %q", res.Protocol)
		}
		var types []string
		for _, e := range rec.envs {
			types = append(types, e.Type())
		}
		// The prompt is the session's title: the harness gave none.
		want := []string{"message", "session.title", "stderr", "session.started", "session.ended"}
		if len(types) != len(want) {
			t.Fatalf("types %v, want %v", types, want)
		}
		for i := range want {
			if types[i] != want[i] {
				t.Errorf("types %v, want %v", types, want)
			}
		}
	})
}

// TestDetectLateStart: a harness that prints its first line long after it
// started (Claude Code and Copilot take more than half a second) is still
// detected: "auto" waits for the first non-blank line, then detectWait for
// more.
func TestDetectLateStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c := newFake()
		go func() {
			f.errW.Write([]byte("loading\n"))
			time.Sleep(1500 * time.Millisecond)
			f.line("")
			time.Sleep(500 * time.Millisecond)
			f.line(`{"type":"session.started","harness":"jsonl","sessionId":"x"}`)
			time.Sleep(100 * time.Millisecond)
			f.line(msgLine)
			time.Sleep(2 * time.Second)
			f.line(endedLine)
			f.exit(exitStatus{})
		}()
		rec := &events{}
		res, _ := runFake(t, &Runner{Handler: rec, Prompt: "hello"}, c)
		if res.Protocol != "jsonl" {
			t.Errorf("protocol %q, want jsonl", res.Protocol)
		}
		var types []string
		for _, e := range rec.envs {
			types = append(types, e.Type())
		}
		want := []string{"message", "session.title", "stderr", "session.started", "message", "session.ended"}
		if diff := cmp.Diff(want, types); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	})
}
