package postgres_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
	"github.com/agentstream/agentstream/store/storetest"
)

// envURL names the server the tests use.
const envURL = "AGENTSTREAM_TEST_POSTGRES"

// serverURL returns the test server's URL, or skips the test.
func serverURL(t testing.TB) string {
	u := os.Getenv(envURL)
	if u == "" {
		t.Skipf("no PostgreSQL server: set %s=postgres://… (scripts/test starts one)", envURL)
	}
	return u
}

// emptyDB returns the URL of a fresh schema on the test server, dropped at
// the end of the test: every connection made from the URL works in it.
func emptyDB(t testing.TB) string {
	t.Helper()
	u, drop, err := postgres.NewSchema(context.Background(), serverURL(t), "t_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return u
}

func open(t testing.TB, dbURL string, opts postgres.Options) *postgres.Store {
	t.Helper()
	st, err := postgres.OpenOptions(context.Background(), dbURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// migrated returns the URL of a fresh schema brought up to date.
func migrated(t testing.TB) string {
	t.Helper()
	u := emptyDB(t)
	if _, _, err := postgres.Migrate(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestStore runs the store conformance suite.
func TestStore(t *testing.T) {
	serverURL(t)
	urls := map[storetest.Store]string{}
	storetest.Run(t, storetest.Harness{
		Open: func(t *testing.T) storetest.Store {
			u := migrated(t)
			st := open(t, u, postgres.Options{BatchSize: 16})
			urls[st] = u
			return st
		},
		Reopen: func(t *testing.T, st storetest.Store) storetest.Store {
			o := open(t, urls[st], postgres.Options{})
			urls[o] = urls[st]
			return o
		},
		Takeover: func(t *testing.T, st storetest.Store) storetest.Store {
			time.Sleep(2 * time.Millisecond)
			o := open(t, urls[st], postgres.Options{StaleAfter: time.Nanosecond})
			urls[o] = urls[st]
			return o
		},
		Repair: func(t *testing.T, st storetest.Store, d store.Dialects) storetest.Store {
			time.Sleep(2 * time.Millisecond)
			o := open(t, urls[st], postgres.Options{StaleAfter: time.Nanosecond, Dialects: d})
			urls[o] = urls[st]
			return o
		},
		FollowHook: postgres.SetFollowHook,
	})
}

// TestMigrate checks that Open refuses a database Migrate did not bring up
// to date, and that Migrate runs once.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	u := emptyDB(t)
	if _, err := postgres.Open(ctx, u); !errors.Is(err, postgres.ErrSchema) {
		t.Errorf("Open of an empty database: %v, want ErrSchema", err)
	}
	from, to, err := postgres.Migrate(ctx, u)
	if err != nil || from != 0 || to != postgres.SchemaVersion {
		t.Errorf("Migrate = %d, %d, %v; want 0, %d, nil", from, to, err, postgres.SchemaVersion)
	}
	from, to, err = postgres.Migrate(ctx, u)
	if err != nil || from != postgres.SchemaVersion || to != postgres.SchemaVersion {
		t.Errorf("Migrate again = %d, %d, %v; want %d twice", from, to, err, postgres.SchemaVersion)
	}
	st := open(t, u, postgres.Options{})
	if got := st.String(); got != postgres.Redact(u) {
		t.Errorf("String() = %q", got)
	}
}

func TestRedact(t *testing.T) {
	got := postgres.Redact("postgres://me:secret@db.example:5432/x?sslmode=disable")
	if got != "postgres://me:xxxxx@db.example:5432/x?sslmode=disable" {
		t.Errorf("Redact = %q", got)
	}
}
