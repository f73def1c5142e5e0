package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/internal/batch"
)

// Writer records one session; see store.Writer for the contract.
//
// Acknowledged means committed: Acked returns the seq of the last event
// whose transaction has committed (in WAL mode with synchronous=NORMAL, a
// committed transaction survives a crash of the process; a power loss may
// lose the last ones). Handle and Line buffer; a batch is committed when it
// holds Options.BatchSize entries (in a goroutine of the writer, so that
// the caller goes on meanwhile), or Options.FlushInterval after its first
// entry, or on Flush and Close.
//
// Committed events are then published, in order, to the Store's publisher
// (see Follow); live deltas are published in their place among them, never
// stored, and never wait for a commit when nothing is buffered.
type Writer struct {
	w   *batch.Writer
	sid int64
}

var _ store.Writer = (*Writer)(nil)

// Session returns the session id.
func (w *Writer) Session() string { return w.w.Session() }

// Handle takes one envelope of the session: a stored event whose Seq is
// LastSeq()+1 (or 0, to have it assigned) or a replay of a stored one, or
// a live delta (agentstream.IsLive), which is published and not stored.
func (w *Writer) Handle(ctx context.Context, e agentstream.Envelope) error { return w.w.Handle(ctx, e) }

// Line keeps one native line.
func (w *Writer) Line(ctx context.Context, l store.Line) error { return w.w.Line(ctx, l) }

// LastLine returns the number of the last line handed over for stream.
func (w *Writer) LastLine(stream string) int64 { return w.w.LastLine(stream) }

// LastSeq returns the seq of the last stored event handed over.
func (w *Writer) LastSeq() int64 { return w.w.LastSeq() }

// Acked returns the seq of the last committed event.
func (w *Writer) Acked() int64 { return w.w.Acked() }

// Flush commits what is buffered and publishes it.
func (w *Writer) Flush(ctx context.Context) error { return w.w.Flush(ctx) }

// Close commits what is buffered, then sets the session's final status:
// that of its latest session.ended event, or interrupted when it has none.
// EndedAt is now.
func (w *Writer) Close(ctx context.Context) error { return w.CloseAt(ctx, time.Now()) }

// CloseAt is Close with the session's end time given, for a session read
// from a recording.
func (w *Writer) CloseAt(ctx context.Context, endedAt time.Time) error {
	return w.w.CloseAt(ctx, endedAt)
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
	return s.newWriter(sid, batch.Start{Session: ns.ID, Record: store.Record{Harness: ns.Harness, Cwd: ns.Cwd}}), nil
}

