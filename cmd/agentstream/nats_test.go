package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// natsServer is an embedded NATS server with JetStream on loopback that a
// test stops and starts again on the same port and store directory.
type natsServer struct {
	t    *testing.T
	dir  string
	port int
	s    *natsserver.Server
}

func newNATSServer(t *testing.T) *natsServer {
	n := &natsServer{t: t, dir: t.TempDir(), port: -1}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsServer) start() {
	n.t.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: n.port, JetStream: true, StoreDir: n.dir, NoSigs: true, NoLog: true})
	if err != nil {
		n.t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		n.t.Fatal("nats-server did not start")
	}
	n.s, n.port = s, s.Addr().(*net.TCPAddr).Port
}

func (n *natsServer) stop() {
	if n.s != nil {
		n.s.Shutdown()
		n.s.WaitForShutdown()
		n.s = nil
	}
}

func (n *natsServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

// serveNATS runs `serve --nats` in process on a new database until the
// test ends, and returns its base URL and the database, opened.
func serveNATS(t *testing.T, natsURL string) (string, *sqlite.Store) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "serve.db")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--db", db, "--addr", "127.0.0.1:0", "--nats", natsURL}, strings.NewReader(""), &syncBuffer{}, &stderr)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(stderr.String())
		}
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`)
	var base string
	waitFor(t, 30*time.Second, "serve to listen", func() bool {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		}
		return base != ""
	})
	st, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return base, st
}

// ingestState returns the ingest state GET /api/health reports.
func ingestState(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Ingest struct {
			Transport, State string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h.Ingest.Transport != "nats" {
		t.Fatalf("health: ingest transport %q, want nats", h.Ingest.Transport)
	}
	return h.Ingest.State
}

// natsStoredLines returns the stdout lines the store holds of session id.
func natsStoredLines(st store.Store, id string) []store.Line {
	var out []store.Line
	st.Lines(context.Background(), id, func(l store.Line) error {
		if l.Stream == store.Stdout {
			l.Data = append([]byte(nil), l.Data...)
			out = append(out, l)
		}
		return nil
	})
	return out
}

// checkDenseSeq fails unless the events of session id have seq 1..lastSeq.
func checkDenseSeq(t *testing.T, st store.Store, id string) {
	t.Helper()
	evs, err := st.Events(context.Background(), id, store.EventQuery{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d of %s has seq %d: not dense", i, id, ev.Seq)
		}
	}
	if s, err := st.Session(context.Background(), id); err != nil || s.LastSeq != int64(len(evs)) || len(evs) == 0 {
		t.Fatalf("session %s: lastSeq %d, %d events, %v", id, s.LastSeq, len(evs), err)
	}
}

// TestRunNATS runs a real harness with run --nats in process and serve
// --nats writing to SQLite: every line once, a dense seq, the session
// succeeded, the spool removed, and /api/health says ingest is connected.
func TestRunNATS(t *testing.T) {
	ns := newNATSServer(t)
	base, st := serveNATS(t, ns.url())
	dir := t.TempDir()
	spools := filepath.Join(dir, "spool")
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	const id, n = "s.nats.run", 3000
	_, errOut, code := runCLI(t, "", "run", "--nats", ns.url(), "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", twoHalves, "sh", dir, strconv.Itoa(n))
	if code != 0 {
		t.Fatalf("run --nats: exit %d: %s", code, errOut)
	}
	waitFor(t, 60*time.Second, "the store to hold the session's end", func() bool {
		s, err := st.Session(context.Background(), id)
		return err == nil && s.Status == store.StatusSucceeded
	})
	checkLines(t, natsStoredLines(st, id), 2*n)
	checkDenseSeq(t, st, id)
	if left, _ := filepath.Glob(filepath.Join(spools, "*")); len(left) > 0 {
		t.Errorf("the finished spool was not removed: %v", left)
	}
	if s := ingestState(t, base); s != "connected" {
		t.Errorf("health: ingest %s, want connected", s)
	}
}

// TestRunNATSKilledResume kills a `run --nats` process with SIGKILL while
// NATS is stopped and half the lines are only in its spool, restarts NATS
// on its store directory, and completes the session with run --resume:
// every line is stored once, with a dense seq, and /api/health said
// ingest was paused while NATS was away. With NATS up, the runner is
// killed as it publishes the second half.
func TestRunNATSKilledResume(t *testing.T) {
	for _, natsDown := range []bool{true, false} {
		t.Run(map[bool]string{true: "nats down", false: "nats up"}[natsDown], func(t *testing.T) { testRunNATSKilled(t, natsDown) })
	}
}

func testRunNATSKilled(t *testing.T, natsDown bool) {
	n := 5000
	if raceEnabled {
		n /= 5
	}
	ns := newNATSServer(t)
	base, st := serveNATS(t, ns.url())
	dir := t.TempDir()
	spools := filepath.Join(dir, "spool")
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	const id = "s.nats.killed"
	cmd := exec.Command(binary, "run", "--nats", ns.url(), "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", twoHalves, "sh", dir, strconv.Itoa(n), "linger")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, 60*time.Second, "the first half", func() bool { return exists(filepath.Join(dir, "half")) })
	waitFor(t, 60*time.Second, "the store to get lines", func() bool { return len(natsStoredLines(st, id)) > 0 })
	if natsDown {
		ns.stop()
		waitFor(t, 10*time.Second, "health to say ingest is paused", func() bool { return ingestState(t, base) == "paused" })
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	waitFor(t, 60*time.Second, "the second half", func() bool { return exists(filepath.Join(dir, "pid")) })
	spool := filepath.Join(spools, id+".spool")
	waitFor(t, 30*time.Second, "the spool to hold every line", func() bool {
		b, _ := os.ReadFile(spool)
		return bytes.Count(b, []byte("\n")) == 1+2*n
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if got := len(natsStoredLines(st, id)); got >= 2*n && natsDown {
		t.Fatalf("the store has %d lines before the resume: nothing was left to resume", got)
	}
	if natsDown {
		ns.start()
	}
	_, errOut, code := runCLI(t, "", "run", "--resume", spool, "--upload-wait", "2m")
	if code != 0 {
		t.Fatalf("run --resume: exit %d: %s (the killed run said: %s)", code, errOut, stderr.String())
	}
	waitFor(t, 60*time.Second, "the store to hold the session's end", func() bool {
		s, err := st.Session(context.Background(), id)
		return err == nil && s.Status == store.StatusCancelled
	})
	checkLines(t, natsStoredLines(st, id), 2*n)
	checkDenseSeq(t, st, id)
	if exists(spool) || exists(spool+".cursor") {
		t.Error("the resumed spool was not removed")
	}
	waitFor(t, 10*time.Second, "health to say ingest is connected", func() bool { return ingestState(t, base) == "connected" })
}

// TestRunNATSRestart stops the NATS server while a run --nats (in process)
// prints the second half of its lines, and starts it again on the same
// store directory: the runner catches up by itself, and the store holds
// every line once, with a dense seq.
func TestRunNATSRestart(t *testing.T) {
	n := 5000
	if raceEnabled {
		n /= 5
	}
	ns := newNATSServer(t)
	_, st := serveNATS(t, ns.url())
	dir := t.TempDir()
	t.Setenv("AGENTSTREAM_SPOOL_DIR", filepath.Join(dir, "spool"))
	const id = "s.nats.restart"
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, code := runCLI(t, "", "run", "--nats", ns.url(), "--session", id, "--quiet", "--protocol", "claude-json", "--upload-wait", "2m",
			"--", "sh", "-c", twoHalves, "sh", dir, strconv.Itoa(n))
		done <- result{stderr, code}
	}()
	waitFor(t, 60*time.Second, "the first half", func() bool { return exists(filepath.Join(dir, "half")) })
	waitFor(t, 60*time.Second, "the store to get lines", func() bool { return len(natsStoredLines(st, id)) > 0 })
	ns.stop()
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	waitFor(t, 60*time.Second, "the second half", func() bool { return exists(filepath.Join(dir, "done")) })
	if got := len(natsStoredLines(st, id)); got >= 2*n {
		t.Fatalf("the store has %d lines while NATS was away", got)
	}
	ns.start()
	var res result
	select {
	case res = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatal("run did not return after NATS came back")
	}
	if res.code != 0 {
		t.Fatalf("run --nats: exit %d: %s", res.code, res.stderr)
	}
	waitFor(t, 60*time.Second, "the store to hold the session's end", func() bool {
		s, err := st.Session(context.Background(), id)
		return err == nil && s.Status == store.StatusSucceeded
	})
	checkLines(t, natsStoredLines(st, id), 2*n)
	checkDenseSeq(t, st, id)
}
