//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterNode is one `serve --cluster` process of a test's cluster: with
// SQLite, it has its own database; with PostgreSQL, the nodes share one,
// and each has its JetStream storage in a directory of its own. Restarted,
// it keeps its addresses, database and JetStream storage.
type clusterNode struct {
	t                   *testing.T
	name, db, natsDir   string
	http, client, route string
	routes              string
	// shared is the store the nodes share (PostgreSQL), nil when each has
	// its own SQLite database.
	shared  store.Store
	cmd     *exec.Cmd
	log     *syncBuffer // the stderr of every run
	stopped bool
}

// startClusterNodes starts n serve --cluster processes of one cluster on
// loopback, each named nI, and waits until each ingests. With pg empty,
// each node has its own SQLite database; else they share the PostgreSQL
// database at the URL pg (its schema made here), and with it the sessions.
func startClusterNodes(t *testing.T, n int, pg string) []*clusterNode {
	t.Helper()
	addrs := freeAddrs(t, 3*n)
	routes := strings.Join(addrs[2*n:], ",")
	dir := t.TempDir()
	var shared store.Store
	if pg != "" {
		if _, errOut, code := runCLI(t, "", "migrate", "--db", pg); code != 0 {
			t.Fatalf("migrate: exit %d: %s", code, errOut)
		}
		st, err := postgres.Open(context.Background(), pg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		shared = st
	}
	nodes := make([]*clusterNode, n)
	for i := range nodes {
		name := fmt.Sprintf("n%d", i+1)
		c := &clusterNode{t: t, name: name, db: filepath.Join(dir, name+".db"),
			http: addrs[i], client: addrs[n+i], route: addrs[2*n+i], routes: routes, log: &syncBuffer{}}
		if pg != "" {
			c.db, c.natsDir, c.shared = pg, filepath.Join(dir, name+".nats"), shared
		}
		nodes[i] = c
		t.Cleanup(func() {
			c.kill()
			if t.Failed() {
				t.Logf("node %s:\n%s", c.name, c.log.String())
			}
		})
		c.start() // they wait for each other's votes: start all, then wait
	}
	for _, c := range nodes {
		c.waitIngesting()
	}
	return nodes
}

// freeAddrs returns n loopback addresses whose ports were free a moment ago.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

func (c *clusterNode) start() {
	c.t.Helper()
	fmt.Fprintf(c.log, "--- start %s\n", time.Now().Format(time.StampMilli))
	args := []string{"serve", "--db", c.db, "--addr", c.http, "--cluster", "test", "--node", c.name,
		"--nats-listen", c.client, "--cluster-listen", c.route, "--routes", c.routes}
	if c.natsDir != "" {
		args = append(args, "--nats-dir", c.natsDir)
	}
	c.cmd = exec.Command(binary, args...)
	c.cmd.Stderr = c.log
	if err := c.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
}

// kill kills the process with SIGKILL (continuing it first if stopped).
func (c *clusterNode) kill() {
	if c.cmd == nil {
		return
	}
	fmt.Fprintf(c.log, "--- kill -9 %s\n", time.Now().Format(time.StampMilli))
	c.cmd.Process.Signal(syscall.SIGKILL)
	if c.stopped {
		c.cont()
	}
	c.cmd.Wait()
	c.cmd = nil
}

// stop cuts the node off with SIGSTOP: its peers and clients see it hang.
func (c *clusterNode) stop() {
	fmt.Fprintf(c.log, "--- SIGSTOP %s\n", time.Now().Format(time.StampMilli))
	c.cmd.Process.Signal(syscall.SIGSTOP)
	c.stopped = true
}

func (c *clusterNode) cont() {
	fmt.Fprintf(c.log, "--- SIGCONT %s\n", time.Now().Format(time.StampMilli))
	c.cmd.Process.Signal(syscall.SIGCONT)
	c.stopped = false
}

// ingestHealth is the ingest GET /api/health reports.
type ingestHealth struct {
	Transport, Mode, State, Node, Consumer string
	Partitions                             []int
}

// getHealth returns the ingest GET /api/health at base reports.
func getHealth(base string) (ingestHealth, error) {
	resp, err := http.Get(base + "/api/health")
	if err != nil {
		return ingestHealth{}, err
	}
	defer resp.Body.Close()
	var h struct{ Ingest ingestHealth }
	err = json.NewDecoder(resp.Body).Decode(&h)
	return h.Ingest, err
}

// waitIngesting waits until GET /api/health says the node's ingest
// consumer is connected: its own, or with a shared store the partitions'.
func (c *clusterNode) waitIngesting() {
	c.t.Helper()
	mode, consumer := "all", "agentstream-ingest-"+c.name
	if c.shared != nil {
		mode, consumer = "shared", "agentstream-ingest"
	}
	waitFor(c.t, 60*time.Second, "node "+c.name+" to ingest", func() bool {
		h, err := getHealth("http://" + c.http)
		return err == nil && h.State == "connected" && h.Node == c.name && h.Mode == mode && h.Consumer == consumer
	})
}

// partitions returns the partitions the node holds, as GET /api/health
// says (none when it does not answer).
func (c *clusterNode) partitions() []int {
	h, _ := getHealth("http://" + c.http)
	return h.Partitions
}

// open returns the node's store and the function that closes it.
func (c *clusterNode) open() (store.Store, func()) {
	c.t.Helper()
	if c.shared != nil {
		return c.shared, func() {}
	}
	st, err := sqlite.Open(c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	return st, func() { st.Close() }
}

// stored returns the stdout lines and the status the node's store holds
// of session id.
func (c *clusterNode) stored(id string) ([]store.Line, string) {
	st, done := c.open()
	defer done()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		return nil, ""
	}
	return natsStoredLines(st, id), s.Status
}

// waitStored waits until the node's store holds n stdout lines of session
// id (and, with status set, that status), then checks that they are lines
// 1..n of the harness, each once, that the session's events have a dense
// seq, and that the node's API serves them so (checkServed).
func (c *clusterNode) waitStored(id string, n int, status string) {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, fmt.Sprintf("node %s to hold %d lines of %s", c.name, n, id), func() bool {
		lines, st := c.stored(id)
		return len(lines) >= n && (status == "" || st == status)
	})
	st, done := c.open()
	defer done()
	checkLines(c.t, natsStoredLines(st, id), n)
	checkDenseSeq(c.t, st, id)
	c.checkServed(id, n, status)
}

