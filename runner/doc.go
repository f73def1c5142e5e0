// Package runner runs a harness as a child process and turns what it prints
// into event envelopes, as they happen.
//
// A [Runner] starts the harness command with the flags of its protocol
// (agentstream.ApplyProtocol), gives it the prompt the way the protocol
// wants (text on stdin, a stream-json user message, an argument, or the
// Agent Client Protocol spoken over stdio), reads its stdout and stderr
// concurrently, and passes every envelope to a Handler, synchronously, from
// one goroutine. It supervises the run so that it always ends for a known
// reason: the harness's own final report, its exit, an idle timeout, a
// wall-clock deadline, cancellation, or a line over the hard size limit.
// The last event of a run is always a session.ended that says which.
//
// The harness runs in its own process group. Stopping it sends SIGTERM to
// the whole group, then SIGKILL after a grace period, so a tool the agent
// started dies with it; whatever is left of the group when the run ends is
// stopped the same way. On Linux the whole process tree ends with the run,
// even the processes that left the group (setsid, a double fork): the
// harness's environment carries a mark of the run (MarkVar), which its
// descendants inherit and the runner looks for in /proc, and the runner's
// process becomes a child subreaper (PR_SET_CHILD_SUBREAPER) so that the
// orphans of the tree are reparented to it rather than to init, and it
// reaps them. A descendant that clears its environment escapes the mark.
// Elsewhere only the process group is stopped (process_nolinux.go and
// process_other.go say why).
package runner
