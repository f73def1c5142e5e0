package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/adapter/text"
	"github.com/agentstream/agentstream/console"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/runner"
	"github.com/google/go-cmp/cmp"
)

// harness is the fake harness program, built once.
var harness string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runner-test")
	if err != nil {
		panic(err)
	}
	// Runs of the agentstream command keep their sessions in this
	// directory's store, not the user's.
	os.Setenv("AGENTSTREAM_DB", filepath.Join(dir, "agentstream.db"))
	harness = filepath.Join(dir, "fakeharness")
	if out, err := exec.Command("go", "build", "-o", harness, "./testdata/fakeharness").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// recorder keeps every envelope it is given.
type recorder struct {
	envs []agentstream.Envelope
	fn   func(agentstream.Envelope) error
}

func (r *recorder) Handle(_ context.Context, e agentstream.Envelope) error {
	r.envs = append(r.envs, e)
	if r.fn != nil {
		return r.fn(e)
	}
	return nil
}

func (r *recorder) of(typ string) []agentstream.Envelope {
	var out []agentstream.Envelope
	for _, e := range r.envs {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

// run runs r with a recorder and checks what must hold for every run: dense
// sequence numbers, a last stored event that is the result's session.ended,
// no process of the harness's group left, no goroutine left.
func run(t *testing.T, ctx context.Context, r *runner.Runner) (runner.Result, *recorder, error) {
	t.Helper()
	goroutines := runtime.NumGoroutine()
	rec := &recorder{}
	if h, ok := r.Handler.(*recorder); ok {
		rec = h
	}
	r.Handler = rec
	if r.Grace == 0 {
		r.Grace = 500 * time.Millisecond
	}
	if r.Env == nil {
		r.SkipTitle = true
	}
	res, err := r.Run(ctx)
	if err != nil {
		var se *runner.StartError
		if errors.As(err, &se) {
			return res, rec, err
		}
	}
	var seq int64
	var last *agentstream.Envelope
	for i, e := range rec.envs {
		if agentstream.IsLive(e.Type()) {
			if e.Seq != 0 {
				t.Errorf("live %s has seq %d", e.Type(), e.Seq)
			}
			continue
		}
		seq++
		if e.Seq != seq {
			t.Fatalf("envelope %d (%s) has seq %d, want %d", i, e.Type(), e.Seq, seq)
		}
		if e.Session != res.Session || e.TS.IsZero() {
			t.Errorf("envelope %d: session %q ts %v", i, e.Session, e.TS)
		}
		last = &rec.envs[i]
	}
	if res.LastSeq != seq {
		t.Errorf("Result.LastSeq = %d, want %d", res.LastSeq, seq)
	}
	var ended *agentstream.Envelope
	for i := len(rec.envs) - 1; i >= 0 && ended == nil; i-- {
		if rec.envs[i].Type() == agentstream.TypeSessionEnded {
			ended = &rec.envs[i]
		}
	}
	switch {
	case ended == nil:
		t.Errorf("no session.ended")
	case *ended.Payload.(*agentstream.SessionEnded) != res.Ended:
		t.Errorf("Result.Ended = %+v, last session.ended %+v", res.Ended, ended.Payload)
	case ended.Source == nil && last != ended && ended.Payload.(*agentstream.SessionEnded).Reason != agentstream.ReasonCompletion:
		// The runner writes its own session.ended last.
		t.Errorf("the runner's session.ended is followed by %s", last.Type())
	}
	checkGroupGone(t, res.PID)
	checkGoroutines(t, goroutines)
	return res, rec, err
}

// checkGroupGone fails when a live process of group pgid remains.
func checkGroupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 0 {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids := groupMembers(pgid)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of group %d left behind: %v", pgid, pids)
			for _, p := range pids {
				syscall.Kill(p, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupMembers lists the live (not zombie) processes of group pgid.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if alive(pid) && procField(pid, 4) == strconv.Itoa(pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procField is field n (0-based, after the command name) of /proc/pid/stat.
func procField(pid, n int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if n-2 < 0 || n-2 >= len(f) {
		return ""
	}
	return f[n-2]
}

// alive reports whether pid is a process that is not a zombie.
func alive(pid int) bool {
	s := procField(pid, 2)
	return s != "" && s != "Z" && s != "X"
}

func checkGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Errorf("goroutines left: %d, before %d\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// offline normalizes a file as agentstream normalize does, for comparison.
func offline(t *testing.T, protocol, name string) []agentstream.Envelope {
	t.Helper()
	a, err := adapter.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Harness: a.Harness})
	lr := agentstream.NewLineReader(f)
	var envs []agentstream.Envelope
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		envs = n.Line(envs, l, time.Time{})
	}
	return envs
}

// stdoutEvents renders the events that came from stdout lines as
// "type@line payload", for comparisons that ignore time and session.
func stdoutEvents(envs []agentstream.Envelope) []string {
	var out []string
	for _, e := range envs {
		if e.Source == nil || e.Source.Stream != "stdout" {
			continue
		}
		out = append(out, fmt.Sprintf("%s@%d %s", e.Type(), e.Source.Line, e.Payload.AppendJSON(nil)))
	}
	return out
}

func TestReplay(t *testing.T) {
	const file = "testdata/claude-turn-tools.jsonl"
	for _, protocol := range []string{"claude-json", "auto"} {
		t.Run(protocol, func(t *testing.T) {
			var spool bytes.Buffer
			res, rec, err := run(t, context.Background(), &runner.Runner{
				Command:  []string{harness, "replay", "-stdin", "-delay", "1ms", file},
				Protocol: protocol,
				Prompt:   "add subtract to math.js",
				Spool:    &spool,
			})
			if err != nil {
				t.Fatal(err)
			}
			want := runner.Result{Protocol: "claude-json", Harness: "claude-code", Exited: true}
			got := runner.Result{Protocol: res.Protocol, Harness: res.Harness, Exited: res.Exited, ExitCode: res.ExitCode}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if res.Ended.Reason != agentstream.ReasonCompletion || res.Ended.Status != agentstream.StatusSucceeded {
				t.Errorf("ended %+v", res.Ended)
			}
			native, _ := os.ReadFile(file)
			if !bytes.Equal(spool.Bytes(), native) {
				t.Errorf("spool differs from the harness's stdout (%d vs %d bytes)", spool.Len(), len(native))
			}
			// The turn starts with the prompt the runner sent: turn.started,
			// then the prompt as a user message, both written by the runner.
			if ts, ok := rec.envs[0].Payload.(*agentstream.TurnStarted); !ok || ts.Turn != 1 || rec.envs[0].Source != nil {
				t.Errorf("first event is %s %+v, want turn.started 1 with no source", rec.envs[0].Type(), rec.envs[0].Payload)
			}
			first, ok := rec.envs[1].Payload.(*agentstream.Message)
			if !ok || first.Role != "user" || first.Text != "add subtract to math.js" || rec.envs[1].Source != nil {
				t.Errorf("second event is %s %+v, want the prompt as a user message", rec.envs[1].Type(), rec.envs[1].Payload)
			}
			if st := rec.of(agentstream.TypeStderr); len(st) != 1 || st[0].Payload.(*agentstream.Stderr).Text != "prompt: add subtract to math.js" {
				t.Errorf("the prompt did not arrive on stdin: %+v", st)
			}
			// Offline, the turn starts at the first line instead.
			if diff := cmp.Diff(stdoutEvents(offline(t, "claude-json", file))[1:], stdoutEvents(rec.envs)); diff != "" {
				t.Errorf("events differ from offline normalization (-offline +run):\n%s", diff)
			}
			if res.Recap.OutputTokens == nil || *res.Recap.OutputTokens != 258 {
				t.Errorf("recap %+v", res.Recap)
			}
		})
	}
}

func TestDetectText(t *testing.T) {
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "silent", "testdata/inject-stderr-synthetic.txt"},
		Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Protocol != "none" || len(rec.of(agentstream.TypeRaw)) != 4 {
		t.Errorf("protocol %q, raw events %d", res.Protocol, len(rec.of(agentstream.TypeRaw)))
	}
	if res.Ended.Reason != agentstream.ReasonDeadline {
		t.Errorf("ended %+v", res.Ended)
	}
}

// argsOf returns what the fake harness in mode args printed.
func argsOf(t *testing.T, rec *recorder) (args []string, stdin string) {
	t.Helper()
	st := rec.of(agentstream.TypeStderr)
	if len(st) != 1 {
		t.Fatalf("stderr events: %+v", st)
	}
	var v struct {
		Args  []string `json:"args"`
		Stdin string   `json:"stdin"`
	}
	if err := json.Unmarshal([]byte(st[0].Payload.(*agentstream.Stderr).Text), &v); err != nil {
		t.Fatal(err)
	}
	return v.Args, v.Stdin
}

func TestPromptDelivery(t *testing.T) {
	textDecoder := func() agentstream.Decoder { return text.NewDecoder() }
	for _, tc := range []struct {
		protocol  string
		prompt    string
		wantArgs  []string
		wantStdin string
		args      []string // the command's own arguments
	}{
		{"opencode-json", "fix it", []string{"--format", "json", "fix it"}, "", nil},
		// Copilot CLI takes the prompt only as the value of -p, and no
		// flag after it.
		{"copilot-json", "fix it", []string{"--output-format", "json", "-p", "fix it"}, "", nil},
		{"copilot-json", "fix it", []string{"--output-format", "json", "-p", "fix it"}, "", []string{"-p"}},
		{"copilot-json", "fix it", []string{"--allow-all", "--output-format", "json", "-p", "fix it"}, "", []string{"--allow-all", "-p"}},
		{"codex-json", "fix it", []string{"--json", "-"}, "fix it", nil},
		{"claude-json", "fix it", []string{"--output-format", "stream-json", "--verbose"}, "fix it", nil},
		{"claude-json", "", []string{"--output-format", "stream-json", "--verbose"}, "", nil},
		{"none", "plain", []string{}, "plain", nil},
	} {
		t.Run(tc.protocol+"/"+tc.prompt+"/"+strings.Join(tc.args, " "), func(t *testing.T) {
			res, rec, err := run(t, context.Background(), &runner.Runner{
				Command:    append([]string{harness, "args"}, tc.args...),
				Protocol:   tc.protocol,
				Prompt:     tc.prompt,
				NewDecoder: textDecoder,
			})
			if err != nil {
				t.Fatal(err)
			}
			args, stdin := argsOf(t, rec)
			if diff := cmp.Diff(tc.wantArgs, args); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
			if stdin != tc.wantStdin {
				t.Errorf("stdin %q, want %q", stdin, tc.wantStdin)
			}
			if res.Ended.Reason != agentstream.ReasonExit || res.Ended.Status != agentstream.StatusSucceeded || res.Ended.Error != "" {
				t.Errorf("ended %+v", res.Ended)
			}
		})
	}
}

func TestStreamJSON(t *testing.T) {
	start := time.Now()
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command:  []string{harness, "replay", "-stream-stdin", "testdata/claude-turn-tools.jsonl"},
		Protocol: "claude-stream",
		Prompt:   "say \"hi\"",
		Grace:    10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exited || res.Ended.Reason != agentstream.ReasonCompletion {
		t.Errorf("exited %v, ended %+v: stdin was not closed after the result", res.Exited, res.Ended)
	}
	if time.Since(start) > 8*time.Second {
		t.Errorf("the harness was not told to finish")
	}
	st := rec.of(agentstream.TypeStderr)
	want := `stdin: {"type":"user","message":{"role":"user","content":[{"type":"text","text":"say \"hi\""}]}}`
	if len(st) == 0 || st[0].Payload.(*agentstream.Stderr).Text != want {
		t.Errorf("stdin got %+v, want %s", st, want)
	}
}

func TestIdleTimeout(t *testing.T) {
	start := time.Now()
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command:     []string{harness, "silent", "testdata/claude-interrupted.jsonl"},
		Protocol:    "claude-json",
		IdleTimeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentstream.SessionEnded{Status: "failed", Reason: "idle-timeout", Error: "no output for 300ms"}
	if diff := cmp.Diff(want, res.Ended); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
	if res.Exited || res.Signal != syscall.SIGTERM {
		t.Errorf("exited %v signal %v, want stopped by SIGTERM", res.Exited, res.Signal)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("stopped after %v", d)
	}
	checkPartial(t, rec)
}

// checkPartial checks that the deltas of the interrupted fixture were
// flushed as a partial message.
func checkPartial(t *testing.T, rec *recorder) {
	t.Helper()
	var deltas strings.Builder
	for _, e := range rec.of(agentstream.TypeMessageDelta) {
		deltas.WriteString(e.Payload.(*agentstream.MessageDelta).Text)
	}
	var partial *agentstream.Message
	for _, e := range rec.of(agentstream.TypeMessage) {
		if m := e.Payload.(*agentstream.Message); m.Partial {
			partial = m
		}
	}
	if partial == nil || partial.Text != deltas.String() || deltas.Len() == 0 {
		t.Errorf("no partial message with the deltas' text (%d chars of deltas)", deltas.Len())
	}
}

func TestExitMidStream(t *testing.T) {
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command:  []string{harness, "replay", "-exit", "3", "testdata/claude-interrupted.jsonl"},
		Protocol: "claude-json",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentstream.SessionEnded{Status: "failed", Reason: "exit", Error: "exit status 3"}
	if diff := cmp.Diff(want, res.Ended); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
	if !res.Exited || res.ExitCode != 3 {
		t.Errorf("exited %v code %d", res.Exited, res.ExitCode)
	}
	checkPartial(t, rec)
}

func TestDeadline(t *testing.T) {
	res, _, err := run(t, context.Background(), &runner.Runner{
		Command:     []string{harness, "forever"},
		Protocol:    "jsonl",
		IdleTimeout: 10 * time.Second,
		Timeout:     400 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := agentstream.SessionEnded{Status: "failed", Reason: "deadline", Error: "timeout of 400ms reached"}
	if diff := cmp.Diff(want, res.Ended); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
}

// TestDeadlineAfterCompletion: a harness that reported its end and then
// hangs is stopped, and the session still ended by completion.
func TestDeadlineAfterCompletion(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		grace   time.Duration
	}{
		{"deadline", 500 * time.Millisecond, 10 * time.Second},
		{"lingering", 0, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := run(t, context.Background(), &runner.Runner{
				Command:  []string{harness, "replay", "-hang", "testdata/claude-turn-tools.jsonl"},
				Protocol: "claude-json",
				Timeout:  tc.timeout,
				Grace:    tc.grace,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Ended.Reason != agentstream.ReasonCompletion || res.Ended.Status != agentstream.StatusSucceeded || res.Exited {
				t.Errorf("exited %v, ended %+v", res.Exited, res.Ended)
			}
		})
	}
}

func TestAbort(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &recorder{fn: func(e agentstream.Envelope) error {
		if e.Source != nil {
			cancel()
		}
		return nil
	}}
	res, _, err := run(t, ctx, &runner.Runner{Command: []string{harness, "forever"}, Protocol: "jsonl", Handler: rec})
	if err != nil {
		t.Fatal(err)
	}
	want := agentstream.SessionEnded{Status: "cancelled", Reason: "aborted", Error: "interrupted"}
	if diff := cmp.Diff(want, res.Ended); diff != "" {
		t.Errorf("ended (-want +got):\n%s", diff)
	}
}

func TestHandlerError(t *testing.T) {
	boom := errors.New("disk full")
	rec := &recorder{fn: func(e agentstream.Envelope) error {
		if e.Type() == agentstream.TypeRaw {
			return boom
		}
		return nil
	}}
	res, rec, err := run(t, context.Background(), &runner.Runner{Command: []string{harness, "forever"}, Protocol: "jsonl", Handler: rec})
	if !errors.Is(err, boom) {
		t.Fatalf("Run error %v, want %v", err, boom)
	}
	if res.Ended.Reason != agentstream.ReasonAborted || res.Ended.Error != "handler: disk full" {
		t.Errorf("ended %+v", res.Ended)
	}
	if rec.envs[len(rec.envs)-1].Type() != agentstream.TypeSessionEnded {
		t.Errorf("the handler did not get the end of the session")
	}
}

func TestGrandchild(t *testing.T) {
	for _, tc := range []struct {
		name       string
		exit       bool
		wantReason string
	}{
		{"stopped with the harness", false, agentstream.ReasonDeadline},
		{"left behind holding stdout", true, agentstream.ReasonExit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			cmd := []string{harness, "grandchild", pidfile}
			if tc.exit {
				cmd = append(cmd, "-exit")
			}
			res, _, err := run(t, context.Background(), &runner.Runner{
				Command: cmd, Protocol: "claude-json", Timeout: 500 * time.Millisecond, Grace: 300 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Ended.Reason != tc.wantReason {
				t.Errorf("ended %+v", res.Ended)
			}
			b, err := os.ReadFile(pidfile)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range strings.Fields(string(b)) {
				pid, _ := strconv.Atoi(f)
				if alive(pid) {
					t.Errorf("process %d survived", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func TestSIGKILLAfterGrace(t *testing.T) {
	start := time.Now()
	res, _, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "ignoreterm"}, Protocol: "jsonl",
		IdleTimeout: 200 * time.Millisecond, Grace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != syscall.SIGKILL || res.Ended.Reason != agentstream.ReasonIdleTimeout {
		t.Errorf("signal %v, ended %+v", res.Signal, res.Ended)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("killed after %v, before the grace period ended", d)
	}
}

func TestStderrFlood(t *testing.T) {
	const n = 100_000
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "flood", strconv.Itoa(n)}, Protocol: "claude-json",
	})
	if err != nil {
		t.Fatal(err)
	}
	st := rec.of(agentstream.TypeStderr)
	if len(st) != n {
		t.Fatalf("%d stderr events, want %d", len(st), n)
	}
	for i, e := range st {
		if e.Source.Line != int64(i+1) || e.Payload.(*agentstream.Stderr).Text != "stderr line "+strconv.Itoa(i) {
			t.Fatalf("stderr event %d: line %d %+v", i, e.Source.Line, e.Payload)
		}
	}
	if res.Ended.Reason != agentstream.ReasonCompletion {
		t.Errorf("ended %+v", res.Ended)
	}
}

// countWriter counts bytes.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB line")
	}
	const size = 100 << 20
	var spool countWriter
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "bigline", strconv.Itoa(size)}, Protocol: "claude-json", Spool: &spool,
	})
	if err != nil {
		t.Fatal(err)
	}
	raws := rec.of(agentstream.TypeRaw)
	if len(raws) != 1 {
		t.Fatalf("%d raw events", len(raws))
	}
	p := raws[0].Payload.(*agentstream.Raw)
	if p.Reason != agentstream.RawOversized || p.Bytes != size || !p.Truncated || raws[0].Source.Line != 2 {
		t.Errorf("raw %+v at %+v", p, raws[0].Source)
	}
	if res.Ended.Reason != agentstream.ReasonCompletion {
		t.Errorf("the stream did not go on after the line: %+v", res.Ended)
	}
	if spool.n < size {
		t.Errorf("spooled %d bytes", spool.n)
	}
}

func TestMaxLine(t *testing.T) {
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "bigline", "200000"}, Protocol: "claude-json", MaxLine: 50_000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended.Reason != agentstream.ReasonOversizedEvent || res.Ended.Status != agentstream.StatusFailed {
		t.Errorf("ended %+v", res.Ended)
	}
	if raws := rec.of(agentstream.TypeRaw); len(raws) != 1 || raws[0].Payload.(*agentstream.Raw).Reason != agentstream.RawOversized {
		t.Errorf("raw events %+v", raws)
	}
}

func TestCommandNotFound(t *testing.T) {
	_, rec, err := run(t, context.Background(), &runner.Runner{Command: []string{"agentstream-no-such-harness"}, Protocol: "claude-json"})
	var se *runner.StartError
	if !errors.As(err, &se) || !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("error %v, want a StartError for a missing command", err)
	}
	if len(rec.envs) != 0 {
		t.Errorf("%d envelopes for a harness that never started", len(rec.envs))
	}
}

func TestConfigErrors(t *testing.T) {
	for _, r := range []*runner.Runner{
		{},
		{Command: []string{"x"}, Protocol: "nope"},
		{Command: []string{"x"}, Protocol: "acp"},
		{Command: []string{"x"}, Approve: "maybe"},
	} {
		if _, err := r.Run(context.Background()); err == nil {
			t.Errorf("%+v: no error", r)
		}
	}
}

func TestTitle(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "work.dir")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	project := strings.NewReplacer("/", "-", ".", "-").Replace(real)
	transcripts := filepath.Join(home, "projects", project)
	os.MkdirAll(transcripts, 0o755)
	const session = "d8785ba1-3fa6-4606-b465-f13165cc441f"
	os.WriteFile(filepath.Join(transcripts, session+".jsonl"), []byte(`{"type":"ai-title","aiTitle":"Add subtract"}`+"\n"), 0o644)
	file, _ := filepath.Abs("testdata/claude-turn-tools.jsonl")
	_, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "replay", file}, Protocol: "claude-json", Dir: real,
		Env: append(os.Environ(), "CLAUDE_CONFIG_DIR="+home),
	})
	if err != nil {
		t.Fatal(err)
	}
	titles := rec.of(agentstream.TypeSessionTitle)
	if len(titles) != 1 || titles[0].Payload.(*agentstream.SessionTitle).Title != "Add subtract" || titles[0].Source != nil {
		t.Errorf("titles %+v", titles)
	}
}

