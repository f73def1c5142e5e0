package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/session"
)

const chatDoc = `Talks to a coding agent in the terminal: each line typed is a message, and
what the agent does shows as it does it. The harness is a profile of
--profiles FILE (default $AGENTSTREAM_PROFILES), or the COMMAND after --
with its --protocol (claude-stream, acp or codex-app hold a conversation;
the others take one message).

A line typed while a turn runs waits for it (queue); these commands say
otherwise:
  /steer TEXT       send TEXT into the running turn (queued when the
                    harness cannot take it, which is said)
  /interrupt TEXT   stop the running turn, then send TEXT
  /mode MODE        change the permission mode
  /quit             end the session

Permission requests are asked at the prompt: y (allow), a (always), n
(deny; the rest of the line is told to the agent). A question's answer is
an option's number or label, or any text. Ctrl-C interrupts the running
turn; a second Ctrl-C within three seconds ends the session, as Ctrl-D
does.

The session is kept in the store like a run's (--no-store not to).`

// quitWindow is how soon a second Ctrl-C must follow the first to end the
// session.
const quitWindow = 3 * time.Second

func cmdChat(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "chat", "[flags] PROFILE | [flags] -- COMMAND [ARGS...]", chatDoc)
	profilesFile := fs.String("profiles", "", "the profiles `FILE` (default $AGENTSTREAM_PROFILES)")
	protocol := fs.String("protocol", "claude-stream", "the protocol of the COMMAND: "+protocolList())
	prompt := fs.String("prompt", "", "the first message")
	approve := fs.String("approve", "ask", "permission requests: ask (at the prompt), all or none; a profile's policy otherwise")
	mode := fs.String("permission-mode", "", "the harness's permission mode at the start")
	color := fs.String("color", "auto", "colour: auto, always or never")
	width := fs.Int("width", 0, "the width in columns (0: the terminal's, else $COLUMNS, else 80)")
	db := dbFlag(fs)
	noStore := fs.Bool("no-store", false, "do not write the session into the store")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "agentstream chat: "+format+"\n", a...)
		return exitUsage
	}
	var cfg session.Config
	switch {
	case fs.NArg() == 0:
		return usageErr("no PROFILE or COMMAND (agentstream chat PROFILE, or agentstream chat -- COMMAND)")
	case argsAfterDash(args):
		if err := checkProtocol(*protocol); err != nil {
			return usageErr("%v", err)
		}
		cfg = session.Config{Command: fs.Args(), Protocol: *protocol}
	case fs.NArg() == 1:
		name := *profilesFile
		if name == "" {
			name = e.getenv("AGENTSTREAM_PROFILES")
		}
		if name == "" {
			return usageErr("profile %q: no --profiles FILE (nor $AGENTSTREAM_PROFILES)", fs.Arg(0))
		}
		ps, err := session.ReadProfiles(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream chat: %v\n", err)
			return exitError
		}
		p, ok := ps[fs.Arg(0)]
		if !ok {
			return usageErr("no profile %q in %s (there are: %s)", fs.Arg(0), name, strings.Join(ps.Names(), ", "))
		}
		cfg = p.Config(nil)
	default:
		return usageErr("one PROFILE, or -- COMMAND")
	}
	switch *approve {
	case "ask":
		if len(cfg.Policy.Rules) == 0 && cfg.Policy.Default == "" {
			cfg.Policy.Default = session.PolicyAsk
		}
	case "all":
		cfg.Policy = session.Policy{Default: session.PolicyAllow}
	case "none":
		cfg.Policy = session.Policy{Default: session.PolicyDeny}
	default:
		return usageErr("--approve %q: want ask, all or none", *approve)
	}
	if *mode != "" {
		cfg.PermissionMode = *mode
	}
	cfg.Prompt = *prompt
	opts, err := consoleOptions(e, *color, "none", *width)
	if err != nil {
		return usageErr("%v", err)
	}
	opts.Now = time.Now
	out := &lockedWriter{w: e.stdout}
	render := console.New(out, opts)
	ui := newChatUI(out)
	handlers := []agentstream.Handler{render, ui}
	var rec recording
	if !*noStore {
		rec, err = newLocalRecording(ctx, e, *db, cfg.ID, cfg.Protocol, cfg.Command)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream chat: %v\n", err)
			return exitError
		}
		cfg.ID = rec.session()
		cfg.Spool = rec.spool()
		handlers = append(handlers, rec)
	}
	cfg.Handler = agentstream.Fanout(handlers...)

	// Ctrl-C is the chat's: it interrupts the turn, twice it quits. The
	// session lives until the chat ends it, whatever ctx does.
	sigint := make(chan os.Signal, 4)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)
	m := session.NewManager(session.Options{})
	s, err := m.Open(context.WithoutCancel(ctx), cfg)
	var startErr *runner.StartError
	if errors.As(err, &startErr) {
		fmt.Fprintf(e.stderr, "agentstream chat: %s: %v\n", startErr.Command, startErr.Err)
		return exitNoStart
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream chat: %v\n", err)
		return exitError
	}
	code := ui.loop(ctx, s, e.stdin, sigint)
	res, werr := s.Wait(context.Background())
	if rec != nil {
		if cerr := rec.finish(context.WithoutCancel(ctx), res.Run); werr == nil && cerr != nil {
			werr = fmt.Errorf("recording the session: %w", cerr)
		}
	}
	if cerr := render.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		fmt.Fprintf(e.stderr, "agentstream chat: %v\n", werr)
		return exitError
	}
	if code != exitOK {
		return code
	}
	if res.State == agentstream.StateFailed {
		fmt.Fprintf(e.stderr, "agentstream chat: the session failed: %s\n", res.Reason)
		return exitError
	}
	return exitOK
}

