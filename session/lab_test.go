package session_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/harnesslab"
	"github.com/agentstream/agentstream/modelsim"
	"github.com/agentstream/agentstream/session"
)

// The tests of this file run the real harness CLIs (the pinned versions in
// the directory AGENTSTREAM_LAB names) against the model simulator; they
// skip when the CLIs are absent.

var capture = flag.String("capture", "", "write the native stdout of each real-harness session to `DIR`/TEST.jsonl (a recording for the adapters' fixtures)")

// watcher keeps a session's envelopes and lets a test wait for one.
type watcher struct {
	mu   sync.Mutex
	envs []agentstream.Envelope
	wake chan struct{}
}

func newWatcher() *watcher { return &watcher{wake: make(chan struct{}, 1)} }

func (w *watcher) Handle(_ context.Context, e agentstream.Envelope) error {
	w.mu.Lock()
	w.envs = append(w.envs, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

func (w *watcher) all() []agentstream.Envelope {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]agentstream.Envelope(nil), w.envs...)
}

// await waits for the first envelope from index from on that ok accepts,
// and returns its index.
func (w *watcher) await(t *testing.T, from int, what string, ok func(agentstream.Envelope) bool) (int, agentstream.Envelope) {
	t.Helper()
	deadline := time.After(3 * time.Minute)
	for {
		envs := w.all()
		for i := from; i < len(envs); i++ {
			if ok(envs[i]) {
				return i, envs[i]
			}
		}
		select {
		case <-w.wake:
		case <-deadline:
			for _, e := range envs {
				t.Logf("%s", e.AppendJSON(nil))
			}
			t.Fatalf("no %s after event %d", what, from)
		}
	}
}

func isType(typ string) func(agentstream.Envelope) bool {
	return func(e agentstream.Envelope) bool { return e.Type() == typ }
}

func isCompleted(id string) func(agentstream.Envelope) bool {
	return func(e agentstream.Envelope) bool {
		p, ok := e.Payload.(*agentstream.SentCompleted)
		return ok && p.MessageID == id
	}
}

