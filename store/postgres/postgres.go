package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentstream/agentstream/store"
)

// Store is a session store in a PostgreSQL database. It is safe for
// concurrent use, and any number of processes on any number of hosts may
// open the same database.
type Store struct {
	pool *pgxpool.Pool
	url  string // with the password hidden

	host string
	pid  int
	opts Options

	pub   atomic.Pointer[publisherBox] // Follow's
	relay atomic.Pointer[publisherBox] // Relay's

	mu    sync.Mutex
	local map[int64]*Writer // open writers of this Store, by sid
	// repairFailed holds the sessions whose repair failed (see
	// RepairMarked).
	repairFailed map[string]bool

	closeOnce sync.Once
}

type publisherBox struct{ p store.Publisher }

var _ store.Store = (*Store)(nil)

// Options tune a Store. The zero value gives the defaults.
type Options struct {
	// BatchSize is the number of events (or lines) that makes a writer
	// commit at once; zero means 512.
	BatchSize int
	// FlushInterval is how long a writer keeps its first uncommitted entry
	// before committing; zero means 5 ms.
	FlushInterval time.Duration
	// Heartbeat is how often an idle writer tells the database it is alive;
	// zero means 10 s.
	Heartbeat time.Duration
	// StaleAfter is how old a running session's last heartbeat may be
	// before the session counts as interrupted; zero means 6 Heartbeats.
	StaleAfter time.Duration
	// Dialects, when set, lets the store repair the sessions whose writer
	// died (see RepairMarked): Open and Follow give them the events their
	// stored lines lack.
	Dialects store.Dialects
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 512
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 5 * time.Millisecond
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 10 * time.Second
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = 6 * o.Heartbeat
	}
	return o
}

// IsURL reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// ErrSchema is returned by Open for a database whose schema is older than
// this program's: Migrate brings it up to date.
var ErrSchema = errors.New("postgres: the database schema is out of date")

// Open opens the store in the database at dbURL with default options; see
// OpenOptions.
func Open(ctx context.Context, dbURL string) (*Store, error) {
	return OpenOptions(ctx, dbURL, Options{})
}

// OpenOptions opens the store in the database at dbURL (a libpq URL: the
// connection pool reads pool_max_conns and the other pgxpool parameters
// from it) and marks interrupted the sessions whose writer is gone (see
// Reap). It applies no migration: a database whose schema is older than
// this program's (or empty) is refused with ErrSchema, and one whose
// schema is newer with an error; Migrate, run apart from the processes
// that write, brings it up to date.
func OpenOptions(ctx context.Context, dbURL string, opts Options) (*Store, error) {
	pool, err := connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	s := &Store{pool: pool, url: Redact(dbURL), opts: opts.withDefaults(), local: map[int64]*Writer{}, repairFailed: map[string]bool{}}
	s.host, _ = os.Hostname()
	s.pid = os.Getpid()
	v, err := s.version(ctx)
	if err != nil {
		pool.Close()
		return nil, err
	}
	switch {
	case v < SchemaVersion:
		pool.Close()
		return nil, fmt.Errorf("%w: %s has schema version %d, this program needs %d: run `agentstream migrate --db URL`",
			ErrSchema, s.url, v, SchemaVersion)
	case v > SchemaVersion:
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: schema version %d is newer than this program's %d", s.url, v, SchemaVersion)
	}
	if _, err := s.Reap(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	// A session that cannot be repaired now stays marked for a later
	// Open or Follow.
	_, _ = s.RepairMarked(ctx)
	return s, nil
}

func connect(ctx context.Context, dbURL string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", Redact(dbURL), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", Redact(dbURL), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %s: %w", Redact(dbURL), err)
	}
	return pool, nil
}

