package sqlite

import "database/sql"

// SetCommitHook sets the hook each batch's commit runs first (nil: none).
func SetCommitHook(h func(tx *sql.Tx, session string) error) { commitHook = h }

// SetFollowHook sets what Follow runs once it has read where the sessions
// stand (nil: nothing).
func SetFollowHook(h func()) { followHook = h }

// Grouped returns how many transactions held more than one batch.
func (s *Store) Grouped() int64 { return s.grouped.Load() }

// Migration1 is the SQL of schema 1, for the migration test.
var Migration1 = migrations[0].sql
