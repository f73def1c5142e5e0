package copilot_test

import (
	"bytes"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/copilot"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/internal/workload"
)

// The heads of the delta lines the adapter reads at once.
const (
	messageHead   = `{"type":"assistant.message_delta","data":{"messageId":`
	reasoningHead = `{"type":"assistant.reasoning_delta","data":{"reasoningId":`
)

func newDecoder() agentstream.Decoder { return copilot.NewDecoder() }

// TestDeltaHeadMatchesMemberLoop checks that reading the head of a delta
// line at once gives the same events as reading it member by member, on
// recorded sessions, a generated workload and lines made to trip the head
// reader.
func TestDeltaHeadMatchesMemberLoop(t *testing.T) {
	lines := agentstreamtest.FileLines(t, "testdata/*.jsonl")
	var gen bytes.Buffer
	if err := workload.Copilot(&gen, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bytes.Split(gen.Bytes(), []byte("\n"))...)
	tail := `,"id":"e1","timestamp":"2026-03-30T22:19:20.000Z","parentId":"e0","ephemeral":true}`
	for _, l := range []string{
		messageHead + `"m1","deltaContent":"plain"}` + tail,
		reasoningHead + `"r1","deltaContent":"think \u00e9\n"}` + tail,
		messageHead + `"m1","deltaContent":"bad \q"}` + tail,
		messageHead + `"m1","deltaContent":"bad utf-8 ` + "\xff" + `"}` + tail,
		messageHead + `"m\u0031","deltaContent":"escaped id"}` + tail,
		messageHead + `"m1","deltaContent":"cut"}`,
		messageHead + `"m1","deltaContent":"trailing"}` + tail + ` x`,
		messageHead + `"m1","other":1,"deltaContent":"extra member"}` + tail,
		messageHead + `"m1","deltaContent":"dup type"},"type":"assistant.message","data":{"content":"x"}}`,
		messageHead + `"m1","deltaContent":"dup data"},"data":{"deltaContent":"second"}}`,
		messageHead + `12,"deltaContent":"number id"}` + tail,
		messageHead + `"m1","deltaContent":"late time"},"timestamp":"2026-13-30T22:19:20Z"}`,
		messageHead,
	} {
		lines = append(lines, []byte(l))
	}
	if n := agentstreamtest.CompareFastPath(t, newDecoder, messageHead, lines); n < 100 {
		t.Fatalf("only %d message delta lines compared", n)
	}
}

// FuzzDeltaHead checks the same on arbitrary lines, a head put in front of
// most of them.
func FuzzDeltaHead(f *testing.F) {
	f.Add([]byte(`"m1","deltaContent":"a"},"id":"e1","timestamp":"2026-03-30T22:19:20.000Z"}`), false)
	f.Add([]byte(`"r1","deltaContent":"b"},"ephemeral":true}`), true)
	f.Fuzz(func(t *testing.T, rest []byte, reasoning bool) {
		head := messageHead
		if reasoning {
			head = reasoningHead
		}
		agentstreamtest.CompareFastPath(t, newDecoder, head, [][]byte{append([]byte(head), rest...), rest})
	})
}
