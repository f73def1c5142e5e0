package natsbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// countingIngester counts the Lines calls of an Ingester, and holds the
// first call back a moment, so that the rest of a fetched batch has come
// when the consumer next looks.
type countingIngester struct {
	natsbus.Ingester
	mu    sync.Mutex
	calls int
}

func (c *countingIngester) Create(ctx context.Context, req api.CreateRequest) (store.Session, error) {
	c.mu.Lock()
	first := c.calls == 0
	c.calls++
	c.mu.Unlock()
	if first {
		time.Sleep(300 * time.Millisecond)
	}
	return c.Ingester.Create(ctx, req)
}

func (c *countingIngester) Lines(ctx context.Context, id string, lines []api.LineIn, end *api.End) (api.LinesResponse, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Ingester.Lines(ctx, id, lines, end)
}

// batchMsg is a message to publish straight to the stream: its session
// and its records, one per line.
type batchMsg struct {
	id   string
	recs []string
}

func headerRec(t *testing.T, id string) string {
	b, err := json.Marshal(api.SpoolHeader{Version: 1, Server: "nats://test", Session: api.CreateRequest{ID: id, Protocol: "none"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lineRec(t *testing.T, stream string, n int64, text string) string {
	b, err := json.Marshal(map[string]api.LineIn{"line": {Stream: stream, N: n, Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const endRec = `{"end":{"exitCode":0}}`

// streamServer starts a NATS server with the stream and returns it, the
// stream, and a JetStream client.
func streamServer(t *testing.T) (*server.Server, jetstream.Stream, jetstream.JetStream) {
	t.Helper()
	ns := startNATS(t, t.TempDir(), -1)
	nc := connect(t, ns.ClientURL())
	stream := ensureStream(t, nc)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return ns, stream, js
}

// logBook keeps what a consumer logs.
type logBook struct {
	mu    sync.Mutex
	lines []string
}

func (b *logBook) Logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, fmt.Sprintf(format, args...))
}

// with returns the lines logged that hold any of subs.
func (b *logBook) with(subs ...string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range b.lines {
		if slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(l, sub) }) {
			out = append(out, l)
		}
	}
	return out
}

// TestBatch publishes messages straight to the stream, so that the
// consumer fetches them in one batch, and checks what the store holds,
// what was refused, and that a session's messages were written together.
func TestBatch(t *testing.T) {
	lineText := func(id string, stream string, n int64) string { return fmt.Sprintf("%s %s %d", id, stream, n) }
	// lines returns the records of lines from..to of stdout of session id,
	// and appends them to want.
	type expect map[string][]store.Line
	lines := func(t *testing.T, want expect, id string, from, to int64) []string {
		var recs []string
		for n := from; n <= to; n++ {
			recs = append(recs, lineRec(t, store.Stdout, n, lineText(id, store.Stdout, n)))
			want[id] = append(want[id], store.Line{Stream: store.Stdout, N: n, Data: []byte(lineText(id, store.Stdout, n))})
		}
		return recs
	}
	again := func(t *testing.T, id string, from, to int64) []string {
		var recs []string
		for n := from; n <= to; n++ {
			recs = append(recs, lineRec(t, store.Stdout, n, lineText(id, store.Stdout, n)))
		}
		return recs
	}
	for _, tc := range []struct {
		name string
		// msgs returns the messages and the lines each session must
		// hold; refused lists the sessions of the messages that must be
		// terminated, one entry each.
		msgs func(t *testing.T, want expect) (msgs []batchMsg, refused []string)
		// fewer says the Lines calls must be fewer than the messages.
		fewer bool
	}{
		{
			name: "sessions interleaved, a duplicate",
			msgs: func(t *testing.T, want expect) ([]batchMsg, []string) {
				var ms []batchMsg
				for _, id := range []string{"s_c", "s_d"} {
					ms = append(ms, batchMsg{id, append([]string{headerRec(t, id)}, lines(t, want, id, 1, 2)...)})
				}
				for i := int64(1); i <= 8; i++ {
					for _, id := range []string{"s_c", "s_d"} {
						ms = append(ms, batchMsg{id, lines(t, want, id, 2*i+1, 2*i+2)})
					}
					if i == 4 {
						ms = append(ms, batchMsg{"s_c", again(t, "s_c", 3, 6)})
					}
				}
				for _, id := range []string{"s_c", "s_d"} {
					ms = append(ms, batchMsg{id, []string{endRec}})
				}
				return ms, nil
			},
			fewer: true,
		},
		{
			name: "bad messages among good ones, a duplicate",
			msgs: func(t *testing.T, want expect) ([]batchMsg, []string) {
				return []batchMsg{
					{"s_a", append([]string{headerRec(t, "s_a")}, lines(t, want, "s_a", 1, 3)...)},
					{"s_b", append([]string{headerRec(t, "s_b")}, lines(t, want, "s_b", 1, 2)...)},
					{"s_a", lines(t, want, "s_a", 4, 5)},
					// Refused by the ingester: a stream no line has.
					{"s_a", []string{lineRec(t, "bogus", 6, "bad")}},
					// Not a record.
					{"s_b", []string{"not json"}},
					{"s_a", lines(t, want, "s_a", 6, 7)},
					{"s_a", again(t, "s_a", 4, 5)},
					{"s_b", lines(t, want, "s_b", 3, 4)},
					{"s_a", []string{endRec}},
					{"s_b", append(lines(t, want, "s_b", 5, 5), endRec)},
				}, []string{"s_a", "s_b"}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, stream, js := streamServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			want := expect{}
			msgs, refused := tc.msgs(t, want)
			for _, m := range msgs {
				if _, err := js.Publish(ctx, natsbus.Subject(m.id), []byte(strings.Join(m.recs, "\n"))); err != nil {
					t.Fatal(err)
				}
			}

			st := openStore(t)
			ing := &countingIngester{Ingester: api.NewIngester(st, api.Options{HeartbeatTimeout: -1})}
			var logs logBook
			cons := natsbus.Consume(connect(t, ns.ClientURL()), ing, natsbus.ConsumerOptions{Durable: "batch", Logf: logs.Logf})
			defer cons.Stop()
			for id, lines := range want {
				waitStored(t, st, id, len(lines), true)
			}
			c, err := stream.Consumer(ctx, "batch")
			if err != nil {
				t.Fatal(err)
			}
			for {
				ci, err := c.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if ci.NumPending == 0 && ci.NumAckPending == 0 {
					if ci.NumRedelivered != 0 {
						t.Errorf("%d messages delivered again, want none", ci.NumRedelivered)
					}
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("consumer: %d messages pending, %d not acknowledged", ci.NumPending, ci.NumAckPending)
				}
				time.Sleep(20 * time.Millisecond)
			}
			for id, lines := range want {
				checkStored(t, st, id, lines, true)
			}
			if got, wantTaken := cons.Status().Taken, int64(len(msgs)-len(refused)); got != wantTaken {
				t.Errorf("%d messages taken, want %d", got, wantTaken)
			}
			gotRefused := logs.with("message refused")
			if len(gotRefused) != len(refused) {
				t.Errorf("%d messages refused, want %d: %q", len(gotRefused), len(refused), gotRefused)
			}
			for _, id := range refused {
				found := false
				for _, l := range gotRefused {
					found = found || strings.Contains(l, natsbus.Subject(id)+":")
				}
				if !found {
					t.Errorf("no message of %s refused: %q", id, gotRefused)
				}
			}
			ing.mu.Lock()
			calls := ing.calls
			ing.mu.Unlock()
			t.Logf("%d messages, %d calls of the ingester", len(msgs), calls)
			if tc.fewer && calls >= len(msgs) {
				t.Errorf("%d calls of the ingester for %d messages, want fewer", calls, len(msgs))
			}
		})
	}
}

// slowIngester takes a while over each Lines call, and counts them.
type slowIngester struct {
	countingIngester
	delay time.Duration
}

func (s *slowIngester) Create(ctx context.Context, req api.CreateRequest) (store.Session, error) {
	return s.Ingester.Create(ctx, req)
}

func (s *slowIngester) Lines(ctx context.Context, id string, lines []api.LineIn, end *api.End) (api.LinesResponse, error) {
	time.Sleep(s.delay)
	return s.countingIngester.Lines(ctx, id, lines, end)
}

// TestBatchSlow writes a batch that takes about three times the ack wait while
// another node shares the durable consumer: the messages waiting for
// their turn are told in progress, so none is delivered again (to the
// other node) and each session is written once.
func TestBatchSlow(t *testing.T) {
	ns, _, js := streamServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const sessions = 24
	for i := range sessions {
		id := fmt.Sprintf("s_slow%d", i)
		data := strings.Join([]string{headerRec(t, id), lineRec(t, store.Stdout, 1, "one line"), endRec}, "\n")
		if _, err := js.Publish(ctx, natsbus.Subject(id), []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t)
	const ackWait = 2 * time.Second
	ing := &slowIngester{countingIngester: countingIngester{Ingester: api.NewIngester(st, api.Options{HeartbeatTimeout: -1})}, delay: ackWait / 8}
	cons := natsbus.Consume(connect(t, ns.ClientURL()), ing, natsbus.ConsumerOptions{Durable: "slow", AckWait: ackWait})
	defer cons.Stop()
	for {
		ing.mu.Lock()
		started := ing.calls > 0
		ing.mu.Unlock()
		if started {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the consumer wrote nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	other := &countingIngester{Ingester: api.NewIngester(openStore(t), api.Options{HeartbeatTimeout: -1})}
	otherCons := natsbus.Consume(connect(t, ns.ClientURL()), other, natsbus.ConsumerOptions{Durable: "slow", AckWait: ackWait})
	defer otherCons.Stop()
	for i := range sessions {
		waitStored(t, st, fmt.Sprintf("s_slow%d", i), 1, true)
	}
	// A message delivered again would come after the last is written.
	time.Sleep(ackWait + ackWait/2)
	ing.mu.Lock()
	calls := ing.calls
	ing.mu.Unlock()
	if calls != sessions {
		t.Errorf("%d Lines calls for %d messages: some were delivered again", calls, sessions)
	}
	if got := cons.Status().Taken; got != sessions {
		t.Errorf("%d messages taken, want %d", got, sessions)
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	if other.calls != 0 {
		t.Errorf("the other node was given messages (%d calls): some were delivered again", other.calls)
	}
}

// TestEndRedeliveredLater has a session's end come before lines
// published ahead of it, as after a node died holding them: a consumer
// (the dead node) fetched the message with lines 3 and 4 and never
// acknowledged it, so the next consumer of the durable gets the end first
// and those lines only after the ack wait. The end names the lines the
// run printed, so it is asked for again until they are stored: the
// session ends with all four, none refused.
func TestEndRedeliveredLater(t *testing.T) {
	ns, stream, js := streamServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const id, ackWait = "s_late", 2 * time.Second
	var want []store.Line
	lines := func(from, to int64) []string {
		var recs []string
		for n := from; n <= to; n++ {
			text := fmt.Sprintf("line %d", n)
			recs = append(recs, lineRec(t, store.Stdout, n, text))
			want = append(want, store.Line{Stream: store.Stdout, N: n, Data: []byte(text)})
		}
		return recs
	}
	publish := func(recs []string) {
		t.Helper()
		if _, err := js.Publish(ctx, natsbus.Subject(id), []byte(strings.Join(recs, "\n"))); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t)
	ing := api.NewIngester(st, api.Options{HeartbeatTimeout: -1})
	var logs logBook
	opts := natsbus.ConsumerOptions{Durable: "late", AckWait: ackWait, Logf: logs.Logf}

	publish(append([]string{headerRec(t, id)}, lines(1, 2)...))
	first := natsbus.Consume(connect(t, ns.ClientURL()), ing, opts)
	waitStored(t, st, id, 2, false)
	first.Stop()

	publish(lines(3, 4))
	publish([]string{`{"end":{"exitCode":0,"lines":{"stdout":4}}}`})
	dead, err := stream.Consumer(ctx, "late")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := dead.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := <-batch.Messages()
	if !ok || !strings.Contains(string(m.Data()), `"n":3`) {
		t.Fatalf("the dead node fetched %v, want the message of lines 3 and 4", m)
	}
	fetched := time.Now()

	next := natsbus.Consume(connect(t, ns.ClientURL()), ing, opts)
	defer next.Stop()
	waitStored(t, st, id, 4, true)
	if time.Since(fetched) < ackWait {
		t.Errorf("the session was whole %v after the dead node fetched lines 3 and 4, before the ack wait (%v): they did not come after the end", time.Since(fetched), ackWait)
	}
	checkStored(t, st, id, want, true)
	if s, err := st.Session(ctx, id); err != nil || s.Status != store.StatusSucceeded {
		t.Errorf("session %q (%v), want succeeded", s.Status, err)
	}
	for _, l := range logs.with("refused", "dropped") {
		t.Errorf("a message was not taken: %s", l)
	}
}
