//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
)

// waitSpread waits until the nodes that run share the partitions, each
// holding some and every partition held by one, and returns what each
// holds.
func waitSpread(t *testing.T, nodes []*clusterNode) map[*clusterNode][]int {
	t.Helper()
	held := map[*clusterNode][]int{}
	waitFor(t, 60*time.Second, "the nodes to share the partitions", func() bool {
		var all []int
		for _, c := range nodes {
			if c.cmd == nil {
				continue
			}
			if held[c] = c.partitions(); len(held[c]) == 0 {
				return false
			}
			all = append(all, held[c]...)
		}
		slices.Sort(all)
		return len(all) == natsbus.Partitions && len(slices.Compact(all)) == natsbus.Partitions
	})
	return held
}

// waitTaken waits until the nodes that run hold every partition between
// them, and returns how long that took since at.
func waitTaken(t *testing.T, nodes []*clusterNode, at time.Time) time.Duration {
	t.Helper()
	waitFor(t, 60*time.Second, "the nodes up to take every partition", func() bool {
		var all []int
		for _, c := range nodes {
			if c.cmd != nil {
				all = append(all, c.partitions()...)
			}
		}
		slices.Sort(all)
		return len(slices.Compact(all)) == natsbus.Partitions
	})
	return time.Since(at)
}

