package natsbus_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats.go/jetstream"
)

// The load of BenchmarkScale: scaleSessions runners, each writing
// scaleRate lines a second to its spool for scaleFor.
const (
	scaleSessions = 200
	scaleRate     = 50
	scaleFor      = 3 * time.Second
)

// BenchmarkScale runs scaleSessions concurrent sessions of scaleRate
// native lines a second each (10,000 lines a second in all, for scaleFor)
// through two deployments, one after the other in each iteration, and
// measures each line's latency from the moment its runner wrote it to its
// spool to the moment its event reached a client of the event stream of
// all sessions (GET /api/events/stream, over loopback HTTP):
//
//   - http: today's single server. Each runner's Uploader posts its spool
//     to one api.New server, whose store feeds its hub; the client reads
//     that server.
//   - cluster: three embedded JetStream nodes joined by routes, the
//     stream replicated on all three. The runners publish to them
//     (natsbus.Publisher, each connected to the three). Node A (ingest and
//     API) and node B (API) each have their own SQLite store, their own
//     durable consumer writing it, and their own hub fed by it; the client
//     reads node B.
//   - shared (with AGENTSTREAM_TEST_POSTGRES): another such cluster, and
//     one PostgreSQL store. Node A ingests every session (shared ingest,
//     alone: it holds every partition) and relays what it commits to the
//     stream of events; node B (API only, its own pool) feeds its hub from
//     that stream and from the store's follower, as serve does; the
//     client reads node B, which writes no session.
//
// It reports p50 and p99 of each in milliseconds, the cluster's over
// HTTP's, the lines a second each delivered (all lines over the time from
// the first written to the last received), and the CPU time of the whole
// process a line costs each. A line lost or received twice fails it, as
// does a store that does not hold every line once (docs/cluster.md,
// "Scale", has the figures).
//
//	go test -run '^$' -bench Scale -benchtime 1x -count 2 ./natsbus/
func BenchmarkScale(b *testing.B) {
	ctx := context.Background()

	// Today's path: one server, SQLite, its hub.
	httpSt := openStore(b)
	httpSrv := serveAPI(b, httpSt, api.Options{})
	httpPath := scalePath{
		sse:    httpSrv.URL,
		stores: []store.Store{httpSt},
		start: func(sp *api.Spool) (func(context.Context) error, func()) {
			// Each runner is a process of its own, with its own
			// connection to the server.
			tr := http.DefaultTransport.(*http.Transport).Clone()
			c := &api.Client{URL: httpSrv.URL, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: tr}}
			up := c.NewUploader(sp, api.UploaderOptions{})
			return up.Wait, func() { up.Stop(); tr.CloseIdleConnections() }
		},
	}

	// The cluster: three nodes, the stream on all three.
	nodes, _ := startCluster(b)
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.ClientURL())
	}
	allURLs := strings.Join(urls, ",")
	stream := createReplicatedStream(b, allURLs, len(nodes))
	stA, stB := openStore(b), openStore(b)
	for _, nd := range []struct {
		st      *sqlite.Store
		url     string
		durable string
	}{{stA, urls[0], "node-a"}, {stB, urls[1], "node-b"}} {
		ing := api.NewIngester(nd.st, api.Options{HeartbeatTimeout: -1})
		cons := natsbus.Consume(connect(b, nd.url), ing, natsbus.ConsumerOptions{Durable: nd.durable})
		b.Cleanup(cons.Stop)
	}
	serveAPI(b, stA, api.Options{})
	nodeB := serveAPI(b, stB, api.Options{})
	clusterPath := scalePath{
		sse:    nodeB.URL,
		stores: []store.Store{stA, stB},
		start:  publishTo(b, allURLs),
	}

	sharedPath, shared := sharedScalePath(b)

	var httpRes, clusterRes, sharedRes scaleResult
	var msgs uint64
	for i := 0; b.Loop(); i++ {
		httpRes.add(runScale(ctx, b, httpPath, fmt.Sprintf("h%d", i)))
		clusterRes.add(runScale(ctx, b, clusterPath, fmt.Sprintf("c%d", i)))
		if shared {
			sharedRes.add(runScale(ctx, b, sharedPath, fmt.Sprintf("p%d", i)))
		}
		info, err := stream.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("c%d: %d messages in the stream", i, info.State.Msgs-msgs)
		msgs = info.State.Msgs
	}
	hp50, hp99 := httpRes.percentile(50), httpRes.percentile(99)
	cp50, cp99 := clusterRes.percentile(50), clusterRes.percentile(99)
	b.ReportMetric(ms(hp50), "http-p50-ms")
	b.ReportMetric(ms(hp99), "http-p99-ms")
	b.ReportMetric(ms(cp50), "cluster-p50-ms")
	b.ReportMetric(ms(cp99), "cluster-p99-ms")
	b.ReportMetric(ms(cp50)/ms(hp50), "cluster/http-p50")
	b.ReportMetric(ms(cp99)/ms(hp99), "cluster/http-p99")
	b.ReportMetric(httpRes.rate(), "http-lines/s")
	b.ReportMetric(clusterRes.rate(), "cluster-lines/s")
	if shared {
		sp50, sp99 := sharedRes.percentile(50), sharedRes.percentile(99)
		b.ReportMetric(ms(sp50), "shared-p50-ms")
		b.ReportMetric(ms(sp99), "shared-p99-ms")
		b.ReportMetric(ms(sp50)/ms(hp50), "shared/http-p50")
		b.ReportMetric(ms(sp99)/ms(hp99), "shared/http-p99")
		b.ReportMetric(sharedRes.rate(), "shared-lines/s")
	}
	if httpRes.cpu > 0 {
		// What the whole process spent (every node, the runners and the
		// client): on a machine too busy to offer the load in time, the
		// latencies measure the backlog, and this the cost.
		perLine := func(r scaleResult) float64 { return float64(r.cpu.Microseconds()) / float64(r.lines) }
		b.ReportMetric(perLine(httpRes), "http-cpu-µs/line")
		b.ReportMetric(perLine(clusterRes), "cluster-cpu-µs/line")
		b.ReportMetric(perLine(clusterRes)/perLine(httpRes), "cluster/http-cpu")
		if shared {
			b.ReportMetric(perLine(sharedRes), "shared-cpu-µs/line")
			b.ReportMetric(perLine(sharedRes)/perLine(httpRes), "shared/http-cpu")
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// scalePath is one deployment under BenchmarkScale: start starts a
// runner's sender of a spool and returns its Wait and its Stop; sse is
// the base URL of the server the client reads; stores must all hold every
// line in the end.
type scalePath struct {
	start  func(sp *api.Spool) (wait func(context.Context) error, stop func())
	sse    string
	stores []store.Store
}

// scaleResult gathers the latencies and rates of a path's iterations.
type scaleResult struct {
	lat   []time.Duration
	lines int
	took  time.Duration
	cpu   time.Duration // the process's CPU time over the iteration
}

func (r *scaleResult) add(o scaleResult) {
	r.lat = append(r.lat, o.lat...)
	r.lines += o.lines
	r.took += o.took
	r.cpu += o.cpu
}

func (r *scaleResult) rate() float64 { return float64(r.lines) / r.took.Seconds() }

// percentile returns the p-th percentile of the latencies (nearest rank).
func (r *scaleResult) percentile(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	slices.Sort(r.lat)
	i := (len(r.lat)*p + 99) / 100
	return r.lat[max(i-1, 0)]
}

// scaleLine is the text of line n of session id: about 100 bytes.
func scaleLine(id string, n int) []byte {
	b := fmt.Appendf(nil, "line %d of %s ", n, id)
	for len(b) < 100 {
		b = append(b, 'x')
	}
	return b
}

// runScale runs one iteration of the load through path: it opens the
// client's event stream, starts the runners, writes their lines on
// schedule, and waits until the client received every line and every
// session's close. Sessions are named s_PREFIX_J.
func runScale(ctx context.Context, b *testing.B, path scalePath, prefix string) scaleResult {
	b.Helper()
	perSession := int(scaleFor.Seconds() * scaleRate)
	total := scaleSessions * perSession
	index := map[string]int{}
	ids := make([]string, scaleSessions)
	for j := range ids {
		ids[j] = fmt.Sprintf("s_%s_%03d", prefix, j)
		index[ids[j]] = j
	}

	// The client subscribes before any line is written: once the answer's
	// headers are in, the server has subscribed to its hub.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, path.sse+"/api/events/stream", nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("event stream: %s", resp.Status)
	}
	recv := make([][]time.Time, scaleSessions)
	for j := range recv {
		recv[j] = make([]time.Time, perSession+1)
	}
	var dups, strays int
	done := make(chan error, 1)
	go func() {
		done <- readScaleStream(resp.Body, index, recv, total, &dups, &strays)
	}()

	cpu := processCPU()
	dir := b.TempDir()
	sent := make([][]time.Time, scaleSessions)
	spools := make([]*api.Spool, scaleSessions)
	waits := make([]func(context.Context) error, scaleSessions)
	stops := make([]func(), scaleSessions)
	for j, id := range ids {
		sp, err := api.CreateSpool(dir+"/"+id+".spool", api.SpoolHeader{Server: path.sse, Session: api.CreateRequest{ID: id, Protocol: "none"}})
		if err != nil {
			b.Fatal(err)
		}
		spools[j] = sp
		sent[j] = make([]time.Time, perSession+1)
		waits[j], stops[j] = path.start(sp)
	}

	// Each runner writes line n at its own offset plus n periods, as a
	// runner flushes each line it reads; one that falls behind catches up.
	period := time.Second / scaleRate
	begin := time.Now().Add(50 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, scaleSessions)
	for j := range spools {
		wg.Go(func() {
			sp := spools[j]
			at := begin.Add(period * time.Duration(j) / scaleSessions)
			for n := 1; n <= perSession; n++ {
				time.Sleep(time.Until(at))
				at = at.Add(period)
				t := time.Now()
				sent[j][n] = t
				if err := sp.Line(store.Line{Stream: store.Stdout, N: int64(n), TS: t, Data: scaleLine(ids[j], n)}); err != nil {
					errs <- err
					return
				}
				if err := sp.Flush(); err != nil {
					errs <- err
					return
				}
			}
			code := 0
			if err := sp.End(api.End{ExitCode: &code}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	for j := range waits {
		if err := waits[j](wctx); err != nil {
			b.Fatalf("%s: %v", ids[j], err)
		}
		stops[j]()
		spools[j].Close()
	}
	acked := time.Now() // the stream, or the server, has every line
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-wctx.Done():
		cancel()
		<-done
		got := 0
		for j := range recv {
			for n := 1; n <= perSession; n++ {
				if !recv[j][n].IsZero() {
					got++
				}
			}
		}
		b.Fatalf("%s: the client received %d of %d lines: %d lost", prefix, got, total, total-got)
	}
	cancel()
	cpu = processCPU() - cpu
	if dups > 0 || strays > 0 {
		b.Fatalf("%s: %d lines received twice, %d events of no line written", prefix, dups, strays)
	}

	res := scaleResult{lines: total, cpu: cpu}
	first, last := sent[0][1], time.Time{}
	for j := range recv {
		for n := 1; n <= perSession; n++ {
			res.lat = append(res.lat, recv[j][n].Sub(sent[j][n]))
			if sent[j][n].Before(first) {
				first = sent[j][n]
			}
			if recv[j][n].After(last) {
				last = recv[j][n]
			}
		}
	}
	res.took = last.Sub(first)
	lastSent := first
	for j := range sent {
		if t := sent[j][perSession]; t.After(lastSent) {
			lastSent = t
		}
	}
	b.Logf("%s: %d lines written in %v (%.0f lines/s); after the first was written, all acknowledged by %v, all received by %v",
		prefix, total, lastSent.Sub(first).Round(time.Millisecond), float64(total)/lastSent.Sub(first).Seconds(),
		acked.Sub(first).Round(time.Millisecond), res.took.Round(time.Millisecond))

	// Every store holds every line once, and every session ended.
	for _, st := range path.stores {
		for _, id := range ids {
			want := make([]store.Line, perSession)
			for n := range want {
				want[n] = store.Line{Stream: store.Stdout, N: int64(n + 1), Data: scaleLine(id, n+1)}
			}
			waitStored(b, st, id, perSession, true)
			checkStored(b, st, id, want, true)
		}
	}
	if b.Failed() {
		b.FailNow()
	}
	return res
}

// readScaleStream reads the event stream of all sessions until it has
// seen total lines and the close of every session of index, stamping in
// recv when the event of each line arrived. An event of a line received
// already counts in dups; one of a line not written, in strays.
func readScaleStream(body io.Reader, index map[string]int, recv [][]time.Time, total int, dups, strays *int) error {
	r := bufio.NewReaderSize(body, 64<<10)
	var name string
	var data []byte
	got, closed := 0, map[string]bool{}
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return errors.New("event stream: a line over 64 KiB")
			}
			return fmt.Errorf("event stream: %w after %d of %d lines", err, got, total)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data == nil {
				name = ""
				continue
			}
			now := time.Now()
			switch name {
			case hub.ClosedType:
				var c struct{ Session string }
				if err := json.Unmarshal(data, &c); err != nil {
					return fmt.Errorf("event stream: %s: %w", data, err)
				}
				if _, ok := index[c.Session]; ok {
					closed[c.Session] = true
				}
			case "resync":
				return fmt.Errorf("event stream: resync after %d of %d lines", got, total)
			case "raw":
				// Protocol none makes each line one raw event (the first
				// also gives turn.started, of the same source).
				var ev struct {
					Session string `json:"session"`
					Source  *struct {
						Stream string `json:"stream"`
						Line   int    `json:"line"`
					} `json:"source"`
				}
				if err := json.Unmarshal(data, &ev); err != nil {
					return fmt.Errorf("event stream: %s: %w", data, err)
				}
				j, ok := index[ev.Session]
				if !ok || ev.Source == nil {
					break // another iteration's, or not of a line
				}
				n := ev.Source.Line
				switch {
				case ev.Source.Stream != store.Stdout || n < 1 || n >= len(recv[j]):
					*strays++
				case !recv[j][n].IsZero():
					*dups++
				default:
					recv[j][n] = now
					got++
				}
			}
			name, data = "", nil
			if got == total && len(closed) == len(index) {
				return nil
			}
		case bytes.HasPrefix(line, []byte("event: ")):
			name = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data[:0:0], line[len("data: "):]...)
		}
	}
}

