package agentstream_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func ptr[T any](v T) *T { return &v }

// everyPayload holds one filled-in payload of every type of the vocabulary.
func everyPayload() []agentstream.Payload {
	return []agentstream.Payload{
		&agentstream.SessionStarted{Harness: "claude-code", Model: "m", ContextWindow: ptr[int64](200000), Cwd: "/w", SessionID: "x", Tools: []string{"Bash"}, Version: "1", PermissionMode: "default"},
		&agentstream.SessionTitle{Title: "Fix the <build>"},
		&agentstream.SessionTitle{Title: "fix the failing test", Source: agentstream.TitlePrompt},
		&agentstream.Message{Role: "assistant", Text: "héllo \"world\" </script>", Mode: "inject"},
		&agentstream.Thinking{Text: "hm", Redacted: true, Partial: true},
		&agentstream.ToolCall{CallID: "c", Name: "Bash", Input: `{"command":"ls > x"}`, Category: "execute", Summary: "ls > x", DisplayName: agentstream.ToolShell},
		&agentstream.ToolResult{CallID: "c", IsError: true, Output: "boom\x00", Truncated: true, Name: "Bash", Characters: 12000, ExitCode: ptr[int64](2)},
		&agentstream.Plan{Steps: []agentstream.PlanStep{{Text: "a", Status: "completed"}, {Text: "b", Status: "pending"}}},
		&agentstream.Usage{Scope: "call", Model: "m", InputTokens: ptr[int64](1), OutputTokens: ptr[int64](2), ContextTokens: ptr[int64](1), MessageID: "id", CostUSD: ptr(0.5)},
		&agentstream.Usage{Scope: "session", InputTokens: ptr[int64](1), CostUSD: ptr(0.0667396), Turns: ptr[int64](4), DurationMs: ptr[int64](8807), PremiumRequests: ptr(1.5), ContextTokens: ptr[int64](10), ContextWindow: ptr[int64](100)},
		&agentstream.Usage{Scope: "call", Model: "m", InputTokens: ptr[int64](1), OutputTokens: ptr[int64](1), MessageID: "id", Estimate: true},
		&agentstream.Usage{Scope: "session", InputTokens: ptr[int64](3), OutputTokens: ptr[int64](9), CostUSD: ptr(0.25), Run: 2, Models: []agentstream.ModelUsage{
			{Model: "claude-opus-5[1m]", InputTokens: ptr[int64](2), OutputTokens: ptr[int64](8), CostUSD: ptr(0.25), ContextWindow: ptr[int64](1000000)},
			{Model: "my-model", InputTokens: ptr[int64](1), OutputTokens: ptr[int64](1)}}},
		&agentstream.Usage{Scope: "session", CostUSD: ptr(0.00524), DurationMs: ptr[int64](386), Unpriced: true, Models: []agentstream.ModelUsage{
			{Model: "claude-opus-5-5", CostUSD: ptr(0.00524)}, {Model: "my-model"}}},
		&agentstream.SessionEnded{Status: "failed", StopReason: "end_turn", Summary: "s", Error: "e", Reason: "exit"},
		&agentstream.SessionBackground{TaskID: "t", Kind: "shell", Status: "running", Description: "d", Summary: "s", CallID: "c"},
		&agentstream.Raw{Reason: "unmapped", JSON: []byte(`{"type":"x","a":[1,2]}`), Bytes: 22},
		&agentstream.Raw{Reason: "malformed", Text: "{oops", Bytes: 5},
		&agentstream.SessionUpdated{Model: "m2", Commands: []string{"compact"}},
		&agentstream.SessionUpdated{SessionID: "new", MCPServers: []agentstream.MCPServer{{Name: "github", Status: "connected"}}, Skills: []string{}, BackgroundTasks: []agentstream.BackgroundTask{{TaskID: "t1", Kind: "subagent", Description: "Count files"}}},
		&agentstream.TurnStarted{Turn: 2},
		&agentstream.TurnEnded{Turn: 2, Reason: "ok"},
		&agentstream.MessageDelta{Role: "assistant", Text: "he"},
		&agentstream.ThinkingDelta{Text: "h"},
		&agentstream.ToolOutput{CallID: "c", Channel: "stdout", Text: "line"},
		&agentstream.ToolDenied{CallID: "c", Name: "Bash", Reason: "no"},
		&agentstream.FileChange{CallID: "c", Changes: []agentstream.FileChangeItem{{Path: "a.go", Kind: "modify", Diff: "@@ -1 +1 @@\n-a\n+b\n"}}},
		&agentstream.Subagent{ID: "a", CallID: "c", Name: "Explore", Status: "started", Description: "d"},
		&agentstream.PermissionRequest{RequestID: "r", CallID: "c", Name: "Bash", Input: `{}`, Options: []agentstream.PermissionOption{{ID: "allow", Label: "Allow", Kind: "allow_once"}}},
		&agentstream.Question{RequestID: "r", CallID: "c", Questions: []agentstream.QuestionItem{{Question: "q?", Header: "h", Options: []agentstream.QuestionOption{{Label: "a", Description: "d"}}, MultiSelect: true}}},
		&agentstream.RequestResolved{RequestID: "r", Outcome: "allowed", Auto: true, By: "policy"},
		&agentstream.Compaction{Trigger: "auto", PreTokens: ptr[int64](100), PostTokens: ptr[int64](10)},
		&agentstream.Quota{Status: "allowed", LimitType: "five_hour", Utilization: ptr(0.25), ResetAt: "2026-08-21T05:00:00Z"},
		&agentstream.Retry{Attempt: ptr[int64](3), MaxRetries: ptr[int64](10), DelayMs: ptr(520.9), Error: "overloaded", Status: ptr[int64](529)},
		&agentstream.Error{Message: "m", ErrorType: "rate_limit", Recoverable: ptr(true)},
		&agentstream.Warning{Message: "w"},
		&agentstream.Stderr{Text: "err", Truncated: true},
		&agentstream.Hook{Event: "SessionStart", Name: "SessionStart:startup", Status: "finished", Outcome: "success", Output: "o"},
		&agentstream.Fallback{From: &agentstream.FallbackTarget{Index: ptr[int64](0), Harness: "claude-code", Model: "a"}, To: &agentstream.FallbackTarget{Harness: "codex"}, Failure: "quota", Message: "m"},
		&agentstream.Progress{Activity: agentstream.ActivityThinking, Tokens: ptr[int64](43)},
		&agentstream.MessageStatus{MessageID: "c51b7384", Status: agentstream.MessageQueued},
		&agentstream.SessionState{State: "running", Previous: "idle", Reason: "message m1"},
		&agentstream.SentAccepted{MessageID: "m1", Mode: "steer", Status: "queued", Emulated: true, Reason: "steer is queued"},
		&agentstream.SentStarted{MessageID: "m1", Mode: "queue", Status: "running"},
		&agentstream.SentCompleted{MessageID: "m1", Mode: "queue", Status: "failed", Error: "exit status 1"},
		&agentstream.Account{Account: "work", Index: ptr[int64](1), Harness: "claude-code", Model: "m", Status: "exhausted", Env: []string{"WORK_KEY"}, ResetAt: "2026-08-21T05:00:00Z", Message: "rate limited"},
		&agentstream.Passthrough{EventType: "future.type", JSON: []byte(`{"x":1}`)},
	}
}

