package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/console"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/session"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// Exit statuses of run besides the harness's own.
const (
	exitOversized = 123 // a line over --max-line stopped the run
	exitIdle      = 124 // --idle-timeout stopped the harness
	exitDeadline  = 125 // --timeout stopped the harness
	exitNoStart   = 127 // the harness could not be started
)

const runDoc = `Runs a coding agent (the harness) and shows what it does as it does it, in a
terminal or a CI log. The protocol's flags are added to COMMAND (see
'agentstream protocols'), and the prompt goes where the protocol wants it:
on stdin, as a stream-json message, as the last argument, or over the Agent
Client Protocol. With no --prompt or --prompt-file, the prompt is read from
stdin when stdin is not a terminal. With --protocol auto (the default) the
dialect is detected from the first lines of stdout, no flags are added and the
prompt goes on stdin: name the protocol to have its flags added.

The run always ends for a known reason, written as the last event
(session.ended): the harness's own report (completion), its exit (exit), no
output for --idle-timeout (idle-timeout), the --timeout wall clock
(deadline), SIGINT or SIGTERM (aborted), or a line over --max-line
(oversized-event). Stopping the harness sends SIGTERM to its whole process
group, then SIGKILL after --grace; on Linux, so are the processes it started
that left the group (setsid, a double fork), found by the AGENTSTREAM_RUN
variable the runner adds to its environment. Whatever of the tree is left
when the run ends is stopped the same way.

Secrets the harness prints (API keys and tokens of known shapes, private
keys, the values of sensitive names such as PASSWORD=..., passwords in
URLs) are masked as its output is read, before anything stores, sends or
shows a line: by as many bytes, with a tag that is the same for the same
secret within a store (README, "Secrets"). --no-redact keeps them;
--redact-rules adds names, patterns and allowed values.

With --server URL the session goes to an agentstream server, which
normalizes and stores it. Every native line is first written to a spool file
($AGENTSTREAM_SPOOL_DIR, else agentstream/spool in the user cache directory)
and sent from there, so a server that is away costs disk, not memory, and
loses nothing: run goes on, retries with backoff, and resumes where the
server stopped taking lines. At the end run waits --upload-wait for the
server; past it, it names the spool and exits with the run's own status.
run --resume SPOOL sends the rest of a spool a run left (a crash, an outage)
and ends its session; run --session ID goes on from the unfinished spool of
that session. A finished spool is removed (docs/runs.md).

With --nats URL[,URL...] instead, the same spool is published to NATS
JetStream (a subject per session, in order and once each, whatever the
retries) for serve --nats to store; NATS away is waited out as a server
away is, and run --resume publishes a NATS spool to the servers of its
header, or --nats (docs/cluster.md).

In GitHub Actions (--ci github, the default when GITHUB_ACTIONS=true) each turn
is a ::group::, errors are ::error:: and retries and quota ::warning::, and a
Markdown recap is appended to $GITHUB_STEP_SUMMARY. Text from the agent can
never issue a workflow command or an escape sequence.

Exit status:
  the harness's own   when it ran to its end (128+N when signal N ended it);
                      1 when it exited 0 but the session failed; 0 or 1 by
                      the reported status when it had reported its end and
                      was stopped for lingering
  1                   an error of agentstream itself (writing --events, ...)
  2                   bad usage
  123                 a line over --max-line (oversized-event)
  124                 --idle-timeout (idle-timeout)
  125                 --timeout (deadline)
  127                 the harness could not be started (command not found, ...)
  130                 interrupted by SIGINT or SIGTERM (aborted)

With --resume: 0 once the server has the whole spool, 1 when it does not
within --upload-wait or refused it.`

