package gemini_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/gemini"
	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestQwenChatConformance replays the chat files Qwen Code 0.24.4 wrote in
// the lab's runs (testdata/qwenchat/SOURCES.md): their goldens and every
// invariant.
func TestQwenChatConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "qwen-chat",
		Fixtures: []string{"testdata/qwenchat/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeQwenChat(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "qwen-chat", "testdata/qwenchat/*.jsonl")
}

// TestQwenChatTurns: each user record with text starts a turn; a thought
// part is thinking; a record written again under its uuid is read once;
// usage is the prompt less the cached input.
func TestQwenChatTurns(t *testing.T) {
	d := gemini.NewQwenChatDecoder()
	var evs []agentstream.Event
	answer := `{"uuid":"u2","parentUuid":"u1","sessionId":"s1","timestamp":"2026-12-01T10:00:01Z","type":"assistant","model":"qm","message":{"role":"model","parts":[{"text":"pondering","thought":true},{"text":"hi"}]},"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":7,"thoughtsTokenCount":3,"cachedContentTokenCount":40}}`
	for _, l := range []string{
		`{"uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-12-01T10:00:00Z","type":"user","cwd":"/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"one\n\n"}]}}`,
		answer, answer,
		`{"uuid":"u3","parentUuid":"u2","sessionId":"s1","timestamp":"2026-12-01T10:00:02Z","type":"user","message":{"role":"user","parts":[{"text":"two"}]}}`,
	} {
		evs = d.Decode(evs, []byte(l))
	}
	evs = d.End(evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type())
	}
	want := []string{"session.started", "turn.started", "message", "session.updated", "thinking", "message", "usage", "turn.ended", "turn.started", "message", "turn.ended"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if s := evs[0].Payload.(*agentstream.SessionStarted); s.SessionID != "s1" || s.Cwd != "/w" || s.Version != "0.24.4" || s.Harness != "qwen-code" {
		t.Errorf("session.started %+v", s)
	}
	if m := evs[2].Payload.(*agentstream.Message); m.Text != "one" {
		t.Errorf("prompt %q, want \"one\"", m.Text)
	}
	u := evs[6].Payload.(*agentstream.Usage)
	if *u.InputTokens != 60 || *u.CacheReadTokens != 40 || *u.OutputTokens != 10 || *u.ReasoningTokens != 3 || u.Model != "qm" {
		t.Errorf("usage %+v, want input 100-40, cache 40, output 7+3, reasoning 3 of qm", u)
	}
}
