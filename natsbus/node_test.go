package natsbus_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats.go/jetstream"
)

// freeAddrs returns n loopback addresses whose ports were free a moment ago.
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// startCluster starts three nodes of a cluster, each given every node's
// route (its own too), at once: each waits for the meta leader the others
// help elect.
func startCluster(t testing.TB) ([]*natsbus.Node, []natsbus.NodeOptions) {
	t.Helper()
	addrs := freeAddrs(t, 6)
	clients, routes := addrs[:3], addrs[3:]
	opts := make([]natsbus.NodeOptions, 3)
	nodes := make([]*natsbus.Node, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range opts {
		opts[i] = natsbus.NodeOptions{Name: fmt.Sprintf("n%d", i+1), Dir: t.TempDir(), ClusterName: "test",
			Listen: clients[i], ClusterListen: routes[i], Routes: routes}
		wg.Go(func() { nodes[i], errs[i] = natsbus.StartNode(opts[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nodes[i].Shutdown)
	}
	return nodes, opts
}

// TestNodeAlone starts a node alone: a runner's spool published to it is
// consumed into the store, every line once.
func TestNodeAlone(t *testing.T) {
	n, err := natsbus.StartNode(natsbus.NodeOptions{Name: "alone", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	if !strings.HasPrefix(n.ClientURL(), "nats://127.0.0.1:") {
		t.Errorf("client URL %s, want one on loopback", n.ClientURL())
	}
	st := openStore(t)
	cons := natsbus.Consume(connect(t, n.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}), natsbus.ConsumerOptions{})
	defer cons.Stop()
	const id = "s.node.alone"
	sp, lines := newSpool(t, t.TempDir(), id, 300, true)
	defer sp.Close()
	p, err := natsbus.NewPublisher(connect(t, n.ClientURL()), sp, natsbus.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitStored(t, st, id, len(lines), true)
	checkStored(t, st, id, lines, true)
}

// TestNodeCluster starts three nodes, each with its own durable consumer
// feeding its own store; the stream, which a runner made with one replica,
// is raised to three by the consumers. A session is published, the
// stream's leader is shut down, a second session is published to the
// other nodes, and the leader comes back: every store holds both sessions,
// every line once.
func TestNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of three nodes")
	}
	nodes, opts := startCluster(t)
	nc := connect(t, nodes[0].ClientURL())
	ensureStream(t, nc) // as a runner makes it: one replica
	var urls []string
	stores := map[string]*sqlite.Store{}
	for _, n := range nodes {
		urls = append(urls, n.ClientURL())
		st := openStore(t)
		stores[n.Name()] = st
		cons := natsbus.Consume(connect(t, n.ClientURL()), api.NewIngester(st, api.Options{HeartbeatTimeout: -1}),
			natsbus.ConsumerOptions{Durable: "ingest-" + n.Name(), Replicas: 3})
		t.Cleanup(cons.Stop)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Generous: on a loaded machine, the election after the leader's
	// shutdown takes a while.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leader := ""
	for leader == "" {
		if ctx.Err() != nil {
			t.Fatal("the stream was not raised to three replicas with a leader")
		}
		if s, err := js.Stream(ctx, natsbus.StreamName); err == nil {
			// The replicas must have caught up: a replica still
			// copying the stream cannot take over from its leader.
			if info := s.CachedInfo(); info.Config.Replicas == 3 && info.Cluster != nil && len(info.Cluster.Replicas) == 2 &&
				info.Cluster.Replicas[0].Current && info.Cluster.Replicas[1].Current {
				leader = info.Cluster.Leader
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	publish := func(urls, id string, n int) []store.Line {
		t.Helper()
		sp, lines := newSpool(t, t.TempDir(), id, n, true)
		defer sp.Close()
		p, err := natsbus.Publish(urls, sp, natsbus.PublisherOptions{BatchRecords: 10})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return lines
	}
	a := publish(strings.Join(urls, ","), "s.cluster.a", 500)
	var rest []string
	down := -1
	for i, n := range nodes {
		if n.Name() == leader {
			down = i
			n.Shutdown()
		} else {
			rest = append(rest, n.ClientURL())
		}
	}
	if down < 0 {
		t.Fatalf("stream leader %q is none of the nodes", leader)
	}
	b := publish(strings.Join(rest, ","), "s.cluster.b", 500)
	for name, st := range stores {
		if name != leader {
			waitStored(t, st, "s.cluster.b", len(b), true)
		}
	}
	n, err := natsbus.StartNode(opts[down])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	for name, st := range stores {
		waitStored(t, st, "s.cluster.a", len(a), true)
		waitStored(t, st, "s.cluster.b", len(b), true)
		t.Logf("node %s: both sessions stored", name)
		checkStored(t, st, "s.cluster.a", a, true)
		checkStored(t, st, "s.cluster.b", b, true)
	}
}

// TestNodeNoLeader starts one node of a cluster of three alone: with no
// majority, it gets no meta leader, and StartNode says so in time.
func TestNodeNoLeader(t *testing.T) {
	routes := freeAddrs(t, 3)
	start := time.Now()
	n, err := natsbus.StartNode(natsbus.NodeOptions{Name: "lonely", Dir: t.TempDir(), ClusterName: "test",
		ClusterListen: routes[0], Routes: routes, Ready: 2 * time.Second})
	if err == nil {
		n.Shutdown()
		t.Fatal("a node with no majority started")
	}
	if !strings.Contains(err.Error(), "no meta leader") {
		t.Errorf("error %q does not say there is no meta leader", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("StartNode took %v with Ready 2s", d)
	}
}

// TestNodePortInUse starts a node on a port another listener holds: the
// server's own error comes back at once, not after Ready.
func TestNodePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	n, err := natsbus.StartNode(natsbus.NodeOptions{Name: "taken", Dir: t.TempDir(), Listen: ln.Addr().String(), Ready: 20 * time.Second})
	if err == nil {
		n.Shutdown()
		t.Fatal("a node started on a port in use")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("StartNode took %v to fail: %v", d, err)
	}
	t.Log(err)
}