// checkServed fails unless the node's HTTP API serves session id (with
// status set, in that status) with events of seq 1..lastSeq, among which
// the raw events of lines 1..n of the harness's stdout, each once, in
// order and as printed.
func (c *clusterNode) checkServed(id string, n int, status string) {
	c.t.Helper()
	get := func(path string, v any) {
		c.t.Helper()
		resp, err := http.Get("http://" + c.http + path)
		if err != nil {
			c.t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.t.Fatalf("node %s: GET %s: %s", c.name, path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			c.t.Fatalf("node %s: GET %s: %v", c.name, path, err)
		}
	}
	var s store.Session
	get("/api/sessions/"+id, &s)
	if status != "" && s.Status != status {
		c.t.Errorf("node %s serves session %s as %q, want %s", c.name, id, s.Status, status)
	}
	var seq, line int64
	for seq < s.LastSeq {
		var page []json.RawMessage
		get(fmt.Sprintf("/api/sessions/%s/events?after=%d&limit=5000", id, seq), &page)
		if len(page) == 0 {
			break
		}
		for _, b := range page {
			ev, err := agentstream.ParseEnvelope(b)
			if err != nil {
				c.t.Fatalf("node %s serves event %s of %s: %v", c.name, b, id, err)
			}
			if ev.Seq != seq+1 {
				c.t.Fatalf("node %s serves event %d of %s after %d: not dense", c.name, ev.Seq, id, seq)
			}
			seq = ev.Seq
			if raw, ok := ev.Payload.(*agentstream.Raw); ok && ev.Source != nil && ev.Source.Stream == "stdout" {
				if ev.Source.Line != line+1 || raw.Text != harnessLine(int(line+1)) {
					c.t.Fatalf("node %s serves event %d of %s as line %d %q, want line %d", c.name, ev.Seq, id, ev.Source.Line, raw.Text, line+1)
				}
				line++
			}
		}
	}
	if seq != s.LastSeq || line != int64(n) {
		c.t.Errorf("node %s serves %d events of %s (lastSeq %d) with %d stdout lines, want %d", c.name, seq, id, s.LastSeq, line, n)
	}
}

// lastSeq returns the last seq of session id in the node's store.
func (c *clusterNode) lastSeq(id string) int64 {
	c.t.Helper()
	st, done := c.open()
	defer done()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		c.t.Fatal(err)
	}
	return s.LastSeq
}

