package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/session"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/web/api"
	"github.com/agentstream/agentstream/web/ui"
)

const serveDoc = `Serves the stored sessions: the HTTP API under /api/ and the web timeline
at /. Sessions that other processes write to the same database (agentstream
run) are followed live. Bound to an address other than loopback, it refuses
to start without --token (or $AGENTSTREAM_TOKEN); with a token, every
request needs "Authorization: Bearer TOKEN" (never in the URL). The lines
remote runners send are masked of their secrets before they are stored
(--no-redact keeps them).

It answers only requests for its own host: a loopback name or address, the
address it listens on, and each --allow-host NAME (the name a reverse proxy
or a browser uses; "*" for any, which gives up the defence against DNS
rebinding). A request that changes something must be JSON and, coming from
a browser, from the server's own origin. A remote session (run --server)
whose runner sent nothing, not even a heartbeat, for --heartbeat-timeout
ends interrupted. See docs/security.md.

Beside --token, which has every scope, the server accepts the access tokens
of agentstream token create (each with its scopes: read, lines, ingest,
control) and the share links of agentstream share, kept in the database;
--require-token requires one of them even without --token. A token that
lacks the scope a route needs gets 403, a revoked or expired one 401. See
docs/security.md.

With --profiles FILE, the API also starts live sessions, of those profiles
only: POST /api/sessions {"profile", "prompt"?, "policy"?}, then messages,
interrupts, answers to permission requests, and DELETE to close. The file is
{"profiles": {"NAME": {"command": [...], "protocol": "...", "cwd": "...",
"env": {...}, "policy": {...}}}}; no request can name a command. The web
UI then offers a New session form on the list, and on a live session's page
its state, a composer, Interrupt, Close session and buttons to answer its
permission requests and questions.

With --nats URL[,URL...], it also ingests the sessions that runners publish
to NATS JetStream (run --nats): a durable consumer takes them, normalizes
them and stores them, acknowledging each message only once the store
committed it. NATS away is a state: serve goes on serving what its store
holds, and GET /api/health says that ingest is paused. --ingest says how:
all (one node takes every session; the default with a SQLite file) or
shared (several serve processes share one store, PostgreSQL, the default
with --db postgres://…: the sessions are spread over 16 partitions, and
each node takes the partitions whose lease it holds in the NATS key-value
bucket agentstream-leases; each node publishes the events it commits to the
stream AGENTSTREAM_EVENTS and follows the others', so that it serves every
session live, live deltas included). See docs/cluster.md.

With --cluster NAME, it embeds a NATS JetStream node itself, one of the
cluster NAME, and ingests from it: nothing else to install. Runners connect
to any node's --nats-listen address (run --nats nats://HOST:PORT,...); the
nodes find each other through --routes, the --cluster-listen addresses of
all of them (every node can be given the same list). The stream and the
ingest consumers are kept on --replicas nodes (3 by default), so the stream
takes messages while a majority of them is up. With SQLite, each node has
its own durable consumer, agentstream-ingest-NODE, and stores and serves
every session; with PostgreSQL, the nodes share the sessions (--ingest
shared). The node's storage is in --nats-dir (beside the database by
default). Its addresses must be loopback ones: the embedded node does not
authenticate clients or routes yet.`

