package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
	"github.com/agentstream/agentstream/store"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Store is a session store in one SQLite file. It is safe for concurrent
// use by many goroutines, and several processes may open the same file.
type Store struct {
	path  string
	write *sql.DB // one connection: writes are serialized in-process
	read  *sql.DB

	host string
	pid  int

	// Options fixed at Open.
	opts Options

	pub   atomic.Pointer[publisherBox] // Follow's
	relay atomic.Pointer[publisherBox] // Relay's

	mu    sync.Mutex
	local map[int64]*Writer // open writers of this Store, by sid
	// repairFailed holds the sessions whose repair failed (see
	// RepairMarked).
	repairFailed map[string]bool

	// The checkpointer (see checkpoints).
	logged   atomic.Int64 // bytes committed since the last checkpoint
	indexed  atomic.Int64 // events indexed since the last merge step
	ckptKick chan struct{}
	ckptStop chan struct{}
	ckptDone chan struct{}

	// The indexer (see indexer).
	idxKick chan struct{}
	idxStop chan struct{}
	idxDone chan struct{}

	insertStmts [4]*sql.Stmt
	lineStmts   [4]*sql.Stmt
	ftsStmts    [4]*sql.Stmt
	updateStmts [2]*sql.Stmt // a commit's of the session: with its record, without

	// The group commit (see commit): the batches waiting, and whether a
	// writer is committing.
	groupMu   sync.Mutex
	groupQ    []*pendingCommit
	groupBusy bool
	grouped   atomic.Int64 // transactions of more than one batch

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
	// BusyTimeout is how long a statement waits for another process's
	// write lock; zero means 10 s.
	BusyTimeout time.Duration
	// Dialects, when set, lets the store repair the sessions whose writer
	// died (see RepairMarked): Open and Follow give them the events their
	// stored lines lack.
	Dialects store.Dialects
	// IndexDelay is how long a session must have had no commit before the
	// Store's indexer adds its new events to the full-text index; zero
	// means 100 ms. A search indexes what is pending first (see
	// IndexPending), so the delay only decides when that work is done.
	IndexDelay time.Duration
	// MustExist makes Open fail, creating nothing, when there is no file at
	// the path: the error wraps fs.ErrNotExist. Commands that only read
	// sessions set it, so that a mistyped path is an error rather than a
	// new, empty database.
	MustExist bool
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
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 10 * time.Second
	}
	if o.IndexDelay <= 0 {
		o.IndexDelay = 100 * time.Millisecond
	}
	return o
}

// Open opens (creating it if needed) the store at path with default
// options; see OpenOptions.
func Open(path string) (*Store, error) { return OpenOptions(path, Options{}) }

// OpenOptions opens (creating it and its directory if needed, unless
// opts.MustExist) the store at path, applies the schema migrations it lacks, marks interrupted the
// sessions whose writer is gone (see Reap), and repairs them (see
// RepairMarked).
func OpenOptions(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: empty database path")
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: %s: a database path cannot contain '?' or '#'", path)
	}
	if opts.MustExist {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
	}
	opts = opts.withDefaults()
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(opts.BusyTimeout.Milliseconds()))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	q.Set("_txlock", "immediate")
	q.Add("_pragma", "foreign_keys(1)")
	// A new database gets 16 KiB pages: a quarter of the writes (one
	// system call each) of the default 4 KiB for the same events.
	q.Add("_pragma", "page_size(16384)")
	// Checkpoints run in the Store's own goroutine (see checkpoints), not
	// in the commit that fills the log.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	q.Add("_pragma", "journal_size_limit(67108864)")
	dsn := path + "?" + q.Encode()

	write, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	read.SetConnMaxIdleTime(0)
	host, _ := os.Hostname()
	s := &Store{path: path, write: write, read: read, host: host, pid: os.Getpid(), opts: opts, local: map[int64]*Writer{}, repairFailed: map[string]bool{}}
	ctx := context.Background()
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.Reap(ctx); err != nil {
		s.Close()
		return nil, err
	}
	// A session that cannot be repaired now stays marked for a later
	// Open or Follow.
	_, _ = s.RepairMarked(ctx)
	s.ckptKick, s.ckptStop, s.ckptDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.checkpoints()
	s.kickCheckpoint() // what a writer that died left in the log
	s.idxKick, s.idxStop, s.idxDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.indexer()
	return s, nil
}

