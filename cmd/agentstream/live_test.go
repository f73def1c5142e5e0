package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentstream/agentstream/web/api"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/harnesslab"
	"github.com/agentstream/agentstream/modelsim"
	"github.com/agentstream/agentstream/session"
	"github.com/agentstream/agentstream/store/sqlite"
)

// sseEvent is one event of a server-sent-events stream.
type sseEvent struct {
	id, name, data string
	env            agentstream.Envelope
}

// stream reads an event stream into a channel until it ends or is closed.
type stream struct {
	resp   *http.Response
	events chan sseEvent
}

func openSSE(t *testing.T, url, lastID string) *stream {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	st := &stream{resp: resp, events: make(chan sseEvent, 1024)}
	// The reader returns when the stream ends or its body is closed.
	go func() {
		defer close(st.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		var ev sseEvent
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if data != nil {
					if e, err := agentstream.ParseEnvelope(data); err == nil {
						ev.env = e
					}
					ev.data = string(data)
					st.events <- ev
				}
				ev, data = sseEvent{}, nil
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:]...)
			}
		}
	}()
	return st
}

func (st *stream) close() { st.resp.Body.Close() }

// next returns the next stored event (with an id), skipping live deltas.
func (st *stream) next(t *testing.T) sseEvent {
	t.Helper()
	for {
		if ev := st.nextOrEnd(t); ev.id != "" {
			return ev
		}
	}
}

// nextOrEnd returns the next stored event (with an id), or the event end
// or resync that closes the stream, skipping live deltas.
func (st *stream) nextOrEnd(t *testing.T) sseEvent {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-st.events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if ev.id != "" || ev.name == "end" || ev.name == "resync" {
				return ev
			}
		case <-timeout:
			t.Fatal("no event for two minutes")
		}
	}
}

func post(t *testing.T, url string, body any, want int) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	return send(t, "POST", url, b, want)
}

