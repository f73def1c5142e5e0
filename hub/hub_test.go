package hub_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
)

func ev(session string, seq int64) store.Event {
	return store.Event{Session: session, Seq: seq, Type: "message", Data: []byte(fmt.Sprint(seq))}
}

func drain(t *testing.T, s *hub.Subscription) ([]int64, error) {
	t.Helper()
	var out []int64
	for {
		evs, err := s.Next(context.Background(), nil, 0, 20*time.Millisecond)
		for _, e := range evs {
			out = append(out, e.Seq)
		}
		if err != nil || len(evs) == 0 {
			return out, err
		}
	}
}

func TestOrderAndEnd(t *testing.T) {
	h := hub.New(hub.Options{})
	before := h.Subscribe("a")
	defer before.Close()
	h.Publish(ev("a", 1))
	late := h.Subscribe("a") // sees only what follows
	defer late.Close()
	other := h.Subscribe("b")
	defer other.Close()
	all := h.Subscribe("")
	defer all.Close()
	h.Publish(ev("a", 2))
	h.Publish(store.Event{Session: "a", Type: "message.delta", Prev: 2}) // live: not on the all topic
	h.Publish(ev("b", 1))
	h.Publish(ev("a", 3))
	h.End("a")
	tests := []struct {
		name string
		sub  *hub.Subscription
		want []int64
		err  error
	}{
		{"before", before, []int64{1, 2, 0, 3}, hub.ErrEnded},
		{"late", late, []int64{2, 0, 3}, hub.ErrEnded},
		{"other", other, []int64{1}, nil},
		{"all", all, []int64{2, 1, 3, 0}, nil}, // the last is a's "closed"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := drain(t, tt.sub)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("err = %v, want %v", err, tt.err)
			}
		})
	}
	if n := h.Subscribers("a"); n != 2 {
		t.Errorf("Subscribers(a) = %d", n)
	}
}

func TestResync(t *testing.T) {
	h := hub.New(hub.Options{Buffer: 8})
	slow := h.Subscribe("a")
	defer slow.Close()
	for i := int64(1); i <= 20; i++ {
		h.Publish(ev("a", i)) // never blocks, however far behind slow is
	}
	if _, err := slow.Next(context.Background(), nil, 0, 0); !errors.Is(err, hub.ErrResync) {
		t.Errorf("err = %v, want ErrResync", err)
	}
}

// TestWaitAndCancel checks that Next waits for the next event, returns
// nothing when its timeout passes first, and returns the context's error
// when the context ends while it waits. It runs in a synctest bubble, where
// every wait is exact.
func TestWaitAndCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := hub.New(hub.Options{})
		s := h.Subscribe("a")
		defer s.Close()
		start := time.Now()
		go func() {
			time.Sleep(10 * time.Millisecond)
			h.Publish(ev("a", 1))
		}()
		evs, err := s.Next(context.Background(), nil, 0, time.Second)
		if err != nil || len(evs) != 1 {
			t.Fatalf("Next = %v, %v; want the published event", evs, err)
		}
		if d := time.Since(start); d != 10*time.Millisecond {
			t.Errorf("Next returned after %v, want 10ms, when the event was published", d)
		}

		start = time.Now()
		evs, err = s.Next(context.Background(), nil, 0, time.Second)
		if err != nil || len(evs) != 0 {
			t.Errorf("Next with nothing published = %v, %v; want no event and no error", evs, err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Next with nothing published returned after %v, want its timeout, 1s", d)
		}

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(30*time.Millisecond, cancel)
		start = time.Now()
		if _, err := s.Next(ctx, nil, 0, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while waiting: err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("cancelled Next returned after %v, want 30ms, when the context ended", d)
		}
		if _, err := s.Next(ctx, nil, 0, 0); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled before: err = %v, want context.Canceled", err)
		}
	})
}

