package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentstream/agentstream/store"
)

// The full-text index is fed by an indexer, not by the commits that store
// the events: a commit stores a session's events and moves its last_seq,
// and the indexer later adds the store.SearchText of the events after the
// session's indexed_seq, up to last_seq, to events_fts and moves
// indexed_seq to where it stopped, in one transaction. The watermark is in
// the database, so whichever process indexes next goes on where the last
// one stopped: a crash between a commit and its indexing leaves the
// events unindexed until then, never lost to the index, and an event is
// never indexed twice.

// indexBatchEvents and indexBatchBytes bound one indexing transaction, so
// that a writer waiting for the database waits little: the indexer holds
// the write lock for one batch at a time, and a live session's commit
// waits at most that long (transactions of 4,096 events held it for
// seconds on a slow machine, while a large backlog was indexed).
const (
	indexBatchEvents = 512
	indexBatchBytes  = 1 << 20
)

// indexPoll is how often the indexer looks for sessions that other
// processes left unindexed (a writer that crashed, or a command that
// exited before its indexer ran).
const indexPoll = time.Second

// indexer is the Store's indexer goroutine, from Open to Close. It indexes
// the sessions whose last commit is at least Options.IndexDelay old: woken
// by this Store's commits, it waits for that delay, and it looks every
// indexPoll for what other processes left. A session that is written
// without a pause is indexed once it pauses, or by a search (see
// IndexPending), which never waits for the indexer.
func (s *Store) indexer() {
	defer close(s.idxDone)
	poll := time.NewTicker(indexPoll)
	defer poll.Stop()
	var delay *time.Timer
	var delayC <-chan time.Time
	run := func() {
		_, more, err := s.indexSessions(context.Background(), time.Now().Add(-s.opts.IndexDelay), nil)
		if err == nil && more && delayC == nil {
			// A session still being written: look again after the
			// delay.
			delay = time.NewTimer(s.opts.IndexDelay)
			delayC = delay.C
		}
	}
	run() // what was left before this Store opened
	for {
		select {
		case <-s.idxStop:
			if delay != nil {
				delay.Stop()
			}
			return
		case <-s.idxKick:
			if delayC == nil {
				delay = time.NewTimer(s.opts.IndexDelay)
				delayC = delay.C
			}
		case <-delayC:
			delayC = nil
			run()
		case <-poll.C:
			run()
		}
	}
}

// kickIndex tells the indexer that events were committed.
func (s *Store) kickIndex() {
	select {
	case s.idxKick <- struct{}{}:
	default:
	}
}

