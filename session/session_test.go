package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/runner/runnertest"
	"github.com/agentstream/agentstream/session"
	"github.com/google/go-cmp/cmp"
)

// recorder keeps every envelope, for a test to read while the session runs.
type recorder struct {
	mu   sync.Mutex
	envs []agentstream.Envelope
}

func (r *recorder) Handle(_ context.Context, e agentstream.Envelope) error {
	r.mu.Lock()
	r.envs = append(r.envs, e)
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []agentstream.Envelope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agentstream.Envelope(nil), r.envs...)
}

// step is an event as a test expects it: its type, with the state or the
// message status for the events of a live session.
func step(e agentstream.Envelope) string {
	switch p := e.Payload.(type) {
	case *agentstream.SessionState:
		return "state " + p.State
	case *agentstream.SentAccepted:
		return "accepted " + p.MessageID + " " + p.Status
	case *agentstream.SentStarted:
		return "started " + p.MessageID
	case *agentstream.SentCompleted:
		return "completed " + p.MessageID + " " + p.Status
	case *agentstream.Message:
		return "message " + p.Role
	case *agentstream.RequestResolved:
		return "resolved " + p.RequestID + " " + p.Outcome + " " + p.By
	}
	return e.Type()
}

func steps(envs []agentstream.Envelope, skip ...string) []string {
	var out []string
outer:
	for _, e := range envs {
		for _, s := range skip {
			if e.Type() == s {
				continue outer
			}
		}
		out = append(out, step(e))
	}
	return out
}