// liveStream is a node's event stream of a session, opened by follow.
type liveStream struct {
	*stream
	c       *clusterNode
	id      string
	after   int64 // the last seq the store held when it was opened
	running bool  // whether the session was running then
}

// follow opens the node's event stream of session id after the events its
// store holds now.
func (c *clusterNode) follow(id string) *liveStream {
	c.t.Helper()
	st, done := c.open()
	s, err := st.Session(context.Background(), id)
	done()
	if err != nil {
		c.t.Fatal(err)
	}
	ls := &liveStream{c: c, id: id, after: s.LastSeq, running: s.Running()}
	ls.stream = openSSE(c.t, "http://"+c.http+"/api/sessions/"+id+"/stream", strconv.FormatInt(ls.after, 10))
	c.t.Cleanup(func() { ls.close() })
	return ls
}

// check fails unless the stream had each event of the session that the
// node's store holds past the ones it held when it was opened, once and
// in order. A stream that ends with the session interrupted (its writer's
// process died, or its node gave its partition to another, which resumes
// it with its next line), or running again already, is opened again after
// the last event it had, as a client does that sees the session running. It returns how many
// events the stream had before it first ended, and how often it was
// opened again.
func (ls *liveStream) check() (live, reopened int) {
	c := ls.c
	c.t.Helper()
	last := c.lastSeq(ls.id)
	for seq := ls.after; seq < last; {
		ev := ls.nextOrEnd(c.t)
		if ev.name == "end" || ev.name == "resync" {
			var end struct{ Status string }
			if ev.name == "end" && (json.Unmarshal([]byte(ev.data), &end) != nil ||
				end.Status != store.StatusInterrupted && end.Status != store.StatusRunning) {
				c.t.Fatalf("node %s ended the stream of %s after event %d of %d: %s", c.name, ls.id, seq, last, ev.data)
			}
			ls.close()
			ls.stream = openSSE(c.t, "http://"+c.http+"/api/sessions/"+ls.id+"/stream", strconv.FormatInt(seq, 10))
			reopened++
			continue
		}
		next, _ := strconv.ParseInt(ev.id, 10, 64)
		if next != seq+1 {
			c.t.Fatalf("node %s streamed event %d of %s after %d", c.name, next, ls.id, seq)
		}
		seq = next
		if reopened == 0 {
			live++
		}
	}
	return live, reopened
}

// streamLeader returns the name of the node that leads the stream.
func streamLeader(t *testing.T, nodes []*clusterNode) string {
	t.Helper()
	var urls []string
	for _, c := range nodes {
		if c.cmd != nil && !c.stopped {
			urls = append(urls, "nats://"+c.client)
		}
	}
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	leader := ""
	waitFor(t, 30*time.Second, "the stream to have a leader and three replicas", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, natsbus.StreamName)
		if err != nil {
			return false
		}
		info := s.CachedInfo()
		if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			return false
		}
		leader = info.Cluster.Leader
		return leader != ""
	})
	return leader
}

