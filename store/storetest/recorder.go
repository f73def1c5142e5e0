package storetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
)

// recorder is a store.Publisher that keeps what it gets.
type recorder struct {
	mu    sync.Mutex
	evs   []store.Event
	ended []string
}

func (r *recorder) Publish(ev store.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *recorder) End(id string) {
	r.mu.Lock()
	r.ended = append(r.ended, id)
	r.mu.Unlock()
}

func (r *recorder) events() []store.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]store.Event(nil), r.evs...)
}

func (r *recorder) ends() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ended...)
}

// published returns the seqs published, but those of the session "ready".
func (r *recorder) published() []string {
	var out []string
	for _, e := range r.events() {
		if e.Session != "ready" {
			out = append(out, fmt.Sprint(e.Seq))
		}
	}
	return out
}

// waitReady returns once Follow publishes to r: it writes events to a
// session "ready" until one is published, then closes it and waits for its
// end.
func (r *recorder) waitReady(c *check, st Store) {
	c.t.Helper()
	w, err := st.Create(c.ctx, store.NewSession{ID: "ready"})
	c.must(err, "Create")
	seen := func() bool {
		for _, e := range r.events() {
			if e.Session == "ready" {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := int64(1); !seen(); i++ {
		if time.Now().After(deadline) {
			c.fatalf("Follow published nothing in 10 s")
		}
		c.must(w.Handle(c.ctx, message("ready", i, "ready")), "Handle")
		c.must(w.Flush(c.ctx), "Flush")
		time.Sleep(10 * time.Millisecond)
	}
	c.must(w.Close(c.ctx), "Close")
	c.waitFor("the end of session ready", func() bool { return len(r.ends()) > 0 })
}

func withCancel(c *check) (context.Context, context.CancelFunc) {
	return context.WithCancel(c.ctx)
}
