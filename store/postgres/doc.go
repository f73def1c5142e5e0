// Package postgres is the shared session store: one PostgreSQL database
// (through github.com/jackc/pgx/v5), opened with Open by any number of
// processes on any number of hosts, behind the same store.Store interface
// as the embedded store/sqlite and passing the same conformance suite
// (store/storetest).
//
// # Schema
//
// Migrations are versioned in the table schema_migrations and applied only
// by Migrate (`agentstream migrate --db URL`), never on the way of a
// writer: Open refuses a database whose schema is older than the
// program's (ErrSchema) or newer. Tables: sessions (the record, the usage
// recap, the writer's host, pid and heartbeat, and "changed", the id of
// the last transaction that changed the row), events (keyed by (sid, seq):
// time, type and the envelope's body) and lines (the native lines, whole
// up to the soft limit, else their head with their full size and SHA-256).
// Text columns cannot hold NUL or invalid UTF-8: the session record's
// strings are stored with such bytes replaced by U+FFFD (events and lines
// are bytes, kept exactly).
//
// # Durability and liveness
//
// A Writer batches a session's events and native lines into transactions;
// an event is acknowledged (Writer.Acked) once its transaction committed.
// Each commit notifies the channel "agentstream", which Follow listens on
// to publish what other processes commit within milliseconds. A writer
// whose process died leaves its session "running" until a Reap (its
// heartbeat, by the server's clock, went stale, or its process is gone
// from this host) marks it interrupted.
package postgres
