package runner_test

// The tests of the agentstream run and render commands live here, beside the
// fake harness they drive: they build the command and run it as a user
// would, on pipes and on a pseudo-terminal.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/creack/pty"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// cli builds the agentstream command once.
func cli(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		cliPath = filepath.Join(filepath.Dir(harness), "agentstream")
		out, err := exec.Command("go", "build", "-o", cliPath, "../cmd/agentstream").CombinedOutput()
		if err != nil {
			cliErr = err
			cliPath = string(out)
		}
	})
	if cliErr != nil {
		t.Fatalf("go build: %v\n%s", cliErr, cliPath)
	}
	return cliPath
}

// stopOnFailure interrupts a started agentstream that a failed test left
// running, which stops its harness too.
func stopOnFailure(t *testing.T, cmd *exec.Cmd) {
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
		}
	})
}

type cliRun struct {
	stdout, stderr string
	code           int
}

// runCLI runs agentstream with args, stdin and extra environment.
func runCLI(t *testing.T, stdin string, env []string, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(cleanEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return cliRun{o.String(), e.String(), code}
}

// cleanEnv is the environment without what changes the command's output.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR", "COLUMNS", "TERM":
		default:
			env = append(env, kv)
		}
	}
	return env
}

func TestCLIExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		wantStderr string
	}{
		{"completion", []string{"--protocol", "claude-json", "--", harness, "replay", "testdata/claude-turn-tools.jsonl"}, 0, ""},
		{"harness exit status", []string{"--protocol", "claude-json", "--", harness, "replay", "-exit", "3", "testdata/claude-interrupted.jsonl"}, 3, ""},
		{"idle timeout", []string{"--protocol", "jsonl", "--idle-timeout", "300ms", "--grace", "300ms", "--", harness, "sleep"}, 124, ""},
		{"deadline", []string{"--protocol", "jsonl", "--timeout", "300ms", "--grace", "300ms", "--", harness, "forever"}, 125, ""},
		{"oversized event", []string{"--protocol", "claude-json", "--max-line", "1000", "--", harness, "bigline", "5000"}, 123, ""},
		{"command not found", []string{"--", "agentstream-no-such-harness", "-p"}, 127, "agentstream run: agentstream-no-such-harness: exec: \"agentstream-no-such-harness\": executable file not found in $PATH\n"},
		{"no command", []string{"--protocol", "claude-json"}, 2, ""},
		{"bad protocol", []string{"--protocol", "nope", "--", harness}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", nil, append([]string{"run", "--prompt", "go"}, tc.args...)...)
			if r.code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			if tc.wantStderr != "" && r.stderr != tc.wantStderr {
				t.Errorf("stderr %q, want %q", r.stderr, tc.wantStderr)
			}
		})
	}
}

func TestCLIAborted(t *testing.T) {
	dir := t.TempDir()
	summary := filepath.Join(dir, "summary.json")
	cmd := exec.Command(cli(t), "run", "--protocol", "jsonl", "--prompt", "go", "--summary-json", summary, "--grace", "300ms", "--", harness, "forever")
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopOnFailure(t, cmd)
	// Wait for the harness to be running (the prompt is shown), then
	// interrupt agentstream.
	br := bufio.NewReader(out)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, br)
	cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130", err)
	}
	var s struct {
		PID    int    `json:"pid"`
		Status string `json:"status"`
		Reason string `json:"reason"`
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Reason != "aborted" || s.Status != "cancelled" || s.PID == 0 {
		t.Errorf("summary %+v", s)
	}
	checkGroupGone(t, s.PID)
}