// TestEveryTypeRoundTrips checks that every payload type encodes to valid
// JSON with its type, decodes back to the same payload, and re-encodes to
// the same bytes; and that every type of the vocabulary is covered.
func TestEveryTypeRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range everyPayload() {
		t.Run(p.Type(), func(t *testing.T) {
			seen[p.Type()] = true
			env := agentstream.Envelope{Session: "s", Seq: 3, TS: time.Date(2026, 11, 29, 16, 20, 55, 123e6, time.UTC), Harness: "h", Turn: 2, Origin: "replay", ParentCallID: "p", Payload: p, Source: &agentstream.Source{Stream: "stdout", Line: 57}}
			if agentstream.IsLive(p.Type()) {
				env.Seq = 0
			}
			b := env.AppendJSON(nil)
			if !utf8.Valid(b) {
				t.Fatalf("invalid UTF-8: %q", b)
			}
			got, err := agentstream.ParseEnvelope(b)
			if err != nil {
				t.Fatalf("ParseEnvelope(%s): %v", b, err)
			}
			if diff := cmp.Diff(env, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
			if b2 := got.AppendJSON(nil); !bytes.Equal(b, b2) {
				t.Errorf("re-encoding differs:\n-%s\n+%s", b, b2)
			}
		})
	}
	for _, typ := range agentstream.Types() {
		if !seen[typ] {
			t.Errorf("type %s has no round-trip case", typ)
		}
	}
}

