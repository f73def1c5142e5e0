//go:build unix

package runner

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
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

// groupAlive reports whether a process of the group pgid is still running.
// Zombies do not count: nobody may be left to reap them. Where /proc is
// missing, any process of the group counts.
func groupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return syscall.Kill(-pgid, 0) == nil
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range ents {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 {
			continue
		}
		if bytes.Equal(f[2], want) && !bytes.Equal(f[0], []byte("Z")) && !bytes.Equal(f[0], []byte("X")) {
			return true
		}
	}
	return false
}