// labSession opens a session on a real harness of the lab against the
// simulator playing the scenario file, with the command given (the
// harness's binary first, by its name in node_modules/.bin).
func labSession(t *testing.T, harness, scenario, protocol string, command []string, cfg session.Config) (*session.Session, *watcher, *harnesslab.Run) {
	t.Helper()
	cache, err := harnesslab.Cache()
	if err != nil {
		t.Skip(err)
	}
	bin, err := harnesslab.Bin(cache, command[0])
	if err != nil {
		t.Skip(err)
	}
	h, ok := modelsim.LookupHarness(harness)
	if !ok {
		t.Fatalf("no harness %s in modelsim", harness)
	}
	data, err := os.ReadFile(filepath.Join("testdata", scenario))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := modelsim.Decode(strings.TrimSuffix(scenario, ".json"), data)
	if err != nil {
		t.Fatal(err)
	}
	run, err := harnesslab.Start(t.TempDir(), h, sc, cache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	w := newWatcher()
	cfg.Command = append([]string{bin}, command[1:]...)
	cfg.Protocol = protocol
	cfg.Env = run.Env
	cfg.Dir = run.Work
	cfg.Handler = w
	cfg.SkipTitle = true
	if cfg.Grace == 0 {
		cfg.Grace = 3 * time.Second
	}
	cfg.IdleTimeout = 2 * time.Minute
	if *capture != "" {
		f, err := os.Create(filepath.Join(*capture, strings.ReplaceAll(t.Name(), "/", "-")+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cfg.Spool = f
	}
	m := session.NewManager(session.Options{OnError: func(err error) { t.Errorf("observer: %v", err) }})
	s, err := m.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return s, w, run
}

// TestClaudeCodeLive talks to Claude Code 2.1.328 in its default permission
// mode: a shell call allowed by a person, one denied, a second message whose
// model request carries the first exchange, a long command interrupted mid
// turn, and a message after it; then the session closes. Every turn's
// events are in the order docs/format.md gives, and every request is
// answered once.
func TestClaudeCodeLive(t *testing.T) {
	ctx := context.Background()
	s, w, run := labSession(t, "claude-stream", "permissions.json", "claude-stream", []string{"claude", "-p"},
		session.Config{Prompt: "Run the two lab commands.", InterruptTimeout: 20 * time.Second})

	// The first turn: allow the first command, deny the second.
	i, e := w.await(t, 0, "permission request", isType(agentstream.TypePermissionRequest))
	req := e.Payload.(*agentstream.PermissionRequest)
	if !strings.Contains(req.Input, "touch lab-allowed.txt") {
		t.Fatalf("first request is for %s", req.Input)
	}
	if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Allow}); err != nil {
		t.Fatal(err)
	}
	if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Deny}); !isErr(err, session.ErrAnswered) {
		t.Errorf("a second answer: %v, want ErrAnswered", err)
	}
	i, e = w.await(t, i+1, "second permission request", isType(agentstream.TypePermissionRequest))
	req2 := e.Payload.(*agentstream.PermissionRequest)
	if !strings.Contains(req2.Input, "rm -f lab-denied.txt") {
		t.Fatalf("second request is for %s", req2.Input)
	}
	if err := s.Answer(ctx, req2.RequestID, session.Answer{Decision: session.Deny, Message: "lab: not this one"}); err != nil {
		t.Fatal(err)
	}
	i, _ = w.await(t, i+1, "end of the first message", isCompleted("m1"))
	if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	// The second message: its model request carries the first exchange.
	id, err := s.Send(ctx, "Second lab message.", agentstream.ModeQueue)
	if err != nil || id != "m2" {
		t.Fatalf("Send: %q %v", id, err)
	}
	i, _ = w.await(t, i+1, "end of the second message", isCompleted("m2"))
	var second string
	for _, r := range run.Sim.Calls() {
		if strings.Contains(string(r.Body), "Second lab message.") {
			second = string(r.Body)
			break
		}
	}
	for _, want := range []string{"Run the two lab commands.", "Both lab commands are handled.", "lab: not this one"} {
		if !strings.Contains(second, want) {
			t.Errorf("the second message's model request lacks %q", want)
		}
	}

	// The third message runs a long command, interrupted mid-turn.
	if _, err := s.Send(ctx, "Third lab message: the long one.", agentstream.ModeQueue); err != nil {
		t.Fatal(err)
	}
	i, e = w.await(t, i+1, "permission request of the long command", isType(agentstream.TypePermissionRequest))
	if err := s.Answer(ctx, e.Payload.(*agentstream.PermissionRequest).RequestID, session.Answer{Decision: session.Allow}); err != nil {
		t.Fatal(err)
	}
	// Claude Code prints nothing while the command runs: interrupt it
	// a second after it was allowed, long before its twenty seconds.
	time.Sleep(time.Second)
	if err := s.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	i, e = w.await(t, i+1, "end of the third message", isCompleted("m3"))
	if st := e.Payload.(*agentstream.SentCompleted).Status; st != agentstream.StatusCancelled {
		t.Errorf("interrupted message completed %s, want cancelled", st)
	}

	// The conversation goes on.
	if _, err := s.Send(ctx, "Fourth lab message.", agentstream.ModeQueue); err != nil {
		t.Fatal(err)
	}
	w.await(t, i+1, "end of the fourth message", isCompleted("m4"))
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != agentstream.StateClosed {
		t.Errorf("final state %s (%s), want closed", res.State, res.Reason)
	}
	envs := w.all()
	checkOrder(t, envs)
	checkTurns(t, envs)
	checkAnsweredOnce(t, envs)
	if t.Failed() || testing.Verbose() {
		for _, e := range envs {
			t.Logf("%s", e.AppendJSON(nil))
		}
	}
}

