package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/internal/batch"
)

// Writer records one session; see store.Writer for the contract.
//
// Acknowledged means committed: Acked returns the seq of the last event
// whose transaction has committed, which then survives a crash of the
// writer and, with the server's default synchronous_commit, of the
// database server. Handle and Line buffer; a batch is committed in one
// transaction (one round trip for its statements) when it holds
// Options.BatchSize entries, Options.FlushInterval after its first entry,
// or on Flush and Close. Committed events are then published, in order, to
// the Store's publisher (see Follow).
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
		return nil, fmt.Errorf("postgres: invalid session id %q", ns.ID)
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
	err := s.pool.QueryRow(ctx, `INSERT INTO sessions
		(id, harness, protocol, cwd, command, status, started_at, parent, labels, owner_host, owner_pid, heartbeat_at)
		VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9, $10, now())
		ON CONFLICT (id) DO NOTHING
		RETURNING sid`,
		ns.ID, text(ns.Harness), text(ns.Protocol), text(ns.Cwd), command, ms(ns.StartedAt),
		text(ns.Parent), labels, text(s.host), s.pid,
	).Scan(&sid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: session %s already exists", ns.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: create session: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, '')`, channel); err != nil {
		return nil, fmt.Errorf("postgres: create session: %w", err)
	}
	return s.newWriter(sid, batch.Start{Session: ns.ID, Record: store.Record{Harness: ns.Harness, Cwd: ns.Cwd}}), nil
}

// Resume returns a writer continuing a session that is not running (one
// that was interrupted), taking it over for this process. It returns
// store.ErrClosed for a session that ended normally, store.ErrRunning for
// one whose writer is alive, and store.ErrNotFound for an unknown one.
func (s *Store) Resume(ctx context.Context, id string) (store.Writer, error) {
	return s.ResumeWriter(ctx, id)
}