func cmdRun(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "run", "[flags] -- COMMAND [ARGS...]", runDoc)
	protocol := fs.String("protocol", "auto", "the harness's protocol, or auto to detect it: "+protocolList())
	var prompts []string
	fs.Func("prompt", "the prompt; given again, a later message of the conversation (claude-stream and acp), sent when the harness ended the previous turn", func(v string) error {
		prompts = append(prompts, v)
		return nil
	})
	prompt := new(string)
	promptFile := fs.String("prompt-file", "", "read the prompt from `FILE` (- for stdin)")
	idle := fs.Duration("idle-timeout", 0, "stop the harness after this long without a line on stdout (0: never)")
	timeout := fs.Duration("timeout", 0, "stop the harness after this long (0: never)")
	grace := fs.Duration("grace", runner.DefaultGrace, "time between SIGTERM and SIGKILL")
	maxLine := fs.Int64("max-line", 0, "stop the run at a stdout line longer than this many bytes (0: no limit; longer lines than 16 MiB are kept as raw)")
	approve := fs.String("approve", runner.ApproveNone, "answer an ACP agent's permission requests: all or none")
	events := fs.String("events", "", "write the normalized event envelopes to `FILE`, one per line")
	spool := fs.String("spool", "", "write the harness's native stdout to `FILE`, byte for byte")
	summaryJSON := fs.String("summary-json", "", "write the recap of the run to `FILE` as JSON")
	sessionID := fs.String("session", "", "the session id of the envelopes (default: a new one)")
	ci := fs.String("ci", "auto", "CI log format: auto (github when GITHUB_ACTIONS=true), github or none")
	color := fs.String("color", "auto", "colour: auto, always or never")
	width := fs.Int("width", 0, "the width in columns (0: the terminal's, else $COLUMNS, else 80)")
	quiet := fs.Bool("quiet", false, "render nothing but errors")
	db := dbFlag(fs)
	noStore := fs.Bool("no-store", false, "do not write the session into the store")
	server := fs.String("server", "", "send the session to the agentstream server at `URL` instead of the local store")
	natsURL := fs.String("nats", "", "publish the session to NATS JetStream at `URL[,URL...]` instead, for serve --nats to store (docs/cluster.md)")
	token := fs.String("token", "", "the server's bearer token (default $AGENTSTREAM_TOKEN)")
	resume := fs.String("resume", "", "send the rest of the unfinished spool `SPOOL` that a run left (to its server, or --server) and end its session; no COMMAND")
	uploadWait := fs.Duration("upload-wait", 30*time.Second, "with --server or --resume, how long to wait at the end for the server to take the rest of the spool")
	rf := redactFlag(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "agentstream run: "+format+"\n", a...)
		return exitUsage
	}
	var followUps []string
	if len(prompts) > 0 {
		*prompt, followUps = prompts[0], prompts[1:]
	}
	if len(followUps) > 0 && *protocol != "claude-stream" && *protocol != "acp" {
		return usageErr("--prompt given %d times: only claude-stream and acp hold a conversation", len(prompts))
	}
	command := fs.Args()
	if *resume != "" {
		if len(command) > 0 {
			return usageErr("--resume takes no COMMAND")
		}
		tok := *token
		if tok == "" {
			tok = e.getenv("AGENTSTREAM_TOKEN")
		}
		return resumeSpool(ctx, e, *resume, *server, *natsURL, tok, *uploadWait)
	}
	if len(command) == 0 {
		return usageErr("no COMMAND (agentstream run [flags] -- COMMAND [ARGS...])")
	}
	if err := checkProtocol(*protocol, "auto"); err != nil {
		return usageErr("%v", err)
	}
	if *approve != runner.ApproveAll && *approve != runner.ApproveNone {
		return usageErr("--approve %q: want all or none", *approve)
	}
	if *prompt != "" && *promptFile != "" {
		return usageErr("--prompt and --prompt-file exclude each other")
	}
	if *server != "" && *natsURL != "" {
		return usageErr("--server and --nats exclude each other")
	}
	if *natsURL != "" && *protocol == "auto" {
		return usageErr("--nats needs --protocol: the ingest node normalizes the lines it is sent")
	}
	if *natsURL != "" && *noStore {
		return usageErr("--nats and --no-store exclude each other")
	}
	if *server != "" && *protocol == "auto" {
		return usageErr("--server needs --protocol: the server normalizes the lines it is sent")
	}
	if *server != "" && *noStore {
		return usageErr("--server and --no-store exclude each other")
	}
	opts, err := consoleOptions(e, *color, *ci, *width)
	if err != nil {
		return usageErr("%v", err)
	}
	opts.Quiet = *quiet
	opts.Now = time.Now

	text, err := readPrompt(e, *prompt, *promptFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: prompt: %v\n", err)
		return exitError
	}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	create := func(name string) (*os.File, error) {
		f, err := os.Create(name)
		if err == nil {
			closers = append(closers, f)
		}
		return f, err
	}
	summaryFile, err := openStepSummary(e, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: step summary: %v\n", err)
		return exitError
	}
	if summaryFile != nil {
		closers = append(closers, summaryFile)
		opts.StepSummary = summaryFile
	}
	render := console.New(e.stdout, opts)
	handlers := []agentstream.Handler{render}
	var eventsOut *eventsWriter
	if *events != "" {
		f, err := create(*events)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream run: %v\n", err)
			return exitError
		}
		eventsOut = &eventsWriter{w: bufio.NewWriterSize(f, 64<<10)}
		handlers = append(handlers, eventsOut)
	}
	cfg := session.Config{
		ID:            *sessionID,
		Command:       command,
		Protocol:      *protocol,
		Prompt:        text,
		FollowUps:     followUps,
		CloseWhenIdle: true,
		Policy:        session.Policy{Default: session.PolicyDeny},
		IdleTimeout:   *idle,
		Timeout:       *timeout,
		Grace:         *grace,
		MaxLine:       *maxLine,
		Handler:       agentstream.Fanout(handlers...),
	}
	if *approve == runner.ApproveAll {
		cfg.Policy.Default = session.PolicyAllow
	}
	if *protocol == "acp" && text == "" {
		fmt.Fprintf(e.stderr, "agentstream run: protocol acp needs a prompt\n")
		return exitError
	}
	if *sessionID != "" && !store.ValidID(*sessionID) {
		fmt.Fprintf(e.stderr, "agentstream run: bad --session %q: 1 to 128 letters, digits, '-', '_', '.' or ':'\n", *sessionID)
		return exitUsage
	}
	var spools []io.Writer
	if *spool != "" {
		f, err := create(*spool)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentstream run: %v\n", err)
			return exitError
		}
		spools = append(spools, f)
	}
	var rec recording
	switch {
	case *server != "" || *natsURL != "":
		tok := *token
		if tok == "" {
			tok = e.getenv("AGENTSTREAM_TOKEN")
		}
		rec, err = newRemoteRecording(ctx, e, *server, *natsURL, tok, *protocol, command, *sessionID, *uploadWait)
	case !*noStore:
		rec, err = newLocalRecording(ctx, e, *db, *sessionID, *protocol, command)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: %v\n", err)
		return exitError
	}
	var keys store.Keys
	if l, ok := rec.(*localRecording); ok {
		keys = l.st
	}
	red, err := rf.redactor(ctx, e, keys)
	if err != nil {
		if rec != nil {
			rec.finish(context.WithoutCancel(ctx), runner.Result{})
		}
		fmt.Fprintf(e.stderr, "agentstream run: %v\n", err)
		return exitError
	}
	if red != nil {
		cfg.Redact = red
	}
	if rec != nil {
		cfg.ID = rec.session()
		cfg.Handler = agentstream.Fanout(append(handlers, rec)...)
		spools = append(spools, rec.spool())
	}
	switch len(spools) {
	case 0:
	case 1:
		cfg.Spool = spools[0]
	default:
		cfg.Spool = io.MultiWriter(spools...)
	}

	res, err := runSession(ctx, cfg)
	if rec != nil {
		if cerr := rec.finish(context.WithoutCancel(ctx), res); err == nil && cerr != nil {
			err = fmt.Errorf("recording the session: %w", cerr)
		}
	}
	var startErr *runner.StartError
	if errors.As(err, &startErr) {
		fmt.Fprintf(e.stderr, "agentstream run: %s: %v\n", startErr.Command, startErr.Err)
		return exitNoStart
	}
	if cerr := render.Close(); err == nil {
		err = cerr
	}
	if eventsOut != nil {
		if ferr := eventsOut.w.Flush(); err == nil {
			err = ferr
		}
	}
	if err == nil && *summaryJSON != "" {
		err = writeSummary(*summaryJSON, res)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: %v\n", err)
		return exitError
	}
	return runExitCode(res)
}

