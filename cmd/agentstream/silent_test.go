package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The cases of "no silent wrong results": each gets a clear error or the
// right answer.

// TestReadOnlyCommandsCreateNoDatabase runs the binary: a mistyped --db
// is an error naming the path, and neither the file nor its directory
// appears.
func TestReadOnlyCommandsCreateNoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "typo", "x.db")
	for _, args := range [][]string{
		{"sessions"},
		{"show", "s_x"},
		{"export", "s_x"},
		{"usage", "s_x"},
		{"usage", "--by", "model"},
		{"renormalize", "s_x"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(binary, append(args, "--db", db)...)
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); err == nil || code != exitError {
				t.Errorf("exit %d (%v), want %d", code, err, exitError)
			}
			if !strings.Contains(string(out), db) {
				t.Errorf("the error does not name %s:\n%s", db, out)
			}
			if _, err := os.Stat(filepath.Dir(db)); !os.IsNotExist(err) {
				t.Errorf("%s was created", filepath.Dir(db))
			}
		})
	}
}

// TestUnknownProtocolIsUsage: every command that takes --protocol exits
// with the usage code on a name that is none, and says which are.
func TestUnknownProtocolIsUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	for _, args := range [][]string{
		{"normalize", basicQuery},
		{"render", basicQuery},
		{"usage", basicQuery},
		{"import", "--db", db, basicQuery},
		{"renormalize", "--db", db, "s_x"},
		{"run", "--no-store", "--", "true"},
		{"chat", "--no-store", "--", "true"},
	} {
		t.Run(args[0], func(t *testing.T) {
			args := append([]string{args[0], "--protocol", "no-such"}, args[1:]...)
			_, stderr, code := runCLI(t, "", args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, `unknown protocol "no-such"`) || !strings.Contains(stderr, "claude-json") {
				t.Errorf("stderr %q does not name the protocol and the known ones", stderr)
			}
		})
	}
}

func TestBadListenAddress(t *testing.T) {
	for _, cmd := range []string{"serve", "demo"} {
		for _, addr := range []string{"nonsense", "127.0.0.1", "8377"} {
			_, stderr, code := runCLI(t, "", cmd, "--addr", addr)
			if code != exitUsage || !strings.Contains(stderr, "want HOST:PORT") || strings.Contains(stderr, "loopback") {
				t.Errorf("%s --addr %s: exit %d, stderr %q", cmd, addr, code, stderr)
			}
		}
		_, stderr, code := runCLI(t, "", cmd, "--addr", "192.0.2.1:1")
		if code != exitUsage || !strings.Contains(stderr, "not a loopback address") {
			t.Errorf("%s --addr 192.0.2.1:1: exit %d, stderr %q", cmd, code, stderr)
		}
	}
}

// nonBlankLines counts the lines of a file that hold something.
func nonBlankLines(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// TestWrongProtocolUnderstoodNothing: a Claude recording read as Codex's
// is all raw lines; render and usage say so and fail, where render printed
// nothing and exited 0.
func TestWrongProtocolUnderstoodNothing(t *testing.T) {
	want := "none of the " + strconv.Itoa(nonBlankLines(t, basicQuery)) + " lines was understood as codex-json"
	for _, cmd := range []string{"render", "usage"} {
		stdout, stderr, code := runCLI(t, "", cmd, "--protocol", "codex-json", basicQuery)
		if code != exitError {
			t.Errorf("%s: exit %d, want %d", cmd, code, exitError)
		}
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "--protocol claude-json") {
			t.Errorf("%s: stderr %q, want %q and the protocol they look like", cmd, stderr, want)
		}
		if cmd == "render" && stdout != "" {
			t.Errorf("render printed %q", stdout)
		}
	}
	// The right protocol, or auto, still renders.
	for _, p := range []string{"claude-json", "auto"} {
		if out, stderr, code := runCLI(t, "", "render", "--protocol", p, "--color", "never", basicQuery); code != exitOK || out == "" {
			t.Errorf("render --protocol %s: exit %d, %d bytes, stderr %q", p, code, len(out), stderr)
		}
	}
}

// TestEmptyOrBinaryFileIsNoSession runs the binary: import refuses an
// empty file, a blank one and a binary one (the agentstream binary
// itself), and stores no session.
func TestEmptyOrBinaryFileIsNoSession(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	exe, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"empty.jsonl":  nil,
		"blank.jsonl":  []byte("\n  \n\r\n"),
		"binary.jsonl": exe[:1<<16],
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary, "import", "--db", db, p)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if stdout.Len() > 0 || !strings.Contains(stderr.String(), p) {
				t.Errorf("stdout %q, stderr %q: want no id and an error naming the file", stdout.String(), stderr.String())
			}
			for _, cmd := range []string{"render", "usage"} {
				if _, errs, code := runCLI(t, "", cmd, p); code != exitError {
					t.Errorf("%s: exit %d, stderr %q", cmd, code, errs)
				}
			}
		})
	}
	out, errs, code := runCLI(t, "", "sessions", "--db", db, "--json")
	if code != exitOK || strings.TrimSpace(out) != "[]" {
		t.Errorf("sessions after the refused imports: exit %d, %s %s", code, out, errs)
	}
}