// Lines of a Claude Code 2.1.328 session in stream-json, as it prints them
// (shortened).
const (
	claudeInit      = `{"type":"system","subtype":"init","cwd":"/w","session_id":"c0d4","tools":["Bash"],"model":"claude-opus-5-5","permissionMode":"default"}`
	claudeText      = `{"type":"assistant","message":{"content":[{"text":"TEXT","type":"text"}],"id":"MSG","model":"claude-opus-5-5","role":"assistant","usage":{"input_tokens":100,"output_tokens":10}},"parent_tool_use_id":null,"session_id":"c0d4"}`
	claudeResult    = `{"type":"result","subtype":"success","is_error":false,"duration_ms":900,"num_turns":1,"result":"TEXT","stop_reason":"end_turn","session_id":"c0d4","total_cost_usd":COST,"usage":{"input_tokens":100,"output_tokens":10}}`
	claudeToolUse   = `{"type":"assistant","message":{"content":[{"id":"CALL","input":{"command":"CMD","description":"d"},"name":"Bash","type":"tool_use"}],"id":"MSG","model":"claude-opus-5-5","role":"assistant","usage":{"input_tokens":100,"output_tokens":10}},"parent_tool_use_id":null,"session_id":"c0d4"}`
	claudeCanUse    = `{"type":"control_request","request_id":"REQ","request":{"subtype":"can_use_tool","tool_name":"Bash","display_name":"Bash","input":{"command":"CMD","description":"d"},"description":"d","permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"CMD"}],"behavior":"allow","destination":"session"}],"tool_use_id":"CALL"}}`
	claudeToolOK    = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"CALL","type":"tool_result","content":"ok","is_error":false}]},"parent_tool_use_id":null,"session_id":"c0d4"}`
	claudeToolError = `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"CALL","type":"tool_result","content":"MSG","is_error":true}]},"parent_tool_use_id":null,"session_id":"c0d4"}`
	claudeAborted   = `{"type":"result","subtype":"error_during_execution","is_error":true,"duration_ms":900,"num_turns":1,"stop_reason":null,"terminal_reason":"aborted_tools","session_id":"c0d4","total_cost_usd":COST,"usage":{"input_tokens":100,"output_tokens":10}}`
)

func fill(line string, kv ...string) string {
	return strings.NewReplacer(kv...).Replace(line)
}

// fakeClaude plays Claude Code in stream-json input mode for the session's
// tests: each message it reads gets the answer script returns for it.
type fakeClaude struct {
	t  *testing.T
	f  *runnertest.Fake
	in chan map[string]any // what the session wrote, decoded
}

func startFake(t *testing.T, f *runnertest.Fake) *fakeClaude {
	fc := &fakeClaude{t: t, f: f, in: make(chan map[string]any, 16)}
	go func() {
		defer close(fc.in)
		for {
			line, err := f.ReadLine()
			if err != nil {
				return
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Errorf("the session wrote %q: %v", line, err)
				return
			}
			fc.in <- m
		}
	}()
	return fc
}

// next returns what the session wrote next.
func (fc *fakeClaude) next() map[string]any {
	fc.t.Helper()
	m, ok := <-fc.in
	if !ok {
		fc.t.Fatal("stdin closed")
	}
	return m
}

func (fc *fakeClaude) lines(ls ...string) {
	for _, l := range ls {
		fc.f.Line(l)
	}
}

// open opens a session on a fake harness and returns the fake once it
// started.
func open(t *testing.T, m *session.Manager, cfg session.Config) (*session.Session, *runnertest.Fake) {
	t.Helper()
	fakes := make(chan *runnertest.Fake, 1)
	cfg.Start = runnertest.Starter(func(f *runnertest.Fake) { fakes <- f })
	cfg.SkipTitle = true
	s, err := m.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, <-fakes
}

func userText(m map[string]any) string {
	content, _ := m["message"].(map[string]any)["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	s, _ := content[0].(map[string]any)["text"].(string)
	return s
}

// TestConversationOrder: two messages on Claude's stream-json, each with
// the events of its turn in the order of docs/format.md, then a close.
func TestConversationOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		s, f := open(t, m, session.Config{Command: []string{"claude", "-p"}, Protocol: "claude-stream", Prompt: "first", Handler: rec})
		fc := startFake(t, f)
		if got := userText(fc.next()); got != "first" {
			t.Fatalf("first message %q", got)
		}
		fc.lines(claudeInit, fill(claudeText, "TEXT", "one", "MSG", "m1"), fill(claudeResult, "TEXT", "one", "COST", "0.01"))
		synctest.Wait()
		id, err := s.Send(context.Background(), "second", agentstream.ModeQueue)
		if err != nil || id != "m2" {
			t.Fatalf("Send: %q, %v", id, err)
		}
		if got := userText(fc.next()); got != "second" {
			t.Fatalf("second message %q", got)
		}
		fc.lines(claudeInit, fill(claudeText, "TEXT", "two", "MSG", "m2"), fill(claudeResult, "TEXT", "two", "COST", "0.02"))
		synctest.Wait()
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok := <-fc.in; ok {
			t.Error("the session wrote more after closing")
		}
		f.Exit(runnerExit(0))
		res, err := s.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		turn := []string{
			"state running", "turn.started", "started MID", "message user",
			"session.started|session.updated", "message assistant", "usage", "usage",
			"completed MID succeeded", "state idle", "turn.ended", "session.ended",
		}
		var want []string
		want = append(want, "state idle", "accepted m1 queued")
		for _, s := range turn {
			want = append(want, strings.ReplaceAll(strings.Replace(s, "session.started|session.updated", "session.started", 1), "MID", "m1"))
			if s == "message user" {
				// The first prompt titles the session (docs/format.md).
				want = append(want, "session.title")
			}
		}
		want = append(want, "accepted m2 queued")
		for _, s := range turn {
			want = append(want, strings.ReplaceAll(strings.Replace(s, "session.started|session.updated", "session.updated", 1), "MID", "m2"))
		}
		want = append(want, "state closing", "state closed")
		envs := rec.all()
		if diff := cmp.Diff(want, steps(envs)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		checkTurns(t, envs)
		checkOrder(t, envs)
		if res.State != agentstream.StateClosed {
			t.Errorf("final state %q (%s)", res.State, res.Reason)
		}
	})
}

func runnerExit(code int) runner.ExitStatus { return runner.ExitStatus{Code: code} }

// checkTurns checks that every envelope's turn is that of the latest
// turn.started, and that turn events carry the same number.
func checkTurns(t *testing.T, envs []agentstream.Envelope) {
	t.Helper()
	var turn int64
	for i, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.TurnStarted:
			turn++
			if p.Turn != turn || e.Turn != turn {
				t.Errorf("event %d: turn.started %d in turn %d, want %d", i, p.Turn, e.Turn, turn)
			}
		case *agentstream.TurnEnded:
			if p.Turn != turn {
				t.Errorf("event %d: turn.ended %d, want %d", i, p.Turn, turn)
			}
		}
		if e.Turn != turn {
			t.Errorf("event %d (%s) in turn %d, want %d", i, e.Type(), e.Turn, turn)
		}
	}
}

func isErr(err, target error) bool { return errors.Is(err, target) }

// checkOrder checks the order of docs/format.md around each message:
// message.accepted, session.state running, turn.started, message.started,
// the user message, ..., message.completed, session.state idle, turn.ended.
func checkOrder(t *testing.T, envs []agentstream.Envelope) {
	t.Helper()
	accepted := map[string]int{}
	for k, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.SentAccepted:
			accepted[p.MessageID] = k
		case *agentstream.SentStarted:
			a, ok := accepted[p.MessageID]
			if !ok || a > k {
				t.Errorf("event %d: %s started before it was accepted", k, p.MessageID)
			}
			if k+1 >= len(envs) || step(envs[k+1]) != "message user" {
				t.Errorf("event %d: %s started without its user message after it", k, p.MessageID)
			}
			if p.Mode == agentstream.ModeSteer {
				continue
			}
			if k < 2 || envs[k-1].Type() != agentstream.TypeTurnStarted || step(envs[k-2]) != "state running" {
				t.Errorf("event %d: %s started without state running then turn.started before it", k, p.MessageID)
			}
		case *agentstream.SentCompleted:
			n := k + 1
			for n < len(envs) && envs[n].Type() == agentstream.TypeMessageCompleted {
				n++ // the other messages of the turn (steered into it)
			}
			if n < len(envs) && step(envs[n]) == "state idle" {
				n++
			}
			if n >= len(envs) || envs[n].Type() != agentstream.TypeTurnEnded {
				t.Errorf("event %d: %s completed without its turn ending after it (and the idle state)", k, p.MessageID)
			}
		}
	}
}

// checkAnsweredOnce checks that every permission request and question got
// exactly one resolution.
func checkAnsweredOnce(t *testing.T, envs []agentstream.Envelope) {
	t.Helper()
	asked := map[string]int{}
	resolved := map[string]int{}
	for _, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.PermissionRequest:
			asked[p.RequestID]++
		case *agentstream.Question:
			asked[p.RequestID]++
		case *agentstream.RequestResolved:
			resolved[p.RequestID]++
		}
	}
	for id, n := range asked {
		if resolved[id] != n {
			t.Errorf("request %s asked %d times, resolved %d times", id, n, resolved[id])
		}
	}
	for id := range resolved {
		if asked[id] == 0 {
			t.Errorf("request %s resolved but never asked", id)
		}
	}
}

// claudeTurn writes the lines of a turn that asks permission for command
// CMD under request REQ, and returns once they were read.
func (fc *fakeClaude) askPermission(req, call, cmd string) {
	fc.lines(claudeInit, fill(claudeToolUse, "CALL", call, "CMD", cmd, "MSG", "m-"+call),
		fill(claudeCanUse, "REQ", req, "CALL", call, "CMD", cmd))
}

// control returns the next control message the session wrote.
func (fc *fakeClaude) control(t *testing.T) map[string]any {
	t.Helper()
	m := fc.next()
	if m["type"] != "control_response" && m["type"] != "control_request" {
		t.Fatalf("the session wrote %v, want a control message", m)
	}
	return m
}

func behavior(m map[string]any) string {
	r, _ := m["response"].(map[string]any)
	inner, _ := r["response"].(map[string]any)
	b, _ := inner["behavior"].(string)
	return b
}

func find(envs []agentstream.Envelope, typ string) []agentstream.Envelope {
	var out []agentstream.Envelope
	for _, e := range envs {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

func lastState(envs []agentstream.Envelope) *agentstream.SessionState {
	var st *agentstream.SessionState
	for _, e := range envs {
		if p, ok := e.Payload.(*agentstream.SessionState); ok {
			st = p
		}
	}
	return st
}

// TestPolicy: rules by tool, category and summary pattern decide; the
// default decides the rest.
func TestPolicy(t *testing.T) {
	p := session.Policy{Default: session.PolicyAsk, Rules: []session.Rule{
		{Tool: "Bash", Match: "git *", Decision: session.PolicyAllow},
		{Category: "delete", Decision: session.PolicyDeny, Message: "no deleting"},
		{Match: "rm -?f *", Decision: session.PolicyDeny},
	}}
	for _, tc := range []struct {
		tool, category, summary, want string
	}{
		{"Bash", "execute", "git status", session.PolicyAllow},
		{"Bash", "execute", "git -C /tmp log --oneline", session.PolicyAllow},
		{"Bash", "execute", "gitk", session.PolicyAsk},
		{"Shell", "execute", "git status", session.PolicyAsk},
		{"Delete", "delete", "a.txt", session.PolicyDeny},
		{"Bash", "execute", "rm -rf /", session.PolicyDeny},
		{"Bash", "execute", "rm x", session.PolicyAsk},
		{"Read", "read", "a.go", session.PolicyAsk},
	} {
		t.Run(tc.summary, func(t *testing.T) {
			if got := session.Decide(&p, tc.tool, tc.category, tc.summary); got != tc.want {
				t.Errorf("decide(%s, %s, %q) = %s, want %s", tc.tool, tc.category, tc.summary, got, tc.want)
			}
		})
	}
}

// TestPolicyJSON: a profile's policy reads as the example says.
func TestPolicyJSON(t *testing.T) {
	ps, err := session.ParseProfiles([]byte(`{"profiles": {"claude": {
	   "command": ["claude", "-p"], "protocol": "claude-stream",
	   "cwd": "/srv/work", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9000"},
	   "policy": {"default": "ask", "askTimeout": "10m",
	              "rules": [{"tool": "Bash", "match": "git *", "decision": "allow"},
	                        {"category": "delete", "decision": "deny"}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := ps["claude"]
	want := session.Profile{
		Command: []string{"claude", "-p"}, Protocol: "claude-stream", Cwd: "/srv/work",
		Env: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9000"},
		Policy: session.Policy{Default: "ask", AskTimeout: 10 * time.Minute, Rules: []session.Rule{
			{Tool: "Bash", Match: "git *", Decision: "allow"}, {Category: "delete", Decision: "deny"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile (-want +got):\n%s", diff)
	}
	for _, bad := range []string{
		`{"profiles": {"x": {"command": ["a"], "policy": {"default": "maybe"}}}}`,
		`{"profiles": {"x": {"command": ["a"], "polcy": {}}}}`,
		`{"profiles": {"x": {"protocol": "acp"}}}`,
		`{"profiles": {"x": {"command": ["a"], "policy": {"askTimeout": "soon"}}}}`,
	} {
		if _, err := session.ParseProfiles([]byte(bad)); err == nil {
			t.Errorf("ParseProfiles(%s) took it", bad)
		}
	}
}

// TestAnswers: the policy answers what it can, a person the rest; the
// first answer wins, a second is refused, an unknown id too; a request the
// harness withdraws is resolved by it.
func TestAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		policy := session.Policy{Rules: []session.Rule{{Match: "git *", Decision: session.PolicyAllow}}}
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: rec, Policy: policy})
		fc := startFake(t, f)
		fc.next()
		ctx := context.Background()
		fc.askPermission("r1", "c1", "git status")
		if b := behavior(fc.control(t)); b != "allow" {
			t.Errorf("the policy answered %q, want allow", b)
		}
		fc.askPermission("r2", "c2", "make")
		synctest.Wait()
		if p := s.Info().Pending; len(p) != 1 || p[0].ID != "r2" || p[0].Category != "execute" || p[0].Summary != "make" {
			t.Errorf("pending %+v, want r2 (execute, make)", p)
		}
		if err := s.Answer(ctx, "r2", session.Answer{Decision: session.Deny, Message: "not now"}); err != nil {
			t.Fatal(err)
		}
		m2 := fc.control(t)
		if b := behavior(m2); b != "deny" {
			t.Errorf("the person's answer went as %q", b)
		}
		if err := s.Answer(ctx, "r2", session.Answer{Decision: session.Allow}); !errors.Is(err, session.ErrAnswered) {
			t.Errorf("second answer: %v, want ErrAnswered", err)
		}
		if err := s.Answer(ctx, "nope", session.Answer{Decision: session.Allow}); !errors.Is(err, session.ErrUnknownRequest) {
			t.Errorf("unknown id: %v, want ErrUnknownRequest", err)
		}
		if err := s.Answer(ctx, "r2", session.Answer{Decision: "maybe"}); !errors.Is(err, session.ErrDecision) {
			t.Errorf("bad decision: %v, want ErrDecision", err)
		}
		fc.askPermission("r3", "c3", "make install")
		fc.lines(`{"type":"control_cancel_request","request_id":"r3"}`)
		synctest.Wait()
		if err := s.Answer(ctx, "r3", session.Answer{Decision: session.Allow}); !errors.Is(err, session.ErrAnswered) {
			t.Errorf("answer to a withdrawn request: %v, want ErrAnswered", err)
		}
		fc.lines(fill(claudeResult, "TEXT", "done", "COST", "0.01"))
		s.Close(ctx)
		f.Exit(runnerExit(0))
		s.Wait(ctx)
		var got []string
		for _, e := range find(rec.all(), agentstream.TypeRequestResolved) {
			got = append(got, step(e))
		}
		want := []string{"resolved r1 allowed policy", "resolved r2 denied person", "resolved r3 cancelled harness"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("resolutions (-want +got):\n%s", diff)
		}
		checkAnsweredOnce(t, rec.all())
	})
}

// TestAskTimeout: a request nobody answers is denied by the policy once its
// ask timeout passed, to the second.
func TestAskTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: rec,
			Policy: session.Policy{AskTimeout: 90 * time.Second}})
		fc := startFake(t, f)
		fc.next()
		start := time.Now()
		fc.askPermission("r1", "c1", "make")
		m1 := fc.control(t)
		if took := time.Since(start); took != 90*time.Second {
			t.Errorf("denied after %v, want 90s", took)
		}
		if b := behavior(m1); b != "deny" {
			t.Errorf("answered %q, want deny", b)
		}
		// The answer reaches the harness as the session records it: let
		// the session finish that before reading the record.
		synctest.Wait()
		r := find(rec.all(), agentstream.TypeRequestResolved)
		if len(r) != 1 || step(r[0]) != "resolved r1 denied policy" || !r[0].Payload.(*agentstream.RequestResolved).Auto {
			t.Errorf("resolutions %v", steps(r))
		}
		s.Close(context.Background())
		f.Exit(runnerExit(0))
		s.Wait(context.Background())
	})
}