// argsAfterDash reports whether the command line has a "--" (a COMMAND).
func argsAfterDash(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
	}
	return false
}

// lockedWriter serializes the writes of the renderer (on the session's
// goroutine) and of the prompt (on the chat's).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// chatUI is the prompt's side of a chat: it learns from the session's
// events what to ask (permission requests, questions) and when the
// session ended, and reads the person's lines.
type chatUI struct {
	out  io.Writer
	wake chan struct{}

	mu     sync.Mutex
	asks   []agentstream.Envelope // permission requests and questions, in order
	solved map[string]bool
	state  string
	ended  bool
}

func newChatUI(out io.Writer) *chatUI {
	return &chatUI{out: out, wake: make(chan struct{}, 1), solved: map[string]bool{}}
}

// Handle notes the events the prompt acts on. It never blocks the session.
func (u *chatUI) Handle(_ context.Context, e agentstream.Envelope) error {
	u.mu.Lock()
	switch p := e.Payload.(type) {
	case *agentstream.PermissionRequest:
		u.asks = append(u.asks, e)
	case *agentstream.Question:
		u.asks = append(u.asks, e)
	case *agentstream.RequestResolved:
		u.solved[p.RequestID] = true
	case *agentstream.SessionState:
		u.state = p.State
		u.ended = p.State == agentstream.StateClosed || p.State == agentstream.StateFailed
	default:
		u.mu.Unlock()
		return nil
	}
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
	return nil
}

// ask returns the oldest request nobody answered yet.
func (u *chatUI) ask() (agentstream.Envelope, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for len(u.asks) > 0 {
		e := u.asks[0]
		if !u.solved[requestIDOf(e)] {
			return e, true
		}
		u.asks = u.asks[1:]
	}
	return agentstream.Envelope{}, false
}

func (u *chatUI) status() (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state, u.ended
}

func requestIDOf(e agentstream.Envelope) string {
	switch p := e.Payload.(type) {
	case *agentstream.PermissionRequest:
		return p.RequestID
	case *agentstream.Question:
		return p.RequestID
	}
	return ""
}

