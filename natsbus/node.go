package natsbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NodeOptions configure a Node. Addresses are host:port; the zero value of
// each, or an empty host, gives a loopback default (port 0: a free one).
type NodeOptions struct {
	// Name names the node: unique in its cluster and the same across the
	// node's restarts (JetStream places the stream's replicas by it).
	// Zero means the server's generated id, which is enough only alone.
	Name string
	// Dir is the directory of JetStream's file storage; required.
	Dir string
	// Listen is the address clients (runners, the ingest consumer)
	// connect to; zero means 127.0.0.1 on a free port.
	Listen string
	// ClusterName, when set, makes the node one of a cluster of that name,
	// listening for the other nodes' routes on ClusterListen (zero means
	// 127.0.0.1 on a free port) and connecting to those of Routes. Routes
	// may hold the node's own address: a route to itself is ignored, so
	// every node can be given the same list.
	ClusterName   string
	ClusterListen string
	Routes        []string
	// Ready bounds how long StartNode waits for the node to take clients
	// and, in a cluster, for JetStream to have a meta leader (which needs
	// a majority of the nodes Routes names); zero means 30 s.
	Ready time.Duration
	// Logf, when set, is told what the server warns of and fails at, and
	// with Notices what it notices (elections, routes, recoveries).
	Logf    func(format string, args ...any)
	Notices bool
}

// Node is a NATS server with JetStream on file storage, embedded in the
// process: alone, or one node of a cluster whose streams it replicates.
type Node struct {
	s       *server.Server
	closing *atomic.Bool // set by Shutdown: the server's complaints while it stops are not told
}

// StartNode starts a node and waits until it takes clients and JetStream
// answers (in a cluster: until the cluster has elected its meta leader).
// It returns an error, and no node, when that does not happen within
// opts.Ready.
func StartNode(opts NodeOptions) (*Node, error) {
	if opts.Dir == "" {
		return nil, errors.New("natsbus: node: no storage directory")
	}
	if opts.Ready <= 0 {
		opts.Ready = 30 * time.Second
	}
	host, port, err := splitListen(opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("natsbus: node: client address: %w", err)
	}
	so := &server.Options{
		ServerName: opts.Name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   opts.Dir,
		NoSigs:     true,
	}
	if opts.ClusterName != "" {
		if opts.Name == "" {
			return nil, errors.New("natsbus: node: a node of a cluster needs a name")
		}
		if len(opts.Routes) == 0 {
			return nil, errors.New("natsbus: node: a node of a cluster needs routes to the other nodes")
		}
		chost, cport, err := splitListen(opts.ClusterListen)
		if err != nil {
			return nil, fmt.Errorf("natsbus: node: cluster address: %w", err)
		}
		so.Cluster = server.ClusterOpts{Name: opts.ClusterName, Host: chost, Port: cport}
		for _, r := range opts.Routes {
			r = strings.TrimSpace(r)
			if r == "" {
				continue
			}
			if _, _, err := net.SplitHostPort(r); err != nil {
				return nil, fmt.Errorf("natsbus: node: route %q: want HOST:PORT", r)
			}
			so.Routes = append(so.Routes, &url.URL{Scheme: "nats", Host: r})
		}
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("natsbus: node: %w", err)
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	// The server logs what stops it from starting, and waits: the first
	// such error ends the wait.
	fatal := make(chan string, 1)
	closing := new(atomic.Bool)
	s.SetLogger(nodeLogger{logf, opts.Notices, fatal, closing}, false, false)
	s.Start()
	n := &Node{s: s, closing: closing}
	deadline := time.Now().Add(opts.Ready)
	for !s.ReadyForConnections(100 * time.Millisecond) {
		select {
		case msg := <-fatal:
			n.Shutdown()
			return nil, fmt.Errorf("natsbus: node %s: %s", opts.Name, msg)
		default:
		}
		if time.Now().After(deadline) {
			n.Shutdown()
			return nil, fmt.Errorf("natsbus: node %s: not listening for clients on %s after %v", opts.Name, opts.Listen, opts.Ready)
		}
	}
	if err := n.waitJetStream(deadline); err != nil {
		n.Shutdown()
		if opts.ClusterName != "" {
			return nil, fmt.Errorf("natsbus: node %s: JetStream has no meta leader after %v (a majority of the nodes of cluster %s must be up and reach each other's routes %s): %w",
				opts.Name, opts.Ready, opts.ClusterName, strings.Join(opts.Routes, ","), err)
		}
		return nil, fmt.Errorf("natsbus: node %s: JetStream not ready after %v: %w", opts.Name, opts.Ready, err)
	}
	return n, nil
}

// waitJetStream waits until JetStream answers a client on the node: in a
// cluster, once a meta leader is elected.
func (n *Node) waitJetStream(deadline time.Time) error {
	nc, err := nats.Connect(n.ClientURL(), nats.Name("agentstream node check"), nats.InProcessServer(n.s))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for {
		d := time.Now().Add(2 * time.Second)
		if deadline.Before(d) {
			d = deadline
		}
		ctx, cancel := context.WithDeadline(context.Background(), d)
		_, err = js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if !time.Now().Add(100 * time.Millisecond).Before(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ClientURL returns the URL clients connect to, nats://HOST:PORT.
func (n *Node) ClientURL() string { return n.s.ClientURL() }

// Name returns the node's name.
func (n *Node) Name() string { return n.s.Name() }

// Shutdown stops the node and waits until it stopped; what JetStream
// acknowledged is on disk.
func (n *Node) Shutdown() {
	n.closing.Store(true)
	n.s.Shutdown()
	n.s.WaitForShutdown()
}

// splitListen splits a listen address; zero means 127.0.0.1 on a free
// port (the server's -1).
func splitListen(addr string) (string, int, error) {
	if addr == "" {
		return "127.0.0.1", -1, nil
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%q: want HOST:PORT", addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%q: bad port", addr)
	}
	if port == 0 {
		port = -1
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return host, port, nil
}

// nodeLogger passes the server's warnings and errors to logf, its notices
// too when notices is set, and drops its debug and trace output.
type nodeLogger struct {
	logf    func(format string, args ...any)
	notices bool
	fatal   chan<- string // told the first fatal error, without waiting
	closing *atomic.Bool  // once set, only fatal errors are told
}

func (l nodeLogger) Noticef(format string, v ...any) {
	if l.notices && !l.closing.Load() {
		l.logf(format, v...)
	}
}

func (l nodeLogger) Warnf(format string, v ...any) {
	if !l.closing.Load() {
		l.logf("warning: "+format, v...)
	}
}

func (l nodeLogger) Errorf(format string, v ...any) {
	if !l.closing.Load() {
		l.logf("error: "+format, v...)
	}
}

func (l nodeLogger) Fatalf(format string, v ...any) {
	l.logf("fatal: "+format, v...)
	select {
	case l.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}
func (l nodeLogger) Debugf(string, ...any) {}
func (l nodeLogger) Tracef(string, ...any) {}
