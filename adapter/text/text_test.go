package text_test

import (
	"strings"
	"testing"

	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/agentstreamtest"
)

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "none", "") }

func TestProse(t *testing.T) {
	long := strings.Repeat("é", 9000)
	tests := []struct {
		line string
		want string
	}{
		{"", ""},
		{"   ", ""},
		{"hello world", `{"reason":"text","json":null,"text":"hello world","bytes":11,"truncated":false}`},
		{`{"type":"message"}`, `{"reason":"text","json":null,"text":"{\"type\":\"message\"}","bytes":18,"truncated":false}`},
		{long, `{"reason":"text","json":null,"text":"` + strings.Repeat("é", 8000) + `","bytes":18000,"truncated":true}`},
	}
	for _, tt := range tests {
		evs, err := adapter.ParseStreamLine("none", []byte(tt.line))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if len(evs) == 1 {
			got = string(evs[0].Payload.AppendJSON(nil))
		}
		if len(evs) > 1 || got != tt.want {
			t.Errorf("line %.20q: got %d events %.120s, want %.120s", tt.line, len(evs), got, tt.want)
		}
	}
}