// rawDecoder turns every line into raw: it stands in for the ACP adapter.
type rawDecoder struct{}

func (rawDecoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	return append(dst, agentstream.E(agentstream.NewRaw(agentstream.RawUnmapped, line)))
}

func (rawDecoder) End(dst []agentstream.Event) []agentstream.Event { return dst }

func TestACP(t *testing.T) {
	for _, tc := range []struct {
		approve     string
		wantOutcome string
		wantOption  string
	}{
		{runner.ApproveAll, agentstream.OutcomeAllowed, "allow"},
		{runner.ApproveNone, agentstream.OutcomeDenied, "reject"},
	} {
		t.Run(tc.approve, func(t *testing.T) {
			logfile := filepath.Join(t.TempDir(), "acp.log")
			dir := t.TempDir()
			res, rec, err := run(t, context.Background(), &runner.Runner{
				Command:    []string{harness, "acp", logfile},
				Protocol:   "acp",
				Prompt:     "write hello.txt",
				Dir:        dir,
				Approve:    tc.approve,
				Timeout:    10 * time.Second,
				NewDecoder: func() agentstream.Decoder { return rawDecoder{} },
			})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(logfile)
			if err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				got = append(got, m)
			}
			want := []map[string]any{
				{"jsonrpc": "2.0", "id": 1.0, "method": "initialize", "params": map[string]any{
					"protocolVersion":    1.0,
					"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false},
					"clientInfo":         map[string]any{"name": "agentstream", "version": runner.ClientVersion},
				}},
				{"jsonrpc": "2.0", "id": 2.0, "method": "session/new", "params": map[string]any{"cwd": dir, "mcpServers": []any{}}},
				{"jsonrpc": "2.0", "id": 3.0, "method": "session/prompt", "params": map[string]any{
					"sessionId": "sess-1", "prompt": []any{map[string]any{"type": "text", "text": "write hello.txt"}},
				}},
				{"jsonrpc": "2.0", "id": "perm-1", "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": tc.wantOption}}},
				{"jsonrpc": "2.0", "id": 99.0, "error": map[string]any{"code": -32601.0, "message": "method not found: fs/read_text_file"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("messages the agent received (-want +got):\n%s", diff)
			}
			resolved := rec.of(agentstream.TypeRequestResolved)
			wantResolved := &agentstream.RequestResolved{RequestID: "perm-1", Outcome: tc.wantOutcome, Answer: tc.wantOption, Auto: true}
			if len(resolved) != 1 || !cmp.Equal(wantResolved, resolved[0].Payload) || resolved[0].Source != nil {
				t.Errorf("request.resolved %+v, want %+v", resolved, wantResolved)
			}
			wantEnded := agentstream.SessionEnded{Status: "succeeded", StopReason: "end_turn", Reason: "completion"}
			if diff := cmp.Diff(wantEnded, res.Ended); diff != "" {
				t.Errorf("ended (-want +got):\n%s", diff)
			}
			if !res.Exited {
				t.Errorf("the agent did not exit when stdin closed")
			}
			var types []string
			for _, e := range rec.envs {
				if e.Source == nil {
					types = append(types, fmt.Sprintf("%s/%d", e.Type(), e.Turn))
				}
			}
			wantTypes := []string{"message/0", "session.title/0", "request.resolved/0", "session.ended/0"}
			if diff := cmp.Diff(wantTypes, types); diff != "" {
				t.Errorf("events the runner wrote (-want +got):\n%s", diff)
			}
		})
	}
}