func send(t *testing.T, method, url string, body []byte, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %s %s, want %d", method, url, resp.Status, b, want)
	}
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// liveServer serves a store with the profile of a real harness of the lab
// against the simulator playing a scenario.
func liveServer(t *testing.T, harness, scenario, protocol string, command []string) (string, *harnesslab.Run) {
	t.Helper()
	cache, err := harnesslab.Cache()
	if err != nil {
		t.Skip(err)
	}
	bin, err := harnesslab.Bin(cache, command[0])
	if err != nil {
		t.Skip(err)
	}
	h, _ := modelsim.LookupHarness(harness)
	data, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := modelsim.Decode("live", data)
	if err != nil {
		t.Fatal(err)
	}
	run, err := harnesslab.Start(t.TempDir(), h, sc, cache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	env := map[string]string{}
	for _, kv := range run.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	profiles := session.Profiles{"lab": {
		Command: append([]string{bin}, command[1:]...), Protocol: protocol, Cwd: run.Work, Env: env,
		IdleTimeout: session.Duration(2 * time.Minute),
	}}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "live.db"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(context.Background(), st, ln, api.Options{}, profiles, func(err error) { t.Errorf("observer: %v", err) })
	t.Cleanup(func() {
		srv.stop()
		st.Close()
	})
	return "http://" + ln.Addr().String(), run
}

// TestLiveAPI drives real harnesses through the HTTP API alone: a session
// of a profile, two messages, a tool allowed and one denied, a long turn
// interrupted, the session closed; the event stream, read across a
// reconnect with Last-Event-ID (the session's and all sessions'), shows
// the states and message events in order, every request answered once and
// nothing lost or repeated.
func TestLiveAPI(t *testing.T) {
	for _, tc := range []struct {
		name, harness, protocol string
		command                 []string
	}{
		{"claude-code", "claude-stream", "claude-stream", []string{"claude", "-p"}},
		{"claude-agent-acp", "claude-acp", "acp", []string{"claude-agent-acp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, run := liveServer(t, tc.harness, "../../session/testdata/permissions.json", tc.protocol, tc.command)
			all := openSSE(t, base+"/api/events/stream", "")
			got := post(t, base+"/api/sessions", map[string]any{"profile": "lab", "prompt": "Run the two lab commands."}, http.StatusCreated)
			id, _ := got["id"].(string)
			if id == "" {
				t.Fatalf("POST /api/sessions gave %v", got)
			}
			// Bad requests get a clear 4xx and change nothing.
			post(t, base+"/api/sessions", map[string]any{"profile": "nope"}, http.StatusBadRequest)
			post(t, base+"/api/sessions", map[string]any{"profile": "lab", "command": []string{"rm"}}, http.StatusBadRequest)
			post(t, base+"/api/sessions/nope/messages", map[string]any{"text": "x"}, http.StatusNotFound)
			post(t, base+"/api/sessions/"+id+"/messages", map[string]any{"text": "x", "mode": "shout"}, http.StatusBadRequest)
			post(t, base+"/api/sessions/"+id+"/requests/nope", map[string]any{"decision": "allow"}, http.StatusNotFound)
			post(t, base+"/api/sessions/"+id+"/requests/nope", map[string]any{"decision": "perhaps"}, http.StatusBadRequest)
			send(t, "POST", base+"/api/sessions/"+id+"/messages", []byte(`{"text":`), http.StatusBadRequest)

			var seen []agentstream.Envelope
			s := openSSE(t, base+"/api/sessions/"+id+"/stream", "")
			until := func(what string, ok func(agentstream.Envelope) bool) agentstream.Envelope {
				t.Helper()
				for {
					ev := s.next(t)
					seen = append(seen, ev.env)
					if ok(ev.env) {
						return ev.env
					}
				}
			}
			isType := func(typ string) func(agentstream.Envelope) bool {
				return func(e agentstream.Envelope) bool { return e.Type() == typ }
			}
			completed := func(mid string) func(agentstream.Envelope) bool {
				return func(e agentstream.Envelope) bool {
					p, ok := e.Payload.(*agentstream.SentCompleted)
					return ok && p.MessageID == mid
				}
			}
			reqURL := func(e agentstream.Envelope) string {
				return base + "/api/sessions/" + id + "/requests/" + e.Payload.(*agentstream.PermissionRequest).RequestID
			}
			e := until("permission request", isType(agentstream.TypePermissionRequest))
			info := send(t, "GET", base+"/api/sessions/"+id, nil, http.StatusOK)
			if pend, _ := info["pending"].([]any); info["state"] != "running" || len(pend) != 1 {
				t.Errorf("GET the session: state %v, pending %v; want running with the request", info["state"], info["pending"])
			}
			post(t, reqURL(e), map[string]any{"decision": "allow"}, http.StatusOK)
			post(t, reqURL(e), map[string]any{"decision": "deny"}, http.StatusConflict)
			// Reconnect with Last-Event-ID: nothing lost, nothing twice.
			s.close()
			s = openSSE(t, base+"/api/sessions/"+id+"/stream", strconv.FormatInt(seen[len(seen)-1].Seq, 10))
			e = until("second permission request", isType(agentstream.TypePermissionRequest))
			post(t, reqURL(e), map[string]any{"decision": "deny", "message": "lab: not this one"}, http.StatusOK)
			until("end of m1", completed("m1"))
			got = post(t, base+"/api/sessions/"+id+"/messages", map[string]any{"text": "Second lab message."}, http.StatusAccepted)
			if got["messageId"] != "m2" {
				t.Errorf("messageId %v", got["messageId"])
			}
			until("end of m2", completed("m2"))
			post(t, base+"/api/sessions/"+id+"/messages", map[string]any{"text": "Third lab message: the long one.", "mode": "queue"}, http.StatusAccepted)
			e = until("the long command's request", isType(agentstream.TypePermissionRequest))
			post(t, reqURL(e), map[string]any{"decision": "allow"}, http.StatusOK)
			time.Sleep(time.Second)
			post(t, base+"/api/sessions/"+id+"/interrupt", nil, http.StatusAccepted)
			e = until("end of m3", completed("m3"))
			if st := e.Payload.(*agentstream.SentCompleted).Status; st != agentstream.StatusCancelled {
				t.Errorf("the interrupted message completed %s", st)
			}
			post(t, base+"/api/sessions/"+id+"/interrupt", nil, http.StatusConflict)
			send(t, "DELETE", base+"/api/sessions/"+id, nil, http.StatusAccepted)
			until("closed", func(e agentstream.Envelope) bool {
				p, ok := e.Payload.(*agentstream.SessionState)
				return ok && p.State == agentstream.StateClosed
			})
			s.close()
			post(t, base+"/api/sessions/"+id+"/messages", map[string]any{"text": "late"}, http.StatusConflict)
			if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
				t.Errorf("the allowed command did not run: %v", err)
			}
			for i, e := range seen {
				if e.Seq != int64(i+1) {
					t.Fatalf("event %d has seq %d: the stream lost or repeated events across the reconnect", i, e.Seq)
				}
			}
			checkLive(t, seen)

			// The all-sessions stream: read some, reconnect after the last
			// id, and get the rest of the session's events once each.
			var allSeen []int64
			var lastID string
			for len(allSeen) < 10 {
				ev := all.next(t)
				if ev.env.Session == id {
					allSeen = append(allSeen, ev.env.Seq)
				}
				lastID = ev.id
			}
			all.close()
			all = openSSE(t, base+"/api/events/stream", lastID)
			defer all.close()
			for allSeen[len(allSeen)-1] < seen[len(seen)-1].Seq {
				ev := all.next(t)
				if ev.env.Session == id {
					allSeen = append(allSeen, ev.env.Seq)
				}
			}
			for i, seq := range allSeen {
				if seq != int64(i+1) {
					t.Fatalf("the all-sessions stream gave seq %d at %d across its reconnect", seq, i)
				}
			}
		})
	}
}

