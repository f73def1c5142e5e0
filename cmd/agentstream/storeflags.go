package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/sqlite"
)

// dbHelp documents where the session database is.
const dbHelp = "the session database: a postgres:// (or postgresql://) URL, else an SQLite file (default $AGENTSTREAM_DB, else $XDG_DATA_HOME/agentstream/agentstream.db, else ~/.local/share/agentstream/agentstream.db)"

// dbFlag declares --db on fs.
func dbFlag(fs *flag.FlagSet) *string { return fs.String("db", "", dbHelp) }

// dbPath returns the database path: flag, else $AGENTSTREAM_DB, else the
// XDG data directory.
func dbPath(e *env, flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if p := e.getenv("AGENTSTREAM_DB"); p != "" {
		return p, nil
	}
	if d := e.getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agentstream", "agentstream.db"), nil
	}
	if h := e.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "agentstream", "agentstream.db"), nil
	}
	return "", errors.New("no database: set --db, $AGENTSTREAM_DB or $HOME")
}

// sessionStore is what the commands need of a store, whichever it is.
type sessionStore interface {
	store.Store
	store.Keys
	store.Tokens
	Follow(ctx context.Context, pub store.Publisher, interval time.Duration) error
	Following() bool
	ReplaceEvents(ctx context.Context, id string, envs []agentstream.Envelope) error
	SetProtocol(ctx context.Context, id, protocol string) error
	DeleteSession(ctx context.Context, id string) error
	Close() error
}

var (
	_ sessionStore = (*sqlite.Store)(nil)
	_ sessionStore = (*postgres.Store)(nil)
)

// openStore opens the session database named by --db (or its default): a
// PostgreSQL database for a postgres:// URL, else an SQLite file. The
// store repairs the sessions whose writer died with today's adapters. It also
// returns where the database is, for messages (without a password).
func openStore(ctx context.Context, e *env, flagValue string) (sessionStore, string, error) {
	return openStoreMode(ctx, e, flagValue, false, 0)
}

// bulkBatch is the batch of a store opened for bulk writes (import): a
// commit per 4,096 events or lines instead of 512, a third less CPU for
// the commits of a large import.
const bulkBatch = 4096

// openBulkStore opens the session database as openStore does, for a
// command that writes whole sessions at once (import): its writers commit
// larger batches.
func openBulkStore(ctx context.Context, e *env, flagValue string) (sessionStore, string, error) {
	return openStoreMode(ctx, e, flagValue, false, bulkBatch)
}

// openExistingStore opens the session database as openStore does, for a
// command that only reads sessions: an SQLite file that does not exist is
// an error naming its path, and nothing is created.
func openExistingStore(ctx context.Context, e *env, flagValue string) (sessionStore, string, error) {
	return openStoreMode(ctx, e, flagValue, true, 0)
}

// openStoreMode opens the session database; batch, when not zero, is its
// writers' batch size.
func openStoreMode(ctx context.Context, e *env, flagValue string, mustExist bool, batch int) (sessionStore, string, error) {
	path, err := dbPath(e, flagValue)
	if err != nil {
		return nil, "", err
	}
	if postgres.IsURL(path) {
		st, err := postgres.OpenOptions(ctx, path, postgres.Options{Dialects: dialect, BatchSize: batch})
		if err != nil {
			return nil, "", err
		}
		return st, st.String(), nil
	}
	st, err := sqlite.OpenOptions(path, sqlite.Options{Dialects: dialect, MustExist: mustExist, BatchSize: batch})
	if errors.Is(err, fs.ErrNotExist) && mustExist {
		return nil, "", fmt.Errorf("no session database at %s (import, run and chat create it; --db or $AGENTSTREAM_DB names another)", path)
	}
	if err != nil {
		return nil, "", err
	}
	return st, st.Path(), nil
}

// sessionArg returns the id a SESSION argument names: a whole id, or a
// prefix of one only (with or without its "s_"), as git takes a commit's.
// Its errors name the argument and the database at where.
func sessionArg(ctx context.Context, st store.Store, where, arg string) (string, error) {
	id, err := store.ResolveID(ctx, st, arg)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("no session %s in %s ('agentstream sessions' lists them)", arg, where)
	case errors.Is(err, store.ErrAmbiguous):
		return "", fmt.Errorf("%v: give more of it", err)
	case err != nil:
		return "", fmt.Errorf("session %s: %w", arg, err)
	}
	return id, nil
}

// closeAt closes a writer with its session's end time.
func closeAt(ctx context.Context, w store.Writer, t time.Time) error {
	if c, ok := w.(interface {
		CloseAt(context.Context, time.Time) error
	}); ok {
		return c.CloseAt(ctx, t)
	}
	return w.Close(ctx)
}

// parseSince reads a --since value: a duration back from now (90m, 36h,
// 7d), an RFC 3339 time, or a date (2026-11-29, midnight UTC).
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if strings.HasSuffix(s, "d") {
		if n, err := strconv.Atoi(strings.TrimSuffix(s, "d")); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("bad --since %q: want a duration (90m, 36h, 7d), an RFC 3339 time or a date", s)
}

// parseArgs parses flags that may come before, between or after the
// positional arguments (agentstream export SESSION --format native), and
// returns the positional ones; "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for {
		if code, ok := parseFlags(fs, args); !ok {
			return nil, code, false
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, exitOK, true
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), exitOK, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
