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

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// clusterNode is one `serve --cluster` process of a test's cluster, with
// its own SQLite database; restarted, it keeps its addresses, database and
// JetStream storage.
type clusterNode struct {
	t                   *testing.T
	name, db            string
	http, client, route string
	routes              string
	cmd                 *exec.Cmd
	log                 *syncBuffer // the stderr of every run
	stopped             bool
}

// startClusterNodes starts n serve --cluster processes of one cluster on
// loopback, each named nI, and waits until each ingests.
func startClusterNodes(t *testing.T, n int) []*clusterNode {
	t.Helper()
	addrs := freeAddrs(t, 3*n)
	routes := strings.Join(addrs[2*n:], ",")
	dir := t.TempDir()
	nodes := make([]*clusterNode, n)
	for i := range nodes {
		c := &clusterNode{t: t, name: fmt.Sprintf("n%d", i+1), db: filepath.Join(dir, fmt.Sprintf("n%d.db", i+1)),
			http: addrs[i], client: addrs[n+i], route: addrs[2*n+i], routes: routes, log: &syncBuffer{}}
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
	c.cmd = exec.Command(binary, "serve", "--db", c.db, "--addr", c.http, "--cluster", "test", "--node", c.name,
		"--nats-listen", c.client, "--cluster-listen", c.route, "--routes", c.routes)
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

// waitIngesting waits until GET /api/health says the node's ingest
// consumer is connected.
func (c *clusterNode) waitIngesting() {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, "node "+c.name+" to ingest", func() bool {
		resp, err := http.Get("http://" + c.http + "/api/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var h struct {
			Ingest struct{ State, Node, Consumer string }
		}
		return json.NewDecoder(resp.Body).Decode(&h) == nil && h.Ingest.State == "connected" &&
			h.Ingest.Node == c.name && h.Ingest.Consumer == "agentstream-ingest-"+c.name
	})
}

// stored returns the stdout lines and the status the node's database
// holds of session id.
func (c *clusterNode) stored(id string) ([]store.Line, string) {
	st, err := sqlite.Open(c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		return nil, ""
	}
	return natsStoredLines(st, id), s.Status
}

// waitStored waits until the node's database holds n stdout lines of
// session id (and, with status set, that status), then checks that they
// are lines 1..n of the harness, each once, and that the session's events
// have a dense seq.
func (c *clusterNode) waitStored(id string, n int, status string) {
	c.t.Helper()
	waitFor(c.t, 60*time.Second, fmt.Sprintf("node %s to hold %d lines of %s", c.name, n, id), func() bool {
		lines, st := c.stored(id)
		return len(lines) >= n && (status == "" || st == status)
	})
	st, err := sqlite.Open(c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	checkLines(c.t, natsStoredLines(st, id), n)
	checkDenseSeq(c.t, st, id)
}

// lastSeq returns the last seq of session id in the node's database.
func (c *clusterNode) lastSeq(id string) int64 {
	c.t.Helper()
	st, err := sqlite.Open(c.db)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Session(context.Background(), id)
	if err != nil {
		c.t.Fatal(err)
	}
	return s.LastSeq
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

// TestClusterFaults runs three serve --cluster processes, each with its
// own SQLite database, and runners (run --nats, real processes) whose
// harness prints lines in phases. Between the phases, it cuts a node off
// (SIGSTOP, then SIGCONT), kills an ingest node with SIGKILL and restarts
// it, and kills the stream's leader (found through the JetStream API) and
// restarts it; the harness prints its next phase while the fault lasts.
// After each, every node holds every line printed so far, once, with a
// dense seq. A second runner is killed with SIGKILL and its spool resumed
// with run --resume: every node holds every line of it.
func TestClusterFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a cluster of three serve processes and kills them")
	}
	start := time.Now()
	nodes := startClusterNodes(t, 3)
	t.Logf("3 nodes ingesting after %v", time.Since(start).Round(time.Millisecond))
	var urls []string
	for _, c := range nodes {
		urls = append(urls, "nats://"+c.client)
	}
	dir := t.TempDir()
	spools := filepath.Join(dir, "spool")
	env := append(os.Environ(), "AGENTSTREAM_SPOOL_DIR="+spools)
	waitAll := func(id string, n int, status string) {
		t.Helper()
		for _, c := range nodes {
			c.waitStored(id, n, status)
		}
	}
	phase := func(k int) {
		t.Helper()
		waitFor(t, 60*time.Second, fmt.Sprintf("the harness to print phase %d", k), func() bool { return exists(filepath.Join(dir, "phase"+strconv.Itoa(k))) })
	}
	step := func(what string, at time.Time) {
		t.Logf("%s: %v", what, time.Since(at).Round(time.Millisecond))
	}

	// A runner killed: what it spooled is published by run --resume.
	at := time.Now()
	const killed, nk = "s.cluster.killed", 300
	kdir := filepath.Join(dir, "killed")
	os.Mkdir(kdir, 0o755)
	runner := exec.Command(binary, "run", "--nats", strings.Join(urls, ","), "--session", killed, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", twoHalves, "sh", kdir, strconv.Itoa(nk), "linger")
	runner.Env = env
	var rerr bytes.Buffer
	runner.Stderr = &rerr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer runner.Process.Kill()
	os.WriteFile(filepath.Join(kdir, "go"), nil, 0o644)
	waitFor(t, 60*time.Second, "the harness to print its lines", func() bool { return exists(filepath.Join(kdir, "pid")) })
	spool := filepath.Join(spools, killed+".spool")
	waitFor(t, 30*time.Second, "the spool to hold every line", func() bool {
		b, _ := os.ReadFile(spool)
		return bytes.Count(b, []byte("\n")) == 1+2*nk
	})
	runner.Process.Signal(syscall.SIGKILL)
	runner.Wait()
	if b, err := os.ReadFile(filepath.Join(kdir, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	resume := exec.Command(binary, "run", "--resume", spool, "--upload-wait", "1m")
	resume.Env = env
	if out, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("run --resume: %v: %s (the killed run said: %s)", err, out, rerr.String())
	}
	waitAll(killed, 2*nk, store.StatusCancelled)
	step("runner killed and resumed, every node complete", at)

	// A runner that lives through the nodes' faults.
	const id, n = "s.cluster.live", 400
	runner = exec.Command(binary, "run", "--nats", urls[0], "--session", id, "--quiet", "--protocol", "claude-json",
		"--upload-wait", "2m", "--", "sh", "-c", phases, "sh", dir, strconv.Itoa(n), "4")
	runner.Env = env
	rerr.Reset()
	runner.Stderr = &rerr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	defer runner.Process.Kill()
	phase(1)
	waitAll(id, n, "")

	// A node cut off: SIGSTOP while the harness prints a phase. The runner,
	// which was given that node's address only, leaves it for one of the
	// others it learnt from it once its pings go unanswered; the others
	// take the phase, and the node catches up once continued.
	at = time.Now()
	cut := nodes[0]
	var live []*stream
	for _, c := range nodes[1:] {
		s := openSSE(t, "http://"+c.http+"/api/sessions/"+id+"/stream", strconv.FormatInt(c.lastSeq(id), 10))
		defer s.close()
		live = append(live, s)
	}
	cut.stop()
	os.WriteFile(filepath.Join(dir, "go1"), nil, 0o644)
	phase(2)
	nodes[1].waitStored(id, 2*n, "")
	nodes[2].waitStored(id, 2*n, "")
	step("  the other nodes complete", at)
	// Their event streams, opened before the phase was printed, had each
	// of its events as it was stored: their stores feed their hubs.
	for i, c := range nodes[1:] {
		first, last := int64(0), c.lastSeq(id)
		for seq := int64(0); seq < last; {
			ev := live[i].next(t)
			prev := seq
			seq, _ = strconv.ParseInt(ev.id, 10, 64)
			if first == 0 {
				first = seq
			} else if seq != prev+1 {
				t.Fatalf("node %s streamed event %d after %d", c.name, seq, prev)
			}
		}
		t.Logf("  node %s streamed events %d to %d live", c.name, first, last)
	}
	cut.cont()
	cut.waitStored(id, 2*n, "")
	step("node cut off and continued, every node complete", at)

	// An ingest node killed (one that does not lead the stream) and
	// restarted.
	at = time.Now()
	leader := streamLeader(t, nodes)
	var ingest, lead *clusterNode
	for _, c := range nodes {
		if c.name == leader {
			lead = c
		} else if ingest == nil {
			ingest = c
		}
	}
	if lead == nil {
		t.Fatalf("the stream's leader %q is none of the nodes", leader)
	}
	t.Logf("stream leader %s; killing ingest node %s", leader, ingest.name)
	ingest.kill()
	os.WriteFile(filepath.Join(dir, "go2"), nil, 0o644)
	phase(3)
	step("  phase 3 printed", at)
	for _, c := range nodes {
		if c != ingest {
			c.waitStored(id, 3*n, "")
		}
	}
	step("  the other nodes complete", at)
	ingest.start()
	ingest.waitIngesting()
	step("  restarted, ingesting", at)
	ingest.waitStored(id, 3*n, "")
	waitAll(id, 3*n, "")
	step("ingest node killed and restarted, every node complete", at)

	// The stream's leader killed while the harness prints its last phase,
	// then restarted.
	at = time.Now()
	lead = nil
	leader = streamLeader(t, nodes)
	for _, c := range nodes {
		if c.name == leader {
			lead = c
		}
	}
	t.Logf("killing stream leader %s", leader)
	lead.kill()
	os.WriteFile(filepath.Join(dir, "go3"), nil, 0o644)
	phase(4)
	step("  phase 4 printed", at)
	for _, c := range nodes {
		if c != lead {
			c.waitStored(id, 4*n, store.StatusSucceeded)
		}
	}
	step("  the other nodes complete", at)
	if err := runner.Wait(); err != nil {
		t.Fatalf("run --nats: %v: %s", err, rerr.String())
	}
	if next := streamLeader(t, nodes); next == leader {
		t.Errorf("the stream's leader is still %s, which was killed", leader)
	}
	lead.start()
	lead.waitIngesting()
	step("  restarted, ingesting", at)
	waitAll(id, 4*n, store.StatusSucceeded)
	waitAll(killed, 2*nk, store.StatusCancelled)
	step("stream leader killed and restarted, every node complete", at)
	for _, c := range nodes {
		resp, err := http.Get("http://" + c.http + "/api/sessions/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var s struct{ Status string }
		err = json.NewDecoder(resp.Body).Decode(&s)
		resp.Body.Close()
		if err != nil || s.Status != store.StatusSucceeded {
			t.Errorf("node %s serves session %s as %q (%v), want %s", c.name, id, s.Status, err, store.StatusSucceeded)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(spools, "*")); len(left) > 0 {
		t.Errorf("spools left: %v", left)
	}
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
