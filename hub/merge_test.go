package hub_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
)

func delta(session string, prev int64) store.Event {
	return store.Event{Session: session, Prev: prev, Type: "message.delta", Data: []byte("{}")}
}

// got is what a subscription of a session received: the seqs (a delta as
// -prev) and whether it ended.
func got(t *testing.T, s *hub.Subscription) ([]int64, bool) {
	t.Helper()
	var out []int64
	for {
		evs, err := s.Next(context.Background(), nil, 0, 20*time.Millisecond)
		for _, e := range evs {
			if e.Seq == 0 {
				out = append(out, -e.Prev)
			} else {
				out = append(out, e.Seq)
			}
		}
		if errors.Is(err, hub.ErrEnded) {
			return out, true
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return out, false
		}
	}
}

// TestMerge hands one session's events to the two sources of a Merge as
// each would deliver them: the stream sooner, with a gap where it lost
// some, the store later and whole. Each stored event reaches the hub once
// and in order; a delta, unless a later stored event did; the end once.
func TestMerge(t *testing.T) {
	h := hub.New(hub.Options{})
	m := hub.NewMerge(h)
	sub := h.Subscribe("a")
	defer sub.Close()
	all := h.Subscribe("")
	defer all.Close()
	st, sm := m.Store(), m.Stream()

	sm.Publish(ev("a", 1))
	sm.Publish(ev("a", 2))
	sm.Publish(delta("a", 2))
	st.Publish(ev("a", 1))    // had from the stream
	sm.Publish(ev("a", 4))    // the stream lost 3: waits for the store
	sm.Publish(delta("a", 4)) // after an event not had: still live
	st.Publish(ev("a", 2))
	st.Publish(ev("a", 3))
	sm.Publish(delta("a", 2)) // stale: 3 was handed on
	st.Publish(ev("a", 4))
	sm.Publish(ev("a", 5))
	st.Publish(ev("a", 5))
	sm.End("a")
	st.End("a")
	sm.Publish(delta("a", 5)) // after the end

	seqs, ended := got(t, sub)
	if want := []int64{1, 2, -2, -4, 3, 4, 5}; !cmp.Equal(seqs, want) || !ended {
		t.Errorf("session topic: got %v, ended %v; want %v, ended", seqs, ended, want)
	}
	var kinds []string
	for {
		evs, err := all.Next(context.Background(), nil, 0, 20*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			kinds = append(kinds, e.Type+":"+string(e.Data))
		}
	}
	want := []string{"message:1", "message:2", "message:3", "message:4", "message:5", hub.ClosedType + `:{"session":"a"}`}
	if !cmp.Equal(kinds, want) {
		t.Errorf("all topic: got %v, want %v", kinds, want)
	}
}

// TestMergeStoreSkips has the store's follower deliver an event after a
// gap (as it does for a session whose writer this process took over): it
// is handed on, and the stream's events of the gap are dropped.
func TestMergeStoreSkips(t *testing.T) {
	h := hub.New(hub.Options{})
	m := hub.NewMerge(h)
	sub := h.Subscribe("a")
	defer sub.Close()
	m.Store().Publish(ev("a", 1))
	m.Store().Publish(ev("a", 5))
	m.Stream().Publish(ev("a", 2))
	m.Stream().Publish(ev("a", 6))
	seqs, _ := got(t, sub)
	if want := []int64{1, 5, 6}; !cmp.Equal(seqs, want) {
		t.Errorf("got %v, want %v", seqs, want)
	}
}

// TestMergeEndWaits has the stream deliver a session's end while its
// events after a gap wait for the store: the end waits too.
func TestMergeEndWaits(t *testing.T) {
	h := hub.New(hub.Options{})
	m := hub.NewMerge(h)
	sub := h.Subscribe("a")
	defer sub.Close()
	m.Stream().Publish(ev("a", 1))
	m.Stream().Publish(ev("a", 3))
	m.Stream().End("a")
	if seqs, ended := got(t, sub); !cmp.Equal(seqs, []int64{1}) || ended {
		t.Fatalf("before the store: got %v, ended %v; want [1], not ended", seqs, ended)
	}
	m.Store().Publish(ev("a", 2))
	m.Store().Publish(ev("a", 3))
	m.Store().End("a")
	if seqs, ended := got(t, sub); !cmp.Equal(seqs, []int64{2, 3}) || !ended {
		t.Errorf("after the store: got %v, ended %v; want [2 3], ended", seqs, ended)
	}
}

// TestMergeResumed ends a session, then hands on the events of its resumed
// writer and its second end.
func TestMergeResumed(t *testing.T) {
	h := hub.New(hub.Options{})
	m := hub.NewMerge(h)
	m.Stream().End("a") // the end of a session never seen
	sub := h.Subscribe("a")
	defer sub.Close()
	m.Stream().Publish(ev("a", 7))
	m.Store().Publish(ev("a", 8))
	m.Store().End("a")
	m.Stream().Publish(ev("a", 8))
	m.Stream().End("a")
	seqs, ended := got(t, sub)
	if want := []int64{7, 8}; !cmp.Equal(seqs, want) || !ended {
		t.Errorf("got %v, ended %v; want %v, ended", seqs, ended, want)
	}
}

// TestMergeConcurrent has both sources deliver every event of many
// sessions at once: each subscriber gets each event once, in order.
func TestMergeConcurrent(t *testing.T) {
	h := hub.New(hub.Options{Buffer: 1 << 14})
	m := hub.NewMerge(h)
	ids := []string{"a", "b", "c", "d"}
	subs := map[string]*hub.Subscription{}
	for _, id := range ids {
		subs[id] = h.Subscribe(id)
		defer subs[id].Close()
	}
	const n = 2000
	var wg sync.WaitGroup
	for _, p := range []store.Publisher{m.Store(), m.Stream()} {
		wg.Go(func() {
			for i := int64(1); i <= n; i++ {
				for _, id := range ids {
					p.Publish(ev(id, i))
				}
			}
			for _, id := range ids {
				p.End(id)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		seqs, ended := got(t, subs[id])
		if len(seqs) != n || !ended {
			t.Fatalf("session %s: %d events, ended %v; want %d, ended", id, len(seqs), ended, n)
		}
		for i, s := range seqs {
			if s != int64(i+1) {
				t.Fatalf("session %s: event %d has seq %d", id, i, s)
			}
		}
	}
}
