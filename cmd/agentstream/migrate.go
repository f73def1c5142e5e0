package main

import (
	"context"
	"fmt"

	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/sqlite"
)

const migrateDoc = `Brings the session database's schema up to this program's version. A
PostgreSQL database (--db postgres://…) is migrated only by this command:
the commands that read or write sessions refuse one whose schema is older,
so that a schema change never runs on the way of an ingest. It is safe to
run while other processes use the database, and to run again. An SQLite
file is migrated by any command that opens it; here it is only reported.`

func cmdMigrate(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "migrate", "[--db URL|PATH]", migrateDoc)
	db := dbFlag(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream migrate: no arguments expected")
		return exitUsage
	}
	path, err := dbPath(e, *db)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream migrate:", err)
		return exitError
	}
	var from, to int
	where := path
	if postgres.IsURL(path) {
		where = postgres.Redact(path)
		from, to, err = postgres.Migrate(ctx, path)
	} else {
		from, to, err = sqlite.Migrate(ctx, path)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream migrate:", err)
		return exitError
	}
	if from == to {
		fmt.Fprintf(e.stdout, "%s: schema version %d, up to date\n", where, to)
	} else {
		fmt.Fprintf(e.stdout, "%s: schema version %d → %d\n", where, from, to)
	}
	return exitOK
}