// TestConcurrent publishes from several goroutines while subscribers read;
// run with -race.
func TestConcurrent(t *testing.T) {
	h := hub.New(hub.Options{Buffer: 1 << 14})
	const pubs, per = 4, 2000
	var subs []*hub.Subscription
	for range 8 {
		subs = append(subs, h.Subscribe("s"))
	}
	var wg sync.WaitGroup
	results := make([][]int64, len(subs))
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			for len(results[i]) < pubs*per {
				evs, err := s.Next(context.Background(), nil, 100, time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range evs {
					results[i] = append(results[i], e.Seq)
				}
			}
		}()
	}
	var pw sync.WaitGroup
	for p := range pubs {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for i := range per {
				h.Publish(ev("s", int64(p*per+i+1)))
			}
		}()
	}
	pw.Wait()
	wg.Wait()
	for i, r := range results {
		sorted := append([]int64(nil), r...)
		sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
		for k, v := range sorted {
			if v != int64(k+1) {
				t.Fatalf("subscriber %d: missing or repeated events", i)
			}
		}
	}
}

// BenchmarkFanout publishes 10,000 events/s to one session followed by
// 1,000 subscribers, each reading in batches and pausing 5 ms between two
// batches (as an SSE subscriber does), and reports the p99 delivery
// latency (of the first event of each batch, which waited longest). The publisher never waits for a subscriber.
func BenchmarkFanout(b *testing.B) {
	const subscribers = 1000
	const rate = 10_000
	h := hub.New(hub.Options{Buffer: 1 << 16})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	total := b.N
	for range subscribers {
		s := h.Subscribe("s")
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.Close()
			local := make([]time.Duration, 0, total)
			buf := make([]store.Event, 0, 1000)
			got := 0
			for got < total {
				var err error
				buf, err = s.Next(ctx, buf[:0], 1000, 0)
				if err != nil {
					b.Error(err)
					return
				}
				// The first event of a batch waited longest: its latency is
				// the batch's worst.
				if len(buf) > 0 {
					sent := time.Unix(0, int64(binary.LittleEndian.Uint64(buf[0].Data)))
					local = append(local, time.Since(sent))
				}
				got += len(buf)
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	b.ResetTimer()
	start := time.Now()
	var maxPublish time.Duration
	for i := range total {
		next := start.Add(time.Duration(i) * time.Second / rate)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		data := make([]byte, 300)
		now := time.Now()
		binary.LittleEndian.PutUint64(data, uint64(now.UnixNano()))
		h.Publish(store.Event{Session: "s", Seq: int64(i + 1), Type: "message", Data: data})
		maxPublish = max(maxPublish, time.Since(now))
	}
	wg.Wait()
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	}
	b.ReportMetric(float64(maxPublish.Microseconds())/1000, "max-publish-ms")
}

// TestSubscribeAfter: a subscription to all sessions resumes after the
// event it names while the ring holds it, and reports when it does not.
func TestSubscribeAfter(t *testing.T) {
	h := hub.New(hub.Options{AllBuffer: 4})
	for i := int64(1); i <= 3; i++ {
		h.Publish(ev("a", i))
		h.Publish(ev("b", i))
	}
	at := func(session string, seq int64) func(store.Event) bool {
		return func(e store.Event) bool { return e.Session == session && e.Seq == seq }
	}
	sub, ok := h.SubscribeAfter(at("b", 2))
	if !ok {
		t.Fatal("b/2 is in the ring, not found")
	}
	h.Publish(ev("a", 4))
	evs, err := sub.Next(context.Background(), nil, 0, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%s/%d", e.Session, e.Seq))
	}
	if diff := cmp.Diff([]string{"a/3", "b/3", "a/4"}, got); diff != "" {
		t.Errorf("resumed (-want +got):\n%s", diff)
	}
	sub.Close()
	if _, ok := h.SubscribeAfter(at("a", 1)); ok {
		t.Error("a/1 fell out of the ring of 4, yet was found")
	}
}