// ErrRunning is returned by Resume for a session whose writer is alive; it
// is store.ErrRunning.
var ErrRunning = store.ErrRunning

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
	sid, sess, err := scanSession(s.write.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	switch sess.Status {
	case store.StatusRunning:
		return nil, fmt.Errorf("%w: %s", ErrRunning, id)
	case store.StatusInterrupted:
	default:
		return nil, fmt.Errorf("%w: %s has %s", store.ErrClosed, id, sess.Status)
	}
	var endStatus sql.NullString
	if err := s.write.QueryRowContext(ctx, `SELECT end_status FROM sessions WHERE sid = ?`, sid).Scan(&endStatus); err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	st := batch.Start{Session: id, LastSeq: sess.LastSeq, Record: store.RecordOf(sess, endStatus.String), Resumed: true}
	rows, err := s.write.QueryContext(ctx, `SELECT stream, max(n) FROM lines WHERE sid = ? GROUP BY stream`, sid)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	for rows.Next() {
		var stream string
		var n int64
		if err := rows.Scan(&stream, &n); err == nil {
			if i, ok := batch.StreamIndex(stream); ok {
				st.LastLine[i] = n
			}
		}
	}
	rows.Close()
	if err := store.FoldStoredUsage(ctx, s, id, &st.Record); err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET status = 'running', ended_at = NULL,
		owner_host = ?, owner_pid = ?, heartbeat_at = ?,
		tick = (SELECT max(tick) + 1 FROM sessions)
		WHERE sid = ? AND status = 'interrupted' AND last_seq = ?`, s.host, s.pid, time.Now().UnixMilli(), sid, sess.LastSeq)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resume %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, fmt.Errorf("%w: %s", ErrRunning, id)
	}
	return s.newWriter(sid, st), nil
}

func (s *Store) newWriter(sid int64, st batch.Start) *Writer {
	w := &Writer{sid: sid}
	w.w = batch.New(&backend{s: s, sid: sid, id: st.Session}, st, batch.Options{
		Name: "sqlite", BatchSize: s.opts.BatchSize, MaxBatchBytes: maxBatchBytes,
		FlushInterval: s.opts.FlushInterval, Heartbeat: s.opts.Heartbeat, Publisher: s.publisher,
	})
	s.mu.Lock()
	s.local[sid] = w
	s.mu.Unlock()
	return w
}

// maxBatchBytes makes a batch of native lines commit once it holds this
// many bytes, whatever the count.
const maxBatchBytes = 8 << 20

// backend is the SQLite side of one session's writer.
type backend struct {
	s   *Store
	sid int64
	id  string
}

func (b *backend) Heartbeat(ctx context.Context) error {
	_, err := b.s.write.ExecContext(ctx, `UPDATE sessions SET heartbeat_at = ? WHERE sid = ? AND status = 'running'`,
		time.Now().UnixMilli(), b.sid)
	return err
}

func (b *backend) End(ctx context.Context, status string, endedAt time.Time) error {
	_, err := b.s.write.ExecContext(ctx, `UPDATE sessions SET status = ?, ended_at = ?,
		owner_pid = NULL, repair = 0, tick = (SELECT max(tick) + 1 FROM sessions) WHERE sid = ?`,
		status, endedAt.UnixMilli(), b.sid)
	b.s.mu.Lock()
	if b.s.pub.Load() == nil {
		// No follower will collect it.
		delete(b.s.local, b.sid)
	}
	b.s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("sqlite: close session %s: %w", b.id, err)
	}
	return nil
}

func (b *backend) Body(ctx context.Context, seq int64) ([]byte, error) {
	body, err := storedBody(ctx, b.s.write, eventKey(b.sid, seq))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: event %d of %s: %w", seq, b.id, err)
	}
	return body, nil
}

func (b *backend) Line(ctx context.Context, stream string, n int64) (store.Line, error) {
	return b.s.line(ctx, b.s.write, b.sid, b.id, stream, n)
}

func (b *backend) Commit(ctx context.Context, bt *batch.Batch) error {
	return b.s.commit(ctx, b.sid, b.id, bt)
}

const eventCols = 4

// commitHook, when set (by a test), runs first in each batch's commit,
// and fails it with its error.
var commitHook func(tx *sql.Tx, session string) error

// A pendingCommit is a session's batch waiting in the group commit.
type pendingCommit struct {
	sid  int64
	id   string
	b    *batch.Batch
	err  error
	size int           // bytes written, once committed
	done chan struct{} // closed once committed, or to make it the leader
	lead bool          // it commits the group (set before done is closed)
}

// commit writes a batch. The batches of several sessions that wait for
// the write connection at once are committed together, in one transaction
// (a group commit): each in a savepoint of its own, so that one that fails
// fails alone. The writer that finds no commit under way leads: it
// commits what waits, itself included, then hands the lead to the first
// batch that came meanwhile. A transaction's commit writes the pages it
// changed to the log, so many small commits (many sessions of a few lines
// each) cost far more than one of them all.
func (s *Store) commit(ctx context.Context, sid int64, id string, b *batch.Batch) error {
	p := &pendingCommit{sid: sid, id: id, b: b, done: make(chan struct{})}
	s.groupMu.Lock()
	s.groupQ = append(s.groupQ, p)
	if s.groupBusy {
		s.groupMu.Unlock()
		<-p.done
		if !p.lead {
			return p.err
		}
	} else {
		s.groupBusy = true
		s.groupMu.Unlock()
	}
	s.groupMu.Lock()
	group := s.groupQ
	s.groupQ = nil
	s.groupMu.Unlock()
	if len(group) > 1 {
		s.grouped.Add(1)
	}

	// The group's commit outlives a caller that gives up: the others wait
	// for it.
	s.commitGroup(context.WithoutCancel(ctx), group)

	s.groupMu.Lock()
	if len(s.groupQ) > 0 {
		next := s.groupQ[0]
		next.lead = true
		close(next.done)
	} else {
		s.groupBusy = false
	}
	s.groupMu.Unlock()
	indexed := false
	for _, q := range group {
		if q.err == nil {
			s.committed(q.size)
			indexed = indexed || len(q.b.Events) > 0
		}
		if q != p {
			close(q.done)
		}
	}
	if indexed {
		s.kickIndex()
	}
	return p.err
}

// commitGroup writes the batches of group in one transaction, setting the
// error of each (and its size, committed).
func (s *Store) commitGroup(ctx context.Context, group []*pendingCommit) {
	fail := func(err error) {
		for _, q := range group {
			if q.err == nil {
				q.err = err
			}
		}
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		fail(fmt.Errorf("sqlite: commit: %w", err))
		return
	}
	defer tx.Rollback()
	alone := len(group) == 1
	for _, q := range group {
		if !alone {
			if _, err := tx.ExecContext(ctx, `SAVEPOINT batch`); err != nil {
				fail(fmt.Errorf("sqlite: commit: %w", err))
				return
			}
		}
		q.size, q.err = s.commitBatch(ctx, tx, q.sid, q.id, q.b)
		if alone {
			break
		}
		if q.err != nil {
			if _, err := tx.ExecContext(ctx, `ROLLBACK TO batch`); err != nil {
				fail(fmt.Errorf("sqlite: commit: %w", err))
				return
			}
		}
		if _, err := tx.ExecContext(ctx, `RELEASE batch`); err != nil {
			fail(fmt.Errorf("sqlite: commit: %w", err))
			return
		}
	}
	if alone && group[0].err != nil {
		return
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("sqlite: commit: %w", err))
	}
}

// commitBatch writes one session's batch in tx, and returns about how many
// bytes it wrote.
func (s *Store) commitBatch(ctx context.Context, tx *sql.Tx, sid int64, id string, b *batch.Batch) (int, error) {
	if commitHook != nil {
		if err := commitHook(tx, id); err != nil {
			return 0, err
		}
	}
	if err := s.insertEvents(ctx, tx, sid, id, b.Events); err != nil {
		return 0, err
	}
	lineBytes, err := s.insertLines(ctx, tx, sid, id, b.Lines)
	if err != nil {
		return 0, err
	}
	now := time.Now().UnixMilli()
	if f := b.Fields; f != nil {
		r := recordColumns(f)
		_, err = tx.StmtContext(ctx, s.updateStmts[0]).ExecContext(ctx, append(r, b.LastSeq, now, sid)...)
	} else {
		_, err = tx.StmtContext(ctx, s.updateStmts[1]).ExecContext(ctx, now, sid)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: commit session: %w", err)
	}
	n := 256 // the session's row and its indexes
	for i := range b.Events {
		n += len(b.Events[i].Body) + 32
	}
	return n + lineBytes, nil
}

// recordColumns returns the values of the session record's columns that a
// commit sets, from harness to cost_usd.
func recordColumns(f *store.Fields) []any {
	usage, _ := json.Marshal(f.Usage)
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	var cost any
	if f.Usage.CostUSD != nil {
		cost = *f.Usage.CostUSD
	}
	u := &f.Usage
	return []any{nullStr(f.Harness), nullStr(f.Version), nullStr(f.Model), nullStr(f.Title), nullStr(f.Cwd),
		nullStr(f.EndStatus), nullStr(f.Reason), nullStr(f.Error), string(usage),
		opt(u.InputTokens), opt(u.OutputTokens), opt(u.CacheReadTokens), opt(u.CacheCreationTokens),
		opt(u.ReasoningTokens), cost}
}

// insertSizes are the row counts of the prepared INSERT statements; a batch
// is cut greedily into statements of these sizes.
var insertSizes = []int{128, 32, 8, 1}

// insertEvents inserts events; one whose key is taken must hold the same
// body, else the commit fails with store.ErrConflict. The full-text index
// is left to the indexer (see indexer).
func (s *Store) insertEvents(ctx context.Context, tx *sql.Tx, sid int64, id string, evs []batch.Event) error {
	args := make([]any, 0, insertSizes[0]*eventCols)
	var (
		inserted int64
		bufp     = getEncodeBuf()
		buf      = *bufp // the compressed bodies of one statement
	)
	defer func() { putEncodeBuf(bufp, buf) }()
	for rows := evs; len(rows) > 0; {
		k := 0
		for insertSizes[k] > len(rows) {
			k++
		}
		n := insertSizes[k]
		args = args[:0]
		buf = buf[:0]
		for i := range rows[:n] {
			ev := &rows[i]
			var ts any
			if !ev.TS.IsZero() {
				ts = ev.TS.UnixMilli()
			}
			var body []byte
			body, buf = encodeBody(buf, ev.Body)
			args = append(args, eventKey(sid, ev.Seq), ts, ev.Type, body)
		}
		res, err := tx.StmtContext(ctx, s.insertStmts[k]).ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("sqlite: commit events: %w", err)
		}
		c, _ := res.RowsAffected()
		inserted += c
		rows = rows[n:]
	}
	if inserted == int64(len(evs)) {
		return nil
	}
	// Some keys were taken: each must hold the same body.
	for i := range evs {
		body, err := storedBody(ctx, tx, eventKey(sid, evs[i].Seq))
		if err != nil {
			return fmt.Errorf("sqlite: commit events: %w", err)
		}
		if string(body) != string(evs[i].Body) {
			return fmt.Errorf("%w: session %s holds another event at seq %d", store.ErrConflict, id, evs[i].Seq)
		}
	}
	return nil
}

// storedBody returns the body of the event at key, or sql.ErrNoRows.
func storedBody(ctx context.Context, q querier, key int64) ([]byte, error) {
	var body []byte
	if err := q.QueryRowContext(ctx, `SELECT body FROM events WHERE key = ?`, key).Scan(&body); err != nil {
		return nil, err
	}
	return decodeBody(body)
}

// insertLines inserts native lines, compressing the long ones (see
// encodeData), and returns about how many bytes it wrote; a line whose
// number is taken must hold the same bytes, else the commit fails with
// store.ErrConflict.
func (s *Store) insertLines(ctx context.Context, tx *sql.Tx, sid int64, id string, lines []store.Line) (int, error) {
	args := make([]any, 0, insertSizes[0]*lineCols)
	var (
		inserted int64
		written  int
		bufp     = getEncodeBuf()
		buf      = *bufp // the compressed lines of one statement
	)
	defer func() { putEncodeBuf(bufp, buf) }()
	for rows := lines; len(rows) > 0; {
		k := 0
		for insertSizes[k] > len(rows) {
			k++
		}
		n := insertSizes[k]
		args = args[:0]
		buf = buf[:0]
		for i := range rows[:n] {
			l := &rows[i]
			var sum any
			if len(l.SHA256) > 0 {
				sum = l.SHA256
			}
			data := l.Data
			if data == nil {
				data = []byte{}
			}
			var codec int
			data, buf, codec = encodeData(buf, data)
			args = append(args, sid, l.Stream, l.N, l.Size, sum, msOrNull(l.TS), data, codecArg(codec))
			written += len(data) + 64
		}
		res, err := tx.StmtContext(ctx, s.lineStmts[k]).ExecContext(ctx, args...)
		if err != nil {
			return 0, fmt.Errorf("sqlite: commit lines: %w", err)
		}
		c, _ := res.RowsAffected()
		inserted += c
		rows = rows[n:]
	}
	if inserted == int64(len(lines)) {
		return written, nil
	}
	// Some numbers were taken: each must hold the same bytes.
	for i := range lines {
		l := &lines[i]
		stored, err := s.line(ctx, tx, sid, id, l.Stream, l.N)
		if err != nil {
			return 0, fmt.Errorf("sqlite: commit lines: %w", err)
		}
		if !store.SameLine(&stored, l) {
			return 0, fmt.Errorf("%w: session %s holds another %s line %d", store.ErrConflict, id, l.Stream, l.N)
		}
	}
	return written, nil
}

const lineCols = 8

// prepare prepares the statements writers use, on the write connection.
func (s *Store) prepare(ctx context.Context) error {
	for k, n := range insertSizes {
		var b strings.Builder
		b.WriteString(`INSERT INTO events (key, ts, type, body) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?)")
		}
		b.WriteString(" ON CONFLICT (key) DO NOTHING")
		st, err := s.write.PrepareContext(ctx, b.String())
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.insertStmts[k] = st
	}
	for k, n := range insertSizes {
		var b strings.Builder
		b.WriteString(`INSERT INTO lines (sid, stream, n, size, sha256, ts, data, codec) VALUES `)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,?,?,?,?,?,?)")
		}
		b.WriteString(" ON CONFLICT DO NOTHING")
		st, err := s.write.PrepareContext(ctx, b.String())
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.lineStmts[k] = st
	}
	for k, q := range []string{`UPDATE sessions SET
			harness = coalesce(?, harness), version = coalesce(?, version), model = coalesce(?, model),
			title = coalesce(?, title), cwd = coalesce(?, cwd),
			end_status = ?, reason = ?, error = ?, usage = ?,
			input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?,
			reasoning_tokens = ?, cost_usd = ?,
			last_seq = max(last_seq, ?), heartbeat_at = ?, tick = (SELECT max(tick) + 1 FROM sessions)
			WHERE sid = ?`, `UPDATE sessions SET heartbeat_at = ?,
			tick = (SELECT max(tick) + 1 FROM sessions) WHERE sid = ?`} {
		st, err := s.write.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.updateStmts[k] = st
	}
	for k, n := range insertSizes {
		q := `INSERT INTO events_fts (rowid, text) VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?),", n), ",")
		st, err := s.write.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: prepare: %w", err)
		}
		s.ftsStmts[k] = st
	}
	return nil
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
	evs, rec, err := batch.Events(envs)
	if err != nil {
		return err
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
	if err := deleteIndexed(ctx, tx, sid); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	if err := s.insertEvents(ctx, tx, sid, id, evs); err != nil {
		return err
	}
	f := rec.Fields()
	r := recordColumns(&f)
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET
		harness = coalesce(?, harness), version = ?, model = ?, title = ?, cwd = coalesce(?, cwd),
		end_status = ?, reason = ?, error = ?, usage = ?,
		input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_creation_tokens = ?,
		reasoning_tokens = ?, cost_usd = ?, last_seq = ?, indexed_seq = 0,
		status = CASE WHEN status = 'interrupted' THEN status ELSE coalesce(?, 'interrupted') END,
		tick = (SELECT max(tick) + 1 FROM sessions)
		WHERE sid = ?`, append(r, int64(len(envs)), r[5], sid)...); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: replace events of %s: %w", id, err)
	}
	s.committed(checkpointBytes) // the old events' pages too
	s.kickIndex()
	return nil
}

