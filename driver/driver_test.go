package driver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/driver"
	"github.com/google/go-cmp/cmp"
)

// conn records what a driver writes and emits.
type conn struct {
	writes []string
	emits  []agentstream.Payload
	closed bool
}

func (c *conn) Write(b []byte)               { c.writes = append(c.writes, string(b)) }
func (c *conn) CloseInput()                  { c.closed = true }
func (c *conn) Emit(p agentstream.Payload)   { c.emits = append(c.emits, p) }
func (c *conn) Now() time.Time               { return time.Time{} }
func (c *conn) last() map[string]any         { return decode(c.writes[len(c.writes)-1]) }
func decode(s string) (m map[string]any)     { json.Unmarshal([]byte(s), &m); return m }
func (h *host) Ready()                       { h.ready++ }
func (h *host) Request(r driver.Request)     { h.requests = append(h.requests, r) }
func (h *host) Withdrawn(id string)          { h.withdrawn = append(h.withdrawn, id) }
func (h *host) TurnEnded(status, msg string) { h.ended = append(h.ended, status) }
func (h *host) Failed(err error)             { h.failed = append(h.failed, err.Error()) }
func (h *host) Background(n int)             { h.background = append(h.background, n) }

// host records what a driver tells its host.
type host struct {
	background []int
	ready      int
	requests   []driver.Request
	withdrawn  []string
	ended      []string
	failed     []string
}

func start(t *testing.T, protocol string, opts driver.Options) (driver.Driver, *conn, *host) {
	t.Helper()
	d, err := driver.For(protocol, opts)
	if err != nil {
		t.Fatal(err)
	}
	c, h := &conn{}, &host{}
	d.Start(c, h)
	return d, c, h
}

