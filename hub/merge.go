package hub

import (
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
)

// Merge feeds a Hub from two publishers of the same sessions that may
// each deliver a session's stored events, one sooner than the other: a
// store's follower ([Merge.Store]), which misses no event, and a stream
// of what other nodes commit ([Merge.Stream]), which is sooner but may
// miss some. It hands on each stored event once and in seq order: the
// store's events after the last one handed on, and the stream's only when
// it is the next one (after a gap, the stream waits for the store); the
// rest is dropped. A session first seen starts where its first event is.
// A live delta is handed on unless a later stored event was, or the
// session's end; an end, once until the session's next event (the
// stream's, not while its events wait for the store's). Merge is safe for concurrent use and never blocks on a subscriber.
type Merge struct {
	h *Hub

	mu       sync.Mutex
	sessions map[string]*merged
	pruned   time.Time
}

type merged struct {
	seq     int64     // the last stored event handed on
	ahead   int64     // the last the stream offered after a gap
	endedAt time.Time // when its end was handed on; zero while it runs
}

// mergeKeep is how long Merge remembers a session that ended, so that what
// a slower source delivers of it afterwards is dropped.
const mergeKeep = 10 * time.Minute

// NewMerge returns a Merge feeding h.
func NewMerge(h *Hub) *Merge {
	return &Merge{h: h, sessions: map[string]*merged{}, pruned: time.Now()}
}

// Store returns the publisher of the source that misses no event.
func (m *Merge) Store() store.Publisher { return source{m, false} }

// Stream returns the publisher of the source that may miss events.
func (m *Merge) Stream() store.Publisher { return source{m, true} }

type source struct {
	m      *Merge
	strict bool // only the next seq
}

func (s source) Publish(ev store.Event) { s.m.publish(ev, s.strict) }
func (s source) End(session string)     { s.m.end(session, s.strict) }

// publish hands ev to the hub unless it was handed on already, is out of
// order (strict: is not the next one) or is a stale delta.
func (m *Merge) publish(ev store.Event, strict bool) {
	m.mu.Lock()
	s := m.sessions[ev.Session]
	switch {
	case ev.Seq == 0:
		if s != nil && (ev.Prev < s.seq || !s.endedAt.IsZero()) {
			m.mu.Unlock()
			return
		}
	case s == nil:
		m.prune()
		m.sessions[ev.Session] = &merged{seq: ev.Seq}
	case ev.Seq == s.seq+1 || s.seq == 0 || (!strict && ev.Seq > s.seq):
		s.seq = ev.Seq
		s.endedAt = time.Time{}
	default:
		if strict && ev.Seq > s.seq {
			s.ahead = max(s.ahead, ev.Seq)
		}
		m.mu.Unlock()
		return
	}
	// Published under the lock: two sources must not reorder the events
	// they each hand on.
	m.h.Publish(ev)
	m.mu.Unlock()
}

// end hands the end of session to the hub, once until its next event,
// and (strict) not while the stream's events wait for the store's.
func (m *Merge) end(session string, strict bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[session]
	if s == nil {
		m.prune()
		s = &merged{}
		m.sessions[session] = s
	} else if !s.endedAt.IsZero() || (strict && s.ahead > s.seq) {
		return
	}
	s.endedAt = time.Now()
	m.h.End(session)
}

// prune forgets, once a minute at most, the sessions that ended more than
// mergeKeep ago. The caller holds m.mu.
func (m *Merge) prune() {
	now := time.Now()
	if now.Sub(m.pruned) < time.Minute {
		return
	}
	m.pruned = now
	for id, s := range m.sessions {
		if !s.endedAt.IsZero() && now.Sub(s.endedAt) > mergeKeep {
			delete(m.sessions, id)
		}
	}
}