// deleteIndexed takes a session's indexed events out of the full-text
// index, so that the index holds no row for an event that is gone (a
// session created later may be given the same sid, and so the same keys).
func deleteIndexed(ctx context.Context, tx *sql.Tx, sid int64) error {
	var indexed int64
	if err := tx.QueryRowContext(ctx, `SELECT indexed_seq FROM sessions WHERE sid = ?`, sid).Scan(&indexed); err != nil {
		return err
	}
	if indexed == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM events_fts WHERE rowid > ? AND rowid <= ?`,
		eventKey(sid, 0), eventKey(sid, indexed))
	return err
}

// SetStartedAt sets a session's start time, for a session read from a
// recording whose start is known only once it is read to its end.
func (s *Store) SetStartedAt(ctx context.Context, id string, t time.Time) error {
	res, err := s.write.ExecContext(ctx, `UPDATE sessions SET started_at = ?,
		tick = (SELECT max(tick) + 1 FROM sessions) WHERE id = ?`, t.UnixMilli(), id)
	if err != nil {
		return fmt.Errorf("sqlite: set start: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("sqlite: set start: %w", store.ErrNotFound)
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

// DeleteSession removes a session that is not running, with its events and
// native lines, in one transaction; it returns store.ErrNotFound for an
// unknown one. It is how a session is replaced by a new reading of a file
// that changed since it was imported.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	var (
		sid    int64
		status string
	)
	err := s.write.QueryRowContext(ctx, `SELECT sid, status FROM sessions WHERE id = ?`, id).Scan(&sid, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	if status == store.StatusRunning {
		return fmt.Errorf("%w: %s", ErrRunning, id)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	defer tx.Rollback()
	if err := deleteIndexed(ctx, tx, sid); err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`DELETE FROM events WHERE key > ? AND key <= ?`, []any{eventKey(sid, 0), eventKey(sid, maxSeq)}},
		{`DELETE FROM lines WHERE sid = ?`, []any{sid}},
		{`DELETE FROM sessions WHERE sid = ?`, []any{sid}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("sqlite: delete %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	s.committed(checkpointBytes)
	return nil
}
