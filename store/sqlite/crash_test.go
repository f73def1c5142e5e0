//go:build unix

package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
)

// buildCrashWriter builds testdata/crashwriter into dir.
func buildCrashWriter(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "crashwriter")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/crashwriter")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("building the crash writer: %v", err)
	}
	return bin
}

// TestCrash kills a writer process with SIGKILL at random moments, many
// times over one database, and checks after each kill that every event the
// writer acknowledged is there, that seq is dense from 1, that the
// database is intact, and that the session is marked interrupted.
func TestCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a writer process")
	}
	dir := t.TempDir()
	bin := buildCrashWriter(t, dir)
	db := filepath.Join(dir, "crash.db")
	rounds := 20
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	ctx := context.Background()
	for round := range rounds {
		id := fmt.Sprint("s_crash_", round)
		cmd := exec.Command(bin, db, id, strconv.FormatUint(r.Uint64(), 10))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		acked := make(chan int64, 1)
		go func() {
			var last int64
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				// A line cut by the kill has no newline: Scan still
				// returns it, but it can only be a prefix of a number
				// that was acknowledged, never a larger one.
				if v, err := strconv.ParseInt(strings.TrimSpace(sc.Text()), 10, 64); err == nil && v > last {
					last = v
				}
			}
			acked <- last
		}()
		time.Sleep(time.Duration(50+r.IntN(400)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		last := <-acked

		// Reopening reaps the dead writer's session. Indexing waits: what
		// is checked here is what the writer committed, and the index,
		// built by this (race-instrumented) process, would make each
		// round slower than the last.
		st, err := sqlite.OpenOptions(db, sqlite.Options{IndexDelay: time.Hour})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		if err := st.IntegrityCheck(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		sess, err := st.Session(ctx, id)
		if errors.Is(err, store.ErrNotFound) && last == 0 {
			// Killed before the session's creation committed: nothing
			// was acknowledged, and nothing is owed.
			t.Logf("round %d: killed before the session was created", round)
			st.Close()
			continue
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if sess.Status != store.StatusInterrupted {
			t.Errorf("round %d: status %q, want interrupted", round, sess.Status)
		}
		if sess.LastSeq < last {
			t.Errorf("round %d: acknowledged %d but the session's last seq is %d", round, last, sess.LastSeq)
		}
		var want int64 = 1
		for {
			evs, err := st.Events(ctx, id, store.EventQuery{After: want - 1, Limit: 5000})
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Seq != want {
					t.Fatalf("round %d: seq %d where %d was expected", round, ev.Seq, want)
				}
				if !strings.Contains(string(ev.Data), fmt.Sprintf(`"text":"event %d `, want)) {
					t.Fatalf("round %d: event %d holds %.80s", round, want, ev.Data)
				}
				want++
			}
			if len(evs) < 5000 {
				break
			}
		}
		if want-1 != sess.LastSeq {
			t.Errorf("round %d: %d events stored, session says %d", round, want-1, sess.LastSeq)
		}
		if want-1 < last {
			t.Errorf("round %d: acknowledged %d, found %d", round, last, want-1)
		}
		t.Logf("round %d: acknowledged %d, stored %d", round, last, want-1)
		st.Close()
	}
}