// TestInterruptForced: an agent that ignores an interrupt is stopped once
// the interrupt timeout passed; the session fails with that reason, its
// pending request is cancelled, and what came before is kept.
func TestInterruptForced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: rec,
			InterruptTimeout: 10 * time.Second, Grace: time.Second})
		fc := startFake(t, f)
		fc.next()
		fc.askPermission("r1", "c1", "make")
		synctest.Wait()
		start := time.Now()
		if err := s.Interrupt(context.Background()); err != nil {
			t.Fatal(err)
		}
		if b := behavior(fc.control(t)); b != "deny" {
			t.Errorf("the pending request was answered %q, want deny (withdrawn)", b)
		}
		if m := fc.control(t); m["request"].(map[string]any)["subtype"] != "interrupt" {
			t.Errorf("sent %v, want an interrupt", m)
		}
		res, err := s.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 10*time.Second {
			t.Errorf("stopped after %v, want 10s", took)
		}
		if res.State != agentstream.StateFailed || !strings.Contains(res.Reason, "did not end within 10s") {
			t.Errorf("final state %s (%s)", res.State, res.Reason)
		}
		envs := rec.all()
		want := []string{"state idle", "accepted m1 queued", "state running", "turn.started", "started m1", "message user", "session.title",
			"session.started", "tool.call", "permission.request", "state interrupting",
			"resolved r1 cancelled session", "completed m1 failed", "turn.ended", "state failed", "session.ended"}
		if diff := cmp.Diff(want, steps(envs, agentstream.TypeUsage)); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
		if got := f.Signals(); len(got) == 0 {
			t.Error("the harness was not signalled")
		}
	})
}