// TestACPLive talks to ACP agents: claude-agent-acp 0.23.1 and Gemini CLI
// 0.61.0 --acp. The policy allows the first command (by its summary), a
// person denies the second, a second message gets its answer, a long
// command is cancelled mid-turn (session/cancel), and the session closes
// (an ACP agent does not exit when its stdin closes: it is stopped).
func TestACPLive(t *testing.T) {
	for _, tc := range []struct {
		harness string
		command []string
	}{
		{"claude-acp", []string{"claude-agent-acp"}},
		{"gemini-acp", []string{"gemini", "--acp"}},
	} {
		t.Run(tc.harness, func(t *testing.T) {
			ctx := context.Background()
			policy := session.Policy{Rules: []session.Rule{{Category: "execute", Match: "touch *", Decision: session.PolicyAllow}}}
			s, w, run := labSession(t, tc.harness, "permissions.json", "acp", tc.command,
				session.Config{Prompt: "Run the two lab commands.", Policy: policy, InterruptTimeout: 20 * time.Second})
			i, e := w.await(t, 0, "policy's answer", isType(agentstream.TypeRequestResolved))
			if r := e.Payload.(*agentstream.RequestResolved); r.By != agentstream.ResolvedByPolicy || r.Outcome != agentstream.OutcomeAllowed {
				t.Errorf("first request resolved %+v, want allowed by the policy", r)
			}
			i, e = w.await(t, i+1, "second permission request", isType(agentstream.TypePermissionRequest))
			req := e.Payload.(*agentstream.PermissionRequest)
			if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Deny}); err != nil {
				t.Fatal(err)
			}
			if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Allow}); !isErr(err, session.ErrAnswered) {
				t.Errorf("a second answer: %v, want ErrAnswered", err)
			}
			i, _ = w.await(t, i+1, "end of the first message", isCompleted("m1"))
			if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
				t.Errorf("the allowed command did not run: %v", err)
			}
			if _, err := s.Send(ctx, "Second lab message.", agentstream.ModeQueue); err != nil {
				t.Fatal(err)
			}
			i, _ = w.await(t, i+1, "end of the second message", isCompleted("m2"))
			if _, err := s.Send(ctx, "Third lab message: the long one.", agentstream.ModeQueue); err != nil {
				t.Fatal(err)
			}
			i, e = w.await(t, i+1, "permission request of the long command", isType(agentstream.TypePermissionRequest))
			if err := s.Answer(ctx, e.Payload.(*agentstream.PermissionRequest).RequestID, session.Answer{Decision: session.Allow}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := s.Interrupt(ctx); err != nil {
				t.Fatal(err)
			}
			i, e = w.await(t, i+1, "end of the third message", isCompleted("m3"))
			if st := e.Payload.(*agentstream.SentCompleted).Status; st != agentstream.StatusCancelled {
				t.Errorf("interrupted message completed %s, want cancelled", st)
			}
			if _, err := s.Send(ctx, "Fourth lab message.", agentstream.ModeQueue); err != nil {
				t.Fatal(err)
			}
			w.await(t, i+1, "end of the fourth message", isCompleted("m4"))
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := s.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.State != agentstream.StateClosed {
				t.Errorf("final state %s (%s), want closed", res.State, res.Reason)
			}
			envs := w.all()
			checkOrder(t, envs)
			checkTurns(t, envs)
			checkAnsweredOnce(t, envs)
			if t.Failed() || testing.Verbose() {
				for _, e := range envs {
					t.Logf("%s", e.AppendJSON(nil))
				}
			}
		})
	}
}

