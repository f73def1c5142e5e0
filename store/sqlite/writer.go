package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// Writer records one session; see store.Writer for the contract.
//
// Acknowledged means committed: Acked returns the seq of the last event
// whose transaction has committed (in WAL mode with synchronous=NORMAL, a
// committed transaction survives a crash of the process; a power loss may
// lose the last ones). Handle and Line buffer; a batch is committed when it
// holds Options.BatchSize entries (in the goroutine that filled it), or
// Options.FlushInterval after its first entry (in a timer goroutine that
// Close waits for), or on Flush and Close.
//
// Committed events are then published, in order, to the Store's publisher
// (see Follow); live deltas are published in their place among them, never
// stored, and never wait for a commit when nothing is buffered.
type Writer struct {
	s   *Store
	sid int64
	id  string

	mu         sync.Mutex
	pending    []pendingEvent
	stored     int // stored events in pending
	lines      []store.Line
	lineBytes  int
	lastSeq    int64
	lastLine   [2]int64
	rec        record
	recDirty   bool
	inflight   bool
	timerArmed bool
	timer      *time.Timer
	closed     bool
	err        error

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

// record is what a writer keeps of the session row as events arrive.
type record struct {
	harness, version, model, title, cwd string
	titleFromPrompt                     bool // the title was taken from the first prompt
	endStatus, reason, errMsg           string
	folder                              agentstream.UsageFolder
}

func (r *record) observe(e *agentstream.Envelope) {
	switch p := e.Payload.(type) {
	case *agentstream.SessionStarted:
		set(&r.harness, p.Harness)
		set(&r.model, p.Model)
		set(&r.version, p.Version)
		set(&r.cwd, p.Cwd)
	case *agentstream.SessionUpdated:
		set(&r.model, p.Model)
		set(&r.cwd, p.Cwd)
	case *agentstream.SessionTitle:
		// A title taken from the first prompt never replaces the
		// harness's own.
		if p.Source != agentstream.TitlePrompt || r.title == "" || r.titleFromPrompt {
			set(&r.title, p.Title)
			r.titleFromPrompt = p.Source == agentstream.TitlePrompt && p.Title != ""
		}
	case *agentstream.SessionEnded:
		r.endStatus, r.reason, r.errMsg = p.Status, p.Reason, p.Error
		if !store.ValidStatus(r.endStatus) || r.endStatus == store.StatusRunning {
			r.endStatus = store.StatusFailed
		}
	}
	r.folder.AddEnvelope(e)
}

func set(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// pendingEvent is a stored event waiting for its commit, or a live delta
// waiting for the stored events before it.
type pendingEvent struct {
	seq       int64 // 0 for a live delta
	prev      int64
	typ       string
	ts        int64
	hasTS     bool
	harness   string
	turn      int64
	origin    string
	parent    string
	payload   []byte
	srcStream string
	srcLine   int64
	hasSrc    bool
	data      []byte // envelope JSON of a live delta
}

func streamIndex(stream string) (int, bool) {
	switch stream {
	case store.Stdout:
		return 0, true
	case store.Stderr:
		return 1, true
	}
	return 0, false
}

// Create creates a session, owned by this process, and returns its writer.
func (s *Store) Create(ctx context.Context, ns store.NewSession) (store.Writer, error) {
	return s.CreateWriter(ctx, ns)
}

// CreateWriter is Create returning the concrete type.
func (s *Store) CreateWriter(ctx context.Context, ns store.NewSession) (*Writer, error) {
	now := time.Now()
	if ns.ID == "" {
		ns.ID = store.NewID(now)
	}
	if !store.ValidID(ns.ID) {
		return nil, fmt.Errorf("sqlite: invalid session id %q", ns.ID)
	}
	if ns.StartedAt.IsZero() {
		ns.StartedAt = now
	}
	var command, labels any
	if ns.Command != nil {
		b, _ := json.Marshal(ns.Command)
		command = string(b)
	}
	if ns.Labels != nil {
		b, _ := json.Marshal(ns.Labels)
		labels = string(b)
	}
	var sid int64
	err := s.write.QueryRowContext(ctx, `INSERT INTO sessions
		(id, harness, protocol, cwd, command, status, started_at, parent, labels,
		 owner_host, owner_pid, heartbeat_at, tick)
		VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?,
		 (SELECT coalesce(max(tick), 0) + 1 FROM sessions))
		ON CONFLICT (id) DO NOTHING
		RETURNING sid`,
		ns.ID, nullStr(ns.Harness), nullStr(ns.Protocol), nullStr(ns.Cwd), command,
		ns.StartedAt.UnixMilli(), nullStr(ns.Parent), labels, s.host, s.pid, now.UnixMilli(),
	).Scan(&sid)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: session %s already exists", ns.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: create session: %w", err)
	}
	w := s.newWriter(sid, ns.ID, 0)
	w.rec.harness, w.rec.cwd = ns.Harness, ns.Cwd
	return w, nil
}

