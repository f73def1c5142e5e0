package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream/store/sqlite"
)

// TestOpenReadOnly: another program's database in WAL mode is read with
// what its log holds, and nothing can be written to it; a missing file is
// an error, not a new database.
func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	w, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec("CREATE TABLE t (v text); INSERT INTO t VALUES ('in the log')"); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT v FROM t").Scan(&v); err != nil || v != "in the log" {
		t.Fatalf("read %q, %v; want the row the writer's log holds", v, err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES ('mine')"); err == nil {
		t.Error("a write through the read-only handle succeeded")
	}
	if _, err := sqlite.OpenReadOnly(filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Error("a missing database opened")
	}
}
