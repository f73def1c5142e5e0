// Package batch is the session writer every store shares: it buffers a
// session's events and native lines, commits them in batches through a
// store's Backend, and keeps the rules of store.Writer (dense seq,
// idempotent replays, sticky errors, acknowledgement on commit, publishing
// in commit order) in one place. A store supplies only the transactions.
package batch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// Event is a stored event as a commit writes it.
type Event struct {
	Seq int64
	// TS is the event's time in whole milliseconds, zero for none.
	TS   time.Time
	Type string
	// Body is store.AppendBody of the envelope.
	Body []byte
	// Text is store.SearchText of the envelope, what search finds it by.
	Text string
}

// Batch is what one commit writes, in one transaction: events (seq
// ascending, dense, following what the session held when the writer
// started), native lines, the session record when it changed, and the
// session's new last seq.
type Batch struct {
	Events  []Event
	Lines   []store.Line
	Fields  *store.Fields
	LastSeq int64
}

// A Backend is a store's side of one session's writer. Its methods are
// called from one goroutine at a time.
type Backend interface {
	// Commit writes b in one transaction. An event or line whose key the
	// session already holds is skipped when its content is the same and
	// makes Commit fail with store.ErrConflict otherwise; the session's
	// last seq never moves back.
	Commit(ctx context.Context, b *Batch) error
	// Body returns the stored body of the session's event seq, or
	// store.ErrNotFound.
	Body(ctx context.Context, seq int64) ([]byte, error)
	// Line returns a stored native line, or store.ErrNotFound.
	Line(ctx context.Context, stream string, n int64) (store.Line, error)
	// Heartbeat tells the store that the writer is alive.
	Heartbeat(ctx context.Context) error
	// End sets the session's final status and end time, and releases it.
	End(ctx context.Context, status string, endedAt time.Time) error
}

// Options configure a Writer.
type Options struct {
	// Name prefixes the writer's errors ("sqlite").
	Name string
	// BatchSize is the number of entries that makes the writer commit.
	BatchSize int
	// MaxBatchBytes is the size of native lines that makes the writer
	// commit, whatever their count.
	MaxBatchBytes int
	// FlushInterval is how long a first uncommitted entry waits.
	FlushInterval time.Duration
	// Heartbeat is how often an idle writer calls Backend.Heartbeat.
	Heartbeat time.Duration
	// Publisher returns where committed events go, or nil for nowhere.
	Publisher func() store.Publisher
}

// Start describes where a session stands when its writer starts.
type Start struct {
	Session string
	// LastSeq and LastLine are the last stored seq and the last stored
	// line of each stream (0 for stdout, 1 for stderr).
	LastSeq  int64
	LastLine [2]int64
	Record   store.Record
	// Resumed says that the writer continues a session (Store.Resume):
	// until its first new stored event, it may be handed a replay, and
	// drops the live deltas.
	Resumed bool
}

// Writer records one session; see store.Writer for the contract.
//
// Handle and Line buffer; a batch is committed when it holds
// Options.BatchSize entries (in the writer's goroutine, so that the caller
// goes on preparing the next one), Options.FlushInterval after its first
// entry, or on Flush and Close. Committed events are then published, in
// order, with the live deltas in their place among them; a live delta
// never waits for a commit when nothing is buffered.
type Writer struct {
	be   Backend
	id   string
	opts Options

	mu         sync.Mutex
	pending    []pending
	events     []Event // the stored events of pending, in order
	lines      []store.Line
	lineBytes  int
	lastSeq    int64
	lastLine   [2]int64
	catchingUp bool // resumed, and no new stored event handed over yet
	rec        store.Record
	recDirty   bool
	inflight   bool
	timerArmed bool
	timer      *time.Timer
	closed     bool
	err        error
	slab       []byte // where the bodies of pending events are appended
	lineSlab   []byte // where the data of pending lines are copied

	flushMu   sync.Mutex
	acked     atomic.Int64
	published atomic.Int64
	done      atomic.Bool
	lastWrite atomic.Int64 // unix ms of the last commit, for the heartbeat
	kick      chan struct{}
	stop      chan struct{}
	loopDone  chan struct{}
}

var _ store.Writer = (*Writer)(nil)

// pending is a stored event waiting for its commit (index into events), or
// a live delta waiting for the stored events before it.
type pending struct {
	event int   // index into events, or -1 for a live delta
	prev  int64 // for a live delta
	typ   string
	data  []byte // envelope JSON of a live delta
}

