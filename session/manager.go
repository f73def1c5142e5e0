package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentstream/agentstream"
)

// Options configure a Manager. The zero value is useful.
type Options struct {
	// OnError is told of every observer that failed or panicked, and of
	// nothing else; nil means such failures are dropped. It may be called
	// from several sessions' goroutines at once.
	OnError func(error)
}

// A Manager owns live sessions: it opens them, finds them by id, and lets
// an observer see the events of all of them. It is safe for concurrent use.
//
// Each session runs on a goroutine of its own that the Manager owns; the
// goroutine returns when the session's last harness ended, and Shutdown
// waits for all of them.
type Manager struct {
	onError func(error)
	wg      sync.WaitGroup

	mu        sync.Mutex
	sessions  map[string]*Session
	order     []string
	observers []*observer
	shut      bool
}

// NewManager returns a Manager.
func NewManager(opts Options) *Manager {
	return &Manager{onError: opts.OnError, sessions: map[string]*Session{}}
}

// ErrShutdown is returned by Open once Shutdown was called.
var ErrShutdown = errors.New("session: the manager is shut down")

// ErrDuplicate is returned by Open for an id a live session has.
var ErrDuplicate = errors.New("session: a session has this id")

// Open starts a session (see Config) and returns it once its harness runs,
// or the error that kept it from starting (a *runner.StartError when the
// command could not be started; the session then ended with no event).
// Cancelling ctx stops the session's harness (reason aborted): ctx is the
// session's lifetime, not the call's.
func (m *Manager) Open(ctx context.Context, cfg Config) (*Session, error) {
	s, err := newSession(m, cfg)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.shut {
		m.mu.Unlock()
		return nil, ErrShutdown
	}
	if old, ok := m.sessions[s.id]; ok && !old.ended() {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrDuplicate, s.id)
	} else if !ok {
		m.order = append(m.order, s.id)
	}
	m.sessions[s.id] = s
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		s.run(ctx)
	}()
	select {
	case <-s.started:
		return s, nil
	case <-s.done:
		if s.startErr != nil {
			m.mu.Lock()
			if m.sessions[s.id] == s {
				delete(m.sessions, s.id)
			}
			m.mu.Unlock()
			return nil, s.startErr
		}
		return s, nil
	}
}

// Session returns the session with id, live or ended.
func (m *Manager) Session(id string) (*Session, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	return s, ok
}

// Sessions returns every session, in the order they were opened.
func (m *Manager) Sessions() []*Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Session, 0, len(m.sessions))
	for _, id := range m.order {
		if s, ok := m.sessions[id]; ok {
			out = append(out, s)
		}
	}
	return out
}

// Forget drops an ended session from the Manager; a live one stays.
func (m *Manager) Forget(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || !s.ended() {
		return false
	}
	delete(m.sessions, id)
	for i, o := range m.order {
		if o == id {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
	return true
}

// Subscribe has h see every envelope of every session, live deltas
// included, from now on: each session's in its order, and h is called from
// one goroutine at a time (sessions wait for each other to call it), so a
// slow observer slows every session. An error or a panic of h is reported
// to Options.OnError and never stops a session. The returned function
// unsubscribes h; once it returned, h is not called again.
func (m *Manager) Subscribe(h agentstream.Handler) (unsubscribe func()) {
	o := &observer{h: h}
	m.mu.Lock()
	m.observers = append(m.observers, o)
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		for i, x := range m.observers {
			if x == o {
				m.observers = append(m.observers[:i:i], m.observers[i+1:]...)
				break
			}
		}
		m.mu.Unlock()
		o.mu.Lock()
		o.gone = true
		o.mu.Unlock()
	}
}

// observer is one subscription; mu makes its calls one at a time.
type observer struct {
	h    agentstream.Handler
	mu   sync.Mutex
	gone bool
}

// notify passes e to every observer, recovering from their panics.
func (m *Manager) notify(ctx context.Context, e agentstream.Envelope) {
	m.mu.Lock()
	obs := m.observers
	m.mu.Unlock()
	for _, o := range obs {
		if err := o.call(ctx, e); err != nil && m.onError != nil {
			m.onError(err)
		}
	}
}

func (o *observer) call(ctx context.Context, e agentstream.Envelope) (err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.gone {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("session: observer panicked on %s %s: %v", e.Session, e.Type(), r)
		}
	}()
	if err := o.h.Handle(ctx, e); err != nil {
		return fmt.Errorf("session: observer failed on %s %s: %w", e.Session, e.Type(), err)
	}
	return nil
}

// Shutdown closes every live session and waits until all have ended, or
// until ctx is done (the sessions are then left to end on their own).
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.shut = true
	var live []*Session
	for _, s := range m.sessions {
		if !s.ended() {
			live = append(live, s)
		}
	}
	m.mu.Unlock()
	for _, s := range live {
		s.Close(ctx)
	}
	done := make(chan struct{})
	// The waiter returns once every session ended, even after ctx is done.
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
