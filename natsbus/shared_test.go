package natsbus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/web/api"
)

// pgURL returns the URL of a fresh schema on the PostgreSQL server that
// AGENTSTREAM_TEST_POSTGRES names, dropped at the end of the test, or
// skips the test.
func pgURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("AGENTSTREAM_TEST_POSTGRES")
	if base == "" {
		t.Skip("no PostgreSQL server: set AGENTSTREAM_TEST_POSTGRES=postgres://… (scripts/test starts one)")
	}
	ctx := context.Background()
	u, drop, err := postgres.NewSchema(ctx, base, "t_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(ctx); err != nil {
			t.Error(err)
		}
	})
	if _, _, err := postgres.Migrate(ctx, u); err != nil {
		t.Fatal(err)
	}
	return u
}

// node is one ingest node sharing the store: its own NATS connection,
// its own PostgreSQL pool (as another process has), its consumer.
type node struct {
	nc   *nats.Conn
	st   *postgres.Store
	cons *natsbus.Consumer
}

func startNode(t *testing.T, natsURL, dbURL, name string) *node {
	t.Helper()
	// Heartbeats every 250 ms: a writer gone is found after 1.5 s.
	return startNodeHeartbeat(t, natsURL, dbURL, name, 250*time.Millisecond)
}

// startNodeHeartbeat is startNode with the store's writers' heartbeat
// every hb (a writer counts as gone after 6 of them).
func startNodeHeartbeat(t *testing.T, natsURL, dbURL, name string, hb time.Duration) *node {
	t.Helper()
	st, err := postgres.OpenOptions(context.Background(), dbURL, postgres.Options{Heartbeat: hb})
	if err != nil {
		t.Fatal(err)
	}
	nc, err := natsbus.Connect(natsURL, name)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{nc: nc, st: st}
	n.cons = natsbus.ConsumeShared(nc, api.NewIngester(st, api.Options{HeartbeatTimeout: -1}),
		natsbus.ConsumerOptions{AckWait: 2 * time.Second, Logf: func(format string, args ...any) { t.Logf(name+": "+format, args...) }},
		natsbus.LeaseOptions{TTL: 3 * time.Second, Node: name})
	t.Cleanup(func() {
		n.cons.Stop()
		nc.Close()
		st.Close()
	})
	return n
}

