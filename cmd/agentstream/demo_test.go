package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream/internal/demo"
	"github.com/google/go-cmp/cmp"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// demoEnv is the environment of an in-process command: its streams and
// only the variables given, so that tests need not change the process's.
func demoEnv(stdout, stderr io.Writer, vars map[string]string) *env {
	return &env{stdin: strings.NewReader(""), stdout: stdout, stderr: stderr,
		getenv: func(k string) string { return vars[k] }}
}

// demoRun is `agentstream demo` running in process.
type demoRun struct {
	tmp            string // its $TMPDIR
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
	code           int
	stopped        bool
}

// startDemo runs the demo with args in process, with a $TMPDIR of its own;
// the test's cleanup stops it if the test did not.
func startDemo(t *testing.T, args ...string) *demoRun {
	t.Helper()
	d := &demoRun{tmp: t.TempDir(), done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	e := demoEnv(&d.stdout, &d.stderr, map[string]string{"TMPDIR": d.tmp})
	go func() { d.done <- cmdDemo(ctx, e, args) }()
	t.Cleanup(func() { d.stop(t) })
	return d
}

// await polls stdout until re matches and returns its submatches, failing
// the test if the demo exits first.
func (d *demoRun) await(t *testing.T, what string, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	poll(t, what, 30*time.Second, func() bool {
		select {
		case d.code = <-d.done:
			d.stopped = true
			t.Fatalf("demo exited with %d before printing %s; stderr:\n%s", d.code, what, d.stderr.String())
		default:
		}
		m = re.FindStringSubmatch(d.stdout.String())
		return m != nil
	})
	return m
}

// stop cancels the demo, waits for it and checks that it exited with 0
// and removed its temporary store.
func (d *demoRun) stop(t *testing.T) {
	t.Helper()
	if d.stopped {
		return
	}
	d.stopped = true
	d.cancel()
	select {
	case d.code = <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not return after cancellation")
	}
	if d.code != exitOK {
		t.Errorf("demo exited with %d after cancellation, want 0; stderr:\n%s", d.code, d.stderr.String())
	}
	if entries, _ := os.ReadDir(d.tmp); len(entries) != 0 {
		t.Errorf("temporary directory still holds %v after the demo ended", entries)
	}
}

var (
	openRE = regexp.MustCompile(`(?m)^agentstream demo: open (http://127\.0\.0\.1:\d+/)$`)
	liveRE = regexp.MustCompile(`(?m)^agentstream demo: live replay at (http://\S+/)sessions/(\S+)$`)
)

// poll calls fn every few milliseconds until it returns true or the
// deadline passes.
func poll(t *testing.T, what string, d time.Duration, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type apiSession struct {
	ID      string  `json:"id"`
	Harness *string `json:"harness"`
	Status  string  `json:"status"`
	Reason  *string `json:"reason"`
	LastSeq int64   `json:"lastSeq"`
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestDemo runs the demo in process with the built binary as its replay
// harness. The demo tests run in parallel, which is after the package's
// sequential tests: a store and a server in this process grow its memory,
// and a child process started afterwards inherits that peak in its rusage
// (vfork, then exec), which TestHugeLineBoundedMemory measures.
func TestDemo(t *testing.T) {
	t.Parallel()
	saved := demoExecutable
	demoExecutable = func() (string, error) { return binary, nil }
	t.Cleanup(func() { demoExecutable = saved })
	t.Run("serve", testDemoServe)
	t.Run("cancel during replay", testDemoCancelDuringReplay)
	t.Run("no live", testDemoNoLive)
}

// testDemoServe runs `agentstream demo --speed 20` and checks what the API
// serves: the imported sessions ended as recorded, the live one runs, then
// ends with the events a normalization of its recording gives, and the
// temporary store is gone once the demo is cancelled.
func testDemoServe(t *testing.T) {
	d := startDemo(t, "--speed", "20")
	base := d.await(t, "the URL", openRE)[1]
	live := d.await(t, "the live session", liveRE)[2]
	if entries, _ := os.ReadDir(d.tmp); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "agentstream-demo-") {
		t.Errorf("temporary directory holds %v, want one agentstream-demo-* store", entries)
	}

	// The imported sessions are there at once, ended as recorded; the live
	// one is seen running, then ends.
	wantImported := map[string]string{ // harness -> status
		"claude-code": "", "codex": "succeeded", "gemini-cli": "succeeded",
		"opencode": "succeeded", "copilot-cli": "succeeded",
	}
	sawRunning := false
	var final []apiSession
	poll(t, "the live session to end", 60*time.Second, func() bool {
		var page struct{ Sessions []apiSession }
		if err := getJSON(base+"api/sessions?limit=50", &page); err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Sessions {
			if s.ID == live {
				switch s.Status {
				case "running":
					sawRunning = true
				case "succeeded":
					final = page.Sessions
					return true
				default:
					t.Fatalf("live session %s, want running then succeeded; stderr:\n%s", s.Status, d.stderr.String())
				}
			}
		}
		return false
	})
	if !sawRunning {
		t.Error("the live session was never seen running")
	}
	if len(final) != len(demo.Imports())+1 {
		t.Errorf("%d sessions listed, want %d", len(final), len(demo.Imports())+1)
	}
	statuses := map[string][]string{}
	for _, s := range final {
		if s.ID == live {
			if got := deref(s.Reason); got != "completion" {
				t.Errorf("live session ended with reason %q, want completion", got)
			}
			continue
		}
		statuses[deref(s.Harness)] = append(statuses[deref(s.Harness)], s.Status)
		if want, ok := wantImported[deref(s.Harness)]; !ok {
			t.Errorf("imported session of harness %q", deref(s.Harness))
		} else if want != "" && s.Status != want {
			t.Errorf("%s session %s, want %s", deref(s.Harness), s.Status, want)
		}
	}
	claude := statuses["claude-code"]
	if !slices.Contains(claude, "succeeded") || !slices.Contains(claude, "failed") {
		t.Errorf("imported Claude Code sessions %v, want a success (the subagent run) and a failure", claude)
	}

	// The live session holds what normalizing its recording gives: the
	// runner read the replay harness as it would read the agent.
	var events []struct {
		Seq     int64  `json:"seq"`
		Type    string `json:"type"`
		Harness string `json:"harness"`
	}
	if err := getJSON(base+"api/sessions/"+live+"/events?limit=5000", &events); err != nil {
		t.Fatal(err)
	}
	recording, err := demo.Read(demo.Live)
	if err != nil {
		t.Fatal(err)
	}
	normalized, _, code := runCLI(t, string(recording), "normalize", "--protocol", demo.Protocol(recording), "-")
	if code != 0 {
		t.Fatalf("normalize exited with %d", code)
	}
	var want, got []string
	sc := bufio.NewScanner(strings.NewReader(normalized))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		want = append(want, e.Type)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		got = append(got, e.Type)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("live session's event types differ from its recording's (-normalize +live):\n%s", diff)
	}
	// Its native lines are kept too.
	first, _, _ := bytes.Cut(recording, []byte("\n"))
	resp, err := http.Get(base + "api/sessions/" + live + "/lines/1")
	if err != nil {
		t.Fatal(err)
	}
	line, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(line, first) {
		t.Errorf("native line 1 of the live session = %.80q…, want %.80q…", line, first)
	}
	// The UI is served next to the API.
	for _, path := range []string{"", "sessions/" + live} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("GET /%s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
		}
	}

	d.stop(t)
}

