package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// NewSchema creates an empty schema on the server dbURL names, named
// prefix followed by 12 random hex digits, and returns dbURL with its
// search_path set to that schema, so that every connection made from the
// URL (Open, Migrate) works in it, and a function that drops the schema
// with everything in it. It is for tests and trials that each need an
// empty database on one shared server; prefix is lower-case letters,
// digits and underscores.
func NewSchema(ctx context.Context, dbURL, prefix string) (schemaURL string, drop func(context.Context) error, err error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", nil, fmt.Errorf("postgres: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := prefix + hex.EncodeToString(b)
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		return nil
	}
	quoted := pgx.Identifier{schema}.Sanitize()
	if err := exec(ctx, "CREATE SCHEMA "+quoted); err != nil {
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func(ctx context.Context) error { return exec(ctx, "DROP SCHEMA "+quoted+" CASCADE") }, nil
}
