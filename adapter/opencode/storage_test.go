package opencode_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/opencode"
	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestStorageConformance replays the records opencode 1.18.33 kept of the
// lab's sessions in its database (testdata/storage/SOURCES.md): their
// goldens and every invariant.
func TestStorageConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "opencode-storage",
		Fixtures: []string{"testdata/storage/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeStorage(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "opencode-storage", "testdata/storage/*.jsonl")
}

// TestStorageTurns: each user message of a stored session starts a turn,
// its prompt the text part opencode did not add itself; an assistant
// message's error is an error; a step-finish part read twice is one call;
// a model other than the session's is announced.
func TestStorageTurns(t *testing.T) {
	d := opencode.NewStorageDecoder()
	var evs []agentstream.Event
	for _, l := range []string{
		`{"id":"ses_1","slug":"s","projectID":"global","directory":"/w","title":"T","version":"1.18.33","time":{"created":1000,"updated":9000}}`,
		`{"id":"msg_1","sessionID":"ses_1","role":"user","time":{"created":2000}}`,
		`{"id":"prt_1","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"first"}`,
		`{"id":"prt_2","sessionID":"ses_1","messageID":"msg_1","type":"text","text":"file contents","synthetic":true}`,
		`{"id":"msg_2","sessionID":"ses_1","role":"assistant","providerID":"p","modelID":"m","time":{"created":3000}}`,
		`{"id":"prt_3","sessionID":"ses_1","messageID":"msg_2","type":"step-finish","reason":"stop","tokens":{"input":5,"output":2,"reasoning":1,"cache":{"read":3,"write":0}},"cost":0.25}`,
		`{"id":"prt_3","sessionID":"ses_1","messageID":"msg_2","type":"step-finish","reason":"stop","tokens":{"input":5,"output":2,"reasoning":1,"cache":{"read":3,"write":0}},"cost":0.25}`,
		`{"id":"msg_3","sessionID":"ses_1","role":"user","time":{"created":4000}}`,
		`{"id":"prt_4","sessionID":"ses_1","messageID":"msg_3","type":"text","text":"second"}`,
		`{"id":"msg_4","sessionID":"ses_1","role":"assistant","providerID":"p","modelID":"m","time":{"created":5000},"error":{"name":"APIError","data":{"message":"down","statusCode":503}}}`,
	} {
		evs = d.Decode(evs, []byte(l))
	}
	evs = d.End(evs)
	var got []string
	for _, e := range evs {
		got = append(got, e.Type())
	}
	want := []string{"session.started", "session.title", "turn.started", "message", "session.updated", "usage", "turn.ended", "turn.started", "message", "error", "turn.ended"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if m := evs[3].Payload.(*agentstream.Message); m.Role != agentstream.RoleUser || m.Text != "first" {
		t.Errorf("first prompt %+v, want the user's \"first\"", m)
	}
	if m := evs[8].Payload.(*agentstream.Message); m.Text != "second" {
		t.Errorf("second prompt %+v, want \"second\"", m)
	}
	if u := evs[4].Payload.(*agentstream.SessionUpdated); u.Model != "p/m" {
		t.Errorf("model %q, want p/m", u.Model)
	}
	u := evs[5].Payload.(*agentstream.Usage)
	if *u.InputTokens != 5 || *u.OutputTokens != 3 || *u.CacheReadTokens != 3 || *u.ReasoningTokens != 1 || *u.CostUSD != 0.25 || u.Model != "p/m" {
		t.Errorf("usage %+v, want input 5, output 2+1, cache 3, reasoning 1, cost 0.25 of p/m", u)
	}
	if e := evs[9].Payload.(*agentstream.Error); e.ErrorType != "APIError" || !strings.Contains(e.Message, "down") {
		t.Errorf("error %+v, want APIError down", e)
	}
	if evs[0].Time.UnixMilli() != 1000 || evs[2].Time.UnixMilli() != 2000 || evs[7].Time.UnixMilli() != 4000 {
		t.Errorf("times %v, %v, %v; want the records' 1000, 2000, 4000 ms", evs[0].Time, evs[2].Time, evs[7].Time)
	}
}