func TestCLIOutputs(t *testing.T) {
	dir := t.TempDir()
	events, spool, summary, step := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "spool"), filepath.Join(dir, "summary.json"), filepath.Join(dir, "step.md")
	const file = "testdata/claude-turn-tools.jsonl"
	r := runCLI(t, "add subtract", []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + step},
		"run", "--protocol", "claude-json", "--events", events, "--spool", spool, "--summary-json", summary, "--",
		harness, "replay", "-stdin", file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The prompt came from stdin; the harness echoed it on its stderr.
	if !strings.Contains(r.stdout, "│ prompt: add subtract") || !strings.Contains(r.stdout, "::group::Turn 1\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	native, _ := os.ReadFile(file)
	if got, _ := os.ReadFile(spool); !bytes.Equal(got, native) {
		t.Errorf("spool differs from the harness's stdout")
	}
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, l := range lines {
		e, err := agentstream.ParseEnvelope([]byte(l))
		if err != nil {
			t.Fatalf("events line %d: %v", i+1, err)
		}
		if agentstream.IsLive(e.Type()) || e.Seq != int64(i+1) {
			t.Errorf("events line %d: %s seq %d", i+1, e.Type(), e.Seq)
		}
	}
	var s struct {
		Status, Reason, Protocol string
		Exited                   bool
		ExitCode                 *int
		Recap                    agentstream.Recap
	}
	b, _ = os.ReadFile(summary)
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Status != "succeeded" || s.Reason != "completion" || s.Protocol != "claude-json" || !s.Exited || s.ExitCode == nil || *s.ExitCode != 0 || s.Recap.CostUSD == nil {
		t.Errorf("summary %s", b)
	}
	md, _ := os.ReadFile(step)
	if !strings.Contains(string(md), "| Status | succeeded |") || !strings.Contains(string(md), "| Bash | 2 | 0 |") {
		t.Errorf("step summary:\n%s", md)
	}
}

func TestCLIQuiet(t *testing.T) {
	r := runCLI(t, "", nil, "run", "--quiet", "--protocol", "claude-json", "--", harness, "replay", "testdata/claude-turn-tools.jsonl")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
	r = runCLI(t, "", nil, "run", "--quiet", "--protocol", "claude-json", "--", harness, "replay", "-exit", "3", "testdata/claude-interrupted.jsonl")
	if r.code != 3 || !strings.Contains(r.stdout, "failed · exit") || !strings.Contains(r.stdout, "error: exit status 3") {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
}

// onTTY runs agentstream on a pseudo-terminal of the given width and
// returns what it printed.
func onTTY(t *testing.T, env []string, cols uint16, args ...string) string {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&out, f) // ends with EIO once the command exits
		close(done)
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal output did not end")
	}
	return out.String()
}

func TestCLIColorOnTerminal(t *testing.T) {
	const file = "testdata/claude-turn-tools.jsonl"
	render := []string{"render", file}
	runArgs := []string{"run", "--protocol", "claude-json", "--prompt", "x", "--", harness, "replay", file}
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		color bool
	}{
		{"render", nil, render, true},
		{"render NO_COLOR", []string{"NO_COLOR=1"}, render, false},
		{"render --color=always with NO_COLOR", []string{"NO_COLOR=1"}, append([]string{"render", "--color=always"}, file), true},
		{"render --color=never", nil, append([]string{"render", "--color=never"}, file), false},
		{"run", nil, runArgs, true},
		{"run NO_COLOR", []string{"NO_COLOR=1"}, runArgs, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := onTTY(t, tc.env, 60, tc.args...)
			if got := strings.Contains(out, "\x1b["); got != tc.color {
				t.Errorf("escape sequences: %v, want %v\n%q", got, tc.color, out)
			}
			if !strings.Contains(out, "succeeded") {
				t.Errorf("no recap in %q", out)
			}
			// The terminal's width is used: 60 columns.
			for _, l := range strings.Split(stripEscapes(out), "\n") {
				if n := len([]rune(strings.TrimRight(l, "\r"))); n > 60 {
					t.Errorf("line of %d columns on a 60-column terminal: %q", n, l)
				}
			}
		})
	}
}

func stripEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestCLISignalsHarnessGroup checks that SIGTERM to agentstream stops a
// harness and the grandchild it started.
func TestCLISignalsHarnessGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(cli(t), "run", "--protocol", "claude-json", "--grace", "300ms", "--", harness, "grandchild", pidfile)
	cmd.Env = cleanEnv()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopOnFailure(t, cmd)
	br := bufio.NewReader(out)
	br.ReadString('\n') // the header: the harness runs
	go io.Copy(io.Discard, br)
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want status 130", err)
	}
	b, _ := os.ReadFile(pidfile)
	for _, f := range strings.Fields(string(b)) {
		var pid int
		json.Unmarshal([]byte(f), &pid)
		if alive(pid) {
			t.Errorf("process %d survived", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
