package jsonl_test

import (
	"flag"
	"testing"

	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "jsonl",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "jsonl", "testdata/*.jsonl") }

// TestSpecVector is the jsonl vector of the format's section 8: the type is
// lifted out and every other key kept as the payload, unchanged.
func TestSpecVector(t *testing.T) {
	tests := []struct{ line, typ, payload string }{
		{`{"type":"message","role":"assistant","text":"Done — tests pass."}`, "message", `{"role":"assistant","text":"Done — tests pass."}`},
		{`{ "role" : "user", "type":"message", "text":"a > b" }`, "message", `{"role":"user","text":"a > b"}`},
		{`{"type":"nope","a":1}`, "raw", `{"reason":"unmapped","json":{"type":"nope","a":1},"text":null,"bytes":21,"truncated":false}`},
		{`{"a":1}`, "raw", `{"reason":"unmapped","json":{"a":1},"text":null,"bytes":7,"truncated":false}`},
		{`{"type":"usage","outputTokens":""}`, "raw", `{"reason":"unmapped","json":{"type":"usage","outputTokens":""},"text":null,"bytes":34,"truncated":false}`},
	}
	for _, tt := range tests {
		evs, err := adapter.ParseStreamLine("jsonl", []byte(tt.line))
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 {
			t.Fatalf("%s: %d events", tt.line, len(evs))
		}
		got := []string{evs[0].Type(), string(evs[0].Payload.AppendJSON(nil))}
		if diff := cmp.Diff([]string{tt.typ, tt.payload}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.line, diff)
		}
	}
}