// New starts the writer of a session.
func New(be Backend, st Start, opts Options) *Writer {
	w := &Writer{be: be, id: st.Session, opts: opts, lastSeq: st.LastSeq, lastLine: st.LastLine, rec: st.Record,
		catchingUp: st.Resumed, kick: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{})}
	w.acked.Store(st.LastSeq)
	w.published.Store(st.LastSeq)
	w.lastWrite.Store(time.Now().UnixMilli())
	go w.loop()
	return w
}

// StreamIndex returns the index of a native stream in Start.LastLine.
func StreamIndex(stream string) (int, bool) {
	switch stream {
	case store.Stdout:
		return 0, true
	case store.Stderr:
		return 1, true
	}
	return 0, false
}

// loop is the writer's goroutine, from creation to Close: it commits the
// batches that Handle, Line and the flush timer hand it, and while the
// writer is idle it calls the backend's heartbeat so that the store can
// tell a quiet session from one whose writer is gone.
func (w *Writer) loop() {
	defer close(w.loopDone)
	t := time.NewTicker(w.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
			_ = w.flush(context.Background())
			continue
		case <-t.C:
		}
		now := time.Now()
		if now.UnixMilli()-w.lastWrite.Load() < w.opts.Heartbeat.Milliseconds()/2 {
			continue
		}
		if err := w.be.Heartbeat(context.Background()); err == nil {
			w.lastWrite.Store(now.UnixMilli())
		}
	}
}

// wake asks the writer's goroutine to commit.
func (w *Writer) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Session returns the session id.
func (w *Writer) Session() string { return w.id }

// Acked returns the seq of the last committed event.
func (w *Writer) Acked() int64 { return w.acked.Load() }

// Published returns the seq of the last event published.
func (w *Writer) Published() int64 { return w.published.Load() }

// Done reports whether the writer was closed.
func (w *Writer) Done() bool { return w.done.Load() }

// LastSeq returns the seq of the last stored event handed over.
func (w *Writer) LastSeq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastSeq
}

// LastLine returns the number of the last line handed over for stream.
func (w *Writer) LastLine(stream string) int64 {
	i, ok := StreamIndex(stream)
	if !ok {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastLine[i]
}

func (w *Writer) errorf(format string, args ...any) error {
	return fmt.Errorf(w.opts.Name+": "+format, args...)
}

// Handle takes one envelope of the session. A stored event's Seq must be
// LastSeq()+1 (or 0, to have it assigned), or a replay of a stored one; a
// live delta (agentstream.IsLive) is published and not stored.
func (w *Writer) Handle(ctx context.Context, e agentstream.Envelope) error {
	typ := e.Type()
	if typ == "" {
		return w.errorf("envelope without a payload")
	}
	w.mu.Lock()
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return err
	}
	if agentstream.IsLive(typ) {
		if w.catchingUp {
			// Maybe a replay's delta, whose event is stored already.
			w.mu.Unlock()
			return nil
		}
		e.Seq = 0
		ev := pending{event: -1, prev: w.lastSeq, typ: typ, data: e.AppendJSON(nil)}
		if len(w.pending) == 0 && !w.inflight {
			// Nothing before it waits for a commit: publish at once.
			if p := w.publisher(); p != nil {
				p.Publish(store.Event{Session: w.id, Prev: ev.prev, Type: typ, Data: ev.data})
			}
		} else {
			w.pending = append(w.pending, ev)
			w.arm()
		}
		w.mu.Unlock()
		return nil
	}
	if e.Seq == 0 {
		e.Seq = w.lastSeq + 1
	}
	if e.Seq <= w.lastSeq {
		w.mu.Unlock()
		return w.replayEvent(ctx, &e)
	}
	if e.Seq != w.lastSeq+1 {
		last := w.lastSeq
		w.mu.Unlock()
		return fmt.Errorf("%w: session %s got seq %d after %d", store.ErrSeq, w.id, e.Seq, last)
	}
	w.catchingUp = false
	if len(w.slab)+4096 > cap(w.slab) {
		w.slab = make([]byte, 0, max(64<<10, 2*cap(w.slab)))
	}
	start := len(w.slab)
	w.slab = store.AppendBody(w.slab, &e)
	ev := Event{Seq: e.Seq, Type: typ, Body: w.slab[start:len(w.slab):len(w.slab)], Text: store.SearchText(&e)}
	if !e.TS.IsZero() {
		ev.TS = time.UnixMilli(e.TS.UnixMilli())
	}
	w.rec.Observe(&e)
	w.recDirty = true
	w.lastSeq = e.Seq
	w.pending = append(w.pending, pending{event: len(w.events), typ: typ})
	w.events = append(w.events, ev)
	return w.filled(ctx)
}