// checkLive checks a live session's events: each message's in the order
// of docs/format.md, and each request resolved once.
func checkLive(t *testing.T, envs []agentstream.Envelope) {
	t.Helper()
	step := func(e agentstream.Envelope) string {
		if p, ok := e.Payload.(*agentstream.SessionState); ok {
			return "state " + p.State
		}
		return e.Type()
	}
	asked, resolved := map[string]int{}, map[string]int{}
	for k, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.SentStarted:
			if k < 2 || envs[k-1].Type() != agentstream.TypeTurnStarted || step(envs[k-2]) != "state running" {
				t.Errorf("event %d: %s started without state running, turn.started before it", k, p.MessageID)
			}
		case *agentstream.SentCompleted:
			n := k + 1
			for n < len(envs) && envs[n].Type() == agentstream.TypeMessageCompleted {
				n++
			}
			if n < len(envs) && step(envs[n]) == "state idle" {
				n++
			}
			if n >= len(envs) || envs[n].Type() != agentstream.TypeTurnEnded {
				t.Errorf("event %d: %s completed without idle, turn.ended after it", k, p.MessageID)
			}
		case *agentstream.PermissionRequest:
			asked[p.RequestID]++
		case *agentstream.RequestResolved:
			resolved[p.RequestID]++
		}
	}
	if len(asked) != 3 {
		t.Errorf("%d permission requests, want 3", len(asked))
	}
	for id, n := range asked {
		if resolved[id] != n {
			t.Errorf("request %s asked %d times, resolved %d times", id, n, resolved[id])
		}
	}
	if t.Failed() {
		var b strings.Builder
		for _, e := range envs {
			fmt.Fprintf(&b, "%s\n", e.AppendJSON(nil))
		}
		t.Log(b.String())
	}
}