// resumeSpool sends the rest of an unfinished spool and ends its session:
// with the end its run wrote, or, when the run died before writing one,
// as aborted.
func resumeSpool(ctx context.Context, e *env, path, server, natsURL, token string, wait time.Duration) int {
	sp, err := api.OpenSpool(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: --resume: %v\n", err)
		return exitError
	}
	defer sp.Close()
	if natsURL != "" && sp.Header().NATS == "" {
		fmt.Fprintf(e.stderr, "agentstream run: --resume: %s goes to the server %s, not to NATS\n", path, sp.Header().Server)
		return exitUsage
	}
	if !sp.Ended() {
		if err := sp.End(api.End{Reason: agentstream.ReasonAborted, Error: "the runner stopped before the session ended; its spool was resumed"}); err != nil {
			fmt.Fprintf(e.stderr, "agentstream run: --resume: %v\n", err)
			return exitError
		}
	}
	if natsURL != "" {
		// NATS servers given now take the place of the spool's.
		h := sp.Header()
		h.NATS = natsURL
		sp.SetHeader(h)
	}
	up, err := newSender(sp, server, token)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: --resume: %v\n", err)
		return exitError
	}
	defer up.Stop()
	to := server
	if h := sp.Header(); h.NATS != "" {
		to = "NATS " + h.NATS
	} else if to == "" {
		to = h.Server
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := up.Wait(wctx); err != nil {
		fmt.Fprintf(e.stderr, "agentstream run: --resume: session %s: %v; the rest stays in %s\n", sp.Session(), err, path)
		return exitError
	}
	fmt.Fprintf(e.stderr, "agentstream run: session %s sent to %s\n", sp.Session(), to)
	return exitOK
}