// TestDiesMidTurn: a harness that exits mid-turn leaves the session failed
// with the reason, its request cancelled, and every event it printed.
func TestDiesMidTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: rec})
		fc := startFake(t, f)
		fc.next()
		fc.askPermission("r1", "c1", "make")
		f.Exit(runner.ExitStatus{Code: 3})
		res, _ := s.Wait(context.Background())
		if res.State != agentstream.StateFailed || !strings.Contains(res.Reason, "exit status 3") {
			t.Errorf("final state %s (%s), want failed with exit status 3", res.State, res.Reason)
		}
		envs := rec.all()
		if n := len(find(envs, agentstream.TypeToolCall)); n != 1 {
			t.Errorf("%d tool calls recorded, want the 1 printed", n)
		}
		if r := find(envs, agentstream.TypeRequestResolved); len(r) != 1 || step(r[0]) != "resolved r1 cancelled session" {
			t.Errorf("resolutions %v", steps(r))
		}
		if c := find(envs, agentstream.TypeMessageCompleted); len(c) != 1 || step(c[0]) != "completed m1 failed" {
			t.Errorf("completions %v", steps(c))
		}
		if st := lastState(envs); st == nil || st.State != agentstream.StateFailed {
			t.Errorf("last state %+v", st)
		}
		checkTurns(t, envs)
	})
}

