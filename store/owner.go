package store

import "time"

// Owner is who writes a running session, as a store records it: the
// writer's host name and process id, and its last heartbeat (a writer
// refreshes it on every commit and every few seconds while idle).
type Owner struct {
	Host      string
	PID       int
	Heartbeat time.Time
}

// Gone reports whether the writer of a running session is gone, seen from
// the process pid on host at now: its heartbeat is older than staleAfter
// (or missing), or it ran in another process of this host that no longer
// exists. This is the rule every store reaps by (marks interrupted the
// sessions whose writer is gone); a store never reaps the sessions its own
// writers hold open.
func (o Owner) Gone(now time.Time, staleAfter time.Duration, host string, pid int) bool {
	if o.Heartbeat.IsZero() || now.Sub(o.Heartbeat) > staleAfter {
		return true
	}
	return o.Host == host && o.PID > 0 && o.PID != pid && !processAlive(o.PID)
}
