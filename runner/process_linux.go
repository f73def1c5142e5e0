package runner

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

var subreaperOnce sync.Once

// becomeSubreaper makes this process a child subreaper, once: a process
// of a harness's tree whose parent exits (a double fork, a daemon) is
// reparented to this process instead of init, so that it stays within
// reach until the run ends and its exit status comes back here to be
// reaped. It is a property of the whole process, harmless to the children
// it starts itself; failing (an old kernel), the runner still finds such
// processes by their mark.
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// scanTree lists from /proc the processes of group pgid and those whose
// environment holds mark, zombies included. Where /proc cannot be read, it
// reports the group as one process while a signal can reach it.
func scanTree(pgid int, mark []byte) []proc {
	if pgid <= 0 {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		if syscall.Kill(-pgid, 0) == nil {
			return []proc{{pid: pgid}}
		}
		return nil
	}
	self := os.Getpid()
	var ps []proc
	for _, e := range ents {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		p, pg, ok := readStat(pid)
		if !ok {
			continue
		}
		if pg == pgid || (!p.zombie && marked(pid, mark)) {
			ps = append(ps, p)
		}
	}
	return ps
}

// procOf reads one process from /proc.
func procOf(pid int) (proc, bool) {
	p, _, ok := readStat(pid)
	return p, ok
}

// readStat reads /proc/pid/stat: the process and its process group.
func readStat(pid int) (p proc, pgrp int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, 0, false
	}
	// pid (comm) state ppid pgrp … starttime (the 22nd field); comm may
	// hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return proc{}, 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 20 {
		return proc{}, 0, false
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgrp, _ = strconv.Atoi(string(f[2]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	state := string(f[0])
	return proc{pid: pid, ppid: ppid, start: start, zombie: state == "Z" || state == "X"}, pgrp, true
}

// marked reports whether the environment of pid holds mark as an entry.
// Only the processes of this user (or all, for root) can be read, which
// are the only ones a harness can start.
func marked(pid int, mark []byte) bool {
	if len(mark) == 0 {
		return false
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for len(env) > 0 {
		entry := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			entry, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if bytes.Equal(entry, mark) {
			return true
		}
	}
	return false
}