// TestModes: a steer Claude's stream-json cannot take waits for the turn
// and says it was emulated; an interrupt message stops the turn and goes
// first; queued ones follow in order.
func TestModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "one", Handler: rec})
		fc := startFake(t, f)
		fc.next()
		fc.lines(claudeInit, fill(claudeText, "TEXT", "working", "MSG", "a"))
		ctx := context.Background()
		for _, c := range []struct{ text, mode string }{{"two", agentstream.ModeSteer}, {"three", agentstream.ModeQueue}, {"four", agentstream.ModeInterrupt}} {
			if _, err := s.Send(ctx, c.text, c.mode); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Send(ctx, "x", "shout"); !errors.Is(err, session.ErrMode) {
			t.Errorf("bad mode: %v", err)
		}
		if m := fc.control(t); m["request"].(map[string]any)["subtype"] != "interrupt" {
			t.Fatalf("sent %v, want an interrupt", m)
		}
		fc.lines(fill(claudeAborted, "COST", "0.01"))
		var order []string
		for range 3 {
			order = append(order, userText(fc.next()))
			fc.lines(fill(claudeResult, "TEXT", "ok", "COST", "0.02"))
		}
		if diff := cmp.Diff([]string{"four", "two", "three"}, order); diff != "" {
			t.Errorf("messages sent (-want +got):\n%s", diff)
		}
		s.Close(ctx)
		f.Exit(runnerExit(0))
		s.Wait(ctx)
		envs := rec.all()
		acc := map[string]*agentstream.SentAccepted{}
		for _, e := range find(envs, agentstream.TypeMessageAccepted) {
			p := e.Payload.(*agentstream.SentAccepted)
			acc[p.MessageID] = p
		}
		if a := acc["m2"]; a == nil || !a.Emulated || a.Status != agentstream.MessageQueued || a.Reason == "" {
			t.Errorf("steer accepted %+v, want emulated and queued, with a reason", a)
		}
		if a := acc["m4"]; a == nil || a.Emulated || a.Mode != agentstream.ModeInterrupt {
			t.Errorf("interrupt accepted %+v, want a native interrupt", a)
		}
		var done []string
		for _, e := range find(envs, agentstream.TypeMessageCompleted) {
			done = append(done, step(e))
		}
		want := []string{"completed m1 cancelled", "completed m4 succeeded", "completed m2 succeeded", "completed m3 succeeded"}
		if diff := cmp.Diff(want, done); diff != "" {
			t.Errorf("completions (-want +got):\n%s", diff)
		}
		checkOrder(t, envs)
		checkTurns(t, envs)
	})
}

