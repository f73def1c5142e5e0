// Package pgtest gives each test a PostgreSQL schema of its own, on the
// server that AGENTSTREAM_TEST_POSTGRES names (scripts/test starts one).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env is the variable that names the test server.
const Env = "AGENTSTREAM_TEST_POSTGRES"

// ServerURL returns the test server's URL, or skips the test.
func ServerURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		t.Skipf("no PostgreSQL server: set %s=postgres://… (scripts/test starts one)", Env)
	}
	return u
}

// Schema returns the URL of a fresh, empty schema on the test server,
// dropped at the end of the test: every connection made from the URL works
// in it. It skips the test when there is no server.
func Schema(t testing.TB) string {
	t.Helper()
	base := ServerURL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	exec := func(q string) error {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, q)
		return err
	}
	if err := exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
