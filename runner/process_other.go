//go:build !unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing where process groups do not exist.
func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup kills the harness process itself where process groups do not
// exist.
func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// groupAlive reports false: nothing beyond the harness process is tracked.
func groupAlive(pid int) bool { return false }