// phases is a harness printing $3 phases of $2 lines each (harnessLine),
// 25 lines every 20 ms; after phase K it touches phaseK in its directory
// $1 and, but after the last, waits for the file goK.
const phases = `d=$1 n=$2 p=$3 k=1
while [ $k -le $p ]; do
  i=$(( (k-1)*n + 1 )) last=$((k*n))
  while [ $i -le $last ]; do
    j=$((i+24)); [ $j -gt $last ] && j=$last
    seq -f "line %.0f ` + lineFill + `" $i $j
    sleep 0.02
    i=$((j+1))
  done
  touch "$d/phase$k"
  if [ $k -lt $p ]; then while [ ! -e "$d/go$k" ]; do sleep 0.02; done; fi
  k=$((k+1))
done
`

// faultRuns starts the runners of a fault test: run --nats processes
// given every node's address, their spools in a directory of the test's.
type faultRuns struct {
	t      *testing.T
	dir    string // the runners' harnesses' directories are in it
	spools string
	env    []string
	urls   string // the nodes' client URLs, comma-separated
}

func newFaultRuns(t *testing.T, nodes []*clusterNode) *faultRuns {
	var urls []string
	for _, c := range nodes {
		urls = append(urls, "nats://"+c.client)
	}
	dir := t.TempDir()
	f := &faultRuns{t: t, dir: dir, spools: filepath.Join(dir, "spool"), urls: strings.Join(urls, ",")}
	f.env = append(os.Environ(), "AGENTSTREAM_SPOOL_DIR="+f.spools)
	return f
}

