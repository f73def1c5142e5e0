package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/agentstream/agentstream/natsbus"
)

// clusterFlags are serve's flags of the embedded NATS node (--cluster) and
// of the ingest consumer's name and replicas.
type clusterFlags struct {
	cluster       string
	node          string
	natsListen    string
	clusterListen string
	routes        string
	natsDir       string
	replicas      int
	set           map[string]bool
	// shared is set when the nodes share one database (PostgreSQL, or
	// --ingest shared): they then share the partitions' consumers.
	shared bool
}

const (
	defaultNATSListen    = "127.0.0.1:4222"
	defaultClusterListen = "127.0.0.1:6222"
)

func (c *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.cluster, "cluster", "", "embed a NATS JetStream node, one of the cluster `NAME`, and ingest from it (docs/cluster.md)")
	fs.StringVar(&c.node, "node", "", "the node's `NAME`: unique in the cluster, the same across restarts; its ingest consumer is agentstream-ingest-NAME (default with --cluster: the host name and the --nats-listen port; with --nats: none, the shared agentstream-ingest)")
	fs.StringVar(&c.natsListen, "nats-listen", defaultNATSListen, "with --cluster, the `HOST:PORT` runners (run --nats) connect to")
	fs.StringVar(&c.clusterListen, "cluster-listen", defaultClusterListen, "with --cluster, the `HOST:PORT` the other nodes' routes connect to")
	fs.StringVar(&c.routes, "routes", "", "with --cluster, the --cluster-listen `HOST:PORT,...` of the cluster's nodes (its own may be among them)")
	fs.StringVar(&c.natsDir, "nats-dir", "", "with --cluster, the `DIR` of the node's JetStream storage (default: the database's path and .nats)")
	fs.IntVar(&c.replicas, "replicas", 0, "keep the stream and the ingest consumer on `N` nodes (default with --cluster: 3, or the nodes of --routes when fewer; else 1)")
}

// validNodeName is what a node's name may hold: it names the server and
// the durable consumer.
var validNodeName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// check validates the flags, given which were set and whether --nats was,
// and fills in the defaults.
func (c *clusterFlags) check(fs *flag.FlagSet, natsURL string) error {
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if c.cluster == "" {
		for _, name := range []string{"nats-listen", "cluster-listen", "routes", "nats-dir"} {
			if c.set[name] {
				return fmt.Errorf("--%s needs --cluster", name)
			}
		}
		if (c.set["node"] || c.set["replicas"]) && natsURL == "" {
			return errors.New("--node and --replicas need --cluster or --nats")
		}
	} else {
		if natsURL != "" {
			return errors.New("--cluster embeds the NATS node it ingests from: no --nats")
		}
		if len(c.routeList()) == 0 {
			return errors.New("--cluster needs --routes: the --cluster-listen addresses of the cluster's nodes")
		}
		if !validNodeName.MatchString(c.cluster) {
			return fmt.Errorf("bad --cluster %q: letters, digits, - and _", c.cluster)
		}
		for _, a := range append([]string{c.natsListen, c.clusterListen}, c.routeList()...) {
			if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
				return fmt.Errorf("bad address %q: want HOST:PORT", a)
			}
		}
		for _, a := range []string{c.natsListen, c.clusterListen} {
			if !isLoopback(a) {
				// The node takes clients and routes without credentials.
				return fmt.Errorf("%s is not a loopback address: the embedded NATS node has no authentication yet; put the nodes behind a private network's loopback or use --nats with a secured NATS deployment", a)
			}
		}
		if c.node == "" {
			_, port, _ := net.SplitHostPort(c.natsListen)
			host, _ := os.Hostname()
			c.node = strings.Trim(regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(host, "-"), "-") + "-" + port
		}
	}
	if c.node != "" && !validNodeName.MatchString(c.node) {
		return fmt.Errorf("bad --node %q: letters, digits, - and _, at most 64", c.node)
	}
	if c.set["replicas"] && (c.replicas < 1 || c.replicas > 5) {
		return fmt.Errorf("bad --replicas %d: 1 to 5", c.replicas)
	}
	if !c.set["replicas"] && c.cluster != "" {
		c.replicas = min(3, c.nodes())
	}
	return nil
}

func (c *clusterFlags) routeList() []string {
	var out []string
	for r := range strings.SplitSeq(c.routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// nodes returns how many nodes the cluster has: those --routes names, and
// this one.
func (c *clusterFlags) nodes() int {
	seen := map[string]bool{c.clusterListen: true}
	for _, r := range c.routeList() {
		seen[r] = true
	}
	return len(seen)
}

// durable returns the name of the ingest consumer: one per node, so that
// each node's own store gets every session, when the node is named and
// its store is its own; else the one every serve --nats shares (with
// shared ingest, the stem of the partitions' consumers).
func (c *clusterFlags) durable() string {
	if c.node == "" || c.shared {
		return "agentstream-ingest"
	}
	return "agentstream-ingest-" + c.node
}

// startNode starts the embedded node, its storage beside the database at
// dbPath unless --nats-dir names it.
func (c *clusterFlags) startNode(dbPath string, logf func(string, ...any)) (*natsbus.Node, error) {
	dir := c.natsDir
	if dir == "" {
		if dbPath == "" {
			return nil, errors.New("--cluster with a database that is not a file needs --nats-dir")
		}
		dir = dbPath + ".nats"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return natsbus.StartNode(natsbus.NodeOptions{Name: c.node, Dir: dir, Listen: c.natsListen,
		ClusterName: c.cluster, ClusterListen: c.clusterListen, Routes: c.routeList(), Ready: time.Minute, Logf: logf})
}