func cmdServe(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "serve", "[--db PATH] [--addr 127.0.0.1:8377] [--token T] [--require-token] [--nats URL [--ingest all|shared] | --cluster NAME --routes HOST:PORT,...]", serveDoc)
	db := dbFlag(fs)
	addr := fs.String("addr", "127.0.0.1:8377", "the address to listen on")
	token := fs.String("token", "", "the bearer token every request must carry (default $AGENTSTREAM_TOKEN)")
	require := fs.Bool("require-token", false, "require a token of every request even without --token: the tokens of agentstream token create and the share links of agentstream share")
	rf := redactFlag(fs)
	profilesFile := fs.String("profiles", "", "start live sessions of the profiles of `FILE` (see above)")
	var hosts []string
	fs.Func("allow-host", "answer requests for host `NAME` (or NAME:PORT) too; repeatable", func(v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("empty host")
		}
		hosts = append(hosts, v)
		return nil
	})
	natsURL := fs.String("nats", "", "ingest the sessions runners publish to NATS JetStream at `URL[,URL...]` (docs/cluster.md)")
	var cf clusterFlags
	cf.register(fs)
	ingestMode := fs.String("ingest", "", "with --nats or --cluster, how this node takes the sessions: `MODE` all (every one) or shared (a share of them, with the other nodes of one store) (default: shared with a PostgreSQL store, all otherwise)")
	heartbeat := fs.Duration("heartbeat-timeout", 2*time.Minute, "end a remote session interrupted when its runner sends nothing for this long (0: never)")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream serve: no arguments expected")
		return exitUsage
	}
	if err := cf.check(fs, *natsURL); err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitUsage
	}
	if *token == "" {
		*token = e.getenv("AGENTSTREAM_TOKEN")
	}
	switch *ingestMode {
	case "", "all", "shared":
	default:
		fmt.Fprintf(e.stderr, "agentstream serve: --ingest %q: want all or shared\n", *ingestMode)
		return exitUsage
	}
	if *ingestMode != "" && *natsURL == "" && cf.cluster == "" {
		fmt.Fprintln(e.stderr, "agentstream serve: --ingest needs --nats or --cluster")
		return exitUsage
	}
	if err := checkListenAddr(*addr, *token, *require); err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitUsage
	}
	var profiles session.Profiles
	if *profilesFile != "" {
		var err error
		if profiles, err = session.ReadProfiles(*profilesFile); err != nil {
			fmt.Fprintln(e.stderr, "agentstream serve:", err)
			return exitUsage
		}
	}
	fresh, shared := false, false
	file := "" // the SQLite database's path
	if path, err := dbPath(e, *db); err == nil && !postgres.IsURL(path) {
		_, serr := os.Stat(path)
		fresh = errors.Is(serr, os.ErrNotExist)
		file = path
	} else if err == nil {
		shared = true
	}
	if *ingestMode != "" {
		shared = *ingestMode == "shared"
	}
	cf.shared = shared
	st, where, err := openStore(ctx, e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	if fresh {
		fmt.Fprintf(e.stderr, "agentstream serve: %s did not exist: serving a new, empty database\n", where)
	}
	defer st.Close()
	red, err := rf.redactor(ctx, e, st)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	hb := *heartbeat
	if hb <= 0 {
		hb = -1
	}
	hosts = append(hosts, *addr, ln.Addr().String())
	opts := api.Options{Token: *token, Tokens: st, RequireToken: *require, Redact: apiRedactor(red), Hosts: hosts, HeartbeatTimeout: hb}
	logf := func(format string, args ...any) {
		fmt.Fprintf(e.stderr, "agentstream serve: "+format+"\n", args...)
	}
	if cf.cluster != "" {
		node, err := cf.startNode(file, func(format string, args ...any) { logf("nats node: "+format, args...) })
		if err != nil {
			ln.Close()
			logf("%v", err)
			return exitError
		}
		defer node.Shutdown()
		logf("NATS node %s of cluster %s: %s", node.Name(), cf.cluster, node.ClientURL())
		*natsURL = node.ClientURL()
	}
	// With shared ingest, the hub is fed by the stream of the events the
	// other nodes commit as well as by the store (docs/cluster.md).
	var (
		startEvents  func(pub store.Publisher) (health func() any, stop func())
		eventsHealth atomic.Pointer[func() any] // set once the server runs
	)
	if *natsURL != "" {
		nc, err := natsbus.Connect(*natsURL, "agentstream serve")
		if err != nil {
			ln.Close()
			fmt.Fprintln(e.stderr, "agentstream serve:", err)
			return exitError
		}
		defer nc.Close()
		// A runner publishing over NATS sends no heartbeat: its session
		// ends with the end it publishes.
		ing := api.NewIngester(st, api.Options{Redact: opts.Redact, HeartbeatTimeout: -1})
		copts := natsbus.ConsumerOptions{Durable: cf.durable(), Replicas: cf.replicas, Logf: logf}
		mode := "all"
		var cons *natsbus.Consumer
		if shared {
			mode = "shared"
			cons = natsbus.ConsumeShared(nc, ing, copts, natsbus.LeaseOptions{})
		} else {
			cons = natsbus.Consume(nc, ing, copts)
		}
		defer cons.Stop()
		var relay *natsbus.Relay
		if shared {
			// What this node commits goes to the stream of events too,
			// which the other nodes follow (events, below).
			if r, ok := st.(interface{ Relay(store.Publisher) }); ok {
				relay = natsbus.NewRelay(nc, natsbus.EventOptions{Replicas: cf.replicas, Logf: logf})
				r.Relay(relay)
				defer relay.Stop()
				defer r.Relay(nil)
			}
		}
		if relay != nil {
			startEvents = func(pub store.Publisher) (func() any, func()) {
				feed := natsbus.FollowEvents(nc, pub, natsbus.EventOptions{Node: relay.Node(), Replicas: cf.replicas, Logf: logf})
				return func() any {
					return map[string]any{"node": relay.Node(), "relayed": relay.Stats(), "followed": feed.Stats()}
				}, feed.Stop
			}
		}
		opts.Health = func() any {
			s := cons.Status()
			state := "connected"
			if !s.Connected {
				state = "paused"
			}
			h := map[string]any{"transport": "nats", "mode": mode, "state": state, "error": s.Error, "taken": s.Taken, "consumer": cf.durable()}
			if shared {
				h["partitions"] = append([]int{}, s.Partitions...)
			}
			if cf.cluster != "" {
				h["cluster"], h["node"] = cf.cluster, cf.node
			}
			if f := eventsHealth.Load(); f != nil {
				h["events"] = (*f)()
			}
			return h
		}
	}
	srv := startServer(ctx, st, ln, opts, profiles, func(err error) { fmt.Fprintln(e.stderr, "agentstream serve:", err) })
	if startEvents != nil {
		health, stop := startEvents(srv.merge.Stream())
		eventsHealth.Store(&health)
		defer stop()
	}
	fmt.Fprintf(e.stderr, "agentstream serve: http://%s (database %s)\n", ln.Addr(), where)
	select {
	case err = <-srv.errc:
	case <-ctx.Done():
	}
	if serr := srv.stop(); err == nil {
		err = serr
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(e.stderr, "agentstream serve:", err)
		return exitError
	}
	return exitOK
}