// checkpointBytes is how much a Store commits before it copies the
// write-ahead log into the database.
const checkpointBytes = 16 << 20

// checkpoints is the Store's checkpointer, from Open to Close: it runs a
// step of the full-text index's merging when this Store indexed events
// since the last one, and it copies
// the write-ahead log into the database (a passive checkpoint, which
// never waits for a reader or a writer) once this Store committed
// checkpointBytes since the last one, every second while it commits less,
// and once more at Close. Commits are durable once in the log, so this
// changes only when the copy happens: outside the commits, which would
// otherwise make it (wal_autocheckpoint) while their writer waits.
func (s *Store) checkpoints() {
	defer close(s.ckptDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	run := func() {
		if s.indexed.Swap(0) > 0 {
			// A bounded step of the index's merging, which commits
			// leave to it (migration 4).
			_, _ = s.write.Exec(`INSERT INTO events_fts (events_fts, rank) VALUES ('merge', 500)`)
		}
		if s.logged.Swap(0) > 0 {
			_, _ = s.read.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}
	for {
		select {
		case <-s.ckptStop:
			run()
			return
		case <-s.ckptKick:
		case <-t.C:
		}
		run()
	}
}

// committed counts n bytes committed towards the next checkpoint.
func (s *Store) committed(n int) {
	if s.logged.Add(int64(n)) >= checkpointBytes {
		s.kickCheckpoint()
	}
}

func (s *Store) kickCheckpoint() {
	s.logged.Add(1)
	select {
	case s.ckptKick <- struct{}{}:
	default:
	}
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Close closes the database. Open writers must be closed first; a writer
// left open keeps its session running until a later Open or Reap marks it
// interrupted.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		if s.idxStop != nil {
			close(s.idxStop)
			<-s.idxDone
		}
		if s.ckptStop != nil {
			close(s.ckptStop)
			<-s.ckptDone
		}
		for _, st := range slices.Concat(s.insertStmts[:], s.lineStmts[:], s.ftsStmts[:], s.updateStmts[:]) {
			if st != nil {
				st.Close()
			}
		}
		err = errors.Join(s.read.Close(), s.write.Close())
	})
	return err
}

// A migration brings the database one version up: its SQL, then its Go
// step, if any, in the same transaction.
type migration struct {
	sql  string
	step func(ctx context.Context, tx *sql.Tx) error
}