// TestACPHandshake: initialize says the client's name and version and
// offers no file system or terminal; session/new follows, then the host is
// ready; a permission request is answered with the agent's own option ids;
// file and terminal requests are refused with a reason.
func TestACPHandshake(t *testing.T) {
	d, c, h := start(t, "acp", driver.Options{Cwd: "/w", ClientVersion: "1.2"})
	init := c.last()
	info := init["params"].(map[string]any)["clientInfo"].(map[string]any)
	if info["name"] != "agentstream" || info["version"] != "1.2" {
		t.Errorf("clientInfo %v", info)
	}
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`))
	if m := c.last(); m["method"] != "session/new" {
		t.Fatalf("after initialize: %v", m)
	}
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"S"}}`))
	if h.ready != 1 {
		t.Fatalf("ready %d times", h.ready)
	}
	// The request of harness-lab.md, as claude-agent-acp 0.23.1 sent it.
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"options":[{"kind":"allow_always","name":"Always Allow","optionId":"allow_always"},{"kind":"allow_once","name":"Allow","optionId":"allow"},{"kind":"reject_once","name":"Reject","optionId":"reject"}],"sessionId":"S","toolCall":{"toolCallId":"t1","rawInput":{"command":"ls"},"title":"ls","kind":"execute"}}}`))
	if len(h.requests) != 1 || h.requests[0].ID != "0" || h.requests[0].Category != "execute" || h.requests[0].Input != `{"command":"ls"}` {
		t.Fatalf("requests %+v", h.requests)
	}
	for _, tc := range []struct {
		decision, option, outcome string
	}{
		{driver.Allow, "allow", agentstream.OutcomeAllowed},
		{driver.AllowAlways, "allow_always", agentstream.OutcomeAllowed},
		{driver.Deny, "reject", agentstream.OutcomeDenied},
	} {
		t.Run(tc.decision, func(t *testing.T) {
			d.Line(c, []byte(`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"options":[{"kind":"allow_always","name":"Always Allow","optionId":"allow_always"},{"kind":"allow_once","name":"Allow","optionId":"allow"},{"kind":"reject_once","name":"Reject","optionId":"reject"}],"sessionId":"S","toolCall":{"toolCallId":"t2"}}}`))
			res, err := d.Answer(c, "7", driver.Answer{Decision: tc.decision})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"jsonrpc":"2.0","id":7,"result":{"outcome":{"optionId":"` + tc.option + `","outcome":"selected"}}}` + "\n"
			if diff := cmp.Diff(want, c.writes[len(c.writes)-1]); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if res.Outcome != tc.outcome || res.Answer != tc.option {
				t.Errorf("resolution %+v", res)
			}
			if _, err := d.Answer(c, "7", driver.Answer{Decision: tc.decision}); err != driver.ErrNoRequest {
				t.Errorf("second answer: %v", err)
			}
		})
	}
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":9,"method":"fs/read_text_file","params":{"path":"/etc/passwd"}}`))
	m := c.last()
	if e := m["error"].(map[string]any); e["code"] != float64(-32601) || !strings.Contains(e["message"].(string), "no file system") {
		t.Errorf("fs request answered %v", m)
	}
	d.Line(c, []byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}`))
	if diff := cmp.Diff([]string{"0"}, h.withdrawn); diff != "" {
		t.Errorf("withdrawn (-want +got):\n%s", diff)
	}
	if exits := d.Close(c); exits || !c.closed {
		t.Errorf("Close: exits %v, stdin closed %v; an ACP agent must be stopped", exits, c.closed)
	}
}

// TestACPBackgroundTurn: Qwen Code's agent tool launching its subagent in
// the background counts a background task, which keeps the host waiting
// until the agent asks to start the turn for its end; that request is
// taken (accepted true) and the count drops. Lines of the lab's qwen-acp
// subagent capture, shortened.
func TestACPBackgroundTurn(t *testing.T) {
	d, c, h := start(t, "acp", driver.Options{Cwd: "/w"})
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`))
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"S"}}`))
	launch := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed","rawOutput":{"type":"task_execution","executionMode":"background","status":"background"}}}}`
	d.Line(c, []byte(launch))
	d.Line(c, []byte(launch)) // a repeat counts once
	d.Line(c, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"completed","rawOutput":{"status":"completed"}}}}`))
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`))
	d.Line(c, []byte(`{"jsonrpc":"2.0","id":1,"method":"_qwencode/start_turn","params":{"sessionId":"S","source":"background_notification","taskId":"general-purpose-call_1","kind":"agent","toolUseId":"call_1"}}`))
	if diff := cmp.Diff([]int{1, 0}, h.background); diff != "" {
		t.Errorf("background counts (-want +got):\n%s", diff)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"accepted":true}}` + "\n"
	if diff := cmp.Diff(want, c.writes[len(c.writes)-1]); diff != "" {
		t.Errorf("start_turn answered (-want +got):\n%s", diff)
	}
}

// TestClaudeAnswers: can_use_tool answered allow with the tool's input (or
// the one given), deny with the message, AskUserQuestion with the answers
// in its input.
func TestClaudeAnswers(t *testing.T) {
	d, c, h := start(t, "claude-stream", driver.Options{})
	if h.ready != 1 {
		t.Fatal("not ready at once")
	}
	d.Line(c, []byte(`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"permission_suggestions":[{"type":"addRules"}],"tool_use_id":"toolu_1"}}`))
	d.Line(c, []byte(`{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which?","options":[{"label":"A"}]}]},"tool_use_id":"toolu_2"}}`))
	if len(h.requests) != 2 || h.requests[1].Kind != driver.KindQuestion || h.requests[1].Aliases[0] != "toolu_2" {
		t.Fatalf("requests %+v", h.requests)
	}
	d.Answer(c, "r1", driver.Answer{Decision: driver.AllowAlways})
	want := `{"response":{"request_id":"r1","response":{"behavior":"allow","updatedInput":{"command":"ls"},"updatedPermissions":[{"type":"addRules"}]},"subtype":"success"},"type":"control_response"}` + "\n"
	if diff := cmp.Diff(want, c.writes[len(c.writes)-1]); diff != "" {
		t.Errorf("allow always (-want +got):\n%s", diff)
	}
	res, _ := d.Answer(c, "r2", driver.Answer{Decision: driver.Allow, Answers: map[string]string{"Which?": "A"}})
	want = `{"response":{"request_id":"r2","response":{"behavior":"allow","updatedInput":{"answers":{"Which?":"A"},"questions":[{"question":"Which?","options":[{"label":"A"}]}]}},"subtype":"success"},"type":"control_response"}` + "\n"
	if diff := cmp.Diff(want, c.writes[len(c.writes)-1]); diff != "" {
		t.Errorf("question (-want +got):\n%s", diff)
	}
	if res.Outcome != agentstream.OutcomeAnswered {
		t.Errorf("question resolved %+v", res)
	}
	d.Line(c, []byte(`{"type":"control_request","request_id":"r3","request":{"subtype":"hook_callback","callback_id":"x"}}`))
	if m := c.last(); m["response"].(map[string]any)["subtype"] != "error" {
		t.Errorf("a hook callback was answered %v", m)
	}
}

// FuzzLine: no line makes a driver panic, whatever it held before, and
// answering whatever it reported as requests does not either.
func FuzzLine(f *testing.F) {
	for _, pattern := range []string{
		"../adapter/claude/testdata/lab/claude-stream-*.jsonl",
		"../adapter/acp/testdata/lab/*.jsonl",
		"../adapter/codex/testdata/appserver/*.jsonl",
	} {
		files, _ := filepath.Glob(pattern)
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				f.Add(append([]byte(nil), sc.Bytes()...))
			}
		}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":{"x":1},"method":"session/request_permission","params":{"options":"no"}}`))
	f.Add([]byte(`{"id":1,"result":{"thread":{"id":""}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, p := range []string{"claude-stream", "acp", "codex-app", "claude-json"} {
			d, c, h := start(t, p, driver.Options{})
			d.Line(c, line)
			d.Line(c, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			d.Line(c, line)
			for _, r := range h.requests {
				for _, dec := range []string{driver.Allow, driver.AllowAlways, driver.Deny, driver.Cancel} {
					d.Answer(c, r.ID, driver.Answer{Decision: dec, Answers: map[string]string{"q": "a"}})
				}
			}
		}
	})
}