// testDemoCancelDuringReplay cancels the demo while the live replay plays
// (at the recorded pace): the replay harness is stopped, the demo returns
// and it still removes its store.
func testDemoCancelDuringReplay(t *testing.T) {
	d := startDemo(t)
	m := d.await(t, "the live replay", liveRE)
	poll(t, "the live session's first events", 30*time.Second, func() bool {
		var s apiSession
		return getJSON(m[1]+"api/sessions/"+m[2], &s) == nil && s.Status == "running" && s.LastSeq > 0
	})
	d.stop(t)
}

// testDemoNoLive runs `agentstream demo --no-live`: the recordings only.
func testDemoNoLive(t *testing.T) {
	d := startDemo(t, "--no-live")
	base := d.await(t, "the URL", openRE)[1]
	var page struct{ Sessions []apiSession }
	if err := getJSON(base+"api/sessions", &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != len(demo.Imports()) {
		t.Errorf("%d sessions, want the %d recordings", len(page.Sessions), len(demo.Imports()))
	}
	for _, s := range page.Sessions {
		if s.Status == "running" {
			t.Errorf("session %s is running", s.ID)
		}
	}
	if strings.Contains(d.stdout.String(), "live replay") {
		t.Errorf("--no-live printed a live replay:\n%s", d.stdout.String())
	}
	d.stop(t)
}

func TestDemoUsage(t *testing.T) {
	t.Parallel()
	if out, _, _ := runCLI(t, "", "help"); !strings.Contains(out, "\n  demo ") {
		t.Errorf("help does not list demo:\n%s", out)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"argument", []string{"extra"}, exitUsage, "no arguments expected"},
		{"not loopback", []string{"--addr", "0.0.0.0:0"}, exitUsage, "refusing to serve without --token"},
		{"bad speed", []string{"--speed", "0"}, exitUsage, "--speed"},
		{"replay without name", []string{"replay"}, exitUsage, "NAME expected"},
		{"replay unknown", []string{"replay", "no-such-recording"}, exitError, "no-such-recording"},
		{"replay bad speed", []string{"replay", "--speed", "-1", demo.Live}, exitUsage, "--speed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := cmdDemo(context.Background(), demoEnv(&stdout, &stderr, nil), tc.args)
			if code != tc.code || !strings.Contains(stderr.String(), tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), tc.code, tc.err)
			}
		})
	}
}

// TestDemoReplay runs the replay harness: an embedded recording, or a file,
// comes out byte for byte, and the flags a protocol appends are ignored.
func TestDemoReplay(t *testing.T) {
	t.Parallel()
	for _, name := range demo.Names() {
		want, err := demo.Read(name)
		if err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runCLI(t, "", "demo", "replay", "--speed", "1e6", name, "--output-format", "stream-json", "--verbose")
		if code != 0 || out != string(want) {
			t.Errorf("demo replay %s: exit %d, %d bytes of %d; stderr %q", name, code, len(out), len(want), stderr)
		}
	}
	file := sayHello
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "demo", "replay", "--speed", "1e6", file)
	if code != 0 || out != string(want) {
		t.Errorf("demo replay FILE: exit %d, stdout %q; stderr %q", code, out, stderr)
	}
}