// ErrRunning is returned by Resume for a session whose writer is alive.
var ErrRunning = errors.New("sqlite: session is running")

// Resume returns a writer continuing a session that is not running (one
// that was interrupted), taking it over for this process. It returns
// store.ErrClosed for a session that ended normally, ErrRunning for one
// whose writer is alive, and store.ErrNotFound for an unknown one.
func (s *Store) Resume(ctx context.Context, id string) (store.Writer, error) {
	return s.ResumeWriter(ctx, id)
}

// ResumeWriter is Resume returning the concrete type.
func (s *Store) ResumeWriter(ctx context.Context, id string) (*Writer, error) {
	if _, err := s.Reap(ctx); err != nil {
		return nil, err
	}
	var (
		sid                                 int64
		status                              string
		lastSeq                             int64
		harness, version, model, title, cwd sql.NullString
		endStatus, reason, errMsg           sql.NullString
	)
	err := s.write.QueryRowContext(ctx, `SELECT sid, status, last_seq, harness, version, model, title, cwd,
		end_status, reason, error FROM sessions WHERE id = ?`, id).Scan(
		&sid, &status, &lastSeq, &harness, &version, &model, &title, &cwd, &endStatus, &reason, &errMsg)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	switch status {
	case store.StatusRunning:
		return nil, fmt.Errorf("%w: %s", ErrRunning, id)
	case store.StatusInterrupted:
	default:
		return nil, fmt.Errorf("%w: %s has %s", store.ErrClosed, id, status)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET status = 'running', ended_at = NULL,
		owner_host = ?, owner_pid = ?, heartbeat_at = ?,
		tick = (SELECT max(tick) + 1 FROM sessions)
		WHERE sid = ? AND status = 'interrupted'`, s.host, s.pid, time.Now().UnixMilli(), sid)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("%w: %s", ErrRunning, id)
	}
	w := s.newWriter(sid, id, lastSeq)
	w.rec = record{harness: harness.String, version: version.String, model: model.String,
		title: title.String, cwd: cwd.String, endStatus: endStatus.String, reason: reason.String, errMsg: errMsg.String}
	rows, err := s.read.QueryContext(ctx, `SELECT stream, max(n) FROM lines WHERE sid = ? GROUP BY stream`, sid)
	if err != nil {
		w.abandon()
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	for rows.Next() {
		var stream string
		var n int64
		if err := rows.Scan(&stream, &n); err == nil {
			if i, ok := streamIndex(stream); ok {
				w.lastLine[i] = n
			}
		}
	}
	rows.Close()
	// The usage recap is folded again from the stored events.
	rows, err = s.read.QueryContext(ctx, `SELECT type, payload, parent_call_id FROM events
		WHERE key > ? AND key <= ? AND type IN ('usage', 'session.started', 'session.updated', 'turn.started', 'turn.ended')
		ORDER BY key`, eventKey(sid, 0), eventKey(sid, maxSeq))
	if err != nil {
		w.abandon()
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	for rows.Next() {
		var typ string
		var payload []byte
		var parent sql.NullString
		if err := rows.Scan(&typ, &payload, &parent); err != nil {
			continue
		}
		if p, err := agentstream.DecodePayload(typ, payload); err == nil {
			w.rec.folder.AddEnvelope(&agentstream.Envelope{Payload: p, ParentCallID: parent.String})
		}
	}
	rows.Close()
	return w, nil
}

func (s *Store) newWriter(sid int64, id string, lastSeq int64) *Writer {
	w := &Writer{s: s, sid: sid, id: id, lastSeq: lastSeq,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{})}
	w.acked.Store(lastSeq)
	w.published.Store(lastSeq)
	w.lastWrite.Store(time.Now().UnixMilli())
	s.mu.Lock()
	s.local[sid] = w
	s.mu.Unlock()
	go w.loop()
	return w
}

// abandon releases a writer that was never used.
func (w *Writer) abandon() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.loopDone
	w.s.mu.Lock()
	delete(w.s.local, w.sid)
	w.s.mu.Unlock()
}

// loop is the writer's goroutine, from creation to Close: it commits the
// batches that Handle, Line and the flush timer hand it, and while the
// writer is idle it refreshes the session's heartbeat so that Reap can tell
// a quiet session from one whose writer is gone.
func (w *Writer) loop() {
	defer close(w.loopDone)
	t := time.NewTicker(w.s.opts.Heartbeat)
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
		if now.UnixMilli()-w.lastWrite.Load() < w.s.opts.Heartbeat.Milliseconds()/2 {
			continue
		}
		if _, err := w.s.write.Exec(`UPDATE sessions SET heartbeat_at = ? WHERE sid = ? AND status = 'running'`,
			now.UnixMilli(), w.sid); err == nil {
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

// LastSeq returns the seq of the last stored event handed over.
func (w *Writer) LastSeq() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastSeq
}

// LastLine returns the number of the last line handed over for stream.
func (w *Writer) LastLine(stream string) int64 {
	i, ok := streamIndex(stream)
	if !ok {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastLine[i]
}

// Handle takes one envelope of the session. A stored event's Seq must be
// LastSeq()+1 (or 0, to have it assigned); a live delta (agentstream.IsLive)
// is published and not stored.
func (w *Writer) Handle(ctx context.Context, e agentstream.Envelope) error {
	typ := e.Type()
	if typ == "" {
		return errors.New("sqlite: envelope without a payload")
	}
	w.mu.Lock()
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return err
	}
	if agentstream.IsLive(typ) {
		e.Seq = 0
		ev := pendingEvent{prev: w.lastSeq, typ: typ, data: e.AppendJSON(nil)}
		if len(w.pending) == 0 && !w.inflight {
			// Nothing before it waits for a commit: publish at once.
			if p := w.s.publisher(); p != nil {
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
	if e.Seq != w.lastSeq+1 {
		last := w.lastSeq
		w.mu.Unlock()
		return fmt.Errorf("%w: session %s got seq %d after %d", store.ErrSeq, w.id, e.Seq, last)
	}
	if e.Seq > maxSeq {
		w.mu.Unlock()
		return fmt.Errorf("sqlite: session %s: seq %d is too large", w.id, e.Seq)
	}
	harness := e.Harness
	ev := pendingEvent{
		seq: e.Seq, typ: typ, harness: harness, turn: e.Turn, origin: e.Origin,
		parent: e.ParentCallID, payload: e.Payload.AppendJSON(nil),
	}
	if !e.TS.IsZero() {
		ev.ts, ev.hasTS = e.TS.UnixMilli(), true
	}
	if ev.origin == "" {
		ev.origin = agentstream.OriginLive
	}
	if e.Source != nil {
		ev.srcStream, ev.srcLine, ev.hasSrc = e.Source.Stream, e.Source.Line, true
	}
	w.rec.observe(&e)
	if w.rec.harness == "" {
		w.rec.harness = harness
	}
	w.recDirty = true
	w.lastSeq = e.Seq
	w.pending = append(w.pending, ev)
	w.stored++
	return w.filled(ctx)
}

// filled commits a full batch: in the writer's goroutine, so that the
// caller goes on preparing the next batch while this one commits, or in
// the caller's goroutine when the writer's goroutine is too far behind.
// The caller holds w.mu, which filled releases.
func (w *Writer) filled(ctx context.Context) error {
	n := w.stored + len(w.lines)
	switch {
	case n >= 4*w.s.opts.BatchSize || w.lineBytes >= 4*maxBatchBytes:
		w.mu.Unlock()
		return w.Flush(ctx)
	case n >= w.s.opts.BatchSize || w.lineBytes >= maxBatchBytes:
		w.mu.Unlock()
		w.wake()
	default:
		w.arm()
		w.mu.Unlock()
	}
	return nil
}

// maxBatchBytes makes a batch of native lines commit once it holds this
// many bytes, whatever the count.
const maxBatchBytes = 8 << 20

// Line keeps one native line; a line at or below the stream's last line
// number is ignored.
func (w *Writer) Line(ctx context.Context, l store.Line) error {
	i, ok := streamIndex(l.Stream)
	if !ok {
		return fmt.Errorf("sqlite: unknown stream %q", l.Stream)
	}
	if l.N <= 0 {
		return fmt.Errorf("sqlite: line number %d", l.N)
	}
	w.mu.Lock()
	if err := w.usable(); err != nil {
		w.mu.Unlock()
		return err
	}
	if l.N <= w.lastLine[i] {
		w.mu.Unlock()
		return nil
	}
	l.Data = append([]byte{}, l.Data...)
	if l.Size < int64(len(l.Data)) {
		l.Size = int64(len(l.Data))
	}
	w.lastLine[i] = l.N
	w.lines = append(w.lines, l)
	w.lineBytes += len(l.Data)
	return w.filled(ctx)
}

func (w *Writer) usable() error {
	if w.closed {
		return store.ErrClosed
	}
	return w.err
}

// arm starts the flush timer for a batch that just got its first entry.
// The caller holds w.mu.
func (w *Writer) arm() {
	if w.timerArmed {
		return
	}
	w.timerArmed = true
	if w.timer == nil {
		w.timer = time.AfterFunc(w.s.opts.FlushInterval, w.wake)
	} else {
		w.timer.Reset(w.s.opts.FlushInterval)
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
	evs, lines, stored := w.pending, w.lines, w.stored
	w.pending, w.lines, w.stored, w.lineBytes = nil, nil, 0, 0
	var rec *recordSnapshot
	if w.recDirty {
		rec = w.rec.snapshot()
		w.recDirty = false
	}
	lastSeq := w.lastSeq
	w.inflight = true
	w.mu.Unlock()

	var err error
	if stored > 0 || len(lines) > 0 || rec != nil {
		err = w.s.commit(ctx, w.sid, evs, lines, rec, lastSeq)
	}
	w.mu.Lock()
	w.inflight = false
	if err != nil {
		w.err = err
		w.mu.Unlock()
		return err
	}
	w.mu.Unlock()
	if stored > 0 || len(lines) > 0 || rec != nil {
		w.lastWrite.Store(time.Now().UnixMilli())
	}
	w.acked.Store(lastSeq)
	if p := w.s.publisher(); p != nil {
		var buf []byte
		for i := range evs {
			ev := &evs[i]
			if ev.seq == 0 {
				p.Publish(store.Event{Session: w.id, Prev: ev.prev, Type: ev.typ, Data: ev.data})
				continue
			}
			buf = appendPending(buf[:0], w.id, ev)
			p.Publish(store.Event{Session: w.id, Seq: ev.seq, Type: ev.typ, Data: append([]byte(nil), buf...)})
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
	status := w.rec.endStatus
	w.mu.Unlock()
	if status == "" {
		status = store.StatusInterrupted
	}
	_, cerr := w.s.write.ExecContext(ctx, `UPDATE sessions SET status = ?, ended_at = ?,
		owner_pid = NULL, tick = (SELECT max(tick) + 1 FROM sessions) WHERE sid = ?`,
		status, endedAt.UnixMilli(), w.sid)
	if cerr != nil {
		cerr = fmt.Errorf("sqlite: close session %s: %w", w.id, cerr)
	}
	if p := w.s.publisher(); p != nil {
		p.End(w.id)
	}
	w.done.Store(true)
	w.s.mu.Lock()
	if w.s.pub.Load() == nil {
		// No follower will collect it.
		delete(w.s.local, w.sid)
	}
	w.s.mu.Unlock()
	return errors.Join(err, cerr)
}

// recordSnapshot is the session row as a commit writes it.
type recordSnapshot struct {
	harness, version, model, title, cwd                any
	endStatus, reason, errMsg                          any
	usage                                              string
	input, output, cacheRead, cacheCreation, reasoning any
	cost                                               any
}

func (r *record) snapshot() *recordSnapshot {
	recap := r.folder.Recap()
	usage, _ := json.Marshal(recap)
	model := r.model
	if model == "" {
		model = recap.Model
	}
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	var cost any
	if recap.CostUSD != nil {
		cost = *recap.CostUSD
	}
	return &recordSnapshot{
		harness: nullStr(r.harness), version: nullStr(r.version), model: nullStr(model),
		title: nullStr(r.title), cwd: nullStr(r.cwd),
		endStatus: nullStr(r.endStatus), reason: nullStr(r.reason), errMsg: nullStr(r.errMsg),
		usage: string(usage),
		input: opt(recap.InputTokens), output: opt(recap.OutputTokens),
		cacheRead: opt(recap.CacheReadTokens), cacheCreation: opt(recap.CacheCreationTokens),
		reasoning: opt(recap.ReasoningTokens), cost: cost,
	}
}

const eventCols = 10

// commit writes a batch in one transaction.
func (s *Store) commit(ctx context.Context, sid int64, evs []pendingEvent, lines []store.Line, rec *recordSnapshot, lastSeq int64) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	defer tx.Rollback()
	if err := s.insertEvents(ctx, tx, sid, evs); err != nil {
		return err
	}
	for i := range lines {
		l := &lines[i]
		var sum any
		if len(l.SHA256) > 0 {
			sum = l.SHA256
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO lines (sid, stream, n, size, sha256, ts, data)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			sid, l.Stream, l.N, l.Size, sum, msOrNull(l.TS), l.Data); err != nil {
			return fmt.Errorf("sqlite: commit line: %w", err)
		}
	}
	now := time.Now().UnixMilli()
	if rec != nil {
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET
			harness = coalesce(?, harness), version = coalesce(?, version), model = coalesce(?, model),
			title = coalesce(?, title), cwd = coalesce(?, cwd),
			end_status = ?, reason = ?, error = ?, usage = ?,
			input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?,
			reasoning_tokens = ?, cost_usd = ?,
			last_seq = ?, heartbeat_at = ?, tick = (SELECT max(tick) + 1 FROM sessions)
			WHERE sid = ?`,
			rec.harness, rec.version, rec.model, rec.title, rec.cwd,
			rec.endStatus, rec.reason, rec.errMsg, rec.usage,
			rec.input, rec.output, rec.cacheRead, rec.cacheCreation, rec.reasoning, rec.cost,
			lastSeq, now, sid)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE sessions SET heartbeat_at = ?,
			tick = (SELECT max(tick) + 1 FROM sessions) WHERE sid = ?`, now, sid)
	}
	if err != nil {
		return fmt.Errorf("sqlite: commit session: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// insertSizes are the row counts of the prepared INSERT statements; a batch
// is cut greedily into statements of these sizes.
var insertSizes = []int{64, 16, 4, 1}

// insertEvents inserts the stored events of evs.
func (s *Store) insertEvents(ctx context.Context, tx *sql.Tx, sid int64, evs []pendingEvent) error {
	var rows []pendingEvent
	for i := range evs {
		if evs[i].seq != 0 {
			rows = append(rows, evs[i])
		}
	}
	args := make([]any, 0, insertSizes[0]*eventCols)
	for len(rows) > 0 {
		k := 0
		for insertSizes[k] > len(rows) {
			k++
		}
		n := insertSizes[k]
		args = args[:0]
		for i := range rows[:n] {
			ev := &rows[i]
			var ts, srcStream, srcLine, parent any
			if ev.hasTS {
				ts = ev.ts
			}
			if ev.hasSrc {
				srcStream, srcLine = ev.srcStream, ev.srcLine
			}
			if ev.parent != "" {
				parent = ev.parent
			}
			var origin any
			if ev.origin != agentstream.OriginLive {
				origin = ev.origin
			}
			args = append(args, eventKey(sid, ev.seq), ts, ev.typ, nullStr(ev.harness), ev.turn, origin,
				parent, string(ev.payload), srcStream, srcLine)
		}
		if _, err := tx.StmtContext(ctx, s.insertStmts[k]).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("sqlite: commit events: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

// prepare prepares the statements writers use, on the write connection.
func (s *Store) prepare(ctx context.Context) error {
	for k, n := range insertSizes {
		var b strings.Builder
		b.WriteString(`INSERT INTO events (key, ts, type, harness, turn, origin, parent_call_id, payload, source_stream, source_line) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?,?,?,?,?,?,?)")
		}
		st, err := s.write.PrepareContext(ctx, b.String())
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.insertStmts[k] = st
	}
	return nil
}