// TestCodexAppServerLive talks to Codex 0.169.0's app-server with the
// approval policy untrusted: a command approved by a person, one declined,
// then a message whose turn is steered while its command runs; the steered
// text reaches the model in the same turn.
func TestCodexAppServerLive(t *testing.T) {
	ctx := context.Background()
	s, w, run := labSession(t, "codex", "codex.json", "codex-app", []string{"codex"},
		session.Config{Prompt: "Run the two lab commands.", PermissionMode: "untrusted"})
	i, e := w.await(t, 0, "permission request", isType(agentstream.TypePermissionRequest))
	req := e.Payload.(*agentstream.PermissionRequest)
	if !strings.Contains(req.Input, "touch lab-allowed.txt") {
		t.Fatalf("first request is for %s", req.Input)
	}
	if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Allow}); err != nil {
		t.Fatal(err)
	}
	i, e = w.await(t, i+1, "second permission request", isType(agentstream.TypePermissionRequest))
	req = e.Payload.(*agentstream.PermissionRequest)
	if !strings.Contains(req.Input, "rm -f lab-denied.txt") {
		t.Fatalf("second request is for %s", req.Input)
	}
	if err := s.Answer(ctx, req.RequestID, session.Answer{Decision: session.Deny}); err != nil {
		t.Fatal(err)
	}
	i, e = w.await(t, i+1, "end of the first message", isCompleted("m1"))
	// A declined command does not end the turn (the protocol's decline,
	// unlike its cancel).
	if st := e.Payload.(*agentstream.SentCompleted).Status; st != agentstream.StatusSucceeded {
		t.Errorf("the first message completed %s, want succeeded", st)
	}
	if _, err := os.Stat(filepath.Join(run.Work, "lab-allowed.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}

	if _, err := s.Send(ctx, "Second lab message.", agentstream.ModeQueue); err != nil {
		t.Fatal(err)
	}
	i, e = w.await(t, i+1, "permission request of the second turn", isType(agentstream.TypePermissionRequest))
	if err := s.Answer(ctx, e.Payload.(*agentstream.PermissionRequest).RequestID, session.Answer{Decision: session.Allow}); err != nil {
		t.Fatal(err)
	}
	id, err := s.Send(ctx, "lab steer: say lab-steer-ok.", agentstream.ModeSteer)
	if err != nil {
		t.Fatal(err)
	}
	_, e = w.await(t, i+1, "the steer's acceptance", func(e agentstream.Envelope) bool {
		p, ok := e.Payload.(*agentstream.SentAccepted)
		return ok && p.MessageID == id
	})
	if a := e.Payload.(*agentstream.SentAccepted); a.Emulated || a.Status != agentstream.MessageDelivered {
		t.Errorf("steer accepted %+v, want delivered natively", a)
	}
	w.await(t, i+1, "end of the steered message", isCompleted(id))
	_, e = w.await(t, 0, "the steered turn's answer", func(e agentstream.Envelope) bool {
		m, ok := e.Payload.(*agentstream.Message)
		return ok && m.Role == agentstream.RoleAssistant && strings.Contains(m.Text, "lab-steer-ok")
	})
	if e.Turn != 2 {
		t.Errorf("the steered answer is in turn %d, want 2 (the steered turn)", e.Turn)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != agentstream.StateClosed {
		t.Errorf("final state %s (%s), want closed", res.State, res.Reason)
	}
	envs := w.all()
	checkOrder(t, envs)
	checkTurns(t, envs)
	checkAnsweredOnce(t, envs)
	if t.Failed() || testing.Verbose() {
		for _, e := range envs {
			t.Logf("%s", e.AppendJSON(nil))
		}
	}
}

// TestClaudeCodeQuestion: Claude Code's AskUserQuestion is a question the
// session holds under both its ids; the person's answer, given by the
// question's id, reaches the model in the tool's result.
func TestClaudeCodeQuestion(t *testing.T) {
	ctx := context.Background()
	s, w, run := labSession(t, "claude-stream", "question.json", "claude-stream", []string{"claude", "-p"},
		session.Config{Prompt: "Ask me the lab question."})
	_, e := w.await(t, 0, "question", isType(agentstream.TypeQuestion))
	q := e.Payload.(*agentstream.Question)
	if len(q.Questions) != 1 || q.Questions[0].Question != "Which lab color?" {
		t.Fatalf("question %+v", q)
	}
	// The question's permission request arrives after it; wait until the
	// session holds it.
	deadline := time.Now().Add(time.Minute)
	for len(s.Info().Pending) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if p := s.Info().Pending; len(p) != 1 || p[0].Kind != "question" {
		t.Fatalf("pending %+v, want the question", p)
	}
	if err := s.Answer(ctx, q.RequestID, session.Answer{Decision: session.Allow, Answers: map[string]string{"Which lab color?": "Blue"}}); err != nil {
		t.Fatal(err)
	}
	w.await(t, 0, "end of the message", isCompleted("m1"))
	var answered bool
	for _, r := range run.Sim.Calls() {
		body := string(r.Body)
		answered = answered || strings.Contains(body, "tool_result") && strings.Contains(body, "Blue")
	}
	if !answered {
		t.Error("the model never got the answer Blue in a tool result")
	}
	s.Close(ctx)
	s.Wait(ctx)
	envs := w.all()
	checkAnsweredOnce(t, envs)
	if t.Failed() || testing.Verbose() {
		for _, e := range envs {
			t.Logf("%s", e.AppendJSON(nil))
		}
	}
}
