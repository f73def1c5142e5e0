package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/sqlite"
	"github.com/agentstream/agentstream/web/api"
)

// apiServer is a real agentstream server on loopback that a test stops and
// starts again, on the same address and database, as a restarted server
// would be.
type apiServer struct {
	t    *testing.T
	db   string
	addr string
	st   *sqlite.Store
	srv  *http.Server
}

func newAPIServer(t *testing.T) *apiServer {
	a := &apiServer{t: t, db: filepath.Join(t.TempDir(), "server.db"), addr: "127.0.0.1:0"}
	a.start()
	t.Cleanup(a.stop)
	return a
}

func (a *apiServer) url() string { return "http://" + a.addr }

func (a *apiServer) start() {
	a.t.Helper()
	// A session whose writer went with the stopped server counts as
	// interrupted at once, so that the new one resumes it.
	st, err := sqlite.OpenOptions(a.db, sqlite.Options{StaleAfter: time.Millisecond})
	if err != nil {
		a.t.Fatal(err)
	}
	var ln net.Listener
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if ln, err = net.Listen("tcp", a.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		st.Close()
		a.t.Fatal(err)
	}
	a.addr = ln.Addr().String()
	a.st = st
	a.srv = &http.Server{Handler: api.New(st, hub.New(hub.Options{}), api.Options{})}
	go a.srv.Serve(ln)
}

func (a *apiServer) stop() {
	if a.srv == nil {
		return
	}
	a.srv.Close()
	a.st.Close()
	a.srv, a.st = nil, nil
}

// session returns the id of the one session the server holds, or "".
func (a *apiServer) session() string {
	page, err := a.st.Sessions(context.Background(), store.SessionQuery{})
	if err != nil || len(page.Sessions) != 1 {
		return ""
	}
	return page.Sessions[0].ID
}

// lines returns the stored stdout lines of session id.
func (a *apiServer) lines(id string) []store.Line {
	var out []store.Line
	a.st.Lines(context.Background(), id, func(l store.Line) error {
		if l.Stream == store.Stdout {
			l.Data = append([]byte(nil), l.Data...)
			out = append(out, l)
		}
		return nil
	})
	return out
}

// twoHalves is a harness printing n lines (harnessLine), then waiting for
// the file go in its directory before it prints n more, then touching done;
// with linger, it then sleeps (its pid in the file pid).
const twoHalves = `d=$1 n=$2
seq -f "line %.0f ` + lineFill + `" 1 $n
touch "$d/half"
while [ ! -e "$d/go" ]; do sleep 0.02; done
seq -f "line %.0f ` + lineFill + `" $((n+1)) $((2*n))
touch "$d/done"
if [ "$3" = linger ]; then echo $$ > "$d/pid"; exec sleep 300; fi
`

const lineFill = "of a harness that prints fast, padded to look like a tool output of some length ................................................................................"

// harnessLine is line i as twoHalves prints it.
func harnessLine(i int) string { return fmt.Sprintf("line %d %s", i, lineFill) }

// waitFor polls cond until it holds, failing the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func exists(name string) bool { _, err := os.Stat(name); return err == nil }

// checkLines fails unless the server holds lines 1..n of the harness, each
// once and as printed.
func checkLines(t *testing.T, got []store.Line, n int) {
	t.Helper()
	if len(got) != n {
		t.Errorf("the server holds %d stdout lines, want %d", len(got), n)
	}
	for i, l := range got {
		if l.N != int64(i+1) || string(l.Data) != harnessLine(i+1) {
			t.Fatalf("stored line %d is line %d %q, want %q", i+1, l.N, l.Data, harnessLine(i+1))
		}
	}
}

// TestRunServerAway runs a fast harness with run --server in process and
// stops the server while the harness prints half its lines: the runner's
// heap stays bounded while the lines wait in the spool, the server
// restarted gets every line exactly once, the spool is removed, and the run
// exits with the harness's status. Under the race detector the harness
// prints a fifth as much and the heap is not checked (the detector's own
// memory is in it).
func TestRunServerAway(t *testing.T) {
	n := 100000 // lines per half, about 20 MB each
	if raceEnabled {
		n /= 5
	}
	srv := newAPIServer(t)
	dir := t.TempDir()
	spools := filepath.Join(dir, "spool")
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, stderr, code := runCLI(t, "", "run", "--server", srv.url(), "--quiet", "--protocol", "claude-json", "--upload-wait", "5m",
			"--", "sh", "-c", twoHalves, "sh", dir, strconv.Itoa(n))
		done <- result{stderr, code}
	}()
	waitFor(t, 60*time.Second, "the first half", func() bool { return exists(filepath.Join(dir, "half")) })
	var id string
	waitFor(t, 60*time.Second, "the server to get lines", func() bool {
		id = srv.session()
		return id != "" && len(srv.lines(id)) > 0
	})
	srv.stop()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	// While the server is away, the second half goes to the spool, not to
	// memory.
	var peak uint64
	for !exists(filepath.Join(dir, "done")) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	const bound = 16 << 20 // the second half is 20 MB
	t.Logf("heap in use: %d MiB when the server stopped, at most %d MiB while it was away", before.HeapInuse>>20, peak>>20)
	if peak > before.HeapInuse+bound && !raceEnabled {
		t.Errorf("the runner's heap grew by %d MiB while the server was away (bound %d MiB)", (peak-before.HeapInuse)>>20, bound>>20)
	}
	srv.start()
	var res result
	select {
	case res = <-done:
	case <-time.After(5 * time.Minute):
		t.Fatal("run did not return after the server came back")
	}
	if res.code != 0 {
		t.Fatalf("run exit %d: %s", res.code, res.stderr)
	}
	checkLines(t, srv.lines(id), 2*n)
	if s, err := srv.st.Session(context.Background(), id); err != nil || s.Status != store.StatusSucceeded {
		t.Errorf("server session %+v, %v", s, err)
	}
	if left, _ := filepath.Glob(filepath.Join(spools, "*")); len(left) > 0 {
		t.Errorf("the finished spool was not removed: %v", left)
	}
}

