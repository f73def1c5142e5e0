//go:build !unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// Where process groups do not exist (Windows, Plan 9, WebAssembly), the
// runner stops the harness process itself and nothing else: a process the
// harness started survives it unless it exits by itself. A Windows job
// object created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE would hold the
// whole tree; it is not used yet.

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// becomeSubreaper does nothing where there are no subreapers.
func becomeSubreaper() {}

// tree is the harness process alone.
type tree struct {
	pid  int
	mark []byte
}

// signal kills the harness process.
func (t *tree) signal(sig syscall.Signal) {
	if p, err := os.FindProcess(t.pid); err == nil {
		p.Kill()
	}
}

// alive reports false: nothing beyond the harness process is tracked.
func (t *tree) alive() bool { return false }

// reap does nothing.
func (t *tree) reap() {}
