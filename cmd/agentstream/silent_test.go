package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
