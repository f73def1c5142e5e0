//go:build unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the harness the leader of a new process group, so
// that a signal to the group reaches every process it started, and a
// terminal's Ctrl-C reaches this program rather than the harness.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to every process of the group pgid.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		syscall.Kill(-pgid, sig)
	}
}

// tree is the harness's process tree as the runner finds it: the processes
// of its process group and, where the system lets the runner see them
// (scanTree), every process that carries the run's mark in its
// environment, wherever it went: a new session (setsid), a double fork.
type tree struct {
	pid  int    // the harness, the leader of its group
	mark []byte // "NAME=value", an entry of the harness's environment
	// seen holds the processes found so far, outside the harness, by pid
	// with their start time, so that the zombies they leave can be reaped
	// (and a reused pid is never taken for one of them).
	seen map[int]uint64
}

// proc is a process of the tree found by scanTree.
type proc struct {
	pid    int
	ppid   int
	start  uint64 // start time since boot, in clock ticks
	zombie bool
}

// scan returns the processes of the tree, zombies included, and notes them.
func (t *tree) scan() []proc {
	ps := scanTree(t.pid, t.mark)
	for _, p := range ps {
		if p.pid != t.pid {
			if t.seen == nil {
				t.seen = map[int]uint64{}
			}
			t.seen[p.pid] = p.start
		}
	}
	return ps
}

// signal sends sig to the harness's group and to every process of the tree
// that left it.
func (t *tree) signal(sig syscall.Signal) {
	signalGroup(t.pid, sig)
	for _, p := range t.scan() {
		if !p.zombie && p.pid != t.pid {
			syscall.Kill(p.pid, sig)
		}
	}
}

// alive reports whether a process of the tree is still running. Zombies do
// not count.
func (t *tree) alive() bool {
	for _, p := range t.scan() {
		if !p.zombie {
			return true
		}
	}
	return false
}

// reap waits for the processes of the tree that became this process's
// children (it is their subreaper) and have exited, but for the harness,
// which its own waiter reaps. A pid is waited for only while it is the
// process that was seen: a zombie child with the start time noted.
func (t *tree) reap() {
	self := os.Getpid()
	for pid, start := range t.seen {
		p, ok := procOf(pid)
		if !ok {
			delete(t.seen, pid)
			continue
		}
		if p.start != start || p.ppid != self || !p.zombie {
			continue
		}
		var ws syscall.WaitStatus
		if n, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); n == pid {
			delete(t.seen, pid)
		}
	}
}
