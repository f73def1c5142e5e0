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

// TestDemo runs the demo in process, as `agentstream demo --speed 20`,
// with the built binary as its replay harness, and checks what the API
// serves: the imported sessions ended as recorded, the live one runs, then
// ends with the events a normalization of its recording gives, and the
// temporary store is gone once the demo is cancelled.
func TestDemo(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	saved := demoExecutable
	demoExecutable = func() (string, error) { return binary, nil }
	t.Cleanup(func() { demoExecutable = saved })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"demo", "--speed", "20"}, strings.NewReader(""), &stdout, &stderr) }()
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			<-done
		}
	}()

	urlRE := regexp.MustCompile(`(?m)^agentstream demo: open (http://127\.0\.0\.1:\d+/)$`)
	liveRE := regexp.MustCompile(`(?m)^agentstream demo: live replay at http://\S+/sessions/(\S+)$`)
	var base, live string
	poll(t, "the URL on stdout", 30*time.Second, func() bool {
		select {
		case code := <-done:
			stopped = true
			t.Fatalf("demo exited with %d before printing its URL; stderr:\n%s", code, stderr.String())
		default:
		}
		out := stdout.String()
		m, l := urlRE.FindStringSubmatch(out), liveRE.FindStringSubmatch(out)
		if m == nil || l == nil {
			return false
		}
		base, live = m[1], l[1]
		return true
	})
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "agentstream-demo-") {
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
					t.Fatalf("live session %s, want running then succeeded; stderr:\n%s", s.Status, stderr.String())
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

	cancel()
	select {
	case code := <-done:
		stopped = true
		if code != exitOK {
			t.Errorf("demo exited with %d after cancellation, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not return after cancellation")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temporary directory still holds %v after the demo ended", entries)
	}
}

// TestDemoCancelDuringReplay cancels the demo while the live replay plays
// (at the recorded pace): the replay harness is stopped, the demo returns
// and it still removes its store.
func TestDemoCancelDuringReplay(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	saved := demoExecutable
	demoExecutable = func() (string, error) { return binary, nil }
	t.Cleanup(func() { demoExecutable = saved })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"demo"}, strings.NewReader(""), &stdout, &stderr) }()
	urlRE := regexp.MustCompile(`(?m)^agentstream demo: live replay at (http://\S+/)sessions/(\S+)$`)
	var m []string
	poll(t, "the live replay", 30*time.Second, func() bool {
		m = urlRE.FindStringSubmatch(stdout.String())
		return m != nil
	})
	poll(t, "the live session's first events", 30*time.Second, func() bool {
		var s apiSession
		return getJSON(m[1]+"api/sessions/"+m[2], &s) == nil && s.Status == "running" && s.LastSeq > 0
	})
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("demo exited with %d, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not return after cancellation")
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temporary directory still holds %v after the demo ended", entries)
	}
}

func TestDemoUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"argument", []string{"demo", "extra"}, exitUsage, "no arguments expected"},
		{"not loopback", []string{"demo", "--addr", "0.0.0.0:0"}, exitUsage, "refusing to serve without --token"},
		{"bad speed", []string{"demo", "--speed", "0"}, exitUsage, "--speed"},
		{"replay without name", []string{"demo", "replay"}, exitUsage, "NAME expected"},
		{"replay unknown", []string{"demo", "replay", "no-such-recording"}, exitError, "no-such-recording"},
		{"replay bad speed", []string{"demo", "replay", "--speed", "-1", demo.Live}, exitUsage, "--speed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTSTREAM_TOKEN", "")
			_, stderr, code := runCLI(t, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.err)
			}
		})
	}
}

// TestDemoReplay runs the replay harness: an embedded recording, or a file,
// comes out byte for byte, and the flags a protocol appends are ignored.
func TestDemoReplay(t *testing.T) {
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
	file := corpus + "gemini/jnarowski-agentcmd-docs-stream-json-say-hello.jsonl"
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "", "demo", "replay", "--speed", "1e6", file)
	if code != 0 || out != string(want) {
		t.Errorf("demo replay FILE: exit %d, stdout %q; stderr %q", code, out, stderr)
	}
}
