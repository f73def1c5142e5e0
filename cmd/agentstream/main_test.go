package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
)

// Recorded sessions the tests feed the command, from the adapters' test data.
const (
	turnTools  = "../../adapter/claude/testdata/corpus/tandemtechnology-bb-stdout-turn-tools.jsonl"
	basicQuery = "../../adapter/claude/testdata/charlieyou-claude-agent-sdk-gleam-golden-basic-query.jsonl"
	sayHello   = "../../adapter/gemini/testdata/jnarowski-agentcmd-docs-stream-json-say-hello.jsonl"
)

// binary is the agentstream command built once for the tests that need a
// real process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentstream-cmd")
	if err != nil {
		panic(err)
	}
	// Commands that keep sessions keep them in this directory's store.
	os.Setenv("AGENTSTREAM_DB", filepath.Join(dir, "agentstream.db"))
	// Runs with --server keep their spools there too.
	os.Setenv("AGENTSTREAM_SPOOL_DIR", filepath.Join(dir, "spool"))
	binary = filepath.Join(dir, "agentstream")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCLI runs the command in process.
func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

func TestNormalizeDeterministic(t *testing.T) {
	file := turnTools
	a, _, code := runCLI(t, "", "normalize", file)
	b, _, code2 := runCLI(t, "", "normalize", file)
	if code != 0 || code2 != 0 {
		t.Fatalf("exit codes %d, %d", code, code2)
	}
	if a != b || a == "" {
		t.Fatalf("two runs differ or are empty")
	}
	data, _ := os.ReadFile(file)
	c, _, _ := runCLI(t, string(data), "normalize", "-")
	if c != a {
		t.Errorf("stdin and file give different bytes")
	}
	for i, line := range strings.Split(strings.TrimSpace(a), "\n") {
		env, err := agentstream.ParseEnvelope([]byte(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if agentstream.IsLive(env.Type()) {
			t.Errorf("line %d: live %s written without --live", i+1, env.Type())
		}
		if !strings.HasPrefix(env.Session, "s_") || len(env.Session) != 28 {
			t.Errorf("derived session id %q", env.Session)
		}
	}
	live, _, _ := runCLI(t, "", "normalize", "--live", "--session", "mine", file)
	if !strings.Contains(live, `"type":"message.delta"`) || !strings.Contains(live, `"session":"mine"`) {
		t.Errorf("--live --session output lacks deltas or the session id")
	}
}

func TestNormalizeExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"garbage is not an error", "\x00\xff not json\n{\"type\":\n[1,2]\n", []string{"normalize", "--protocol", "claude-json"}, 0},
		{"unknown protocol", "", []string{"normalize", "--protocol", "nope"}, 2},
		{"bad flag", "", []string{"normalize", "--frobnicate"}, 2},
		{"missing file", "", []string{"normalize", "/no/such/file.jsonl"}, 1},
		{"unknown command", "", []string{"frobnicate"}, 2},
		{"help", "", []string{"normalize", "-h"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, stderr)
			}
		})
	}
}

func TestNormalizeBadInputGivesValidJSON(t *testing.T) {
	in := "\ufeff{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\\ud800 lone\"}]}}\n" +
		strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n" +
		"{\"type\":\"result\",\"num_turns\":1e999,\"type\":\"result\"}\n" +
		"\x00\x01\x02\xff\xfe binary\n" +
		"{\"type\":\"user\",\"message\":{\"content\":\"truncated at EOF"
	out, _, code := runCLI(t, in, "normalize", "--protocol", "claude-json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 {
		t.Fatalf("got %d envelopes, want at least one per line:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if _, err := agentstream.ParseEnvelope([]byte(l)); err != nil {
			t.Errorf("envelope %d invalid: %v", i+1, err)
		}
	}
	if !strings.Contains(out, `"text":"\ufffd lone"`) && !strings.Contains(out, "\ufffd lone") {
		t.Errorf("lone surrogate not replaced:\n%s", lines[0])
	}
}

func TestUsageCommand(t *testing.T) {
	file := basicQuery
	out, _, code := runCLI(t, "", "usage", file)
	if code != 0 || !strings.Contains(out, "in 10") || !strings.Contains(out, "cost: $0.14") {
		t.Errorf("usage (exit %d):\n%s", code, out)
	}
	events, _, _ := runCLI(t, "", "normalize", file)
	out2, _, _ := runCLI(t, events, "usage")
	if out2 != out {
		t.Errorf("usage of envelopes differs from usage of native lines:\n%s\n%s", out, out2)
	}
	js, _, _ := runCLI(t, "", "usage", "--json", file)
	if !strings.Contains(js, `"costUsd": 0.1354875`) || !strings.Contains(js, `"tokensFrom": "session"`) {
		t.Errorf("usage --json:\n%s", js)
	}
}

// TestHugeLineBoundedMemory sends one 500 MB line through the real command
// and checks that its peak resident memory stays under 64 MB. The peak is
// read from the process's own VmHWM while it runs: the rusage of a child
// can carry the parent test's memory at the time of the fork.
func TestHugeLineBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("500 MB through a pipe")
	}
	const size = 500 << 20
	cmd := exec.Command(binary, "normalize", "--protocol", "claude-json")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var peak int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		head := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"`
		io.WriteString(stdin, head)
		chunk := bytes.Repeat([]byte("data é "), 1<<16)
		for n := len(head); n < size; n += len(chunk) {
			stdin.Write(chunk)
			if hwm := vmHWM(cmd.Process.Pid); hwm > peak {
				peak = hwm
			}
		}
		io.WriteString(stdin, "\"}]}}\n{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"after\"}\n")
		if hwm := vmHWM(cmd.Process.Pid); hwm > peak {
			peak = hwm
		}
		stdin.Close()
	}()
	<-done
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if peak == 0 {
		t.Skip("no /proc/PID/status VmHWM on this system")
	}
	t.Logf("peak RSS %d MB for a %d MB line", peak>>20, size>>20)
	if peak > 64<<20 {
		t.Errorf("peak RSS %d MB, want under 64 MB", peak>>20)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// The turn starts at the huge line: turn.started, then raw.
	if len(lines) < 3 || !strings.Contains(lines[0], `"type":"turn.started"`) || !strings.Contains(lines[1], `"reason":"oversized"`) || !strings.Contains(lines[len(lines)-1], `"summary":"after"`) {
		t.Errorf("want turn.started, raw oversized, then the result; got %d lines, first %.200s", len(lines), lines[0])
	}
}

func TestNormalizeStats(t *testing.T) {
	in := `{"type":"system","subtype":"init","session_id":"a","mcp_servers":[]}
{"type":"system","subtype":"vendor_notice","text":"a"}
{"type":"system","subtype":"vendor_notice","text":"b"}
{"type":"vendor_new_line","x":1}
not json
{"type":"result","subtype":"success","result":"ok"}
`
	path := filepath.Join(t.TempDir(), "stats.json")
	_, stderr, code := runCLI(t, in, "normalize", "--protocol", "claude-json", "--stats", "--stats-json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"system/vendor_notice", "2 / 2", "vendor_new_line", "(not json)", "session.ended"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stats lack %q:\n%s", want, stderr)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st normalizeStats
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.Events["raw"] != 4 || st.Lines["system/vendor_notice"].Raw != 2 || st.Lines["system/init"].Raw != 0 || st.Lines["result/success"].Lines != 1 {
		t.Errorf("stats json: events %v lines %+v", st.Events, st.Lines)
	}
}

// vmHWM returns the peak resident set size of a running process, in bytes,
// or 0 when it cannot be read.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