// TestRunKilledResume kills a `run --server` process with SIGKILL while the
// server is away and half the lines are only in its spool, then completes
// the upload with run --resume against the restarted server: every line is
// there once and the session is ended.
func TestRunKilledResume(t *testing.T) {
	n := 20000
	if raceEnabled {
		n /= 5
	}
	srv := newAPIServer(t)
	dir := t.TempDir()
	spools := filepath.Join(dir, "spool")
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	const id = "s_killed"
	cmd := exec.Command(binary, "run", "--server", srv.url(), "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", twoHalves, "sh", dir, strconv.Itoa(n), "linger")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, 60*time.Second, "the first half", func() bool { return exists(filepath.Join(dir, "half")) })
	waitFor(t, 60*time.Second, "the server to get lines", func() bool { return len(srv.lines(id)) > 0 })
	srv.stop()
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	waitFor(t, 60*time.Second, "the second half", func() bool { return exists(filepath.Join(dir, "pid")) })
	spool := filepath.Join(spools, id+".spool")
	waitFor(t, 30*time.Second, "the spool to hold every line", func() bool {
		b, _ := os.ReadFile(spool)
		return bytes.Count(b, []byte("\n")) == 1+2*n
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The harness outlives a runner killed so; stop it.
	if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	srv.start()
	if got := len(srv.lines(id)); got >= 2*n {
		t.Fatalf("the server has %d lines before the resume: nothing was left to resume", got)
	}
	_, errOut, code := runCLI(t, "", "run", "--resume", spool, "--server", srv.url(), "--upload-wait", "5m")
	if code != 0 {
		t.Fatalf("run --resume: exit %d: %s (the killed run said: %s)", code, errOut, stderr.String())
	}
	checkLines(t, srv.lines(id), 2*n)
	if s, err := srv.st.Session(context.Background(), id); err != nil || s.Status != store.StatusCancelled {
		t.Errorf("server session %+v, %v", s, err)
	}
	if exists(spool) || exists(spool+".cursor") {
		t.Error("the resumed spool was not removed")
	}
}

// TestRunDeadlineServerAway runs with the server away from the start to the
// end: the run still exits with the deadline's status, says where the
// session waits, and run --resume sends it once the server is back.
func TestRunDeadlineServerAway(t *testing.T) {
	srv := newAPIServer(t)
	srv.stop()
	spools := filepath.Join(t.TempDir(), "spool")
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	_, stderr, code := runCLI(t, "", "run", "--server", srv.url(), "--quiet", "--protocol", "claude-json",
		"--timeout", "500ms", "--grace", "100ms", "--upload-wait", "300ms",
		"--", "sh", "-c", `seq -f "line %.0f `+lineFill+`" 1 100; exec sleep 30`)
	if code != exitDeadline {
		t.Fatalf("run exit %d, want %d: %s", code, exitDeadline, stderr)
	}
	left, _ := filepath.Glob(filepath.Join(spools, "*.spool"))
	if len(left) != 1 || !strings.Contains(stderr, "--resume "+left[0]) {
		t.Fatalf("spools %v; run said: %s", left, stderr)
	}
	srv.start()
	if _, errOut, code := runCLI(t, "", "run", "--resume", left[0]); code != 0 {
		t.Fatalf("run --resume: exit %d: %s", code, errOut)
	}
	id := strings.TrimSuffix(filepath.Base(left[0]), ".spool")
	checkLines(t, srv.lines(id), 100)
	s, err := srv.st.Session(context.Background(), id)
	if err != nil || s.Status != store.StatusFailed {
		t.Errorf("server session %+v, %v", s, err)
	}
}

// TestRunGoesOnFromSpool gives run --session the id of a session whose
// spool a dead run left unfinished: the run sends that spool's lines first
// and numbers its own after them, in the same session.
func TestRunGoesOnFromSpool(t *testing.T) {
	srv := newAPIServer(t)
	spools := t.TempDir()
	t.Setenv("AGENTSTREAM_SPOOL_DIR", spools)
	const id = "s_goes_on"
	sp, err := api.CreateSpool(filepath.Join(spools, id+".spool"), api.SpoolHeader{Server: srv.url(), Session: api.CreateRequest{ID: id, Protocol: "claude-json"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		sp.Line(store.Line{Stream: store.Stdout, N: int64(i), Data: []byte(harnessLine(i)), Size: int64(len(harnessLine(i)))})
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "", "run", "--server", srv.url(), "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", `seq -f "line %.0f `+lineFill+`" 3 5`)
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "unfinished spool") {
		t.Errorf("run did not say it went on from the spool: %s", stderr)
	}
	checkLines(t, srv.lines(id), 5)
}
