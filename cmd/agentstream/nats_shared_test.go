package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/store/postgres"
)

// serveProcess is a `serve --nats` child process.
type serveProcess struct {
	cmd    *exec.Cmd
	stderr syncBuffer
	base   string
}

// startServe starts `agentstream serve --db db --nats natsURL` as a child
// process, killed at the end of the test, and waits until it listens.
func startServe(t *testing.T, db, natsURL string) *serveProcess {
	t.Helper()
	s := &serveProcess{cmd: exec.Command(binary, "serve", "--db", db, "--addr", "127.0.0.1:0", "--nats", natsURL)}
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		if t.Failed() {
			t.Logf("serve %d said:\n%s", s.cmd.Process.Pid, s.stderr.String())
		}
	})
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)`)
	waitFor(t, 30*time.Second, "serve to listen", func() bool {
		if m := addr.FindStringSubmatch(s.stderr.String()); m != nil {
			s.base = "http://" + m[1]
		}
		return s.base != ""
	})
	return s
}

// partitions returns the partitions GET /api/health says the node holds.
func (s *serveProcess) partitions(t *testing.T) []int {
	t.Helper()
	resp, err := http.Get(s.base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Ingest struct {
			Mode       string `json:"mode"`
			Partitions []int  `json:"partitions"`
		} `json:"ingest"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if h.Ingest.Mode != "shared" {
		t.Fatalf("health: ingest mode %q, want shared (the default with PostgreSQL)", h.Ingest.Mode)
	}
	return h.Ingest.Partitions
}

// slowHalves prints lines 1..$1 as twoHalves does, a hundred at a time
// with a pause between.
const slowHalves = `n=$1 i=1
while [ $i -le $n ]; do
	seq -f "line %.0f ` + lineFill + `" $i $((i+99))
	i=$((i+100))
	sleep 0.1
done`

// TestServeSharedKilled runs two `serve --nats` processes sharing one
// PostgreSQL store, publishes sessions of both nodes' partitions with
// real `run --nats` processes, and kills one node with SIGKILL
// mid-stream: the other takes every partition over, and every session is
// stored whole, each line once, with a dense seq, and succeeds.
func TestServeSharedKilled(t *testing.T) {
	db := postgresSchema(t)
	if _, errOut, code := runCLI(t, "", "migrate", "--db", db); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	ns := newNATSServer(t)
	nodes := []*serveProcess{startServe(t, db, ns.url()), startServe(t, db, ns.url())}
	var held [2][]int
	waitFor(t, 60*time.Second, "the nodes to share the partitions", func() bool {
		held[0], held[1] = nodes[0].partitions(t), nodes[1].partitions(t)
		all := append(slices.Clone(held[0]), held[1]...)
		slices.Sort(all)
		return len(held[0]) > 0 && len(held[1]) > 0 && len(slices.Compact(all)) == natsbus.Partitions && len(all) == natsbus.Partitions
	})
	// Three sessions in each node's partitions.
	var ids []string
	per := [2]int{}
	for i := 0; len(ids) < 6; i++ {
		id := fmt.Sprintf("s.shared.%d", i)
		for k := range nodes {
			if slices.Contains(held[k], natsbus.Partition(id)) && per[k] < 3 {
				per[k]++
				ids = append(ids, id)
			}
		}
	}
	n := 2000
	if raceEnabled {
		n = 1000
	}
	t.Setenv("AGENTSTREAM_SPOOL_DIR", t.TempDir())
	var wg sync.WaitGroup
	for _, id := range ids {
		cmd := exec.Command(binary, "run", "--nats", ns.url(), "--session", id, "--quiet", "--protocol", "claude-json",
			"--", "sh", "-c", slowHalves, "sh", strconv.Itoa(n))
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil {
				t.Errorf("run --nats %s: %v: %s", id, err, stderr.String())
			}
		})
	}
	st, err := postgres.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := func() int {
		k := 0
		for _, id := range ids {
			k += len(natsStoredLines(st, id))
		}
		return k
	}
	waitFor(t, 60*time.Second, "a fifth of the lines stored", func() bool { return stored() >= len(ids)*n/5 })
	if k := stored(); k == len(ids)*n {
		t.Fatal("every line was stored before the kill: not mid-stream")
	}
	killed := time.Now()
	nodes[0].cmd.Process.Signal(syscall.SIGKILL)
	nodes[0].cmd.Wait()
	wg.Wait()
	for _, id := range ids {
		waitFor(t, 90*time.Second, "session "+id+" to succeed", func() bool {
			s, err := st.Session(context.Background(), id)
			return err == nil && s.Status == store.StatusSucceeded
		})
		checkLines(t, natsStoredLines(st, id), n)
		checkDenseSeq(t, st, id)
	}
	t.Logf("%d sessions of %d lines stored whole %v after the kill", len(ids), n, time.Since(killed).Round(time.Millisecond))
	waitFor(t, 30*time.Second, "the survivor to hold every partition", func() bool {
		return len(nodes[1].partitions(t)) == natsbus.Partitions
	})
}

