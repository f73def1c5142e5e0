package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/internal/demo"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

const demoDoc = `Shows agentstream at work with no agent installed. It starts the web timeline
and the API on --addr (default: a free loopback port) over a temporary store,
imports recorded sessions of several harnesses that are embedded in the
binary (Claude Code with a subagent, a Claude Code failure, Codex, Gemini
CLI, opencode, Copilot CLI), replays one more live at its recorded pace
through the runner, as 'agentstream run' would run an agent, and prints the
URL to open. It serves until interrupted, then removes the temporary store.

The live replay runs 'agentstream demo replay NAME', the replay harness: it
prints an embedded recording (or a FILE) at the pace it was recorded, using
the lines' own times (gaps capped to a few seconds), else a short fixed
delay. Arguments after NAME are ignored, so it takes the flags a protocol
adds to a command.`

const demoReplayDoc = `Prints the native lines of an embedded recording (or of FILE, - for stdin)
at the pace they were recorded: the lines' own times where their dialect
carries them, gaps capped to --max-gap, else --delay between lines; every
wait is divided by --speed. Arguments after NAME are ignored.`

// demoExecutable returns the program the demo runs as its replay harness;
// tests point it at a built binary, since a test binary is not agentstream.
var demoExecutable = os.Executable

func cmdDemo(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 && args[0] == "replay" {
		return cmdDemoReplay(ctx, e, args[1:])
	}
	fs := newFlags(e, "demo", "[--addr 127.0.0.1:0] [--speed X] [--no-live] [--token T]", demoDoc)
	addr := fs.String("addr", "127.0.0.1:0", "the address to listen on (port 0: a free one)")
	speed := fs.Float64("speed", 1, "the pace of the live replay: 2 plays it twice as fast")
	noLive := fs.Bool("no-live", false, "only import the recordings: replay none live")
	token := fs.String("token", "", "the bearer token every request must carry (default $AGENTSTREAM_TOKEN)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream demo: no arguments expected (agentstream demo replay NAME runs the replay harness)")
		return exitUsage
	}
	if *speed <= 0 {
		fmt.Fprintf(e.stderr, "agentstream demo: --speed %v: want a positive number\n", *speed)
		return exitUsage
	}
	if *token == "" {
		*token = e.getenv("AGENTSTREAM_TOKEN")
	}
	if err := checkListenAddr(*addr, *token, false); err != nil {
		fmt.Fprintln(e.stderr, "agentstream demo:", err)
		return exitUsage
	}
	if err := runDemo(ctx, e, demoOptions{addr: *addr, token: *token, speed: *speed, live: !*noLive}); err != nil {
		fmt.Fprintln(e.stderr, "agentstream demo:", err)
		return exitError
	}
	return exitOK
}

type demoOptions struct {
	addr, token string
	speed       float64
	live        bool
}

