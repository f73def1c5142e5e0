package acp_test

import (
	"bytes"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/acp"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/agentstream/agentstream/internal/workload"
)

// chunkHead is how the chunk lines the adapter reads at once begin.
const chunkHead = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`

func newDecoder() agentstream.Decoder { return acp.NewDecoder() }

// TestChunkHeadMatchesMemberLoop checks that reading a chunk line at once
// gives the same events as reading it member by member, on recorded
// sessions, a generated workload and lines made to trip the head reader.
func TestChunkHeadMatchesMemberLoop(t *testing.T) {
	lines := agentstreamtest.FileLines(t, "testdata/*.jsonl")
	var gen bytes.Buffer
	if err := workload.ACP(&gen, 1<<20, 7); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, bytes.Split(gen.Bytes(), []byte("\n"))...)
	up := chunkHead + `"s1","update":{"sessionUpdate":`
	msg := up + `"agent_message_chunk","content":{"type":"text","text":`
	for _, l := range []string{
		msg + `"plain"}}}}`,
		msg + `"esc \u00e9\ud83d\ude00\n"}}}}`,
		msg + `"bad \q escape"}}}}`,
		msg + `"bad utf-8 ` + "\xff" + `"}}}}`,
		msg + `"unterminated}}}}`,
		msg + `"cut"}}}`,
		msg + `"trailing"}}}} x`,
		msg + `"trailing"}}}}}`,
		msg + `""}}}}`,
		msg + `12}}}}`,
		msg + `"more","type":"image"}}}}`,
		msg + `"more"},"messageId":"m2"}}}`,
		msg + `"more"}},"sessionId":"s2"}}`,
		msg + `"more"}}},"id":3}`,
		msg + `"more"}}},"method":"session/prompt"}`,
		up + `"agent_thought_chunk","content":{"type":"text","text":"thought"}}}}`,
		up + `"user_message_chunk","content":{"type":"text","text":"user"}}}}`,
		up + `"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"with id"}}}}`,
		up + `"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"next id"}}}}`,
		up + `"agent_message_chunk","messageId":7,"content":{"type":"text","text":"number id"}}}}`,
		up + `"agent_message_chunk","messageId":"m\u0033","content":{"type":"text","text":"escaped id"}}}}`,
		up + `"agent_message_chunkx","content":{"type":"text","text":"other kind"}}}}`,
		up + `"tool_call","content":{"type":"text","text":"not a chunk"}}}}`,
		chunkHead + `"s\u0032","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"escaped session"}}}}`,
		chunkHead + `null,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no session"}}}}`,
		chunkHead + `"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
		chunkHead + `"unterminated`,
		chunkHead,
	} {
		lines = append(lines, []byte(l))
	}
	if n := agentstreamtest.CompareFastPath(t, newDecoder, chunkHead, lines); n < 100 {
		t.Fatalf("only %d update lines compared", n)
	}
}

// FuzzChunkHead checks the same on arbitrary lines, a chunk's head put in
// front of most of them.
func FuzzChunkHead(f *testing.F) {
	f.Add([]byte(`"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}}}`))
	f.Add([]byte(`"s","update":{"sessionUpdate":"agent_thought_chunk","messageId":"m","content":{"type":"text","text":"\u00e9"}}}}`))
	f.Add([]byte(`"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"a","text":"b"}}}}`))
	f.Fuzz(func(t *testing.T, rest []byte) {
		agentstreamtest.CompareFastPath(t, newDecoder, chunkHead, [][]byte{append([]byte(chunkHead), rest...), rest})
	})
}