// ResumeWriter is Resume returning the concrete type.
func (s *Store) ResumeWriter(ctx context.Context, id string) (*Writer, error) {
	if _, err := s.Reap(ctx); err != nil {
		return nil, err
	}
	sid, sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
	}
	switch sess.Status {
	case store.StatusRunning:
		return nil, fmt.Errorf("%w: %s", store.ErrRunning, id)
	case store.StatusInterrupted:
	default:
		return nil, fmt.Errorf("%w: %s has %s", store.ErrClosed, id, sess.Status)
	}
	var endStatus pgtype.Text
	if err := s.pool.QueryRow(ctx, `SELECT end_status FROM sessions WHERE sid = $1`, sid).Scan(&endStatus); err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
	}
	st := batch.Start{Session: id, LastSeq: sess.LastSeq, Record: store.RecordOf(sess, endStatus.String), Resumed: true}
	rows, err := s.pool.Query(ctx, `SELECT stream, max(n) FROM lines WHERE sid = $1 GROUP BY stream`, sid)
	if err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
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
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
	}
	if err := store.FoldStoredUsage(ctx, s, id, &st.Record); err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET status = 'running', ended_at = NULL,
		owner_host = $1, owner_pid = $2, heartbeat_at = now(), changed = pg_current_xact_id()
		WHERE sid = $3 AND status = 'interrupted' AND last_seq = $4`, text(s.host), s.pid, sid, sess.LastSeq)
	if err != nil {
		return nil, fmt.Errorf("postgres: resume %s: %w", id, err)
	}
	if tag.RowsAffected() != 1 {
		return nil, fmt.Errorf("%w: %s", store.ErrRunning, id)
	}
	return s.newWriter(sid, st), nil
}

func (s *Store) newWriter(sid int64, st batch.Start) *Writer {
	w := &Writer{sid: sid}
	w.w = batch.New(&backend{s: s, sid: sid, id: st.Session}, st, batch.Options{
		Name: "postgres", BatchSize: s.opts.BatchSize, MaxBatchBytes: maxBatchBytes,
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

// channel is the LISTEN/NOTIFY channel on which every commit is announced.
const channel = "agentstream"

// backend is the PostgreSQL side of one session's writer.
type backend struct {
	s   *Store
	sid int64
	id  string
}

func (b *backend) Heartbeat(ctx context.Context) error {
	_, err := b.s.pool.Exec(ctx, `UPDATE sessions SET heartbeat_at = now() WHERE sid = $1 AND status = 'running'`, b.sid)
	return err
}

func (b *backend) End(ctx context.Context, status string, endedAt time.Time) error {
	err := pgx.BeginFunc(ctx, b.s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE sessions SET status = $1, ended_at = $2, owner_pid = NULL,
			repair = false, changed = pg_current_xact_id() WHERE sid = $3`, status, ms(endedAt), b.sid); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, '')`, channel)
		return err
	})
	b.s.mu.Lock()
	if b.s.pub.Load() == nil {
		// No follower will collect it.
		delete(b.s.local, b.sid)
	}
	b.s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("postgres: close session %s: %w", b.id, err)
	}
	return nil
}

func (b *backend) Body(ctx context.Context, seq int64) ([]byte, error) {
	var body []byte
	err := b.s.pool.QueryRow(ctx, `SELECT body FROM events WHERE sid = $1 AND seq = $2`, b.sid, seq).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: event %d of %s: %w", seq, b.id, err)
	}
	return body, nil
}

func (b *backend) Line(ctx context.Context, stream string, n int64) (store.Line, error) {
	return line(ctx, b.s.pool, b.sid, b.id, stream, n)
}

// Commit writes a batch in one transaction: its statements go to the
// server in one round trip.
func (b *backend) Commit(ctx context.Context, bt *batch.Batch) error {
	err := pgx.BeginFunc(ctx, b.s.pool, func(tx pgx.Tx) error {
		return commit(ctx, tx, b.sid, b.id, bt.Events, bt.Lines, bt.Fields, bt.LastSeq, false)
	})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		err = fmt.Errorf("postgres: commit: %w", err)
	}
	return err
}

// eventArrays are the columns of a batch of events, as unnest reads them.
type eventArrays struct {
	seq  []int64
	ts   []pgtype.Timestamptz
	typ  []string
	body [][]byte
	text []pgtype.Text
}

func arrays(evs []batch.Event) eventArrays {
	a := eventArrays{seq: make([]int64, len(evs)), ts: make([]pgtype.Timestamptz, len(evs)),
		typ: make([]string, len(evs)), body: make([][]byte, len(evs)), text: make([]pgtype.Text, len(evs))}
	for i := range evs {
		a.seq[i], a.typ[i], a.body[i] = evs[i].Seq, evs[i].Type, evs[i].Body
		a.text[i] = searchText(evs[i].Text)
		if !evs[i].TS.IsZero() {
			a.ts[i] = pgtype.Timestamptz{Time: evs[i].TS, Valid: true}
		}
	}
	return a
}

// commit writes events, lines and the session record in tx; replace says
// that the record's fields are set as they are (not only where known) and
// the status from them, for ReplaceEvents.
func commit(ctx context.Context, tx pgx.Tx, sid int64, id string, evs []batch.Event, lines []store.Line,
	f *store.Fields, lastSeq int64, replace bool) error {
	var q pgx.Batch
	if len(evs) > 0 {
		a := arrays(evs)
		q.Queue(`INSERT INTO events (sid, seq, ts, type, body, text)
			SELECT $1, * FROM unnest($2::bigint[], $3::timestamptz[], $4::text[], $5::bytea[], $6::text[])
			ON CONFLICT DO NOTHING`, sid, a.seq, a.ts, a.typ, a.body, a.text)
	}
	if len(lines) > 0 {
		streams := make([]string, len(lines))
		ns := make([]int64, len(lines))
		sizes := make([]int64, len(lines))
		sums := make([][]byte, len(lines))
		tss := make([]pgtype.Timestamptz, len(lines))
		data := make([][]byte, len(lines))
		for i := range lines {
			l := &lines[i]
			streams[i], ns[i], sizes[i], data[i] = l.Stream, l.N, l.Size, l.Data
			if len(l.SHA256) > 0 {
				sums[i] = l.SHA256
			}
			if !l.TS.IsZero() {
				tss[i] = pgtype.Timestamptz{Time: time.UnixMilli(l.TS.UnixMilli()), Valid: true}
			}
			if data[i] == nil {
				data[i] = []byte{}
			}
		}
		q.Queue(`INSERT INTO lines (sid, stream, n, size, sha256, ts, data)
			SELECT $1, l.stream, l.n, l.size, l.sha256, l.ts, l.data
			FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bytea[], $6::timestamptz[], $7::bytea[])
			WITH ORDINALITY AS l (stream, n, size, sha256, ts, data, i) ORDER BY l.i
			ON CONFLICT DO NOTHING`, sid, streams, ns, sizes, sums, tss, data)
	}
	switch {
	case replace:
		r := recordColumns(f)
		q.Queue(`UPDATE sessions SET
			harness = coalesce($1, harness), version = $2, model = $3, title = $4, cwd = coalesce($5, cwd),
			end_status = $6, reason = $7, error = $8, usage = $9,
			input_tokens = $10, output_tokens = $11, cache_read_tokens = $12, cache_creation_tokens = $13,
			reasoning_tokens = $14, cost_usd = $15, last_seq = $16,
			status = CASE WHEN status = 'interrupted' THEN status ELSE coalesce($6, 'interrupted') END,
			changed = pg_current_xact_id()
			WHERE sid = $17`, append(r, lastSeq, sid)...)
	case f != nil:
		r := recordColumns(f)
		q.Queue(`UPDATE sessions SET
			harness = coalesce($1, harness), version = coalesce($2, version), model = coalesce($3, model),
			title = coalesce($4, title), cwd = coalesce($5, cwd),
			end_status = $6, reason = $7, error = $8, usage = $9,
			input_tokens = $10, output_tokens = $11, cache_read_tokens = $12, cache_creation_tokens = $13,
			reasoning_tokens = $14, cost_usd = $15,
			last_seq = greatest(last_seq, $16), heartbeat_at = now(), changed = pg_current_xact_id()
			WHERE sid = $17`, append(r, lastSeq, sid)...)
	default:
		q.Queue(`UPDATE sessions SET heartbeat_at = now(), changed = pg_current_xact_id() WHERE sid = $1`, sid)
	}
	q.Queue(`SELECT pg_notify($1, '')`, channel)
	res := tx.SendBatch(ctx, &q)
	var insertedEvents, insertedLines int64
	if len(evs) > 0 {
		tag, err := res.Exec()
		if err != nil {
			res.Close()
			return err
		}
		insertedEvents = tag.RowsAffected()
	}
	if len(lines) > 0 {
		tag, err := res.Exec()
		if err != nil {
			res.Close()
			return err
		}
		insertedLines = tag.RowsAffected()
	}
	if err := res.Close(); err != nil {
		return err
	}
	if insertedEvents < int64(len(evs)) {
		// Some keys were taken: each must hold the same body.
		a := arrays(evs)
		rows, err := tx.Query(ctx, `SELECT e.seq FROM events e JOIN unnest($2::bigint[], $3::bytea[]) AS b (seq, body)
			ON e.seq = b.seq WHERE e.sid = $1 AND e.body <> b.body ORDER BY e.seq LIMIT 1`, sid, a.seq, a.body)
		if err != nil {
			return err
		}
		seqs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if len(seqs) > 0 {
			return fmt.Errorf("%w: session %s holds another event at seq %d", store.ErrConflict, id, seqs[0])
		}
	}
	if insertedLines < int64(len(lines)) {
		for i := range lines {
			stored, err := line(ctx, tx, sid, id, lines[i].Stream, lines[i].N)
			if err != nil {
				return err
			}
			if !store.SameLine(&stored, &lines[i]) {
				return fmt.Errorf("%w: session %s holds another %s line %d", store.ErrConflict, id, lines[i].Stream, lines[i].N)
			}
		}
	}
	return nil
}

// recordColumns returns the values of the session record's columns that a
// commit sets, from harness to cost_usd.
func recordColumns(f *store.Fields) []any {
	usage, _ := json.Marshal(f.Usage)
	u := &f.Usage
	return []any{text(f.Harness), text(f.Version), text(f.Model), text(f.Title), text(f.Cwd),
		text(f.EndStatus), text(f.Reason), text(f.Error), string(usage),
		u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheCreationTokens, u.ReasoningTokens, u.CostUSD}
}

// ReplaceEvents replaces every stored event of a session that is not
// running by envs (stored events only, seq dense from 1), in one
// transaction, and updates the session's record from them. It is how a
// session is re-normalized by a newer adapter; the native lines stay.
func (s *Store) ReplaceEvents(ctx context.Context, id string, envs []agentstream.Envelope) error {
	evs, rec, err := batch.Events(envs)
	if err != nil {
		return err
	}
	f := rec.Fields()
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sid int64
		var status string
		err := tx.QueryRow(ctx, `SELECT sid, status FROM sessions WHERE id = $1 FOR UPDATE`, id).Scan(&sid, &status)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if status == store.StatusRunning {
			return fmt.Errorf("%w: %s", store.ErrRunning, id)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM events WHERE sid = $1`, sid); err != nil {
			return err
		}
		return commit(ctx, tx, sid, id, evs, nil, &f, int64(len(envs)), true)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrRunning) {
		return fmt.Errorf("postgres: replace events of %s: %w", id, err)
	}
	return err
}

// SetProtocol records the protocol a session was read with, for a session
// created before its protocol was known (a run with protocol auto).
func (s *Store) SetProtocol(ctx context.Context, id, protocol string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET protocol = $1 WHERE id = $2`, text(protocol), id)
	if err != nil {
		return fmt.Errorf("postgres: set protocol: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: set protocol: %w", store.ErrNotFound)
	}
	return nil
}

// DeleteSession removes a session that is not running, with its events and
// native lines, in one transaction; it returns store.ErrNotFound for an
// unknown one.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var sid int64
		var status string
		err := tx.QueryRow(ctx, `SELECT sid, status FROM sessions WHERE id = $1 FOR UPDATE`, id).Scan(&sid, &status)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		if status == store.StatusRunning {
			return fmt.Errorf("%w: %s", store.ErrRunning, id)
		}
		for _, q := range []string{`DELETE FROM events WHERE sid = $1`, `DELETE FROM lines WHERE sid = $1`, `DELETE FROM sessions WHERE sid = $1`} {
			if _, err := tx.Exec(ctx, q, sid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) && !errors.Is(err, store.ErrRunning) {
		return fmt.Errorf("postgres: delete %s: %w", id, err)
	}
	return err
}