// killResumed runs session id whose harness prints 2*n lines, kills the
// runner with SIGKILL once its spool holds them all (and the harness,
// which lingers), and resumes its spool with run --resume, which publishes
// the rest and ends the session cancelled.
func (f *faultRuns) killResumed(id string, n int) {
	t := f.t
	t.Helper()
	kdir := filepath.Join(f.dir, id)
	os.Mkdir(kdir, 0o755)
	runner := exec.Command(binary, "run", "--nats", f.urls, "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", twoHalves, "sh", kdir, strconv.Itoa(n), "linger")
	runner.Env = f.env
	var rerr syncBuffer
	runner.Stderr = &rerr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer runner.Process.Kill()
	os.WriteFile(filepath.Join(kdir, "go"), nil, 0o644)
	waitFor(t, 60*time.Second, "the harness to print its lines", func() bool { return exists(filepath.Join(kdir, "pid")) })
	spool := filepath.Join(f.spools, id+".spool")
	waitFor(t, 30*time.Second, "the spool to hold every line", func() bool {
		b, _ := os.ReadFile(spool)
		return bytes.Count(b, []byte("\n")) == 1+2*n
	})
	runner.Process.Signal(syscall.SIGKILL)
	runner.Wait()
	if b, err := os.ReadFile(filepath.Join(kdir, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	resume := exec.Command(binary, "run", "--resume", spool, "--upload-wait", "1m")
	resume.Env = f.env
	if out, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("run --resume: %v: %s (the killed run said: %s)", err, out, rerr.String())
	}
}

// phasedRun is a runner whose harness prints phases (phases).
type phasedRun struct {
	t      *testing.T
	id     string
	dir    string
	n, p   int // lines per phase, phases
	cmd    *exec.Cmd
	stderr syncBuffer
}

// startPhased starts run --nats URLS for session id, whose harness prints
// p phases of n lines each; it is killed at the end of the test.
func (f *faultRuns) startPhased(id, urls string, n, p int) *phasedRun {
	f.t.Helper()
	r := &phasedRun{t: f.t, id: id, dir: filepath.Join(f.dir, id), n: n, p: p}
	os.Mkdir(r.dir, 0o755)
	r.cmd = exec.Command(binary, "run", "--nats", urls, "--session", id, "--quiet", "--protocol", "claude-json",
		"--upload-wait", "2m", "--", "sh", "-c", phases, "sh", r.dir, strconv.Itoa(n), strconv.Itoa(p))
	r.cmd.Env = f.env
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		if r.cmd.ProcessState == nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	return r
}

// printed waits until the harness printed phase k.
func (r *phasedRun) printed(k int) {
	r.t.Helper()
	waitFor(r.t, 60*time.Second, fmt.Sprintf("the harness of %s to print phase %d", r.id, k),
		func() bool { return exists(filepath.Join(r.dir, "phase"+strconv.Itoa(k))) })
}

// next lets the harness print the phase after phase k.
func (r *phasedRun) next(k int) { os.WriteFile(filepath.Join(r.dir, "go"+strconv.Itoa(k)), nil, 0o644) }

// lines returns how many lines the harness prints in all.
func (r *phasedRun) lines() int { return r.n * r.p }

// wait waits for the runner to exit, and fails unless it succeeded.
func (r *phasedRun) wait() {
	r.t.Helper()
	if err := r.cmd.Wait(); err != nil {
		r.t.Fatalf("run --nats %s: %v: %s", r.id, err, r.stderr.String())
	}
}

// checkNoSpools fails unless every runner's spool was removed.
func (f *faultRuns) checkNoSpools() {
	f.t.Helper()
	if left, _ := filepath.Glob(filepath.Join(f.spools, "*")); len(left) > 0 {
		f.t.Errorf("spools left: %v", left)
	}
}

// leaderOf returns the node named leader (nil for none).
func leaderOf(nodes []*clusterNode, leader string) *clusterNode {
	for _, c := range nodes {
		if c.name == leader {
			return c
		}
	}
	return nil
}

// logStep logs how long a step has taken since at.
func logStep(t *testing.T, what string, at time.Time) {
	t.Helper()
	t.Logf("%s: %v", what, time.Since(at).Round(time.Millisecond))
}

// TestClusterFaults runs three serve --cluster processes, each with its
// own SQLite database, and runners (run --nats, real processes) whose
// harness prints lines in phases. Between the phases, it cuts a node off
// (SIGSTOP, then SIGCONT), kills an ingest node with SIGKILL and restarts
// it, and kills the stream's leader (found through the JetStream API) and
// restarts it; the harness prints its next phase while the fault lasts.
// After each, every node holds every line printed so far, once, with a
// dense seq, and serves them so. A second runner is killed with SIGKILL
// and its spool resumed with run --resume: every node holds every line of
// it. TestClusterFaultsPostgres runs the kills against nodes sharing one
// PostgreSQL database.
func TestClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster of three serve processes and kills them")
	}
	start := time.Now()
	nodes := startClusterNodes(t, 3, "")
	t.Logf("3 nodes ingesting after %v", time.Since(start).Round(time.Millisecond))
	runs := newFaultRuns(t, nodes)
	waitAll := func(id string, n int, status string) {
		t.Helper()
		for _, c := range nodes {
			c.waitStored(id, n, status)
		}
	}

	// A runner killed: what it spooled is published by run --resume.
	at := time.Now()
	const killed, nk = "s.cluster.killed", 300
	runs.killResumed(killed, nk)
	waitAll(killed, 2*nk, store.StatusCancelled)
	logStep(t, "runner killed and resumed, every node complete", at)

	// A runner that lives through the nodes' faults, given the first
	// node's address only.
	const id, n = "s.cluster.live", 400
	runner := runs.startPhased(id, "nats://"+nodes[0].client, n, 4)
	runner.printed(1)
	waitAll(id, n, "")

	// A node cut off: SIGSTOP while the harness prints a phase. The runner,
	// which was given that node's address only, leaves it for one of the
	// others it learnt from it once its pings go unanswered; the others
	// take the phase, and the node catches up once continued.
	at = time.Now()
	cut := nodes[0]
	var live []*liveStream
	for _, c := range nodes[1:] {
		live = append(live, c.follow(id))
	}
	cut.stop()
	runner.next(1)
	runner.printed(2)
	nodes[1].waitStored(id, 2*n, "")
	nodes[2].waitStored(id, 2*n, "")
	logStep(t, "  the other nodes complete", at)
	// Their event streams, opened before the phase was printed, had each
	// of its events as it was stored: their stores feed their hubs.
	for i, c := range nodes[1:] {
		n, reopened := live[i].check()
		if reopened > 0 {
			t.Errorf("node %s ended the stream of %s %d times", c.name, id, reopened)
		}
		t.Logf("  node %s streamed events %d to %d live", c.name, live[i].after+1, live[i].after+int64(n))
	}
	cut.cont()
	cut.waitStored(id, 2*n, "")
	logStep(t, "node cut off and continued, every node complete", at)

	// An ingest node killed (one that does not lead the stream) and
	// restarted.
	at = time.Now()
	leader := streamLeader(t, nodes)
	var ingest *clusterNode
	for _, c := range nodes {
		if c.name != leader && ingest == nil {
			ingest = c
		}
	}
	if leaderOf(nodes, leader) == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", leader)
	}
	t.Logf("stream leader %s; killing ingest node %s", leader, ingest.name)
	ingest.kill()
	runner.next(2)
	runner.printed(3)
	logStep(t, "  phase 3 printed", at)
	for _, c := range nodes {
		if c != ingest {
			c.waitStored(id, 3*n, "")
		}
	}
	logStep(t, "  the other nodes complete", at)
	ingest.start()
	ingest.waitIngesting()
	logStep(t, "  restarted, ingesting", at)
	waitAll(id, 3*n, "")
	logStep(t, "ingest node killed and restarted, every node complete", at)

	// The stream's leader killed while the harness prints its last phase,
	// then restarted.
	at = time.Now()
	leader = streamLeader(t, nodes)
	lead := leaderOf(nodes, leader)
	t.Logf("killing stream leader %s", leader)
	lead.kill()
	runner.next(3)
	runner.printed(4)
	logStep(t, "  phase 4 printed", at)
	for _, c := range nodes {
		if c != lead {
			c.waitStored(id, 4*n, store.StatusSucceeded)
		}
	}
	logStep(t, "  the other nodes complete", at)
	runner.wait()
	if next := streamLeader(t, nodes); next == leader {
		t.Errorf("the stream's leader is still %s, which was killed", leader)
	}
	lead.start()
	lead.waitIngesting()
	logStep(t, "  restarted, ingesting", at)
	waitAll(id, 4*n, store.StatusSucceeded)
	waitAll(killed, 2*nk, store.StatusCancelled)
	logStep(t, "stream leader killed and restarted, every node complete", at)
	runs.checkNoSpools()
	t.Logf("total %v", time.Since(start).Round(time.Millisecond))
}

// TestServeClusterFlags holds that serve refuses the cluster flags that do
// not go together, before it opens anything.
func TestServeClusterFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "flags.db")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no routes", []string{"--cluster", "c"}, "--cluster needs --routes"},
		{"with --nats", []string{"--cluster", "c", "--routes", "127.0.0.1:6222", "--nats", "nats://127.0.0.1:4222"}, "no --nats"},
		{"routes alone", []string{"--routes", "127.0.0.1:6222"}, "--routes needs --cluster"},
		{"node alone", []string{"--node", "a"}, "need --cluster or --nats"},
		{"bad node", []string{"--cluster", "c", "--routes", "127.0.0.1:6222", "--node", "a.b"}, "bad --node"},
		{"bad route", []string{"--cluster", "c", "--routes", "nowhere"}, "bad address"},
		{"not loopback", []string{"--cluster", "c", "--routes", "127.0.0.1:6222", "--nats-listen", "0.0.0.0:4222"}, "not a loopback address"},
		{"replicas", []string{"--cluster", "c", "--routes", "127.0.0.1:6222", "--replicas", "0"}, "bad --replicas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
	if exists(db) {
		t.Error("a refused serve created its database")
	}
}
