package claude_test

import (
	"bytes"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/internal/workload"
)

// deltaHead is how the delta lines the adapter reads at once begin.
const deltaHead = `{"type":"stream_event","event":{"type":"content_block_delta","index":`

func newDecoder() agentstream.Decoder { return claude.NewDecoder(claude.Config{}) }

// TestDeltaHeadMatchesMemberLoop checks that reading the head of a delta
// line at once gives the same events as reading it member by member, on
// recorded sessions, generated deltas and lines made to trip the head
// reader.
func TestDeltaHeadMatchesMemberLoop(t *testing.T) {
	lines := agentstreamtest.FileLines(t, "testdata/*.jsonl", "testdata/corpus/*.jsonl")
	var gen bytes.Buffer
	if err := workload.ClaudeDeltas(&gen, 256<<10, 7); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bytes.Split(gen.Bytes(), []byte("\n"))...)
	tail := `,"session_id":"s1","parent_tool_use_id":null,"uuid":"u1"}`
	for _, l := range []string{
		deltaHead + `0,"delta":{"type":"text_delta","text":"plain"}}` + tail,
		deltaHead + `12,"delta":{"type":"thinking_delta","thinking":"hm \u00e9\ud83d\ude00"}}` + tail,
		deltaHead + `01,"delta":{"type":"text_delta","text":"leading zero"}}` + tail,
		deltaHead + `-1,"delta":{"type":"text_delta","text":"negative"}}` + tail,
		deltaHead + `1.5,"delta":{"type":"text_delta","text":"fraction"}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"bad \q escape"}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"bad utf-8 ` + "\xff\xfe" + `"}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"unterminated}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"cut"}}`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"cut"}},`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"space"} }` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"more","x":1}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":""}}` + tail,
		deltaHead + `0,"delta":{"type":"text_delta","text":"sub"}},"parent_tool_use_id":"toolu_9","session_id":"s1"}`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"dup type"}},"type":"user","message":{"role":"user","content":"hi"}}`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"dup event"}},"event":{"type":"message_stop"}}`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"time"}},"timestamp":"2026-11-29T16:20:05.5Z","isReplay":true}`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"trailing"}}} x`,
		deltaHead + `0,"delta":{"type":"text_delta","text":"x"}}` + tail + "\n",
		deltaHead,
		deltaHead + `0`,
	} {
		lines = append(lines, []byte(l))
	}
	if n := agentstreamtest.CompareFastPath(t, newDecoder, deltaHead, lines); n < 1000 {
		t.Fatalf("only %d delta lines compared", n)
	}
}

// FuzzDeltaHead checks the same on arbitrary lines, a delta line's head
// put in front of most of them.
func FuzzDeltaHead(f *testing.F) {
	f.Add([]byte(`0,"delta":{"type":"text_delta","text":"a"}},"session_id":"s"}`))
	f.Add([]byte(`3,"delta":{"type":"thinking_delta","thinking":"\u00e9"}},"parent_tool_use_id":"t"}`))
	f.Add([]byte(`0,"delta":{"type":"text_delta","text":"a"}},"type":"assistant"}`))
	f.Fuzz(func(t *testing.T, rest []byte) {
		agentstreamtest.CompareFastPath(t, newDecoder, deltaHead, [][]byte{append([]byte(deltaHead), rest...), rest})
	})
}

// TestToolUseResultCopy checks user lines whose tool_use_result repeats the
// tool output: the copy is passed over, yet the line is still checked to
// its end.
func TestToolUseResultCopy(t *testing.T) {
	out := `"line one\n\tline \"two\" é\n"`
	msg := `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":` + out + `,"is_error":false}]},"session_id":"s1"`
	tests := []struct {
		name, line, want string
	}{
		{"copy", msg + `,"tool_use_result":{"stdout":` + out + `,"stderr":"","interrupted":false}}`, "tool.result"},
		{"other text", msg + `,"tool_use_result":{"stdout":"else","stderr":""}}`, "tool.result"},
		{"copy then cut", msg + `,"tool_use_result":{"stdout":` + out, "raw"},
		{"copy then bad escape", msg + `,"tool_use_result":{"stdout":` + out + `,"stderr":"\q"}}`, "raw"},
		{"copy then garbage", msg + `,"tool_use_result":{"stdout":` + out + `}} x`, "raw"},
		{"bad escape, no copy", msg + `,"tool_use_result":{"stdout":"\q"}}`, "raw"},
		{"longer than the copy", msg + `,"tool_use_result":{"stdout":` + out[:len(out)-1] + `more"}}`, "tool.result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := claude.NewDecoder(claude.Config{}).Decode(nil, []byte(tt.line))
			if len(evs) != 1 || evs[0].Type() != tt.want {
				t.Fatalf("events %s; want one %s", agentstreamtest.Describe(evs), tt.want)
			}
			if r, ok := evs[0].Payload.(*agentstream.ToolResult); ok && r.Output != "line one\n\tline \"two\" é\n" {
				t.Fatalf("output %q", r.Output)
			}
		})
	}
}
