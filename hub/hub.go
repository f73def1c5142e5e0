// Package hub fans out the events a store commits (and the live deltas
// among them) to live subscribers: one topic per session, and one for all
// sessions.
//
// Each topic is a ring of the latest events. A publisher writes the next
// slot and wakes the waiting subscribers by closing one channel, so it
// never waits for a subscriber, however many there are or however slow
// they are. Each subscriber reads the ring at its own pace; one that falls
// more than a ring behind gets ErrResync instead of silently missing
// events, and resumes from the store.
package hub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstream/agentstream/store"
)

// Options tune a Hub. The zero value gives the defaults.
type Options struct {
	// Buffer is the number of events a session's topic retains for its
	// subscribers; zero means 4096. It is rounded up to a power of two.
	Buffer int
	// AllBuffer is the same for the topic of all sessions; zero means
	// 16384.
	AllBuffer int
}

// Hub is an in-memory fan-out of events. It implements store.Publisher.
// It is safe for concurrent use.
type Hub struct {
	buffer int

	mu     sync.Mutex
	topics map[string]*topic
	all    *topic
}

var _ store.Publisher = (*Hub)(nil)

// New returns a Hub.
func New(opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = 4096
	}
	if opts.AllBuffer <= 0 {
		opts.AllBuffer = 16384
	}
	return &Hub{buffer: opts.Buffer, topics: map[string]*topic{}, all: newTopic(opts.AllBuffer)}
}

// ClosedType is the type of the event the topic of all sessions carries
// when a session's writer closed; its Data is {"session": id}.
const ClosedType = "closed"

// Publish hands an event to the subscribers of its session and, for a
// stored event (Seq > 0), to the subscribers of all sessions. It never
// blocks on a subscriber.
func (h *Hub) Publish(ev store.Event) {
	h.mu.Lock()
	t := h.topics[ev.Session]
	h.mu.Unlock()
	if t != nil {
		t.push(ev, false)
	}
	if ev.Seq > 0 {
		h.all.push(ev, false)
	}
}

// End tells the subscribers of a session that its writer closed, and
// those of all sessions that it did.
func (h *Hub) End(session string) {
	h.mu.Lock()
	t := h.topics[session]
	h.mu.Unlock()
	if t != nil {
		t.push(store.Event{Session: session}, true)
	}
	data := append([]byte(`{"session":`), quote(session)...)
	data = append(data, '}')
	h.all.push(store.Event{Session: session, Type: ClosedType, Data: data}, false)
}

// Subscribe returns a subscription to the events of one session published
// from now on, or to those of every session when session is "". The
// caller must Close it.
func (h *Hub) Subscribe(session string) *Subscription {
	var t *topic
	if session == "" {
		t = h.all
	} else {
		h.mu.Lock()
		t = h.topics[session]
		if t == nil {
			t = newTopic(h.buffer)
			h.topics[session] = t
		}
		t.subs++
		h.mu.Unlock()
	}
	return &Subscription{h: h, t: t, session: session, next: t.head.Load()}
}

// SubscribeAfter returns a subscription to the topic of every session that
// starts after the event the topic still holds for which last reports true,
// so that a client resumes where it was; false when the topic holds no such
// event any more (it fell out of the ring, or never was). The caller must
// Close it.
func (h *Hub) SubscribeAfter(last func(store.Event) bool) (*Subscription, bool) {
	t := h.all
	head := t.head.Load()
	n := uint64(len(t.ring))
	from := uint64(0)
	if head > n {
		from = head - n
	}
	for i := head; i > from; i-- {
		e := t.ring[(i-1)&t.mask].Load()
		if e == nil || e.idx != i-1 {
			break
		}
		if !e.end && last(e.ev) {
			return &Subscription{h: h, t: t, next: i}, true
		}
	}
	return nil, false
}

// Subscribers returns the number of subscriptions to a session's topic.
func (h *Hub) Subscribers(session string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.topics[session]; t != nil {
		return t.subs
	}
	return 0
}

type entry struct {
	idx uint64
	ev  store.Event
	end bool
}

type topic struct {
	ring []atomic.Pointer[entry]
	mask uint64

	pushMu sync.Mutex // serializes publishers only
	head   atomic.Uint64
	sig    atomic.Pointer[chan struct{}]

	subs int // guarded by Hub.mu
}

func newTopic(size int) *topic {
	n := 1
	for n < size {
		n <<= 1
	}
	t := &topic{ring: make([]atomic.Pointer[entry], n), mask: uint64(n - 1)}
	ch := make(chan struct{})
	t.sig.Store(&ch)
	return t
}

func (t *topic) push(ev store.Event, end bool) {
	ch := make(chan struct{})
	t.pushMu.Lock()
	i := t.head.Load()
	t.ring[i&t.mask].Store(&entry{idx: i, ev: ev, end: end})
	t.head.Store(i + 1)
	old := t.sig.Swap(&ch)
	t.pushMu.Unlock()
	close(*old)
}

// ErrResync is returned by Next to a subscriber that fell more than the
// topic's buffer behind: events were overwritten before it read them. It
// must resume from the store after the last event it received.
var ErrResync = errors.New("hub: subscriber fell behind")

// ErrEnded is returned by Next once a session's writer closed and every
// event before it was received.
var ErrEnded = errors.New("hub: session ended")

// Subscription is one subscriber's cursor in a topic. It is used by one
// goroutine at a time.
type Subscription struct {
	h       *Hub
	t       *topic
	session string
	next    uint64
	closed  bool
}

// Next appends to dst the events published since the last call, up to max
// of them (max <= 0 means no limit), waiting until there is at least one,
// ctx is done (returning its error) or timeout passes (returning dst as
// it was; a timeout <= 0 waits without limit). It returns ErrResync when
// the subscriber fell behind, and ErrEnded after the session's end.
func (s *Subscription) Next(ctx context.Context, dst []store.Event, max int, timeout time.Duration) ([]store.Event, error) {
	var timer <-chan time.Time
	for {
		ch := *s.t.sig.Load()
		head := s.t.head.Load()
		if s.next < head {
			if head-s.next > uint64(len(s.t.ring)) {
				return dst, ErrResync
			}
			n := 0
			for s.next < head && (max <= 0 || n < max) {
				e := s.t.ring[s.next&s.t.mask].Load()
				if e == nil || e.idx != s.next {
					return dst, ErrResync
				}
				if e.end {
					if n > 0 {
						return dst, nil
					}
					s.next++
					if s.next == s.t.head.Load() {
						return dst, ErrEnded
					}
					continue
				}
				dst = append(dst, e.ev)
				s.next++
				n++
			}
			return dst, nil
		}
		if timer == nil && timeout > 0 {
			tm := time.NewTimer(timeout)
			defer tm.Stop()
			timer = tm.C
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return dst, ctx.Err()
		case <-timer:
			return dst, nil
		}
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	if s.closed || s.session == "" {
		s.closed = true
		return
	}
	s.closed = true
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.t.subs--
	if s.t.subs == 0 && s.h.topics[s.session] == s.t {
		delete(s.h.topics, s.session)
	}
}

func quote(s string) []byte {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
