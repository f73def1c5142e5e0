package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	agentstream "github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
)

// recorder is a store.Publisher that keeps what it gets, as
// "session:seq:type" and the ended sessions.
type recorder struct {
	mu   sync.Mutex
	evs  []string
	ends []string
}

func (r *recorder) Publish(ev store.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, fmt.Sprintf("%s:%d:%s", ev.Session, ev.Seq, ev.Type))
	r.mu.Unlock()
}

func (r *recorder) End(id string) {
	r.mu.Lock()
	r.ends = append(r.ends, id)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs), slices.Clone(r.ends)
}

func write(t *testing.T, w store.Writer, texts ...string) {
	t.Helper()
	for _, text := range texts {
		var p agentstream.Payload = &agentstream.Message{Role: "assistant", Text: text}
		if text == "delta" {
			p = &agentstream.MessageDelta{Role: "assistant", Text: text}
		}
		if err := w.Handle(context.Background(), agentstream.Envelope{Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFollowStarting writes sessions while Follow starts, once it has read
// where the sessions stand: one that ends then, one that goes on. Each of
// their events, the live delta and the end reach the publisher once: a
// session another process writes afterwards, found by polling, marks the
// point by which a second copy would have come.
func TestFollowStarting(t *testing.T) {
	u := migrated(t)
	st := open(t, u, postgres.Options{})
	other := open(t, u, postgres.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var running store.Writer
	postgres.SetFollowHook(func() {
		w, err := st.Create(ctx, store.NewSession{ID: "ended"})
		if err != nil {
			t.Fatal(err)
		}
		write(t, w, "a", "b", "c")
		if err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if running, err = st.Create(ctx, store.NewSession{ID: "open"}); err != nil {
			t.Fatal(err)
		}
		write(t, running, "one", "delta", "two")
	})
	defer postgres.SetFollowHook(nil)
	rec := &recorder{}
	done := make(chan error, 1)
	go func() { done <- st.Follow(ctx, rec, 20*time.Millisecond) }()
	for !st.Following() {
		time.Sleep(time.Millisecond)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ends := rec.snapshot(); len(ends) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no end published in 10 s")
		}
	}
	w, err := other.Create(ctx, store.NewSession{ID: "later"})
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, "x")
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ends := rec.snapshot(); slices.Contains(ends, "later") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session of the other process: no end in 10 s")
		}
	}
	evs, ends := rec.snapshot()
	want := []string{"ended:1:message", "ended:2:message", "ended:3:message",
		"open:1:message", "open:0:message.delta", "open:2:message", "later:1:message"}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ended", "later"}, ends); diff != "" {
		t.Errorf("ends (-want +got):\n%s", diff)
	}
	if err := running.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
}