// Redact returns dbURL with its password, if any, replaced by "xxxxx".
func Redact(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// String returns the database's URL, without its password.
func (s *Store) String() string { return s.url }

// Close closes the connection pool. Open writers must be closed first; a
// writer left open keeps its session running until a Reap marks it
// interrupted.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

// version returns the schema version of the database, 0 when it has none.
func (s *Store) version(ctx context.Context) (int, error) {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	return v, nil
}

// migrations are the schema versions in order; migration i brings the
// database to version i+1. A migration is never edited once released: a
// change is a new migration.
//
// Times are timestamptz in whole milliseconds (what the API serves).
// sessions.changed is the id of the last transaction that changed the row
// (pg_current_xact_id), by which Follow finds what changed, in commit
// order, without a clock; events are keyed by (sid, seq), their body as
// store.AppendBody writes it; lines by (sid, stream, n), in the order kept
// by id.
var migrations = []migration{
	{sql: `CREATE TABLE sessions (
		sid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id text NOT NULL UNIQUE,
		harness text, protocol text, version text, model text, title text, cwd text,
		command text,
		status text NOT NULL,
		end_status text, reason text, error text,
		started_at timestamptz NOT NULL,
		ended_at timestamptz,
		last_seq bigint NOT NULL DEFAULT 0,
		usage text,
		input_tokens bigint, output_tokens bigint, cache_read_tokens bigint,
		cache_creation_tokens bigint, reasoning_tokens bigint, cost_usd double precision,
		parent text, labels text,
		owner_host text, owner_pid integer, heartbeat_at timestamptz,
		changed xid8 NOT NULL DEFAULT pg_current_xact_id()
	);
	CREATE INDEX sessions_started ON sessions (started_at DESC, sid DESC);
	CREATE INDEX sessions_changed ON sessions (changed);
	CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';
	CREATE TABLE events (
		sid bigint NOT NULL,
		seq bigint NOT NULL,
		ts timestamptz,
		type text NOT NULL,
		body bytea NOT NULL,
		PRIMARY KEY (sid, seq)
	);
	CREATE TABLE lines (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		sid bigint NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
		stream text NOT NULL,
		n bigint NOT NULL,
		size bigint NOT NULL,
		sha256 bytea,
		ts timestamptz,
		data bytea NOT NULL,
		UNIQUE (sid, stream, n)
	);`},
	// 2: the store's keys (Key), and the mark of a session whose writer
	// died (set by Reap, cleared when a writer closes the session), which
	// Repair looks for; the sessions interrupted before are marked.
	{sql: `CREATE TABLE keys (
		name text PRIMARY KEY,
		value bytea NOT NULL
	);
	ALTER TABLE sessions ADD COLUMN repair boolean NOT NULL DEFAULT false;
	UPDATE sessions SET repair = true WHERE status = 'interrupted';
	CREATE INDEX sessions_repair ON sessions (repair) WHERE repair;`},
	// 3: the credentials of the HTTP API (store.Tokens): the SHA-256 of
	// each secret, never the secret; a name is unique among the tokens
	// not revoked.
	{sql: `CREATE TABLE tokens (
		id text PRIMARY KEY,
		kind text NOT NULL,
		name text,
		scopes text NOT NULL,
		session text,
		hash bytea NOT NULL UNIQUE,
		created_at timestamptz NOT NULL,
		expires_at timestamptz,
		last_used_at timestamptz,
		revoked_at timestamptz
	);
	CREATE UNIQUE INDEX tokens_name ON tokens (name) WHERE name IS NOT NULL AND revoked_at IS NULL;`},
	// 4: each event's store.SearchText, which Search matches (NULL for an
	// event without text); the events stored before get theirs.
	{sql: `ALTER TABLE events ADD COLUMN text text;`, step: fillSearchText},
}

// A migration brings the database one version up: its SQL, then its Go
// step, if any, in the same transaction.
type migration struct {
	sql  string
	step func(ctx context.Context, tx pgx.Tx) error
}

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)

// migrateLock is the advisory lock Migrate holds, so that two of them do
// not apply the same migration.
const migrateLock = 0x6167656e7473 // "agents"

// Migrate brings the schema of the database at dbURL up to this program's
// version, each migration in its own transaction, and returns the versions
// before and after. It is safe to run while other processes use the
// database, and to run twice.
func Migrate(ctx context.Context, dbURL string) (from, to int, err error) {
	pool, err := connect(ctx, dbURL)
	if err != nil {
		return 0, 0, err
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrateLock); err != nil {
		return 0, 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&from); err != nil {
		return 0, 0, fmt.Errorf("postgres: migrate: %w", err)
	}
	if from > len(migrations) {
		return from, from, fmt.Errorf("postgres: %s: schema version %d is newer than this program's %d", Redact(dbURL), from, len(migrations))
	}
	for v := from; v < len(migrations); v++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			m := migrations[v]
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			if m.step != nil {
				if err := m.step(ctx, tx); err != nil {
					return err
				}
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v+1)
			return err
		})
		if err != nil {
			return from, v, fmt.Errorf("postgres: migration %d: %w", v+1, err)
		}
	}
	return from, len(migrations), nil
}

// Relay hands what this Store's own writers commit (their events, live
// deltas and ends, not what Follow finds that other processes committed)
// to p as well as to Follow's publisher, from now on; nil stops it. p's
// methods must not block.
func (s *Store) Relay(p store.Publisher) {
	if p == nil {
		s.relay.Store(nil)
		return
	}
	s.relay.Store(&publisherBox{p})
}

// publisher returns where the writers publish: Follow's publisher and the
// relay, either, or nil for nowhere.
func (s *Store) publisher() store.Publisher {
	b, r := s.pub.Load(), s.relay.Load()
	switch {
	case b != nil && r != nil:
		return store.Tee(b.p, r.p)
	case b != nil:
		return b.p
	case r != nil:
		return r.p
	}
	return nil
}

// text returns s as a text value: NULL when empty, and with what a
// PostgreSQL text cannot hold (NUL, invalid UTF-8) replaced by U+FFFD.
func text(s string) any {
	if s == "" {
		return nil
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// ms returns t in whole milliseconds, nil when zero.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}
