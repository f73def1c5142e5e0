package gemini_test

import (
	"bytes"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/gemini"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/internal/workload"
)

// deltaHead is how the delta lines the adapter reads at once begin.
const deltaHead = `{"type":"message","timestamp":`

func newDecoder() agentstream.Decoder { return gemini.NewDecoder() }

// TestDeltaHeadMatchesMemberLoop checks that reading the head of a delta
// line at once gives the same events as reading it member by member, on
// recorded sessions, a generated workload and lines made to trip the head
// reader.
func TestDeltaHeadMatchesMemberLoop(t *testing.T) {
	lines := agentstreamtest.FileLines(t, "testdata/*.jsonl")
	var gen bytes.Buffer
	if err := workload.Gemini(&gen, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bytes.Split(gen.Bytes(), []byte("\n"))...)
	head := deltaHead + `"2025-10-29T10:36:09.772Z","role":"assistant","content":`
	long := `"` + string(bytes.Repeat([]byte(`ab\n`), agentstream.MaxText)) + `"`
	for _, l := range []string{
		head + `"plain","delta":true}`,
		head + `"esc \u00e9\ud83d\ude00\n","delta":true}`,
		head + long + `,"delta":true}`,
		head + long + `}`,
		head + `"bad \q escape","delta":true}`,
		head + `"bad utf-8 ` + "\xff" + `","delta":true}`,
		head + `"unterminated,"delta":true}`,
		head + `"cut"`,
		head + `"trailing","delta":true} x`,
		head + `"","delta":true}`,
		head + `12,"delta":true}`,
		head + `"no delta"}`,
		head + `"false delta","delta":false}`,
		head + `"dup content","content":"second","delta":true}`,
		head + `"dup role","role":"user","delta":true}`,
		head + `"dup type","type":"result","status":"success"}`,
		head + `"dup time","timestamp":"bad","delta":true}`,
		deltaHead + `"2025-10-29T10:36:09.772Z","role":"user","content":"user","delta":true}`,
		deltaHead + `"2025-10-29T10:36:09.772Z\u0030","role":"assistant","content":"escaped time","delta":true}`,
		deltaHead + `null,"role":"assistant","content":"no time","delta":true}`,
		deltaHead + `"<TIMESTAMP>","role":"assistant","content":"placeholder time","delta":true}`,
		deltaHead + `"unterminated`,
		deltaHead,
	} {
		lines = append(lines, []byte(l))
	}
	if n := agentstreamtest.CompareFastPath(t, newDecoder, deltaHead, lines); n < 100 {
		t.Fatalf("only %d message lines compared", n)
	}
}

// FuzzDeltaHead checks the same on arbitrary lines, the head put in front
// of most of them.
func FuzzDeltaHead(f *testing.F) {
	f.Add([]byte(`"2025-10-29T10:36:09.772Z","role":"assistant","content":"a","delta":true}`))
	f.Add([]byte(`"t","role":"assistant","content":"\u00e9","type":"init"}`))
	f.Fuzz(func(t *testing.T, rest []byte) {
		agentstreamtest.CompareFastPath(t, newDecoder, deltaHead, [][]byte{append([]byte(deltaHead), rest...), rest})
	})
}
