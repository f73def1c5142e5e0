//go:build unix && !linux

package runner

import "syscall"

// becomeSubreaper does nothing here. Where the system has a reaper of its
// own (FreeBSD and DragonFly's procctl PROC_REAP_ACQUIRE) it is not used
// yet; macOS and the other BSDs have none. A process of the harness's tree
// that leaves its process group (setsid, or setpgid) can outlive the run
// there.
func becomeSubreaper() {}

// scanTree reports the group pgid as one process while a signal can reach
// it: without /proc, the runner cannot see the environment of the others.
func scanTree(pgid int, mark []byte) []proc {
	if pgid > 0 && syscall.Kill(-pgid, 0) == nil {
		return []proc{{pid: pgid}}
	}
	return nil
}

// procOf finds nothing: no process is ever noted outside the group.
func procOf(pid int) (proc, bool) { return proc{}, false }