// replayEvent checks a replayed event against the stored one.
func (w *Writer) replayEvent(ctx context.Context, e *agentstream.Envelope) error {
	// Commit what is buffered, so that the event is in the store.
	if err := w.flush(ctx); err != nil {
		return err
	}
	stored, err := w.be.Body(ctx, e.Seq)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: session %s has no seq %d below its last %d", store.ErrSeq, w.id, e.Seq, w.LastSeq())
	}
	if err != nil {
		return err
	}
	if string(stored) != string(store.AppendBody(nil, e)) {
		return fmt.Errorf("%w: session %s holds another event at seq %d", store.ErrConflict, w.id, e.Seq)
	}
	return nil
}

// filled commits a full batch: in the writer's goroutine, so that the
// caller goes on preparing the next batch while this one commits, or in
// the caller's goroutine when the writer's goroutine is too far behind.
// The caller holds w.mu, which filled releases.
func (w *Writer) filled(ctx context.Context) error {
	n := len(w.events) + len(w.lines)
	switch {
	case n >= 4*w.opts.BatchSize || w.lineBytes >= 4*w.opts.MaxBatchBytes:
		w.mu.Unlock()
		return w.Flush(ctx)
	case n >= w.opts.BatchSize || w.lineBytes >= w.opts.MaxBatchBytes:
		w.mu.Unlock()
		w.wake()
	default:
		w.arm()
		w.mu.Unlock()
	}
	return nil
}

// Line keeps one native line; see store.Writer for a line at or below the
// stream's last line number.
func (w *Writer) Line(ctx context.Context, l store.Line) error {
	i, ok := StreamIndex(l.Stream)
	if !ok {
		return w.errorf("unknown stream %q", l.Stream)
	}
	if l.N <= 0 {
		return w.errorf("line number %d", l.N)
	}
	if l.Size < int64(len(l.Data)) {
		l.Size = int64(len(l.Data))
	}
	w.mu.Lock()
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return err
	}
	if l.N <= w.lastLine[i] {
		w.mu.Unlock()
		return w.replayLine(ctx, &l)
	}
	if len(l.Data) > 64<<10 {
		l.Data = append([]byte(nil), l.Data...)
	} else {
		if len(w.lineSlab)+len(l.Data) > cap(w.lineSlab) {
			w.lineSlab = make([]byte, 0, 1<<20)
		}
		start := len(w.lineSlab)
		w.lineSlab = append(w.lineSlab, l.Data...)
		l.Data = w.lineSlab[start:len(w.lineSlab):len(w.lineSlab)]
	}
	w.lastLine[i] = l.N
	w.lines = append(w.lines, l)
	w.lineBytes += len(l.Data)
	return w.filled(ctx)
}

// replayLine checks a line handed over again against the stored one.
func (w *Writer) replayLine(ctx context.Context, l *store.Line) error {
	if err := w.flush(ctx); err != nil {
		return err
	}
	stored, err := w.be.Line(ctx, l.Stream, l.N)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !store.SameLine(&stored, l) {
		return fmt.Errorf("%w: session %s holds another %s line %d", store.ErrConflict, w.id, l.Stream, l.N)
	}
	return nil
}

func (w *Writer) usable() error {
	if w.closed {
		return store.ErrClosed
	}
	return w.err
}

func (w *Writer) publisher() store.Publisher {
	if w.opts.Publisher == nil {
		return nil
	}
	return w.opts.Publisher()
}

// arm starts the flush timer for a batch that just got its first entry.
// The caller holds w.mu.
func (w *Writer) arm() {
	if w.timerArmed {
		return
	}
	w.timerArmed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.opts.FlushInterval, w.wake)
	} else {
		w.timer.Reset(w.opts.FlushInterval)
	}
}

// Flush commits what is buffered and publishes it; when it returns nil,
// everything handed over before the call is acknowledged.
func (w *Writer) Flush(ctx context.Context) error { return w.flush(ctx) }