// appendPending appends the envelope JSON of a stored pending event.
func appendPending(b []byte, session string, ev *pendingEvent) []byte {
	return appendEnvelope(b, envelopeFields{
		session: session, seq: ev.seq, ts: ev.ts, hasTS: ev.hasTS, harness: ev.harness,
		turn: ev.turn, origin: ev.origin, parent: ev.parent, typ: ev.typ, payload: ev.payload,
		srcStream: ev.srcStream, srcLine: ev.srcLine, hasSrc: ev.hasSrc,
	})
}

// ReplaceEvents replaces every stored event of a session that is not
// running by envs (stored events only, seq dense from 1), in one
// transaction, and updates the session's record from them. It is how a
// session is re-normalized by a newer adapter; the native lines stay.
func (s *Store) ReplaceEvents(ctx context.Context, id string, envs []agentstream.Envelope) error {
	var (
		sid    int64
		status string
	)
	err := s.write.QueryRowContext(ctx, `SELECT sid, status FROM sessions WHERE id = ?`, id).Scan(&sid, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	if status == store.StatusRunning {
		return fmt.Errorf("%w: %s", ErrRunning, id)
	}
	var rec record
	pending := make([]pendingEvent, 0, len(envs))
	for i, e := range envs {
		if e.Seq != int64(i+1) || e.Payload == nil {
			return fmt.Errorf("%w: event %d has seq %d", store.ErrSeq, i+1, e.Seq)
		}
		ev := pendingEvent{seq: e.Seq, typ: e.Type(), harness: e.Harness, turn: e.Turn, origin: e.Origin,
			parent: e.ParentCallID, payload: e.Payload.AppendJSON(nil)}
		if ev.origin == "" {
			ev.origin = agentstream.OriginLive
		}
		if !e.TS.IsZero() {
			ev.ts, ev.hasTS = e.TS.UnixMilli(), true
		}
		if e.Source != nil {
			ev.srcStream, ev.srcLine, ev.hasSrc = e.Source.Stream, e.Source.Line, true
		}
		rec.observe(&e)
		if rec.harness == "" {
			rec.harness = e.Harness
		}
		pending = append(pending, ev)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM events WHERE key > ? AND key <= ?`,
		eventKey(sid, 0), eventKey(sid, maxSeq)); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	if err := s.insertEvents(ctx, tx, sid, pending); err != nil {
		return err
	}
	snap := rec.snapshot()
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
		harness = coalesce(?, harness), version = ?, model = ?, title = ?, cwd = coalesce(?, cwd),
		end_status = ?, reason = ?, error = ?, usage = ?,
		input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?,
		reasoning_tokens = ?, cost_usd = ?, last_seq = ?,
		status = CASE WHEN status = 'interrupted' THEN status ELSE coalesce(?, 'interrupted') END,
		tick = (SELECT max(tick) + 1 FROM sessions)
		WHERE sid = ?`,
		snap.harness, snap.version, snap.model, snap.title, snap.cwd,
		snap.endStatus, snap.reason, snap.errMsg, snap.usage,
		snap.input, snap.output, snap.cacheRead, snap.cacheCreation, snap.reasoning, snap.cost,
		int64(len(envs)), snap.endStatus, sid); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	return nil
}

// SetProtocol records the protocol a session was read with, for a session
// created before its protocol was known (a run with protocol auto).
func (s *Store) SetProtocol(ctx context.Context, id, protocol string) error {
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET protocol = ? WHERE id = ?`, protocol, id)
	if err != nil {
		return fmt.Errorf("sqlite: set protocol: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: set protocol: %w", store.ErrNotFound)
	}
	return nil
}