// runSession runs a session of the messages configured and returns how its
// harness ended.
func runSession(ctx context.Context, cfg session.Config) (runner.Result, error) {
	s, err := session.NewManager(session.Options{}).Open(ctx, cfg)
	if err != nil {
		return runner.Result{}, err
	}
	res, err := s.Wait(context.WithoutCancel(ctx))
	return res.Run, err
}

// runExitCode is the exit status of a run that went through.
func runExitCode(res runner.Result) int {
	switch res.Ended.Reason {
	case agentstream.ReasonIdleTimeout:
		return exitIdle
	case agentstream.ReasonDeadline:
		return exitDeadline
	case agentstream.ReasonAborted:
		return exitAborted
	case agentstream.ReasonOversizedEvent:
		return exitOversized
	}
	if res.Exited {
		if res.Signal != 0 {
			return 128 + int(res.Signal)
		}
		if res.ExitCode == 0 && res.Ended.Status != agentstream.StatusSucceeded {
			// The harness exited 0 but the session failed (an agent that
			// refused the handshake, a failure it reported): a CI step
			// must not pass.
			return exitError
		}
		return res.ExitCode
	}
	if res.Ended.Status == agentstream.StatusSucceeded {
		return exitOK
	}
	return exitError
}

// readPrompt returns the prompt from --prompt, --prompt-file, or stdin when
// it is not a terminal.
func readPrompt(e *env, prompt, file string) (string, error) {
	switch {
	case prompt != "":
		return prompt, nil
	case file != "":
		var b []byte
		err := withInput(e, file, func(r io.Reader) error {
			var err error
			b, err = io.ReadAll(r)
			return err
		})
		return string(b), err
	}
	if f, ok := e.stdin.(*os.File); ok {
		if _, tty := console.Terminal(f); tty {
			return "", nil
		}
	}
	if e.stdin == nil {
		return "", nil
	}
	b, err := io.ReadAll(e.stdin)
	return string(b), err
}

// eventsWriter writes the stored envelopes (not the live deltas) as JSON
// lines.
type eventsWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (ew *eventsWriter) Handle(_ context.Context, env agentstream.Envelope) error {
	if agentstream.IsLive(env.Type()) {
		return nil
	}
	ew.buf = env.AppendJSON(ew.buf[:0])
	ew.buf = append(ew.buf, '\n')
	if _, err := ew.w.Write(ew.buf); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	if env.Type() == agentstream.TypeSessionEnded {
		if err := ew.w.Flush(); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	return nil
}

// runSummary is what --summary-json writes.
type runSummary struct {
	Session    string            `json:"session"`
	Protocol   string            `json:"protocol"`
	Harness    string            `json:"harness"`
	PID        int               `json:"pid"`
	Status     string            `json:"status"`
	Reason     string            `json:"reason"`
	StopReason string            `json:"stopReason"`
	Error      string            `json:"error"`
	Exited     bool              `json:"exited"`
	ExitCode   *int              `json:"exitCode"`
	Signal     *string           `json:"signal"`
	DurationMs int64             `json:"durationMs"`
	LastSeq    int64             `json:"lastSeq"`
	Recap      agentstream.Recap `json:"recap"`
}

func writeSummary(name string, res runner.Result) error {
	s := runSummary{
		Session: res.Session, Protocol: res.Protocol, Harness: res.Harness, PID: res.PID,
		Status: res.Ended.Status, Reason: res.Ended.Reason, StopReason: res.Ended.StopReason, Error: res.Ended.Error,
		Exited: res.Exited, DurationMs: res.Duration.Milliseconds(), LastSeq: res.LastSeq, Recap: res.Recap,
	}
	if res.Signal != 0 {
		sig := res.Signal.String()
		s.Signal = &sig
	} else {
		code := res.ExitCode
		s.ExitCode = &code
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	return nil
}