// waitPartitions waits until the nodes together hold every partition,
// each at most its share, and returns who holds which.
func waitPartitions(t *testing.T, nodes ...*node) [][]int {
	t.Helper()
	share := (natsbus.Partitions + len(nodes) - 1) / len(nodes)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var held [][]int
		all := map[int]int{}
		fair := true
		for _, n := range nodes {
			ps := n.cons.Status().Partitions
			held = append(held, ps)
			fair = fair && len(ps) <= share && len(ps) > 0
			for _, p := range ps {
				all[p]++
			}
		}
		once := len(all) == natsbus.Partitions
		for _, k := range all {
			once = once && k == 1
		}
		if once && fair {
			return held
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions held %v: want each of the %d once, at most %d a node", held, natsbus.Partitions, share)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSharedIngest runs three nodes sharing one PostgreSQL store while
// many sessions are published at once, and stops one of them abruptly
// mid-stream: by losing NATS (it stops its partitions and leaves its
// sessions interrupted) or as a process dies (its NATS connection and its
// store go at once, its writers' heartbeats stop). The others take its
// partitions over; every session is stored whole, each line once, with a
// dense seq, and ends.
func TestSharedIngest(t *testing.T) {
	for _, crash := range []string{"nats-lost", "process-died"} {
		t.Run(crash, func(t *testing.T) {
			dbURL := pgURL(t)
			ns := startNATS(t, t.TempDir(), -1)
			nc := connect(t, ns.ClientURL())
			ensureStream(t, nc)
			var nodes []*node
			for i := range 3 {
				nodes = append(nodes, startNode(t, ns.ClientURL(), dbURL, fmt.Sprintf("n%d", i)))
			}
			held := waitPartitions(t, nodes...)
			t.Logf("partitions: %v", held)

			const sessions, perSession = 24, 600
			ids := make([]string, sessions)
			want := make([][]store.Line, sessions)
			pubs := make([]*natsbus.Publisher, sessions)
			var wg sync.WaitGroup
			dir := t.TempDir()
			for i := range sessions {
				id := fmt.Sprintf("sh.%s.%02d", crash, i)
				ids[i] = id
				sp, err := api.CreateSpool(filepath.Join(dir, id+".spool"), api.SpoolHeader{Server: "nats://test", Session: api.CreateRequest{ID: id, Protocol: "none"}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sp.Close() })
				p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 7, Interval: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				pubs[i] = p
				// The runner: lines come in bursts while the stream flows.
				var lines []store.Line
				var nerr int64
				for n := 1; n <= perSession; n++ {
					lines = append(lines, store.Line{Stream: store.Stdout, N: int64(n), Data: fmt.Appendf(nil, `{"n":%d,"session":%q}`, n, id)})
					if n%10 == 0 {
						nerr++
						lines = append(lines, store.Line{Stream: store.Stderr, N: nerr, Data: fmt.Appendf(nil, "warning %d of %s", nerr, id)})
					}
				}
				want[i] = lines
				wg.Go(func() {
					for j, l := range lines {
						if err := sp.Line(l); err != nil {
							t.Error(err)
							return
						}
						if j%30 == 29 {
							if err := sp.Flush(); err != nil {
								t.Error(err)
								return
							}
							time.Sleep(20 * time.Millisecond)
						}
					}
					code := 0
					if err := sp.End(api.End{ExitCode: &code}); err != nil {
						t.Error(err)
					}
				})
			}

			// Mid-stream: a quarter of the lines stored.
			total := sessions * len(want[0])
			deadline := time.Now().Add(60 * time.Second)
			for {
				n := 0
				for _, id := range ids {
					_ = nodes[1].st.Lines(context.Background(), id, func(store.Line) error { n++; return nil })
				}
				if n >= total/4 {
					t.Logf("%d of %d lines stored when n0 stops", n, total)
					if n == total {
						t.Fatal("every line was stored before the stop: not mid-stream")
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d lines stored", n, total)
				}
				time.Sleep(10 * time.Millisecond)
			}
			lost := nodes[0].cons.Status().Partitions
			if len(lost) == 0 {
				t.Fatal("n0 holds no partition")
			}
			stopped := time.Now()
			nodes[0].nc.Close()
			if crash == "process-died" {
				nodes[0].st.Close()
			}
			waitPartitions(t, nodes[1:]...)
			t.Logf("n0's partitions taken over %v after its stop", time.Since(stopped).Round(time.Millisecond))

			wg.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i, p := range pubs {
				if err := p.Wait(ctx); err != nil {
					t.Fatalf("publish %s: %v", ids[i], err)
				}
			}
			for i, id := range ids {
				waitStored(t, nodes[2].st, id, len(want[i]), true)
			}
			t.Logf("every session stored %v after the stop", time.Since(stopped).Round(time.Millisecond))
			held = waitPartitions(t, nodes[1:]...)
			t.Logf("n0 held %v; after: %v", lost, held)
			for _, p := range lost {
				if !slices.Contains(held[0], p) && !slices.Contains(held[1], p) {
					t.Errorf("partition %02d of n0 not taken over", p)
				}
			}
			st := nodes[2].st
			for i, id := range ids {
				waitStored(t, st, id, len(want[i]), true)
				checkStored(t, st, id, want[i], true)
				if sess, err := st.Session(ctx, id); err != nil || sess.Status != store.StatusSucceeded {
					t.Errorf("session %s: status %q, %v; want succeeded", id, sess.Status, err)
				}
			}
		})
	}
}

// TestSharedTakeoverResumes stops the node that holds an idle session's
// partition (it gives its partitions back, or dies as a process does,
// its writers counted gone before its leases expire or, with heartbeats
// every second, 6 s after its death, after): the node that takes the
// partition over resumes the session at once, or as soon as the store
// counts its writer gone, without a new line, and the runner's remaining
// lines and end follow.
// Sessions of the partition that recorded an end of their own (the
// runner's, a heartbeat timeout), and one whose runner does not publish
// over NATS, are left as they are.
func TestSharedTakeoverResumes(t *testing.T) {
	for _, crash := range []string{"stopped", "process-died", "process-died-stale-later"} {
		t.Run(crash, func(t *testing.T) {
			dbURL := pgURL(t)
			ns := startNATS(t, t.TempDir(), -1)
			nc := connect(t, ns.ClientURL())
			ensureStream(t, nc)
			hb := 250 * time.Millisecond
			if crash == "process-died-stale-later" {
				hb = time.Second
			}
			n0 := startNodeHeartbeat(t, ns.ClientURL(), dbURL, "n0", hb)
			n1 := startNodeHeartbeat(t, ns.ClientURL(), dbURL, "n1", hb)
			held := waitPartitions(t, n0, n1)
			// Session ids in a partition n0 holds.
			var ids []string
			for i := 0; len(ids) < 4; i++ {
				id := fmt.Sprintf("to.%s.%d", crash, i)
				if slices.Contains(held[0], natsbus.Partition(id)) {
					ids = append(ids, id)
				}
			}
			idle, ended, timedOut, viaHTTP := ids[0], ids[1], ids[2], ids[3]
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			dir := t.TempDir()

			// The idle session: 40 lines published, then nothing.
			sp, lines := newSpool(t, dir, idle, 40, false)
			defer sp.Close()
			p, err := natsbus.NewPublisher(nc, sp, natsbus.PublisherOptions{BatchRecords: 7, Interval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			// A session its runner ended.
			spe, linesEnded := newSpool(t, dir, ended, 15, true)
			defer spe.Close()
			pe, err := natsbus.NewPublisher(nc, spe, natsbus.PublisherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := pe.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			// A session ended by its heartbeat timeout (as a runner posting
			// over HTTP to a server with a timeout is), whose subject the
			// stream holds; and one interrupted without an end whose
			// runner posts over HTTP: the stream has no message of it.
			other := api.NewIngester(n1.st, api.Options{HeartbeatTimeout: 300 * time.Millisecond})
			for _, id := range []string{timedOut, viaHTTP} {
				if _, err := other.Create(ctx, api.CreateRequest{ID: id, Protocol: "none"}); err != nil {
					t.Fatal(err)
				}
				if _, err := other.Lines(ctx, id, []api.LineIn{{Stream: store.Stdout, N: 1, Text: "one line of " + id}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := other.Release(ctx, func(id string) bool { return id == viaHTTP }); err != nil {
				t.Fatal(err)
			}
			for {
				sess, err := n1.st.Session(ctx, timedOut)
				if err != nil {
					t.Fatal(err)
				}
				if !sess.Running() {
					if sess.Status != store.StatusInterrupted || sess.Reason != agentstream.ReasonHeartbeatTimeout {
						t.Fatalf("session %s: %s (%s), want interrupted by its heartbeat timeout", timedOut, sess.Status, sess.Reason)
					}
					break
				}
				if ctx.Err() != nil {
					t.Fatal(ctx.Err())
				}
				time.Sleep(20 * time.Millisecond)
			}
			hdr, err := json.Marshal(api.SpoolHeader{Version: 1, Server: "nats://test", Session: api.CreateRequest{ID: timedOut, Protocol: "none"}})
			if err != nil {
				t.Fatal(err)
			}
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, natsbus.Subject(timedOut), hdr); err != nil {
				t.Fatal(err)
			}
			waitStored(t, n1.st, idle, len(lines), false)
			waitStored(t, n1.st, ended, len(linesEnded), true)
			status := func(id string) string {
				sess, err := n1.st.Session(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return sess.Status
			}
			if s := status(idle); s != store.StatusRunning {
				t.Fatalf("session %s: %s before the stop, want running", idle, s)
			}

			stopped := time.Now()
			if crash == "stopped" {
				n0.cons.Stop()
			} else {
				n0.nc.Close()
				n0.st.Close()
			}
			// Interrupted by the stop (or still running under the dead
			// writer), then running again under n1, with no new line: a
			// writer that has beaten since the stop (n0's beat no more).
			db, err := pgx.Connect(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close(ctx)
			var sawInterrupted bool
			for {
				var s string
				var alive bool
				if err := db.QueryRow(ctx, `SELECT status, coalesce(heartbeat_at > $1, false) FROM sessions WHERE id = $2`, stopped, idle).Scan(&s, &alive); err != nil {
					t.Fatal(err)
				}
				sawInterrupted = sawInterrupted || s == store.StatusInterrupted
				if s == store.StatusRunning && alive {
					break
				}
				if time.Since(stopped) > 25*time.Second {
					t.Fatalf("session %s: %s %v after n0's stop, want running again", idle, s, time.Since(stopped).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("session %s running again %v after n0's stop (interrupted seen in between: %v)",
				idle, time.Since(stopped).Round(time.Millisecond), sawInterrupted)
			// Held by n1: a second resume is refused as running.
			if _, err := n1.st.Resume(ctx, idle); !errors.Is(err, store.ErrRunning) {
				t.Errorf("resume of %s from the test: %v, want store.ErrRunning", idle, err)
			}
			// The others are left as they were, a while after.
			time.Sleep(time.Second)
			for id, want := range map[string]string{ended: store.StatusSucceeded, timedOut: store.StatusInterrupted, viaHTTP: store.StatusInterrupted} {
				if s := status(id); s != want {
					t.Errorf("session %s: %s after the takeover, want %s", id, s, want)
				}
			}

			// The runner goes on and ends.
			var nerr int64 = 4
			for i := 41; i <= 60; i++ {
				l := store.Line{Stream: store.Stdout, N: int64(i), Data: fmt.Appendf(nil, "line %d of %s", i, idle)}
				lines = append(lines, l)
				if err := sp.Line(l); err != nil {
					t.Fatal(err)
				}
				if i%10 == 0 {
					nerr++
					l := store.Line{Stream: store.Stderr, N: nerr, Data: fmt.Appendf(nil, "warning %d", nerr)}
					lines = append(lines, l)
					if err := sp.Line(l); err != nil {
						t.Fatal(err)
					}
				}
			}
			code := 0
			if err := sp.End(api.End{ExitCode: &code}); err != nil {
				t.Fatal(err)
			}
			if err := p.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			waitStored(t, n1.st, idle, len(lines), true)
			checkStored(t, n1.st, idle, lines, true)
			if s := status(idle); s != store.StatusSucceeded {
				t.Errorf("session %s: %s, want succeeded", idle, s)
			}
			checkStored(t, n1.st, ended, linesEnded, true)
		})
	}
}