// IndexPending adds to the full-text index every event committed before
// the call that it lacks, whatever process committed it, and returns once
// they are indexed. Search calls it first, so that a search finds every
// event committed before it began; the indexer otherwise indexes a
// session's events once the session has had no commit for
// Options.IndexDelay.
//
// It indexes up to where each session stood when it was called, so that
// writers that go on committing meanwhile do not keep it going.
func (s *Store) IndexPending(ctx context.Context) error {
	upto := map[int64]int64{}
	rows, err := s.read.QueryContext(ctx, `SELECT sid, last_seq FROM sessions WHERE indexed_seq < last_seq`)
	if err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	for rows.Next() {
		var sid, last int64
		if err := rows.Scan(&sid, &last); err != nil {
			rows.Close()
			return fmt.Errorf("sqlite: index: %w", err)
		}
		upto[sid] = last
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: index: %w", err)
	}
	for len(upto) > 0 {
		_, more, err := s.indexSessions(ctx, time.Time{}, upto)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// behind reports whether some session has events the index lacks, on the
// read connection.
func (s *Store) behind(ctx context.Context) (bool, error) {
	var n int
	err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE indexed_seq < last_seq)`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("sqlite: index: %w", err)
	}
	return n == 1, nil
}

// indexSessions indexes, in one transaction of at most indexBatchEvents
// events and indexBatchBytes of text, the unindexed events of the
// sessions whose last commit is not after idleBefore (any session when it
// is zero). With upto, it indexes only the sessions upto holds, each up to
// the seq upto gives it, and deletes from upto those it finished. It
// returns how many events it indexed, and more true when unindexed events
// (of upto's sessions, with upto) remain.
func (s *Store) indexSessions(ctx context.Context, idleBefore time.Time, upto map[int64]int64) (n int, more bool, err error) {
	// Looked up on the read connection first: the write lock is taken
	// only when there is something to index now.
	var waiting, idle int
	cutoff := int64(0)
	if !idleBefore.IsZero() {
		cutoff = idleBefore.UnixMilli()
	}
	if err := s.read.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE ? = 0 OR heartbeat_at IS NULL OR heartbeat_at <= ?)
		FROM sessions WHERE indexed_seq < last_seq`, cutoff, cutoff).Scan(&waiting, &idle); err != nil {
		return 0, false, fmt.Errorf("sqlite: index: %w", err)
	}
	if idle == 0 {
		return 0, waiting > 0, nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: index: %w", err)
	}
	defer tx.Rollback()
	type pending struct{ sid, from, to int64 }
	var todo []pending
	seen := map[int64]bool{}
	rows, err := tx.QueryContext(ctx, `SELECT sid, indexed_seq, last_seq, heartbeat_at FROM sessions
		WHERE indexed_seq < last_seq ORDER BY sid`)
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: index: %w", err)
	}
	for rows.Next() {
		var p pending
		var hb sql.NullInt64
		if err := rows.Scan(&p.sid, &p.from, &p.to, &hb); err != nil {
			rows.Close()
			return 0, false, fmt.Errorf("sqlite: index: %w", err)
		}
		seen[p.sid] = true
		if upto != nil {
			last, ok := upto[p.sid]
			if !ok {
				continue
			}
			if p.from >= last {
				delete(upto, p.sid) // indexed meanwhile
				continue
			}
			p.to = min(p.to, last)
		}
		if !idleBefore.IsZero() && hb.Valid && hb.Int64 > idleBefore.UnixMilli() {
			more = true // written lately: later
			continue
		}
		todo = append(todo, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("sqlite: index: %w", err)
	}
	for sid := range upto {
		if !seen[sid] {
			delete(upto, sid) // indexed meanwhile, or deleted
		}
	}
	if len(todo) == 0 {
		if upto != nil {
			more = len(upto) > 0
		}
		return 0, more, nil
	}
	var (
		keys     []int64
		texts    []string
		size     int
		done     int
		finished []int64
	)
	flush := func() error {
		if err := s.insertIndex(ctx, tx, keys, texts); err != nil {
			return err
		}
		keys, texts = keys[:0], texts[:0]
		return nil
	}
	for i, p := range todo {
		if n >= indexBatchEvents || size >= indexBatchBytes {
			more = true
			break
		}
		to := min(p.to, p.from+int64(indexBatchEvents-n))
		rows, err := tx.QueryContext(ctx, `SELECT key, body FROM events WHERE key > ? AND key <= ? ORDER BY key`,
			eventKey(p.sid, p.from), eventKey(p.sid, to))
		if err != nil {
			return 0, false, fmt.Errorf("sqlite: index: %w", err)
		}
		last := p.from
		for rows.Next() {
			var key int64
			var body []byte
			err := rows.Scan(&key, &body)
			if err == nil {
				body, err = decodeBody(body)
			}
			if err != nil {
				rows.Close()
				return 0, false, fmt.Errorf("sqlite: index: %w", err)
			}
			last = key & maxSeq
			n++
			if text := store.BodySearchText(body); text != "" {
				keys, texts = append(keys, key), append(texts, text)
				size += len(text)
			}
			if size >= indexBatchBytes {
				break
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, false, fmt.Errorf("sqlite: index: %w", err)
		}
		if last < p.to {
			// Stopped short (or the session holds fewer events than its
			// last seq says, which a commit never leaves): the rest waits
			// for the next transaction.
			if last == p.from {
				last = p.to
			} else {
				more = true
			}
		}
		if err := flush(); err != nil {
			return 0, false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET indexed_seq = ? WHERE sid = ?`, last, p.sid); err != nil {
			return 0, false, fmt.Errorf("sqlite: index: %w", err)
		}
		if upto != nil && last >= upto[p.sid] {
			finished = append(finished, p.sid)
		}
		done = i + 1
	}
	if done < len(todo) {
		more = true
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("sqlite: index: %w", err)
	}
	for _, sid := range finished {
		delete(upto, sid)
	}
	if upto != nil {
		more = len(upto) > 0
	}
	s.indexed.Add(int64(n))
	s.committed(size + 64*n)
	return n, more, nil
}

// insertIndex adds rows to the full-text index, cut greedily into
// statements of insertSizes rows.
func (s *Store) insertIndex(ctx context.Context, tx *sql.Tx, keys []int64, texts []string) error {
	args := make([]any, 0, 2*min(len(keys), insertSizes[0]))
	for i := 0; i < len(keys); {
		k := 0
		for insertSizes[k] > len(keys)-i {
			k++
		}
		args = args[:0]
		for j := i; j < i+insertSizes[k]; j++ {
			args = append(args, keys[j], texts[j])
		}
		if _, err := tx.StmtContext(ctx, s.ftsStmts[k]).ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("sqlite: index: %w", err)
		}
		i += insertSizes[k]
	}
	return nil
}