// TestObserverFailures: an observer that fails or panics is reported and
// never stops a session; another observer sees every envelope.
func TestObserverFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var reported []string
		m := session.NewManager(session.Options{OnError: func(err error) {
			mu.Lock()
			reported = append(reported, err.Error())
			mu.Unlock()
		}})
		n := 0
		m.Subscribe(agentstream.HandlerFunc(func(context.Context, agentstream.Envelope) error {
			n++
			if n == 2 {
				panic("observer bug")
			}
			return errors.New("observer down")
		}))
		all := &recorder{}
		m.Subscribe(all)
		own := &recorder{}
		s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: own})
		fc := startFake(t, f)
		fc.next()
		fc.lines(claudeInit, fill(claudeText, "TEXT", "hi", "MSG", "a"), fill(claudeResult, "TEXT", "hi", "COST", "0.01"))
		s.Close(context.Background())
		f.Exit(runnerExit(0))
		res, _ := s.Wait(context.Background())
		if res.State != agentstream.StateClosed {
			t.Errorf("final state %s (%s)", res.State, res.Reason)
		}
		if len(all.all()) != len(own.all()) {
			t.Errorf("the other observer saw %d envelopes, the session %d", len(all.all()), len(own.all()))
		}
		mu.Lock()
		defer mu.Unlock()
		if len(reported) != len(own.all()) || !strings.Contains(reported[1], "panicked") || !strings.Contains(reported[0], "observer down") {
			t.Errorf("%d reports for %d envelopes: %q", len(reported), len(own.all()), reported[:min(3, len(reported))])
		}
	})
}