// sessionsIn returns k session ids prefix.I whose partitions are among
// parts.
func sessionsIn(prefix string, parts []int, k int) []string {
	var ids []string
	for i := 0; len(ids) < k; i++ {
		if id := fmt.Sprintf("%s.%d", prefix, i); slices.Contains(parts, natsbus.Partition(id)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// status returns the status of session id as the node's API serves it
// ("" when it does not).
func (c *clusterNode) status(id string) string {
	resp, err := http.Get("http://" + c.http + "/api/sessions/" + id)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var s store.Session
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&s) != nil {
		return ""
	}
	return s.Status
}

// TestClusterFaultsPostgres runs three serve --cluster processes sharing
// one PostgreSQL database, which share the sessions' partitions under
// leases, and the kills of TestClusterFaults: a runner killed with SIGKILL
// and its spool resumed; then, while runners publish sessions in the
// partitions of every node, the harnesses printing a phase during each
// fault, an ingest node that holds some of them killed with SIGKILL and
// restarted, and the stream's leader (with a session in one of its
// partitions) killed and restarted. After each, every session holds every
// line printed so far, once, with a dense seq, served so by every node's
// API, and the nodes that stayed up streamed the events of the fault's
// phase, each once and in order, opened again after the stream ended with
// the session interrupted (a takeover); it logs how many streams had every
// event live, and one of a node that does not hold the session's
// partition. It skips without AGENTSTREAM_TEST_POSTGRES.
func TestClusterFaultsPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster of three serve processes sharing PostgreSQL and kills them")
	}
	db := postgresSchema(t)
	start := time.Now()
	nodes := startClusterNodes(t, 3, db)
	held := waitSpread(t, nodes)
	logStep(t, "3 nodes sharing the partitions", start)
	runs := newFaultRuns(t, nodes)
	waitAll := func(id string, n int, status string) {
		t.Helper()
		for _, c := range nodes {
			c.waitStored(id, n, status)
		}
	}

	// A runner killed: what it spooled is published by run --resume.
	at := time.Now()
	const killed, nk = "s.pg.killed", 300
	runs.killResumed(killed, nk)
	waitAll(killed, 2*nk, store.StatusCancelled)
	logStep(t, "runner killed and resumed, every node serves it", at)

	// Two sessions in each node's partitions, of three phases: the first
	// before the faults, one during each.
	const n = 300
	var runners []*phasedRun
	for i, c := range nodes {
		for _, id := range sessionsIn(fmt.Sprintf("s.pg.%d", i), held[c], 2) {
			runners = append(runners, runs.startPhased(id, runs.urls, n, 3))
		}
	}
	for _, r := range runners {
		r.printed(1)
		waitAll(r.id, n, "")
	}
	// follow opens the event streams of the runners' sessions on every
	// node but down; checkLive checks them once the fault's phase is
	// stored, and says how many had every event live, on the first
	// connection: a session of the killed node's partitions is reaped
	// (interrupted) once its writer's process is gone, and one the nodes
	// moved to another is left interrupted, for the next holder to resume
	// with its next line; their streams end, and are opened again.
	logAt := map[*clusterNode]int{} // where each node's log stood when follow opened its streams
	follow := func(runners []*phasedRun, down *clusterNode) []*liveStream {
		var live []*liveStream
		for _, c := range nodes {
			if c != down {
				logAt[c] = len(c.log.String())
				for _, r := range runners {
					live = append(live, c.follow(r.id))
				}
			}
		}
		return live
	}
	checkLive := func(live []*liveStream, down []int) {
		t.Helper()
		whole, reopened, logged := 0, 0, false
		for _, ls := range live {
			n, k := ls.check()
			if k == 0 {
				whole++
			}
			reopened += k
			p := natsbus.Partition(ls.id)
			if !logged && k == 0 && n > 0 && !slices.Contains(ls.c.partitions(), p) {
				t.Logf("  node %s, which does not hold partition %d, streamed events %d to %d of %s live", ls.c.name, p, ls.after+1, ls.after+int64(n), ls.id)
				logged = true
			}
			if k > 0 && !slices.Contains(down, p) {
				t.Logf("  node %s: the stream of %s (partition %d, not the killed node's; running when opened: %v) ended %d times", ls.c.name, ls.id, p, ls.running, k)
			}
		}
		t.Logf("  %d of %d streams had every event live; the others ended %d times, opened again", whole, len(live), reopened)
		for c, at := range logAt {
			if c.cmd == nil {
				continue
			}
			var lost []string
			for l := range strings.SplitSeq(c.log.String()[at:], "\n") {
				if strings.Contains(l, "lease of partition") {
					lost = append(lost, strings.TrimPrefix(l, "agentstream serve: ingest from NATS: "))
				}
			}
			if len(lost) > 0 {
				t.Logf("  node %s meanwhile: %s", c.name, strings.Join(lost, "; "))
			}
		}
		clear(logAt)
	}

	// An ingest node that holds some of the sessions' partitions, and does
	// not lead the stream, killed while the harnesses print phase 2, then
	// restarted.
	at = time.Now()
	leader := streamLeader(t, nodes)
	var victim *clusterNode
	for _, c := range nodes {
		if c.name != leader && victim == nil {
			victim = c
		}
	}
	var mine []string
	for _, r := range runners {
		if slices.Contains(victim.partitions(), natsbus.Partition(r.id)) {
			mine = append(mine, r.id)
		}
	}
	if len(mine) == 0 {
		t.Fatalf("node %s holds none of the sessions' partitions", victim.name)
	}
	t.Logf("stream leader %s; killing ingest node %s, which holds partitions %v, of sessions %v", leader, victim.name, victim.partitions(), mine)
	live := follow(runners, victim)
	down := victim.partitions()
	victim.kill()
	for _, r := range runners {
		r.next(1)
	}
	taken := waitTaken(t, nodes, at)
	t.Logf("  its partitions taken over after %v", taken.Round(time.Millisecond))
	for _, r := range runners {
		r.printed(2)
		for _, c := range nodes {
			if c != victim {
				c.waitStored(r.id, 2*n, "")
			}
		}
	}
	logStep(t, "  every session complete on the other nodes", at)
	checkLive(live, down)
	holder := func() map[int]string {
		h := map[int]string{}
		for _, c := range nodes {
			if c.cmd != nil {
				for _, p := range c.partitions() {
					h[p] = c.name
				}
			}
		}
		return h
	}
	before := holder()
	victim.start()
	victim.waitIngesting()
	logStep(t, "  restarted, ingesting", at)
	for _, r := range runners {
		waitAll(r.id, 2*n, "")
	}
	waitSpread(t, nodes)
	logStep(t, "ingest node killed and restarted, every node serves every session, partitions shared again", at)
	// The restarted node took its share back: the sessions of the
	// partitions that moved, idle until phase 3, were left without an end
	// by their old holder, and their new one resumes them at once.
	moved, after := time.Now(), holder()
	var movedIDs []string
	for _, r := range runners {
		if p := natsbus.Partition(r.id); before[p] != after[p] {
			movedIDs = append(movedIDs, fmt.Sprintf("%s (partition %d, %s to %s)", r.id, p, before[p], after[p]))
		}
	}
	t.Logf("  sessions whose partition moved to another node: %v", movedIDs)
	for _, r := range runners {
		waitFor(t, 15*time.Second, "session "+r.id+" to run again, idle, after the partitions moved", func() bool {
			return nodes[0].status(r.id) == store.StatusRunning
		})
	}
	logStep(t, "  every idle session running again", moved)

	// The stream's leader killed while the harnesses print their last
	// phase, then restarted. A session of two phases starts in one of its
	// partitions first, so that it holds one, whatever the partitions the
	// restart moved.
	leader = streamLeader(t, nodes)
	lead := leaderOf(nodes, leader)
	if lead == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", leader)
	}
	extra := runs.startPhased(sessionsIn("s.pg.leader", lead.partitions(), 1)[0], runs.urls, n, 2)
	extra.printed(1)
	waitAll(extra.id, n, "")
	all := append(slices.Clone(runners), extra)
	mine = nil
	for _, r := range all {
		if slices.Contains(lead.partitions(), natsbus.Partition(r.id)) {
			mine = append(mine, r.id)
		}
	}
	t.Logf("killing stream leader %s, which holds partitions %v, of sessions %v", leader, lead.partitions(), mine)
	live = follow(all, lead)
	down = lead.partitions()
	at = time.Now()
	lead.kill()
	for _, r := range runners {
		r.next(2)
	}
	extra.next(1)
	taken = waitTaken(t, nodes, at)
	t.Logf("  its partitions taken over after %v", taken.Round(time.Millisecond))
	for _, r := range all {
		r.printed(r.p)
		for _, c := range nodes {
			if c != lead {
				c.waitStored(r.id, r.lines(), store.StatusSucceeded)
			}
		}
		r.wait()
	}
	logStep(t, "  every session complete on the other nodes", at)
	if next := streamLeader(t, nodes); next == leader {
		t.Errorf("the stream's leader is still %s, which was killed", leader)
	}
	checkLive(live, down)
	lead.start()
	lead.waitIngesting()
	logStep(t, "  restarted, ingesting", at)
	for _, r := range all {
		waitAll(r.id, r.lines(), store.StatusSucceeded)
	}
	waitAll(killed, 2*nk, store.StatusCancelled)
	waitSpread(t, nodes)
	logStep(t, "stream leader killed and restarted, every node serves every session, partitions shared again", at)
	runs.checkNoSpools()
	logStep(t, "total", start)
}