// server is the API and the web timeline over a store, on a listener: the
// store publishes its events (its own and other processes') to a hub, which
// feeds the API's event streams; the UI reads the API.
type server struct {
	srv    *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errc   chan error // Serve's error, once it returns
	live   *liveSessions
	merge  *hub.Merge // feeds the hub: the store's follower, and any stream of events
}

// startServer starts serving on ln until stop is called; with profiles, it
// starts live sessions of them.
func startServer(ctx context.Context, st sessionStore, ln net.Listener, opts api.Options, profiles session.Profiles, onError func(error)) *server {
	ctx, cancel := context.WithCancel(ctx)
	s := &server{cancel: cancel, errc: make(chan error, 1)}
	h := hub.New(hub.Options{})
	s.merge = hub.NewMerge(h)
	followed := make(chan struct{})
	s.wg.Go(func() { _ = st.Follow(ctx, s.merge.Store(), 0); close(followed) })
	// Until the follower runs, what the writers of sessions opened here
	// commit reaches no subscriber: wait for it (or its failure) first.
wait:
	for !st.Following() {
		select {
		case <-followed:
			break wait
		case <-time.After(time.Millisecond):
		}
	}

	if profiles != nil {
		// The sessions outlive the requests that open them, not the server.
		red, _ := opts.Redact.(*redact.Redactor)
		s.live = newLiveSessions(context.WithoutCancel(ctx), st, profiles, red, onError)
		opts.Live = s.live
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", api.New(st, h, opts))
	mux.Handle("/", api.Guard(ui.Handler(), opts.Hosts))
	// The read and write timeouts bound a request and its answer; the
	// event streams lift them and set a deadline per write instead.
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() { s.errc <- s.srv.Serve(ln) }()
	return s
}

// apiRedactor returns red as the API takes it: nil for none.
func apiRedactor(red *redact.Redactor) api.Redactor {
	if red == nil {
		return nil
	}
	return red
}

// stop ends the event streams (which Shutdown would wait for), shuts the
// server down within five seconds, and waits for the store's follower.
func (s *server) stop() error {
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if s.live != nil {
		lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
		s.live.shutdown(lctx)
		lcancel()
	}
	s.cancel()
	err := s.srv.Shutdown(sctx)
	s.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// checkListenAddr returns an error for an --addr that is not HOST:PORT,
// and for one that listens beyond loopback while no token guards it.
func checkListenAddr(addr, token string, requireToken bool) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("bad --addr %q: want HOST:PORT, such as 127.0.0.1:8377 (port 0: a free one)", addr)
	}
	if !isLoopback(addr) && token == "" && !requireToken {
		return fmt.Errorf("%s is not a loopback address: refusing to serve without --token or --require-token", addr)
	}
	return nil
}

// isLoopback reports whether addr (host:port) listens on loopback only.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