// recordedLines returns lines from..to of a recording (1-based,
// inclusive; a negative number counts from the end, -1 the last line).
func recordedLines(t *testing.T, file string, from, to int) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if from < 0 {
		from += len(lines) + 1
	}
	if to < 0 {
		to += len(lines) + 1
	}
	return lines[from-1 : to]
}

// TestFallback: the first account's quota is exhausted (Claude Code's
// recorded 429 after its retries, and a rejected rate limit): the session
// records the account exhausted, the fallback and the switch, runs the next
// candidate with that account's credentials on the same conversation, sends
// the message again there, and says when the first account is available
// again.
func TestFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		m := session.NewManager(session.Options{})
		reset := time.Now().Add(time.Hour).Truncate(time.Second)
		fakes := make(chan *runnertest.Fake, 2)
		cands := []session.Candidate{
			{Account: "work", Command: []string{"claude", "-p"}, Protocol: "claude-stream", Model: "opus",
				Credentials: map[string]string{"ANTHROPIC_API_KEY": "WORK_KEY"}},
			{Account: "home", Command: []string{"claude", "-p"}, Protocol: "claude-stream", Model: "opus",
				Credentials: map[string]string{"ANTHROPIC_API_KEY": "HOME_KEY"}},
		}
		s, err := m.Open(context.Background(), session.Config{
			Candidates: cands, Env: []string{"WORK_KEY=secret-w", "HOME_KEY=secret-h"}, Prompt: "go", Handler: rec, SkipTitle: true,
			Start: runnertest.Starter(func(f *runnertest.Fake) { fakes <- f }),
		})
		if err != nil {
			t.Fatal(err)
		}
		f1 := <-fakes
		fc := startFake(t, f1)
		fc.next()
		// The capture's last two lines: the synthetic message of the API's
		// error and the failed result.
		exhausted := recordedLines(t, "../adapter/claude/testdata/lab/claude-stream-2.1.328-exhausted.jsonl", -2, -1)
		fc.lines(claudeInit,
			fmt.Sprintf(`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":%d,"rateLimitType":"five_hour"},"session_id":"c0d4"}`, reset.Unix()))
		fc.lines(exhausted...)
		f2 := <-fakes
		if !slices.Contains(f2.Env, "ANTHROPIC_API_KEY=secret-h") || !slices.Contains(f1.Env, "ANTHROPIC_API_KEY=secret-w") {
			t.Errorf("the candidates' credentials did not reach their harnesses")
		}
		if !slices.Contains(f2.Args, "--resume") || f2.Args[slices.Index(f2.Args, "--resume")+1] != "c0d4" {
			t.Errorf("the next candidate runs %v, want it to resume c0d4", f2.Args)
		}
		fc2 := startFake(t, f2)
		if got := userText(fc2.next()); got != "go" {
			t.Errorf("the next candidate got %q, want the message again", got)
		}
		fc2.lines(claudeInit, fill(claudeText, "TEXT", "hello", "MSG", "b"), fill(claudeResult, "TEXT", "hello", "COST", "0.01"))
		time.Sleep(time.Until(reset) + time.Second)
		s.Close(context.Background())
		f2.Exit(runnerExit(0))
		res, _ := s.Wait(context.Background())
		if res.State != agentstream.StateClosed {
			t.Errorf("final state %s (%s)", res.State, res.Reason)
		}
		envs := rec.all()
		var accounts []string
		for _, e := range envs {
			switch p := e.Payload.(type) {
			case *agentstream.Account:
				accounts = append(accounts, p.Status+" "+p.Account+" "+p.ResetAt+" "+strings.Join(p.Env, ","))
			case *agentstream.Fallback:
				accounts = append(accounts, fmt.Sprintf("fallback %d→%d %s %s", *p.From.Index, *p.To.Index, p.Failure, p.ResetAt))
			}
		}
		r := reset.UTC().Format(time.RFC3339)
		want := []string{"exhausted work " + r + " WORK_KEY", "fallback 0→1 quota " + r, "switched home  HOME_KEY", "available work " + r + " WORK_KEY"}
		if diff := cmp.Diff(want, accounts); diff != "" {
			t.Errorf("account events (-want +got):\n%s", diff)
		}
		for _, e := range envs {
			if b := e.AppendJSON(nil); strings.Contains(string(b), "secret-") {
				t.Errorf("a credential is in an event: %s", b)
			}
		}
		if c := find(envs, agentstream.TypeMessageCompleted); len(c) != 1 || step(c[0]) != "completed m1 succeeded" {
			t.Errorf("completions %v, want m1 succeeded once", steps(c))
		}
		checkTurns(t, envs)
	})
}

