package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentstream/agentstream/store"
)

// RepairMarked repairs (store.Repair) the sessions marked for it, those
// whose writer died (Reap marks them), with Options.Dialects: it does
// nothing without them, and passes over a session whose protocol they do
// not know, or that another process is repairing, or whose repair failed in this
// Store already. Open runs it after its
// Reap, Follow after each of its own. It returns how many sessions it
// repaired, and the errors of those it could not (they stay marked).
func (s *Store) RepairMarked(ctx context.Context) (int, error) {
	if s.opts.Dialects == nil {
		return 0, nil
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, coalesce(protocol, '') FROM sessions WHERE repair = 1 AND status = 'interrupted'`)
	if err != nil {
		return 0, fmt.Errorf("sqlite: repair: %w", err)
	}
	type marked struct{ id, protocol string }
	var todo []marked
	for rows.Next() {
		var m marked
		if err := rows.Scan(&m.id, &m.protocol); err != nil {
			rows.Close()
			return 0, fmt.Errorf("sqlite: repair: %w", err)
		}
		todo = append(todo, m)
	}
	rows.Close()
	n := 0
	var errs []error
	for _, m := range todo {
		d, ok := s.opts.Dialects(m.protocol)
		s.mu.Lock()
		failed := s.repairFailed[m.id]
		s.mu.Unlock()
		if !ok || failed {
			continue
		}
		_, err := store.Repair(ctx, s, m.id, d)
		switch {
		case err == nil:
			n++
		case errors.Is(err, store.ErrRunning), errors.Is(err, store.ErrClosed):
		default:
			// Not again in this Store: the next one tries.
			s.mu.Lock()
			s.repairFailed[m.id] = true
			s.mu.Unlock()
			errs = append(errs, fmt.Errorf("sqlite: repair %s: %w", m.id, err))
		}
	}
	return n, errors.Join(errs...)
}