// deltaHarness prints a Claude Code turn whose text comes in $2 deltas
// ("d1 " to "dN ", stream_event lines, which are live only: never
// stored), once the file $1 exists, 50 ms apart, then the message and the
// turn's result.
const deltaHarness = `echo '{"type":"system","subtype":"init","session_id":"x","model":"m","cwd":"/"}'
echo '{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","role":"assistant","content":[],"model":"m"}}}'
echo '{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}'
while [ ! -e "$1" ]; do sleep 0.05; done
i=1 text=
while [ $i -le $2 ]; do
	echo '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"d'$i' "}}}'
	text="${text}d$i "
	i=$((i+1))
	sleep 0.05
done
echo '{"type":"assistant","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"text","text":"'"$text"'"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"'"$text"'","session_id":"x"}'`

// TestServeSharedLive runs two `serve --nats` processes sharing one
// PostgreSQL store and a session of node 0's partitions whose harness
// streams its text in deltas. The deltas are never stored, so they reach
// node 1, which does not ingest the session, only through the stream of
// the events node 0 commits: the event streams of both nodes have every
// delta, in order, among the stored events, each once with a dense seq,
// then the session's end; node 1's health counts the events it followed.
func TestServeSharedLive(t *testing.T) {
	db := postgresSchema(t)
	if _, errOut, code := runCLI(t, "", "migrate", "--db", db); code != 0 {
		t.Fatalf("migrate: exit %d: %s", code, errOut)
	}
	ns := newNATSServer(t)
	nodes := []*serveProcess{startServe(t, db, ns.url()), startServe(t, db, ns.url())}
	var held []int
	waitFor(t, 60*time.Second, "the nodes to share the partitions", func() bool {
		held = nodes[0].partitions(t)
		return len(held) > 0 && len(held)+len(nodes[1].partitions(t)) == natsbus.Partitions
	})
	id := "s.live.0"
	for i := 1; !slices.Contains(held, natsbus.Partition(id)); i++ {
		id = fmt.Sprintf("s.live.%d", i)
	}
	gate := filepath.Join(t.TempDir(), "go")
	const n = 40
	t.Setenv("AGENTSTREAM_SPOOL_DIR", t.TempDir())
	run := exec.Command(binary, "run", "--nats", ns.url(), "--session", id, "--quiet", "--protocol", "claude-json",
		"--", "sh", "-c", deltaHarness, "sh", gate, strconv.Itoa(n))
	var runErr syncBuffer
	run.Stderr = &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	waitFor(t, 30*time.Second, "node 1 to serve the session", func() bool {
		resp, err := http.Get(nodes[1].base + "/api/sessions/" + id)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	var streams []*stream
	for _, s := range nodes {
		st := openSSE(t, s.base+"/api/sessions/"+id+"/stream", "")
		defer st.close()
		streams = append(streams, st)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for k, st := range streams {
		var deltas []string
		var seq int64
		timeout := time.After(time.Minute)
	read:
		for {
			select {
			case ev, ok := <-st.events:
				if !ok {
					t.Fatalf("node %d: the stream ended before the session's end", k)
				}
				switch {
				case ev.name == "end":
					var end struct{ Status string }
					if json.Unmarshal([]byte(ev.data), &end) != nil || end.Status != store.StatusSucceeded {
						t.Fatalf("node %d: end %s, want the session succeeded", k, ev.data)
					}
					break read
				case ev.name == "message.delta":
					deltas = append(deltas, ev.env.Payload.(*agentstream.MessageDelta).Text)
				case ev.id != "":
					next, _ := strconv.ParseInt(ev.id, 10, 64)
					if next != seq+1 {
						t.Fatalf("node %d: event %d after %d", k, next, seq)
					}
					seq = next
				}
			case <-timeout:
				t.Fatalf("node %d: no end within a minute; %d deltas", k, len(deltas))
			}
		}
		var want []string
		for i := 1; i <= n; i++ {
			want = append(want, fmt.Sprintf("d%d ", i))
		}
		if !slices.Equal(deltas, want) {
			t.Errorf("node %d streamed the deltas %q, want %q", k, deltas, want)
		}
		if seq < 4 {
			t.Errorf("node %d streamed %d stored events, want the turn's (at least 4)", k, seq)
		}
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("run: %v: %s", err, runErr.String())
	}
	resp, err := http.Get(nodes[1].base + "/api/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		Ingest struct {
			Events struct {
				Followed natsbus.EventStats `json:"followed"`
			} `json:"events"`
		} `json:"ingest"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	if f := h.Ingest.Events.Followed; f.Events < n || !f.Connected {
		t.Errorf("node 1's health: followed %+v, want at least the %d deltas, connected", f, n)
	}
}