// sharedScalePath starts the shared path of BenchmarkScale, or reports
// false without AGENTSTREAM_TEST_POSTGRES.
func sharedScalePath(b *testing.B) (scalePath, bool) {
	if os.Getenv("AGENTSTREAM_TEST_POSTGRES") == "" {
		b.Log("no AGENTSTREAM_TEST_POSTGRES: the shared path is left out")
		return scalePath{}, false
	}
	db := pgURL(b)
	nodes, _ := startCluster(b)
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.ClientURL())
	}
	allURLs := strings.Join(urls, ",")
	createReplicatedStream(b, allURLs, len(nodes))
	open := func() *postgres.Store {
		st, err := postgres.Open(context.Background(), db)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	stA, stB := open(), open()

	ncA := connect(b, urls[0])
	relay := natsbus.NewRelay(ncA, natsbus.EventOptions{Node: "a", Replicas: len(nodes)})
	b.Cleanup(relay.Stop)
	stA.Relay(relay)
	cons := natsbus.ConsumeShared(ncA, api.NewIngester(stA, api.Options{HeartbeatTimeout: -1}),
		natsbus.ConsumerOptions{Replicas: len(nodes)}, natsbus.LeaseOptions{Node: "a"})
	b.Cleanup(cons.Stop)
	deadline := time.Now().Add(60 * time.Second)
	for len(cons.Status().Partitions) < natsbus.Partitions {
		if time.Now().After(deadline) {
			b.Fatalf("node a holds partitions %v, want all", cons.Status().Partitions)
		}
		time.Sleep(50 * time.Millisecond)
	}

	h := hub.New(hub.Options{AllBuffer: 1 << 17})
	m := hub.NewMerge(h)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = stB.Follow(ctx, m.Store(), 0) })
	feed := natsbus.FollowEvents(connect(b, urls[1]), m.Stream(), natsbus.EventOptions{Node: "b", Replicas: len(nodes)})
	srv := httptest.NewServer(api.New(stB, h, api.Options{}))
	b.Cleanup(func() {
		srv.Close()
		feed.Stop()
		cancel()
		wg.Wait()
	})
	for !feed.Stats().Connected {
		if time.Now().After(deadline) {
			b.Fatal("node b does not follow the stream of events")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return scalePath{
		sse:    srv.URL,
		stores: []store.Store{stB},
		start:  publishTo(b, allURLs),
	}, true
}

// publishTo returns the start of a scalePath whose runners publish to the
// NATS servers urls, each with a connection of its own.
func publishTo(b *testing.B, urls string) func(sp *api.Spool) (func(context.Context) error, func()) {
	return func(sp *api.Spool) (func(context.Context) error, func()) {
		nc, err := natsbus.Connect(urls, "runner "+sp.Session())
		if err != nil {
			b.Fatal(err)
		}
		p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return p.Wait, func() { p.Stop(); nc.Close() }
	}
}

// serveAPI serves api.New over st on a loopback listener, with a hub that
// st's Follow feeds, until the benchmark ends. The hub's topic of all
// sessions holds a few seconds of the load, so that a client that falls
// behind for a moment is not sent a resync.
func serveAPI(b *testing.B, st *sqlite.Store, opts api.Options) *httptest.Server {
	b.Helper()
	h := hub.New(hub.Options{AllBuffer: 1 << 17})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = st.Follow(ctx, h, 0) })
	srv := httptest.NewServer(api.New(st, h, opts))
	b.Cleanup(func() {
		srv.Close()
		cancel()
		wg.Wait()
	})
	return srv
}

