// Package sqlite is the embedded session store: one SQLite file (through
// modernc.org/sqlite, pure Go), opened with Open, shared safely by several
// processes (a runner writing a session, serve reading it).
//
// # Durability
//
// The database runs in WAL mode with synchronous=NORMAL. A transaction
// that has committed survives a crash of the process that wrote it (kill
// -9 at any moment): the events it holds are there when the file is opened
// again, and the file is intact. A power loss or an operating-system crash
// may lose the last transactions committed before it (never corrupt the
// file); that is the price of not waiting for the disk on every commit.
// The log is copied into the database (a checkpoint) by a goroutine of the
// Store, outside the commits; a new database has 16 KiB pages.
//
// A Writer batches a session's events and native lines into transactions;
// an event is acknowledged (Writer.Acked) once its transaction committed.
// The batches of several sessions' writers that wait for the write
// connection at once share one transaction, each in a savepoint, so that
// one that fails fails alone (a group commit: many small commits cost a
// log write each).
// A writer whose process died leaves its session "running": Open and
// Store.Reap mark it interrupted (see Reap for the rule).
//
// # Schema
//
// Migrations are versioned in the table schema_migrations and applied on
// Open. Tables: sessions (the record, the usage recap, the writer's host,
// pid and heartbeat, and a change counter "tick" that Follow polls),
// events (one row per stored event, keyed by sid<<40 | seq) and lines (the
// native lines, whole up to the soft limit, else their head with their
// full size and SHA-256), and events_fts, the full-text index of the
// events' store.SearchText (FTS5, holding no copy of the text).
//
// A native line or an event body of 2 KiB or more is stored S2-compressed
// (github.com/klauspost/compress/s2) when that saves an eighth of it or
// more, and shorter ones as they are. A line's row says which in its
// column codec (NULL: as it is); a body's first byte does (a body begins
// with '"', a compressed one never does). So the rows of a database
// written before schema 7 are read as they are, with nothing rewritten. A
// program older than schema 7 refuses the file rather than read
// compressed bytes.
//
// # Search
//
// Commits do not wait for the full-text index: the Store's indexer adds a
// session's new events once the session has had no commit for
// Options.IndexDelay (100 ms), in transactions of its own of at most 512
// events, and moves the session's watermark (sessions.indexed_seq) in the
// same transaction. Whichever process indexes next goes on from the
// watermark, so that events committed by a process that crashed or exited
// first are indexed later, each once. Search indexes what is pending first
// (IndexPending), so that it finds every event committed before it began.
package sqlite
