package cursor_test

import (
	"bytes"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/cursor"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/internal/workload"
)

// thinkingHead is how the thinking delta lines the adapter reads at once
// begin.
const thinkingHead = `{"type":"thinking","subtype":"delta","text":`

func newDecoder() agentstream.Decoder { return cursor.NewDecoder() }

// TestThinkingHeadMatchesMemberLoop checks that reading the head of a
// thinking delta line at once gives the same events as reading it member by
// member, on recorded sessions, a generated workload and lines made to trip
// the head reader.
func TestThinkingHeadMatchesMemberLoop(t *testing.T) {
	lines := agentstreamtest.FileLines(t, "testdata/*.jsonl")
	var gen bytes.Buffer
	if err := workload.Cursor(&gen, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bytes.Split(gen.Bytes(), []byte("\n"))...)
	tail := `,"session_id":"s1","timestamp_ms":1764430000000}`
	for _, l := range []string{
		thinkingHead + `"plain"` + tail,
		thinkingHead + `"esc \u00e9\ud83d\ude00\n"` + tail,
		thinkingHead + `"bad \q escape"` + tail,
		thinkingHead + `"bad utf-8 ` + "\xff" + `"` + tail,
		thinkingHead + `"unterminated` + tail,
		thinkingHead + `"cut"`,
		thinkingHead + `"trailing"} x`,
		thinkingHead + `""` + tail,
		thinkingHead + `12` + tail,
		thinkingHead + `"dup type","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}`,
		thinkingHead + `"dup subtype","subtype":"completed"}`,
		thinkingHead + `"dup text","text":"second"}`,
		thinkingHead,
	} {
		lines = append(lines, []byte(l))
	}
	if n := agentstreamtest.CompareFastPath(t, newDecoder, thinkingHead, lines); n < 100 {
		t.Fatalf("only %d thinking delta lines compared", n)
	}
}

// FuzzThinkingHead checks the same on arbitrary lines, the head put in
// front of most of them.
func FuzzThinkingHead(f *testing.F) {
	f.Add([]byte(`"a","session_id":"s","timestamp_ms":1}`))
	f.Add([]byte(`"\u00e9","type":"result"}`))
	f.Fuzz(func(t *testing.T, rest []byte) {
		agentstreamtest.CompareFastPath(t, newDecoder, thinkingHead, [][]byte{append([]byte(thinkingHead), rest...), rest})
	})
}