// TestBudget: past the budget's tokens mid-turn the turn is interrupted,
// and the session ends with reason budget; a session past its turns ends
// before starting another.
func TestBudget(t *testing.T) {
	t.Run("tokens", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			m := session.NewManager(session.Options{})
			s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", Handler: rec,
				Budget: session.Budget{MaxTokens: 150}})
			fc := startFake(t, f)
			fc.next()
			fc.lines(claudeInit, fill(claudeText, "TEXT", "a", "MSG", "a"), fill(claudeText, "TEXT", "b", "MSG", "b"), fill(claudeText, "TEXT", "c", "MSG", "c"))
			if m := fc.control(t); m["request"].(map[string]any)["subtype"] != "interrupt" {
				t.Fatalf("sent %v, want an interrupt", m)
			}
			fc.lines(fill(claudeAborted, "COST", "0.01"))
			if _, ok := <-fc.in; ok {
				t.Error("the session wrote more after the budget ended it")
			}
			f.Exit(runnerExit(0))
			res, _ := s.Wait(context.Background())
			checkBudgetEnd(t, rec.all(), res)
		})
	})
	t.Run("turns", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rec := &recorder{}
			m := session.NewManager(session.Options{})
			s, f := open(t, m, session.Config{Command: []string{"claude"}, Protocol: "claude-stream", Prompt: "go", FollowUps: []string{"again"},
				Handler: rec, Budget: session.Budget{MaxTurns: 1}})
			fc := startFake(t, f)
			fc.next()
			fc.lines(claudeInit, fill(claudeResult, "TEXT", "a", "COST", "0.01"))
			if _, ok := <-fc.in; ok {
				t.Error("the session sent a message past its turns")
			}
			f.Exit(runnerExit(0))
			res, _ := s.Wait(context.Background())
			checkBudgetEnd(t, rec.all(), res)
			if c := find(rec.all(), agentstream.TypeMessageCompleted); len(c) != 2 || step(c[1]) != "completed m2 cancelled" {
				t.Errorf("completions %v", steps(c))
			}
		})
	})
}

func checkBudgetEnd(t *testing.T, envs []agentstream.Envelope, res session.Result) {
	t.Helper()
	ends := find(envs, agentstream.TypeSessionEnded)
	last := ends[len(ends)-1].Payload.(*agentstream.SessionEnded)
	if last.Reason != agentstream.ReasonBudget || res.Run.Ended.Reason != agentstream.ReasonBudget {
		t.Errorf("the session ended %+v (result %+v), want reason budget", last, res.Run.Ended)
	}
	if res.State != agentstream.StateClosed || !strings.HasPrefix(res.Reason, "budget: ") {
		t.Errorf("final state %s (%s)", res.State, res.Reason)
	}
}