func (w *Writer) flush(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	w.mu.Lock()
	w.timerArmed = false
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	evs, events, lines := w.pending, w.events, w.lines
	w.pending, w.events, w.lines, w.lineBytes = nil, nil, nil, 0
	w.slab = w.slab[len(w.slab):]
	w.lineSlab = w.lineSlab[len(w.lineSlab):]
	var fields *store.Fields
	if w.recDirty {
		f := w.rec.Fields()
		fields = &f
		w.recDirty = false
	}
	lastSeq := w.lastSeq
	w.inflight = true
	w.mu.Unlock()

	write := len(events) > 0 || len(lines) > 0 || fields != nil
	var err error
	if write {
		err = w.be.Commit(ctx, &Batch{Events: events, Lines: lines, Fields: fields, LastSeq: lastSeq})
	}
	w.mu.Lock()
	w.inflight = false
	if err != nil {
		w.err = err
		w.mu.Unlock()
		return err
	}
	w.mu.Unlock()
	if write {
		w.lastWrite.Store(time.Now().UnixMilli())
	}
	w.acked.Store(lastSeq)
	if p := w.publisher(); p != nil {
		var buf []byte
		for i := range evs {
			pe := &evs[i]
			if pe.event < 0 {
				p.Publish(store.Event{Session: w.id, Prev: pe.prev, Type: pe.typ, Data: pe.data})
				continue
			}
			ev := &events[pe.event]
			buf = store.AppendEnvelope(buf[:0], w.id, ev.Seq, ev.TS, ev.Body)
			p.Publish(store.Event{Session: w.id, Seq: ev.Seq, Type: ev.Type, Data: append([]byte(nil), buf...)})
		}
	}
	w.published.Store(lastSeq)
	return nil
}

// Close commits what is buffered, then sets the session's final status:
// that of its latest session.ended event, or interrupted when it has none.
// EndedAt is now.
func (w *Writer) Close(ctx context.Context) error { return w.CloseAt(ctx, time.Now()) }

// CloseAt is Close with the session's end time given, for a session read
// from a recording.
func (w *Writer) CloseAt(ctx context.Context, endedAt time.Time) error {
	ctx = context.WithoutCancel(ctx)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return store.ErrClosed
	}
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	close(w.stop)
	<-w.loopDone

	err := w.flush(ctx)
	w.mu.Lock()
	status := w.rec.FinalStatus()
	w.mu.Unlock()
	cerr := w.be.End(ctx, status, endedAt)
	if p := w.publisher(); p != nil {
		p.End(w.id)
	}
	w.done.Store(true)
	return errors.Join(err, cerr)
}

// Events returns the stored form of a session's whole list of stored
// events (seq dense from 1) and the Record they fold into, for a store
// that replaces a session's events at once.
func Events(envs []agentstream.Envelope) ([]Event, store.Record, error) {
	var rec store.Record
	out := make([]Event, 0, len(envs))
	for i := range envs {
		e := &envs[i]
		if e.Seq != int64(i+1) || e.Payload == nil {
			return nil, rec, fmt.Errorf("%w: event %d has seq %d", store.ErrSeq, i+1, e.Seq)
		}
		ev := Event{Seq: e.Seq, Type: e.Type(), Body: store.AppendBody(nil, e), Text: store.SearchText(e)}
		if !e.TS.IsZero() {
			ev.TS = time.UnixMilli(e.TS.UnixMilli())
		}
		rec.Observe(e)
		out = append(out, ev)
	}
	return out, rec, nil
}

// A Mark is where a store's follower stands in one session: the seq of the
// last event it published and whether it published the session's end.
type Mark struct {
	Seq   int64
	Ended bool
}

// Marks holds a follower's marks by the store's session key.
type Marks map[int64]*Mark

// Of returns the mark of a session, a new one at the start when it has none.
func (m Marks) Of(sid int64) *Mark {
	k := m[sid]
	if k == nil {
		k = &Mark{}
		m[sid] = k
	}
	return k
}

// KeepUp moves the mark of a session that w writes in the follower's own
// store past what w published, which that follower does not publish
// again; once w is done, past the end too. It reports whether w is done.
func (k *Mark) KeepUp(w *Writer) bool {
	done := w.Done() // first: a writer that is done published all
	k.Seq = max(k.Seq, w.Published())
	k.Ended = done
	return done
}