// migrations are the schema versions in order; migration i brings the
// database to version i+1. A migration is never edited once released: a
// change is a new migration.
//
// Events are keyed by key = sid<<40 | seq, so that one session's events are
// one contiguous range of a single B-tree (no secondary index to maintain
// on append, and a page from any position is one range scan).
var migrations = []migration{
	{sql: `CREATE TABLE sessions (
		sid INTEGER PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		harness TEXT, protocol TEXT, version TEXT, model TEXT, title TEXT, cwd TEXT,
		command TEXT,
		status TEXT NOT NULL,
		end_status TEXT, reason TEXT, error TEXT,
		started_at INTEGER NOT NULL,
		ended_at INTEGER,
		last_seq INTEGER NOT NULL DEFAULT 0,
		usage TEXT,
		input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER,
		cache_creation_tokens INTEGER, reasoning_tokens INTEGER, cost_usd REAL,
		parent TEXT, labels TEXT,
		owner_host TEXT, owner_pid INTEGER, heartbeat_at INTEGER,
		tick INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sessions_started ON sessions (started_at, sid);
	CREATE INDEX sessions_tick ON sessions (tick);
	CREATE INDEX sessions_running ON sessions (status) WHERE status = 'running';
	CREATE TABLE events (
		key INTEGER PRIMARY KEY,
		sid INTEGER GENERATED ALWAYS AS (key >> 40) VIRTUAL,
		seq INTEGER GENERATED ALWAYS AS (key & 1099511627775) VIRTUAL,
		ts INTEGER,
		type TEXT NOT NULL,
		harness TEXT,
		turn INTEGER NOT NULL,
		origin TEXT,
		parent_call_id TEXT,
		payload TEXT NOT NULL,
		source_stream TEXT,
		source_line INTEGER
	);
	CREATE TABLE lines (
		id INTEGER PRIMARY KEY,
		sid INTEGER NOT NULL REFERENCES sessions (sid) ON DELETE CASCADE,
		stream TEXT NOT NULL,
		n INTEGER NOT NULL,
		size INTEGER NOT NULL,
		sha256 BLOB,
		ts INTEGER,
		data BLOB NOT NULL,
		UNIQUE (sid, stream, n)
	);`},
	// 2: an event is its key, time, type and body (store.AppendBody), the
	// envelope's other parts in the body as they are sent: one value to
	// bind instead of eight, and a replay compared by its bytes.
	{sql: `CREATE TABLE events2 (
		key INTEGER PRIMARY KEY,
		ts INTEGER,
		type TEXT NOT NULL,
		body BLOB NOT NULL
	);`, step: migrateBodies},
	// 3: the store's keys (Key), and the mark of a session whose writer
	// died (set by Reap, cleared when a writer closes the session), which
	// Repair looks for; the sessions interrupted before are marked.
	{sql: `CREATE TABLE keys (
		name TEXT PRIMARY KEY,
		value BLOB NOT NULL
	);
	ALTER TABLE sessions ADD COLUMN repair INTEGER NOT NULL DEFAULT 0;
	UPDATE sessions SET repair = 1 WHERE status = 'interrupted';
	CREATE INDEX sessions_repair ON sessions (repair) WHERE repair = 1;`},
	// 4: the credentials of the HTTP API (store.Tokens): the SHA-256 of
	// each secret, never the secret; a name is unique among the tokens
	// not revoked.
	{sql: `CREATE TABLE tokens (
		id TEXT PRIMARY KEY,
		kind TEXT NOT NULL,
		name TEXT,
		scopes TEXT NOT NULL,
		session TEXT,
		hash BLOB NOT NULL UNIQUE,
		created_at INTEGER NOT NULL,
		expires_at INTEGER,
		last_used_at INTEGER,
		revoked_at INTEGER
	);
	CREATE UNIQUE INDEX tokens_name ON tokens (name) WHERE name IS NOT NULL AND revoked_at IS NULL;`},
	// 5: the full-text index of the events' store.SearchText (see Search),
	// keyed by event key and holding no copy of the text; the events
	// stored before are indexed. Its segments are merged by the Store's
	// maintenance goroutine (see checkpoints), not in the commits that
	// add them, unless 64 pile up at one level.
	{sql: `CREATE VIRTUAL TABLE events_fts USING fts5 (text, content = '', contentless_delete = 1,
		tokenize = 'unicode61 remove_diacritics 0');
	INSERT INTO events_fts (events_fts, rank) VALUES ('automerge', 0);
	INSERT INTO events_fts (events_fts, rank) VALUES ('crisismerge', 64);`, step: indexStoredEvents},
	// 6: the indexer's watermark (see indexer): a session's events up to
	// indexed_seq are in the full-text index, and the indexer adds those
	// after it, which commits no longer do. The events stored before were
	// indexed by their commits or by migration 5.
	{sql: `ALTER TABLE sessions ADD COLUMN indexed_seq INTEGER NOT NULL DEFAULT 0;
	UPDATE sessions SET indexed_seq = last_seq;
	CREATE INDEX sessions_unindexed ON sessions (sid) WHERE indexed_seq < last_seq;`},
	// 7: how each native line's data is kept (see codec.go): NULL for as
	// it is, which the lines stored before are, or a codec; long lines
	// (and event bodies, which need no column) are stored compressed from
	// now on.
	{sql: `ALTER TABLE lines ADD COLUMN codec INTEGER;`},
}