// createReplicatedStream creates the stream of natsbus.StreamConfig with
// replicas on the cluster at urls, retrying while the cluster has not
// elected its leader yet.
func createReplicatedStream(b *testing.B, urls string, replicas int) jetstream.Stream {
	b.Helper()
	nc := connect(b, urls)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	cfg := natsbus.StreamConfig(replicas)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := js.CreateStream(ctx, cfg)
		if err == nil {
			info, err := s.Info(ctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			if info.Config.Replicas != replicas || info.Cluster == nil || len(info.Cluster.Replicas) != replicas-1 {
				b.Fatalf("the stream has %d replicas, want %d: %+v", info.Config.Replicas, replicas, info.Cluster)
			}
			return s
		}
		cancel()
		if time.Now().After(deadline) {
			b.Fatalf("create the stream with %d replicas: %v", replicas, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestReadScaleStream checks the client of BenchmarkScale: each line's
// raw event is counted once, a second one as a duplicate, one of a line
// not written as a stray, and a stream that ends early or asks for a
// resync is an error.
func TestReadScaleStream(t *testing.T) {
	ev := func(seq, n int, typ string) string {
		return fmt.Sprintf("id: s_a/%d\nevent: %s\ndata: {\"session\":\"s_a\",\"seq\":%d,\"type\":%q,\"source\":{\"stream\":\"stdout\",\"line\":%d}}\n\n",
			seq, typ, seq, typ, n)
	}
	const closed = "event: closed\ndata: {\"session\":\"s_a\"}\n\n"
	for _, tc := range []struct {
		name, stream string
		dups, strays int
		err          bool
	}{
		{"once each", ": agentstream\n\n" + ev(1, 1, "turn.started") + ev(2, 1, "raw") + ev(3, 2, "raw") + closed, 0, 0, false},
		{"another session", ev(2, 1, "raw") + strings.ReplaceAll(ev(2, 1, "raw"), "s_a", "s_b") + ev(3, 2, "raw") + closed, 0, 0, false},
		{"twice", ev(2, 1, "raw") + ev(2, 1, "raw") + ev(3, 2, "raw") + closed, 1, 0, false},
		{"not written", ev(2, 1, "raw") + ev(3, 3, "raw") + ev(4, 2, "raw") + closed, 0, 1, false},
		{"lost", ev(2, 1, "raw") + closed, 0, 0, true},
		{"not closed", ev(2, 1, "raw") + ev(3, 2, "raw"), 0, 0, true},
		{"resync", ev(2, 1, "raw") + "event: resync\ndata: {\"after\":null}\n\n", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recv := [][]time.Time{make([]time.Time, 3)}
			var dups, strays int
			err := readScaleStream(strings.NewReader(tc.stream), map[string]int{"s_a": 0}, recv, 2, &dups, &strays)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if dups != tc.dups || strays != tc.strays {
				t.Errorf("%d duplicates and %d strays, want %d and %d", dups, strays, tc.dups, tc.strays)
			}
			if !tc.err && (recv[0][1].IsZero() || recv[0][2].IsZero()) {
				t.Errorf("lines 1 and 2 received at %v", recv[0][1:])
			}
		})
	}
}