// runDemo serves the demo until ctx is done. The temporary store is removed
// before it returns, whatever happened.
func runDemo(ctx context.Context, e *env, o demoOptions) (err error) {
	live := ""
	if o.live {
		live = " and one to replay live"
	}
	fmt.Fprintf(e.stderr, "agentstream demo: starting the web timeline over a temporary store, with %d recorded sessions to import%s\n", len(demo.Imports()), live)
	dir, err := os.MkdirTemp(e.getenv("TMPDIR"), "agentstream-demo-")
	if err != nil {
		return err
	}
	defer func() {
		if rerr := os.RemoveAll(dir); err == nil {
			err = rerr
		}
	}()
	st, err := sqlite.Open(filepath.Join(dir, "demo.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	defer ln.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := startServer(ctx, st, ln, api.Options{Token: o.token}, nil, nil)
	defer func() {
		if serr := srv.stop(); err == nil && serr != nil {
			err = serr
		}
	}()

	fmt.Fprintf(e.stderr, "agentstream demo: importing the recordings into %s\n", st.Path())
	if err := importDemo(ctx, st, time.Now()); err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while importing
		}
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(e.stderr, "agentstream demo: %d recorded sessions in a temporary store (%s); serving until interrupted\n", len(demo.Imports()), st.Path())
	fmt.Fprintf(e.stdout, "agentstream demo: open %s\n", url)

	liveDone := make(chan error, 1)
	if o.live {
		id := store.NewID(time.Now())
		fmt.Fprintf(e.stdout, "agentstream demo: live replay at %ssessions/%s\n", url, id)
		go func() { liveDone <- replayLive(ctx, st, id, o.speed) }()
	} else {
		liveDone <- nil
	}

	var serveErr error
	select {
	case serveErr = <-srv.errc:
		cancel()
	case <-ctx.Done():
	}
	// Stopping the replay ends the live session (reason aborted) before
	// the store closes.
	cancel()
	liveErr := <-liveDone
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	if liveErr != nil {
		return fmt.Errorf("live replay: %w", liveErr)
	}
	return nil
}

// importDemo stores the embedded recordings as finished sessions, through
// the code 'agentstream import' runs. A recording whose lines carry no
// times of their own is dated some minutes before now, one after the
// other, as a file's modification time would date it.
func importDemo(ctx context.Context, st *sqlite.Store, now time.Time) error {
	names := demo.Imports()
	for i, name := range names {
		data, err := demo.Read(name)
		if err != nil {
			return err
		}
		mtime := now.Add(-time.Duration(len(names)-i) * 7 * time.Minute)
		if _, _, err := importSeekable(ctx, st, bytes.NewReader(data), importOptions{protocol: "auto", mtime: mtime}); err != nil {
			return fmt.Errorf("import %s: %w", name, err)
		}
	}
	return nil
}

// replayLive runs the replay harness on demo.Live through the runner and
// records the session as id in st: its envelopes, live deltas included, and
// its native stdout lines. It returns once the session is closed.
func replayLive(ctx context.Context, st *sqlite.Store, id string, speed float64) error {
	exe, err := demoExecutable()
	if err != nil {
		return err
	}
	data, err := demo.Read(demo.Live)
	if err != nil {
		return err
	}
	protocol := demo.Protocol(data)
	a, err := adapter.Lookup(protocol)
	if err != nil {
		return err
	}
	command := []string{exe, "demo", "replay", "--speed", strconv.FormatFloat(speed, 'g', -1, 64), demo.Live}
	w, err := st.CreateWriter(ctx, store.NewSession{ID: id, Protocol: protocol, Harness: a.Harness, Command: command})
	if err != nil {
		return err
	}
	rec := &liveRecorder{w: w}
	spool := &store.LineSplitter{Stream: store.Stdout, Fn: rec.line}
	r := &runner.Runner{
		Command:   command,
		Protocol:  protocol,
		Handler:   rec,
		Spool:     spool,
		Session:   id,
		SkipTitle: true,
	}
	_, runErr := r.Run(ctx)
	// Run has returned: the spool is no longer written.
	spoolErr := spool.Close()
	if runErr != nil {
		// A harness that never started wrote nothing: say why in the
		// session, as the runner would have.
		if w.LastSeq() == 0 {
			_ = w.Handle(context.WithoutCancel(ctx), agentstream.Envelope{
				Session: id, Harness: a.Harness, Origin: agentstream.OriginLive, TS: time.Now(),
				Payload: &agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: agentstream.ReasonExit, Error: runErr.Error()},
			})
		}
	}
	return errors.Join(runErr, spoolErr, w.Close(ctx))
}

// liveRecorder stores what the runner reports in a store writer, as run
// does (see localRecording): envelopes from the runner's goroutine, native
// stdout lines from its spool goroutine and stderr lines as their events
// hold them, one call at a time as store.Writer asks.
type liveRecorder struct {
	mu sync.Mutex
	w  *sqlite.Writer
}

// Handle stores one envelope (a live delta is only published).
func (l *liveRecorder) Handle(ctx context.Context, env agentstream.Envelope) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line, ok := stderrLine(env); ok {
		if err := l.w.Line(ctx, line); err != nil {
			return err
		}
	}
	return l.w.Handle(ctx, env)
}

// line keeps one native stdout line; the spool's caller holds no lock.
func (l *liveRecorder) line(ln store.Line) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Line(context.Background(), ln)
}

func cmdDemoReplay(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "demo replay", "[--speed X] [--max-gap D] [--delay D] NAME|FILE|- [IGNORED...]", demoReplayDoc)
	speed := fs.Float64("speed", 1, "divide every wait by this: 2 plays twice as fast")
	maxGap := fs.Duration("max-gap", demo.DefaultMaxGap, "the longest wait between two lines with times of their own")
	delay := fs.Duration("delay", demo.DefaultDelay, "the wait before a line without a time of its own")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(e.stderr, "agentstream demo replay: NAME expected, one of: %v\n", demo.Names())
		return exitUsage
	}
	if *speed <= 0 {
		fmt.Fprintf(e.stderr, "agentstream demo replay: --speed %v: want a positive number\n", *speed)
		return exitUsage
	}
	name := fs.Arg(0)
	data, err := demo.Read(name)
	if errors.Is(err, os.ErrNotExist) {
		err = withInput(e, name, func(r io.Reader) error {
			var err error
			data, err = io.ReadAll(r)
			return err
		})
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream demo replay:", err)
		return exitError
	}
	rp := demo.Replay{Speed: *speed, MaxGap: *maxGap, Delay: *delay}
	if err := rp.Run(ctx, e.stdout, data); err != nil {
		if ctx.Err() != nil {
			return exitAborted
		}
		fmt.Fprintln(e.stderr, "agentstream demo replay:", err)
		return exitError
	}
	return exitOK
}