// migrateBodies moves the events of schema 1 into schema 2's table.
func migrateBodies(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, ts, type, harness, turn, origin, parent_call_id, payload,
		source_stream, source_line FROM events ORDER BY key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events2 (key, ts, type, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	var body []byte
	for rows.Next() {
		var (
			key, turn                       int64
			ts, srcLine                     sql.NullInt64
			typ                             string
			harness, origin, parent, stream sql.NullString
			payload                         []byte
		)
		if err := rows.Scan(&key, &ts, &typ, &harness, &turn, &origin, &parent, &payload, &stream, &srcLine); err != nil {
			return err
		}
		body = appendBodyV1(body[:0], typ, harness.String, turn, origin.String, parent.String, payload, stream, srcLine)
		if _, err := ins.ExecContext(ctx, key, ts, typ, body); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE events; ALTER TABLE events2 RENAME TO events`)
	return err
}

// appendBodyV1 appends the body of an event stored by schema 1.
func appendBodyV1(b []byte, typ, harness string, turn int64, origin, parent string, payload []byte, stream sql.NullString, line sql.NullInt64) []byte {
	b = append(b, `"harness":`...)
	if harness == "" {
		b = append(b, "null"...)
	} else {
		b = jsonscan.AppendQuote(b, harness)
	}
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, turn, 10)
	b = append(b, `,"origin":`...)
	if origin == "" {
		origin = agentstream.OriginLive
	}
	b = jsonscan.AppendQuote(b, origin)
	if parent != "" {
		b = append(b, `,"parentCallId":`...)
		b = jsonscan.AppendQuote(b, parent)
	}
	b = append(b, `,"type":`...)
	b = jsonscan.AppendQuote(b, typ)
	b = append(b, `,"payload":`...)
	if len(payload) == 0 {
		b = append(b, "{}"...)
	} else {
		b = append(b, payload...)
	}
	b = append(b, `,"source":`...)
	if line.Valid {
		b = append(b, `{"stream":`...)
		b = jsonscan.AppendQuote(b, stream.String)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, line.Int64, 10)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// seqBits is how many low bits of an event key hold the seq.
const seqBits = 40

// maxSeq is the largest seq a session can hold.
const maxSeq = 1<<seqBits - 1

func eventKey(sid, seq int64) int64 { return sid<<seqBits | seq }

// SchemaVersion is the schema version this code writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	for {
		tx, err := s.write.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migrate: %w", err)
		}
		if v > len(migrations) {
			tx.Rollback()
			return fmt.Errorf("sqlite: %s: schema version %d is newer than this program's %d", s.path, v, len(migrations))
		}
		if v == len(migrations) {
			return tx.Rollback()
		}
		m := migrations[v]
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", v+1, err)
		}
		if m.step != nil {
			if err := m.step(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("sqlite: migration %d: %w", v+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
			v+1, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: migration %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlite: migration %d: %w", v+1, err)
		}
	}
}

// IntegrityCheck runs SQLite's integrity check and returns its findings, nil
// when the database is intact.
func (s *Store) IntegrityCheck(ctx context.Context) error {
	rows, err := s.read.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		if m != "ok" {
			msgs = append(msgs, m)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(msgs) > 0 {
		return fmt.Errorf("sqlite: integrity check: %s", strings.Join(msgs, "; "))
	}
	return nil
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

func msOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMs(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Migrate brings the schema of the database at path up to this program's
// version, as Open does, and returns the versions before and after.
func Migrate(ctx context.Context, path string) (from, to int, err error) {
	if _, err := os.Stat(path); err == nil {
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			return 0, 0, fmt.Errorf("sqlite: %w", err)
		}
		var exists int
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'`).Scan(&exists)
		if err == nil && exists > 0 {
			err = db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&from)
		}
		db.Close()
		if err != nil {
			return 0, 0, fmt.Errorf("sqlite: %s: %w", path, err)
		}
	}
	st, err := Open(path)
	if err != nil {
		return from, from, err
	}
	return from, SchemaVersion, st.Close()
}
