package gemini_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/gemini"
	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestChatConformance replays the chat files Gemini CLI 0.61.0 wrote in the
// lab's runs (testdata/chats/SOURCES.md): their goldens and every invariant.
func TestChatConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "gemini-chat",
		Fixtures: []string{"testdata/chats/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeChat(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "gemini-chat", "testdata/chats/*.jsonl")
}

// TestChatDocument: older Gemini CLI builds kept a chat as one JSON
// document, {"sessionId",…,"messages":[…]}, indented over lines or not. The
// document is built from the lab's shell chat (its metadata, then each
// message as last written) and must give the events the JSONL gives, raw
// lines apart.
func TestChatDocument(t *testing.T) {
	data, err := os.ReadFile("testdata/chats/gemini-0.61.0-shell-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	doc := map[string]any{}
	json.Unmarshal([]byte(lines[0]), &doc)
	var msgs []map[string]any
	at := map[string]int{}
	for _, l := range lines[1:] {
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		if set, ok := m["$set"].(map[string]any); ok {
			if ms, ok := set["messages"].([]any); ok {
				for _, x := range ms {
					m = x.(map[string]any)
					id := m["id"].(string)
					at[id] = len(msgs)
					msgs = append(msgs, m)
				}
			}
			continue
		}
		id := m["id"].(string)
		if i, ok := at[id]; ok {
			msgs[i] = m
			continue
		}
		at[id] = len(msgs)
		msgs = append(msgs, m)
	}
	doc["messages"] = msgs
	indented, _ := json.MarshalIndent(doc, "", "  ")
	compact, _ := json.Marshal(doc)

	types := func(lines []string) []string {
		d := gemini.NewChatDecoder()
		var evs []agentstream.Event
		for _, l := range lines {
			evs = d.Decode(evs, []byte(l))
		}
		var out []string
		for _, e := range d.End(evs) {
			if e.Type() != "raw" {
				out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
			}
		}
		return out
	}
	want := types(lines)
	if len(want) < 8 {
		t.Fatalf("the JSONL gives only %v", want)
	}
	for name, doc := range map[string]string{"indented": string(indented), "compact": string(compact)} {
		if diff := cmp.Diff(want, types(strings.Split(doc, "\n"))); diff != "" {
			t.Errorf("%s document (-JSONL +document):\n%s", name, diff)
		}
	}
}
