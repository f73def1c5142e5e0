package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/internal/harnesslab"
	"github.com/agentstream/agentstream/modelsim"
	"github.com/creack/pty"
)

// terminal is a pseudo-terminal a test types into and reads from.
type terminal struct {
	t   *testing.T
	f   *os.File
	mu  sync.Mutex
	out bytes.Buffer
	at  int // how far waitFor has read
}

func (tm *terminal) Write(p []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.Write(p)
}

func (tm *terminal) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// waitFor waits for s to appear after what was waited for before.
func (tm *terminal) waitFor(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		text := tm.text()
		if i := strings.Index(text[tm.at:], s); i >= 0 {
			tm.at += i + len(s)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tm.t.Fatalf("the terminal never showed %q; it showed:\n%s", s, tm.text())
}

func (tm *terminal) typ(s string) {
	tm.t.Helper()
	if _, err := tm.f.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// TestChatOnTerminal runs agentstream chat on a pseudo-terminal with real
// Claude Code 2.1.328 (its default permission mode) against the simulator:
// the person allows one command and denies another at the prompt, sends a
// second message, interrupts its long command with Ctrl-C, and ends the
// session with Ctrl-C twice.
func TestChatOnTerminal(t *testing.T) {
	cache, err := harnesslab.Cache()
	if err != nil {
		t.Skip(err)
	}
	bin, err := harnesslab.Bin(cache, "claude")
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile("testdata/chat.json")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := modelsim.Decode("chat", data)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := modelsim.LookupHarness("claude-stream")
	run, err := harnesslab.Start(t.TempDir(), h, sc, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	cmd := exec.Command(binary, "chat", "--no-store", "--color", "never", "--protocol", "claude-stream", "--", bin, "-p")
	cmd.Dir = run.Work
	cmd.Env = run.Env
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tm := &terminal{t: t, f: f}
	copied := make(chan struct{})
	go func() {
		io.Copy(tm, f) // ends with EIO once the command exits
		close(copied)
	}()

	tm.typ(sc.Prompt + "\r")
	tm.waitFor("? allow Bash")
	tm.waitFor("[y]es [a]lways [n]o: ")
	tm.typ("y\r")
	tm.waitFor("? allow Bash")
	tm.waitFor("rm -f lab-denied.txt")
	tm.typ("n lab: not this one\r")
	tm.waitFor("Both lab commands are handled.")
	tm.typ(sc.FollowUps[0] + "\r")
	tm.waitFor("? allow Bash")
	tm.typ("y\r")
	time.Sleep(time.Second)
	tm.typ("\x03")
	tm.waitFor("interrupting (Ctrl-C again to end the session)")
	tm.waitFor("[Request interrupted by user for tool use]")
	time.Sleep(quitWindow + 500*time.Millisecond) // a first Ctrl-C again, not a second
	tm.typ("\x03")
	tm.waitFor("no turn runs (Ctrl-C again to end the session)")
	tm.typ("\x03")
	tm.waitFor("ending the session")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("chat: %v\n%s", err, tm.text())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("chat did not end:\n%s", tm.text())
	}
	<-copied
	if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	var denied bool
	for _, r := range run.Sim.Calls() {
		denied = denied || strings.Contains(string(r.Body), "lab: not this one")
	}
	if !denied {
		t.Error("the model never heard the denial's message")
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("terminal:\n%s", tm.text())
	}
}