// TestACPAdapter runs the ACP agent through the acp adapter, once there is
// one.
func TestACPAdapter(t *testing.T) {
	if _, err := adapter.Lookup("acp"); err != nil {
		t.Skip("no acp adapter yet:", err)
	}
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "acp", filepath.Join(t.TempDir(), "log")}, Protocol: "acp",
		Prompt: "hi", Approve: runner.ApproveAll, Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended.Reason != agentstream.ReasonCompletion || res.Ended.Status != agentstream.StatusSucceeded || !res.Exited {
		t.Errorf("exited %v, ended %+v", res.Exited, res.Ended)
	}
	var got []string
	for _, e := range rec.envs {
		switch p := e.Payload.(type) {
		case *agentstream.PermissionRequest:
			got = append(got, fmt.Sprintf("%s %s/%d", e.Type(), p.RequestID, e.Turn))
		case *agentstream.RequestResolved:
			got = append(got, fmt.Sprintf("%s %s %s/%d", e.Type(), p.RequestID, p.Outcome, e.Turn))
		case *agentstream.SessionEnded, *agentstream.TurnStarted, *agentstream.TurnEnded:
			got = append(got, fmt.Sprintf("%s from runner %v/%d", e.Type(), e.Source == nil, e.Turn))
		}
	}
	want := []string{
		"turn.started from runner false/1",
		"permission.request perm-1/1",
		"request.resolved perm-1 allowed/1",
		"turn.ended from runner false/1",
		"session.ended from runner false/1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestInjection runs a harness whose output tries to issue workflow
// commands and escape sequences, and renders it for GitHub Actions.
func TestInjection(t *testing.T) {
	var out, summary bytes.Buffer
	render := console.New(&out, console.Options{Width: 80, CI: console.CIGitHub, StepSummary: &summary})
	res, _, err := run(t, context.Background(), &runner.Runner{
		Command:  []string{harness, "replay", "-stderr", "testdata/inject-stderr-synthetic.txt", "testdata/claude-inject-synthetic.jsonl"},
		Protocol: "claude-json",
		Handler:  &recorder{fn: func(e agentstream.Envelope) error { return render.Handle(context.Background(), e) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := render.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Ended.Status != agentstream.StatusFailed {
		t.Errorf("ended %+v", res.Ended)
	}
	for _, text := range []string{out.String(), summary.String()} {
		if strings.ContainsAny(text, "\x1b\r\u009b\u009d\u202e") {
			t.Errorf("escape or control character in the output")
		}
		if strings.Contains(text, "##[") || strings.Contains(text, "##vso[") {
			t.Errorf("old-form command in the output")
		}
		for _, l := range strings.Split(text, "\n") {
			trimmed := strings.TrimLeftFunc(l, unicode.IsSpace)
			if !strings.HasPrefix(trimmed, "::") {
				continue
			}
			if trimmed != l || !(strings.HasPrefix(l, "::group::Turn ") || l == "::endgroup::" ||
				strings.HasPrefix(l, "::error::") || strings.HasPrefix(l, "::warning::")) {
				t.Errorf("foreign workflow command: %q", l)
			}
		}
	}
	if strings.Contains(out.String(), "TOKEN=abc123") {
		t.Errorf("the arguments of an unknown tool were shown")
	}
	if n := strings.Count(out.String(), "\n::error::"); n != 2 {
		t.Errorf("%d ::error:: lines, want 2 (the error event and the failed session):\n%s", n, out.String())
	}
}

// TestACPFollowUp sends a second message once the agent ended the first
// turn, in the same session, and ends the run after its turn.
func TestACPFollowUp(t *testing.T) {
	logfile := filepath.Join(t.TempDir(), "acp.log")
	res, rec, err := run(t, context.Background(), &runner.Runner{
		Command: []string{harness, "acp", logfile}, Protocol: "acp",
		Prompt: "first", FollowUps: []string{"second"}, Approve: runner.ApproveAll, Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(logfile)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
				Prompt    []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			} `json:"params"`
		}
		json.Unmarshal([]byte(l), &m)
		if m.Method == "session/prompt" {
			prompts = append(prompts, m.Params.SessionID+" "+m.Params.Prompt[0].Text)
		}
	}
	if diff := cmp.Diff([]string{"sess-1 first", "sess-1 second"}, prompts); diff != "" {
		t.Errorf("prompts the agent received (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range rec.envs {
		switch p := e.Payload.(type) {
		case *agentstream.Message:
			if p.Role == agentstream.RoleUser {
				got = append(got, fmt.Sprintf("user %s/%d", p.Text, e.Turn))
			}
		case *agentstream.SessionEnded:
			got = append(got, fmt.Sprintf("ended %s/%d", p.Status, e.Turn))
		}
	}
	want := []string{"user first/0", "ended succeeded/1", "user second/1", "ended succeeded/2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if res.Ended.Status != agentstream.StatusSucceeded || !res.Exited {
		t.Errorf("exited %v, ended %+v", res.Exited, res.Ended)
	}
}

func TestFollowUpNeedsConversation(t *testing.T) {
	_, err := (&runner.Runner{Command: []string{harness, "args"}, Protocol: "claude-json", Prompt: "a", FollowUps: []string{"b"}}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "protocol claude-json takes one prompt") {
		t.Errorf("Run = %v, want a refusal of follow-ups", err)
	}
}

// TestRedact runs a harness that prints secrets on stdout and stderr with
// a Redactor: the spool, every envelope and the recorded prompt hold them
// masked, the spool byte for byte what masking each native line gives.
func TestRedact(t *testing.T) {
	const file = "testdata/claude-secrets.jsonl"
	red := redact.New(redact.Options{Key: []byte("k")})
	var spool bytes.Buffer
	_, rec, err := run(t, context.Background(), &runner.Runner{
		Command:  []string{harness, "replay", "-stdin", "-stderr", "testdata/stderr-secret.txt", file},
		Protocol: "claude-json",
		Prompt:   "deploy with API_KEY=Xk9pL2vQzR7m",
		Spool:    &spool,
		Redact:   red,
	})
	if err != nil {
		t.Fatal(err)
	}
	native, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, line := range bytes.SplitAfter(native, []byte("\n")) {
		want = append(want, red.Line(bytes.Clone(line))...)
	}
	if diff := cmp.Diff(string(want), spool.String()); diff != "" {
		t.Errorf("spool (-want +got):\n%s", diff)
	}
	secrets := []string{"s3cr3t-pw", "R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO", "Xk9pL2vQzR", "Q1wE2rT3yU4iO5pA6sD7fG8hJ9kL0zXcVbNm", "Xk9pL2vQzR7m"}
	var stderr, prompt int
	for _, e := range rec.envs {
		b := string(e.AppendJSON(nil))
		for _, s := range secrets {
			if strings.Contains(b, s) {
				t.Errorf("an envelope holds the secret %s: %s", s, b)
			}
		}
		switch p := e.Payload.(type) {
		case *agentstream.Stderr:
			if strings.Contains(p.Text, "token ghp_") {
				stderr++
			}
		case *agentstream.Message:
			if p.Role == agentstream.RoleUser && strings.HasPrefix(p.Text, "deploy with API_KEY=*") {
				prompt++
			}
		}
	}
	if stderr != 1 || prompt != 1 {
		t.Errorf("%d masked stderr lines and %d masked prompts, want 1 and 1", stderr, prompt)
	}
}

// TestSetsidDescendants runs a harness whose descendants leave its process
// group (setsid, and a double fork) and checks that none of them outlives
// the run: each was stopped and reaped, its pid gone.
func TestSetsidDescendants(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the tree outside the process group is found on Linux only")
	}
	pidfile := filepath.Join(t.TempDir(), "pids")
	if err := os.WriteFile(pidfile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/escape.sh")
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := run(t, context.Background(), &runner.Runner{
		Command: []string{"/bin/sh", script}, Protocol: "none", SkipTitle: true,
		Env: append(os.Environ(), "PIDS="+pidfile), Grace: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Ended.Reason != agentstream.ReasonExit || res.ExitCode != 0 {
		t.Errorf("ended %+v, exit code %d", res.Ended, res.ExitCode)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 2 {
		t.Fatalf("pid file holds %q, want two pids", b)
	}
	for _, f := range pids {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		// Gone means reaped too: a zombie still answers signal 0.
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d (state %q) survived the run", pid, procField(pid, 2))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
