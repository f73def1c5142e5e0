package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/internal/batch"
)

// Reap marks interrupted every running session whose writer is gone (see
// store.Owner.Gone; heartbeats are the database server's clock), and
// returns how many it marked. Sessions whose writer is open in this Store
// are never reaped. Open runs Reap once, Resume before it resumes, and
// Follow every few seconds.
func (s *Store) Reap(ctx context.Context) (int, error) {
	rows, err := s.pool.Query(ctx, `SELECT sid, owner_host, owner_pid, heartbeat_at, now()
		FROM sessions WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("postgres: reap: %w", err)
	}
	type cand struct {
		sid int64
		hb  pgtype.Timestamptz
	}
	var dead []cand
	for rows.Next() {
		var (
			sid  int64
			host pgtype.Text
			pid  pgtype.Int4
			hb   pgtype.Timestamptz
			now  time.Time
		)
		if err := rows.Scan(&sid, &host, &pid, &hb, &now); err != nil {
			rows.Close()
			return 0, fmt.Errorf("postgres: reap: %w", err)
		}
		s.mu.Lock()
		_, mine := s.local[sid]
		s.mu.Unlock()
		if mine {
			continue
		}
		o := store.Owner{Host: host.String, PID: int(pid.Int32)}
		if hb.Valid {
			o.Heartbeat = hb.Time
		}
		if o.Gone(now, s.opts.StaleAfter, s.host, s.pid) {
			dead = append(dead, cand{sid, hb})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("postgres: reap: %w", err)
	}
	n := 0
	for _, c := range dead {
		// The heartbeat must not have moved since it was read: a writer
		// that was only slow keeps its session.
		var k int64
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			tag, err := tx.Exec(ctx, `UPDATE sessions SET status = 'interrupted',
				ended_at = coalesce(date_trunc('milliseconds', heartbeat_at), date_trunc('milliseconds', now())),
				owner_pid = NULL, repair = true, changed = pg_current_xact_id()
				WHERE sid = $1 AND status = 'running' AND heartbeat_at IS NOT DISTINCT FROM $2`, c.sid, c.hb)
			if err != nil {
				return err
			}
			k = tag.RowsAffected()
			_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, channel)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("postgres: reap: %w", err)
		}
		n += int(k)
	}
	return n, nil
}

// DefaultPollInterval is how often Follow looks for what other processes
// committed when no notification told it sooner.
const DefaultPollInterval = time.Second

// reapInterval is how often Follow reaps sessions whose writer is gone.
const reapInterval = 2 * time.Second

// followHook, when set (by a test), runs once Follow has read where the
// sessions stand, before it looks at this Store's writers.
var followHook func()

// Following reports whether a Follow runs: from then on, what this Store's
// writers commit and their live deltas reach its publisher. A caller that
// starts Follow in a goroutine waits for it before it counts on that.
func (s *Store) Following() bool { return s.pub.Load() != nil }

// Follow publishes to pub everything committed to the database from now on,
// until ctx is done, then returns ctx's error. Events committed by this
// Store's writers are published by them as soon as they commit (live
// deltas included); what other processes commit is found when their
// commit's notification arrives (LISTEN on the channel "agentstream"), or
// by polling every interval (DefaultPollInterval when zero) should a
// notification be lost, and published in order, without the live deltas,
// which those processes never store. When a session's writer closes, or
// the session is found interrupted, pub.End is called. Only one Follow may
// run on a Store at a time.
//
// What changed is found by transaction id, not by clock: each commit sets
// its session's "changed" to its transaction's id, and each poll reads the
// sessions changed by transactions not known to be finished at the
// previous poll (pg_snapshot_xmin), so that a transaction that commits
// late is never skipped.
func (s *Store) Follow(ctx context.Context, pub store.Publisher, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	// The writers publish to pub from the start, so that nothing they
	// commit while the history is read below is missed.
	s.pub.Store(&publisherBox{pub})
	defer s.pub.Store(nil)
	known := batch.Marks{}
	var cursor int64
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::numeric::bigint`).Scan(&cursor); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT sid, last_seq, status FROM sessions`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sid, seq int64
			var status string
			if err := rows.Scan(&sid, &seq, &status); err != nil {
				return err
			}
			known[sid] = &batch.Mark{Seq: seq, Ended: status != store.StatusRunning}
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("postgres: follow: %w", err)
	}
	if followHook != nil {
		followHook()
	}
	// What the writers published meanwhile is known too: a writer that is
	// done now published all of its session, its end included.
	s.mu.Lock()
	for sid, w := range s.local {
		if known.Of(sid).KeepUp(w.w) {
			delete(s.local, sid)
		}
	}
	s.mu.Unlock()

	notified := make(chan struct{}, 1)
	lctx, lcancel := context.WithCancel(ctx)
	listenDone := make(chan struct{})
	go func() {
		defer close(listenDone)
		s.listen(lctx, notified)
	}()
	defer func() {
		lcancel()
		<-listenDone
	}()

	lastReap := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-notified:
		}
		if time.Since(lastReap) >= reapInterval {
			lastReap = time.Now()
			if _, err := s.Reap(ctx); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			_, _ = s.RepairMarked(ctx)
		}
		next, err := s.pollOnce(ctx, pub, known, cursor)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		cursor = next
	}
}

// listen LISTENs on the channel and pokes notified at every notification
// (and once after each reconnection, since notifications may have been
// lost meanwhile), until ctx is done.
func (s *Store) listen(ctx context.Context, notified chan<- struct{}) {
	poke := func() {
		select {
		case notified <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		conn, err := s.pool.Acquire(ctx)
		if err == nil {
			if _, err = conn.Exec(ctx, `LISTEN `+channel); err == nil {
				poke()
				for err == nil {
					_, err = conn.Conn().WaitForNotification(ctx)
					if err == nil {
						poke()
					}
				}
			}
			// The connection was listening: it goes, not back to the pool.
			conn.Hijack().Close(context.WithoutCancel(ctx))
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// pollOnce publishes what changed since cursor and returns the new cursor.
func (s *Store) pollOnce(ctx context.Context, pub store.Publisher, known batch.Marks, cursor int64) (int64, error) {
	next := cursor
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var xmin int64
		if err := tx.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::numeric::bigint`).Scan(&xmin); err != nil {
			return err
		}
		type change struct {
			sid, lastSeq int64
			id, status   string
		}
		rows, err := tx.Query(ctx, `SELECT sid, id, last_seq, status FROM sessions
			WHERE changed >= $1::text::xid8 ORDER BY changed`, fmt.Sprint(cursor))
		if err != nil {
			return err
		}
		changes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (change, error) {
			var c change
			err := r.Scan(&c.sid, &c.id, &c.lastSeq, &c.status)
			return c, err
		})
		if err != nil {
			return err
		}
		for _, c := range changes {
			k := known.Of(c.sid)
			s.mu.Lock()
			w := s.local[c.sid]
			if w != nil && w.w.Done() {
				delete(s.local, c.sid)
			}
			s.mu.Unlock()
			if w != nil {
				// Its writer publishes it; just keep up.
				k.KeepUp(w.w)
				continue
			}
			for k.Seq < c.lastSeq {
				evs, err := events(ctx, tx, c.sid, c.id, store.EventQuery{After: k.Seq, Limit: 1000})
				if err != nil {
					return err
				}
				if len(evs) == 0 {
					break
				}
				for _, ev := range evs {
					if ev.Seq > c.lastSeq {
						break
					}
					pub.Publish(ev)
					k.Seq = ev.Seq
				}
			}
			running := c.status == store.StatusRunning
			if !running && !k.Ended {
				pub.End(c.id)
			}
			k.Ended = !running
		}
		next = xmin
		return nil
	})
	return next, err
}