// loop reads the person's lines and signals until the session ended, and
// returns the exit code the chat owes for how the person left.
func (u *chatUI) loop(ctx context.Context, s *session.Session, stdin io.Reader, sigint <-chan os.Signal) int {
	lines := make(chan string)
	// The reader returns at the end of stdin (or when the program exits,
	// since a blocked read of a terminal cannot be undone).
	go func() {
		defer close(lines)
		if stdin == nil {
			return
		}
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var lastInt time.Time
	asked := ""
	bg := context.Background()
	// ctx ends at the first SIGINT as well as at SIGTERM: once a Ctrl-C
	// came, it says nothing more.
	ctxDone := ctx.Done()
	for {
		if _, ended := u.status(); ended {
			return exitOK
		}
		if a, ok := u.ask(); ok && requestIDOf(a) != asked {
			asked = requestIDOf(a)
			fmt.Fprint(u.out, askText(a))
		}
		select {
		case <-s.Done():
			return exitOK
		case <-u.wake:
		case <-ctxDone:
			// A SIGTERM, or a Ctrl-C whose own delivery on sigint follows.
			ctxDone = nil
			select {
			case <-sigint:
				lastInt = u.interrupt(bg, s, lastInt)
				continue
			case <-time.After(50 * time.Millisecond):
			}
			s.Close(bg)
			<-s.Done()
			return exitAborted
		case <-sigint:
			ctxDone = nil
			if !lastInt.IsZero() && time.Since(lastInt) < quitWindow {
				fmt.Fprintln(u.out, "· ending the session")
				s.Close(bg)
				<-s.Done()
				return exitOK
			}
			lastInt = u.interrupt(bg, s, lastInt)
		case line, ok := <-lines:
			if !ok {
				s.Close(bg)
				<-s.Done()
				return exitOK
			}
			if a, ok := u.ask(); ok {
				if err := answer(bg, s, a, line); err != nil {
					fmt.Fprintf(u.out, "! %v\n", err)
				} else {
					u.mu.Lock()
					u.solved[requestIDOf(a)] = true
					u.mu.Unlock()
				}
				asked = ""
				continue
			}
			if quit := u.command(bg, s, line); quit {
				<-s.Done()
				return exitOK
			}
		}
	}
}

// interrupt answers a Ctrl-C: the running turn is interrupted; the next
// Ctrl-C soon after ends the session.
func (u *chatUI) interrupt(ctx context.Context, s *session.Session, _ time.Time) time.Time {
	err := s.Interrupt(ctx)
	switch {
	case errors.Is(err, session.ErrNotRunning):
		fmt.Fprintln(u.out, "· no turn runs (Ctrl-C again to end the session)")
	case err != nil:
		fmt.Fprintf(u.out, "! interrupt: %v\n", err)
	default:
		fmt.Fprintln(u.out, "· interrupting (Ctrl-C again to end the session)")
	}
	return time.Now()
}

// command acts on one line; it reports whether the session is ending.
func (u *chatUI) command(ctx context.Context, s *session.Session, line string) bool {
	text := strings.TrimSpace(line)
	if text == "" {
		return false
	}
	mode := agentstream.ModeQueue
	switch verb, rest, _ := strings.Cut(text, " "); verb {
	case "/quit", "/exit":
		s.Close(ctx)
		return true
	case "/steer":
		mode, text = agentstream.ModeSteer, strings.TrimSpace(rest)
	case "/interrupt":
		mode, text = agentstream.ModeInterrupt, strings.TrimSpace(rest)
	case "/mode":
		if err := s.SetMode(ctx, strings.TrimSpace(rest)); err != nil {
			fmt.Fprintf(u.out, "! mode: %v\n", err)
		}
		return false
	}
	if text == "" {
		return false
	}
	if _, err := s.Send(ctx, text, mode); err != nil {
		fmt.Fprintf(u.out, "! %v\n", err)
	}
	return false
}

// askText is the prompt of a request.
func askText(e agentstream.Envelope) string {
	switch p := e.Payload.(type) {
	case *agentstream.PermissionRequest:
		what := p.Name
		if in := strings.TrimSpace(p.Input); in != "" && in != "{}" {
			if len(in) > 200 {
				in = in[:200] + "…"
			}
			what += " " + in
		}
		return "? allow " + what + "  [y]es [a]lways [n]o: "
	case *agentstream.Question:
		var b strings.Builder
		for _, q := range p.Questions {
			b.WriteString("? " + q.Question + "\n")
			for i, o := range q.Options {
				fmt.Fprintf(&b, "  %d. %s\n", i+1, o.Label)
			}
		}
		b.WriteString("answer: ")
		return b.String()
	}
	return ""
}

// answer answers a request from the person's line.
func answer(ctx context.Context, s *session.Session, e agentstream.Envelope, line string) error {
	text := strings.TrimSpace(line)
	switch p := e.Payload.(type) {
	case *agentstream.PermissionRequest:
		word, rest, _ := strings.Cut(text, " ")
		switch strings.ToLower(word) {
		case "y", "yes":
			return s.Answer(ctx, p.RequestID, session.Answer{Decision: session.Allow})
		case "a", "always":
			return s.Answer(ctx, p.RequestID, session.Answer{Decision: session.AllowAlways})
		case "n", "no":
			return s.Answer(ctx, p.RequestID, session.Answer{Decision: session.Deny, Message: strings.TrimSpace(rest)})
		}
		return fmt.Errorf("answer y, a or n (%q)", text)
	case *agentstream.Question:
		answers := map[string]string{}
		for _, q := range p.Questions {
			a := text
			if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(q.Options) {
				a = q.Options[n-1].Label
			}
			answers[q.Question] = a
		}
		return s.Answer(ctx, p.RequestID, session.Answer{Decision: session.Allow, Answers: answers})
	}
	return nil
}
