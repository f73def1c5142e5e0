package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/internal/batch"
)

// Reap marks interrupted every running session whose writer is gone, and
// returns how many it marked. A session's writer records its host name and
// process id, and refreshes a heartbeat on every commit and every
// Options.Heartbeat while idle. A running session counts as gone when
//
//   - its writer ran on this host in another process that no longer exists
//     (checked with signal 0), or
//   - its heartbeat is older than Options.StaleAfter (a writer on another
//     host, or a process id that was reused).
//
// Sessions whose writer is open in this Store are never reaped. Open runs
// Reap once; Follow runs it every few seconds.
func (s *Store) Reap(ctx context.Context) (int, error) {
	rows, err := s.write.QueryContext(ctx, `SELECT sid, owner_host, owner_pid, heartbeat_at
		FROM sessions WHERE status = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("sqlite: reap: %w", err)
	}
	type cand struct {
		sid int64
		hb  sql.NullInt64
	}
	var dead []cand
	now := time.Now()
	for rows.Next() {
		var (
			sid  int64
			host sql.NullString
			pid  sql.NullInt64
			hb   sql.NullInt64
		)
		if err := rows.Scan(&sid, &host, &pid, &hb); err != nil {
			rows.Close()
			return 0, fmt.Errorf("sqlite: reap: %w", err)
		}
		s.mu.Lock()
		_, mine := s.local[sid]
		s.mu.Unlock()
		if mine {
			continue
		}
		o := store.Owner{Host: host.String, PID: int(pid.Int64), Heartbeat: fromMs(hb)}
		if o.Gone(now, s.opts.StaleAfter, s.host, s.pid) {
			dead = append(dead, cand{sid, hb})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("sqlite: reap: %w", err)
	}
	n := 0
	for _, c := range dead {
		// The heartbeat must not have moved since it was read: a writer
		// that was only slow keeps its session.
		res, err := s.write.ExecContext(ctx, `UPDATE sessions SET status = 'interrupted',
			ended_at = coalesce(heartbeat_at, ?), owner_pid = NULL, repair = 1,
			tick = (SELECT max(tick) + 1 FROM sessions)
			WHERE sid = ? AND status = 'running' AND heartbeat_at IS ?`, now.UnixMilli(), c.sid, c.hb)
		if err != nil {
			return n, fmt.Errorf("sqlite: reap: %w", err)
		}
		if k, _ := res.RowsAffected(); k == 1 {
			n++
		}
	}
	return n, nil
}

// DefaultPollInterval is how often Follow looks for what other processes
// committed.
const DefaultPollInterval = 100 * time.Millisecond

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
// deltas included); what other processes (or other Stores) commit is found
// by polling every interval (DefaultPollInterval when zero) and published
// in order, without the live deltas, which those processes never store.
// When a session's writer closes, or the session is found interrupted,
// pub.End is called. Only one Follow may run on a Store at a time.
func (s *Store) Follow(ctx context.Context, pub store.Publisher, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	// The writers publish to pub from the start, so that nothing they
	// commit while the history is read below is missed.
	s.pub.Store(&publisherBox{pub})
	defer s.pub.Store(nil)
	conn, err := s.read.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: follow: %w", err)
	}
	defer conn.Close()

	// What exists now is history: remember where each session stands.
	known := batch.Marks{}
	var tick int64
	if err := conn.QueryRowContext(ctx, `SELECT coalesce(max(tick), 0) FROM sessions`).Scan(&tick); err != nil {
		return fmt.Errorf("sqlite: follow: %w", err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT sid, last_seq, status FROM sessions`)
	if err != nil {
		return fmt.Errorf("sqlite: follow: %w", err)
	}
	for rows.Next() {
		var sid, seq int64
		var status string
		if err := rows.Scan(&sid, &seq, &status); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: follow: %w", err)
		}
		known[sid] = &batch.Mark{Seq: seq, Ended: status != store.StatusRunning}
	}
	rows.Close()
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

	var dataVersion int64 = -1
	lastFull := time.Time{}
	lastReap := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		if time.Since(lastReap) >= reapInterval {
			lastReap = time.Now()
			if _, err := s.Reap(ctx); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			_, _ = s.RepairMarked(ctx)
		}
		// PRAGMA data_version changes when another connection commits; a
		// full look every second covers anything it could miss.
		var dv int64
		if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&dv); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		if dv == dataVersion && time.Since(lastFull) < time.Second {
			continue
		}
		dataVersion, lastFull = dv, time.Now()
		next, err := s.pollOnce(ctx, conn, pub, known, tick)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue
		}
		tick = next
	}
}

// pollOnce publishes what changed since tick and returns the new tick.
func (s *Store) pollOnce(ctx context.Context, conn *sql.Conn, pub store.Publisher, known batch.Marks, tick int64) (int64, error) {
	type change struct {
		sid, lastSeq, tick int64
		id, status         string
	}
	rows, err := conn.QueryContext(ctx, `SELECT sid, id, last_seq, status, tick FROM sessions
		WHERE tick > ? ORDER BY tick`, tick)
	if err != nil {
		return tick, err
	}
	var changes []change
	for rows.Next() {
		var c change
		if err := rows.Scan(&c.sid, &c.id, &c.lastSeq, &c.status, &c.tick); err != nil {
			rows.Close()
			return tick, err
		}
		changes = append(changes, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return tick, err
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
			tick = c.tick
			continue
		}
		for k.Seq < c.lastSeq {
			evs, err := s.events(ctx, c.sid, c.id, store.EventQuery{After: k.Seq, Limit: 1000})
			if err != nil {
				return tick, err
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
		tick = c.tick
	}
	return tick, nil
}