func TestEnvelopeEncoding(t *testing.T) {
	env := agentstream.Envelope{Session: "s_1", Seq: 17, TS: time.Date(2026, 11, 29, 16, 20, 55, 123456789, time.UTC), Harness: "claude-code", Turn: 2,
		ParentCallID: "toolu_01", Payload: &agentstream.Message{Role: "assistant", Text: "a < b && c > d"}, Source: &agentstream.Source{Stream: "stdout", Line: 57}}
	want := `{"v":1,"session":"s_1","seq":17,"ts":"2026-11-29T16:20:55.123Z","harness":"claude-code","turn":2,"origin":"live","parentCallId":"toolu_01","type":"message","payload":{"role":"assistant","text":"a < b && c > d","truncated":false},"source":{"stream":"stdout","line":57}}`
	if got := string(env.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	live := agentstream.Envelope{Session: "s_1", Payload: &agentstream.MessageDelta{Role: "assistant", Text: "x"}}
	want = `{"v":1,"session":"s_1","seq":null,"ts":null,"harness":null,"turn":0,"origin":"live","type":"message.delta","payload":{"role":"assistant","text":"x"},"source":null}`
	if got := string(live.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		max       int
		want      string
		truncated bool
	}{
		{"short", "abc", 5, "abc", false},
		{"exact", "abcde", 5, "abcde", false},
		{"ascii", "abcdef", 5, "abcde", true},
		{"multibyte kept whole", "ééééé€", 5, "ééééé", true},
		{"emoji", "😀😀😀", 2, "😀😀", true},
		{"zero", "abc", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, tr := agentstream.Clip(tt.in, tt.max)
			if got != tt.want || tr != tt.truncated {
				t.Errorf("Clip(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, tr, tt.want, tt.truncated)
			}
			got, tr = agentstream.ClipBytes([]byte(tt.in), tt.max)
			if got != tt.want || tr != tt.truncated {
				t.Errorf("ClipBytes(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, tr, tt.want, tt.truncated)
			}
		})
	}
}

func TestSplitCompleteLines(t *testing.T) {
	lines, n := agentstream.SplitCompleteLines([]byte("a\r\nbb\n\nccc"))
	want := []string{"a", "bb", ""}
	var got []string
	for _, l := range lines {
		got = append(got, string(l))
	}
	if diff := cmp.Diff(want, got); diff != "" || n != 7 {
		t.Errorf("consumed %d, want 7; lines (-want +got):\n%s", n, diff)
	}
}

func readAll(t *testing.T, lr *agentstream.LineReader) []agentstream.Line {
	t.Helper()
	var out []agentstream.Line
	for {
		l, err := lr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		l.Bytes = append([]byte(nil), l.Bytes...)
		out = append(out, l)
	}
}

func TestLineReader(t *testing.T) {
	in := "\xef\xbb\xbf{\"a\":1}\r\n\n" + strings.Repeat("x", 300) + "\nlast"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in)), iotest.DataErrReader(strings.NewReader(in))} {
		lr := agentstream.NewLineReader(r)
		lr.SoftLimit = 100
		got := readAll(t, lr)
		want := []agentstream.Line{
			{N: 1, Bytes: []byte(`{"a":1}`), Size: 7},
			{N: 2, Bytes: []byte{}, Size: 0},
			{N: 3, Size: 300, Oversized: true, Head: []byte(strings.Repeat("x", 300))[:101]},
			{N: 4, Bytes: []byte("last"), Size: 4},
		}
		// The head holds what was buffered when the line passed the limit.
		if len(got) == 4 && got[2].Oversized {
			want[2].Head = got[2].Head
			if !bytes.HasPrefix([]byte(strings.Repeat("x", 300)), got[2].Head) || len(got[2].Head) <= 100 {
				t.Errorf("oversized head = %q", got[2].Head)
			}
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func TestLineReaderOversizedCRLF(t *testing.T) {
	lr := agentstream.NewLineReader(strings.NewReader(strings.Repeat("y", 5000) + "\r\nnext\r\n"))
	lr.SoftLimit = 64
	got := readAll(t, lr)
	if len(got) != 2 || !got[0].Oversized || got[0].Size != 5000 || string(got[1].Bytes) != "next" || got[1].N != 2 {
		t.Errorf("got %+v", got)
	}
}

func TestLineReaderHardLimit(t *testing.T) {
	lr := agentstream.NewLineReader(strings.NewReader("ok\n" + strings.Repeat("z", 10000) + "\n"))
	lr.HardLimit = 1000
	if l, err := lr.Next(); err != nil || string(l.Bytes) != "ok" {
		t.Fatalf("first line: %q, %v", l.Bytes, err)
	}
	if _, err := lr.Next(); !errors.Is(err, agentstream.ErrLineTooLong) {
		t.Errorf("err = %v, want ErrLineTooLong", err)
	}
}

// TestLineReaderBoundedMemory reads a 64 MiB line with a 1 MiB soft limit
// and checks that the reader's buffer never grows past the limit.
func TestLineReaderBoundedMemory(t *testing.T) {
	const size = 64 << 20
	r := io.MultiReader(strings.NewReader(`{"type":"user","x":"`), io.LimitReader(repeatReader('a'), size), strings.NewReader("\"}\nnext\n"))
	lr := agentstream.NewLineReader(r)
	lr.SoftLimit = 1 << 20
	l, err := lr.Next()
	if err != nil || !l.Oversized || l.Size != size+22 {
		t.Fatalf("line: oversized=%v size=%d err=%v", l.Oversized, l.Size, err)
	}
	if got := agentstream.LineReaderBuffer(lr); got > 1<<20+1 {
		t.Errorf("buffer grew to %d bytes, past the soft limit", got)
	}
	l, err = lr.Next()
	if err != nil || string(l.Bytes) != "next" {
		t.Errorf("next line: %q, %v", l.Bytes, err)
	}
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func FuzzLineReader(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\r\n\r\n", "\xef\xbb\xbfx\r\n", strings.Repeat("q", 300) + "\nz"} {
		f.Add([]byte(s), uint8(16))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		lr := agentstream.NewLineReader(iotest.HalfReader(bytes.NewReader(data)))
		lr.SoftLimit = int(limit) + 1
		lines, total := 0, int64(0)
		for {
			l, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lines++
			if l.N != int64(lines) {
				t.Fatalf("line %d numbered %d", lines, l.N)
			}
			if !l.Oversized && int64(len(l.Bytes)) != l.Size {
				t.Fatalf("size %d for %d bytes", l.Size, len(l.Bytes))
			}
			if bytes.ContainsRune(l.Bytes, '\n') {
				t.Fatalf("line holds a newline")
			}
			total += l.Size
		}
		if total > int64(len(data)) {
			t.Fatalf("lines add up to %d bytes, input has %d", total, len(data))
		}
		if want := bytes.Count(data, []byte("\n")); lines < want || lines > want+1 {
			t.Fatalf("%d lines for %d newlines", lines, want)
		}
	})
}
