package codex_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/codex"
	"github.com/agentstream/agentstream/agentstreamtest"
)

// TestRolloutConformance replays the session rollouts Codex 0.169.0 wrote
// in the lab's runs (testdata/rollout/SOURCES.md): their goldens and every
// invariant.
func TestRolloutConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "codex-rollout",
		Fixtures: []string{"testdata/rollout/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecodeRollout(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "codex-rollout", "testdata/rollout/*.jsonl")
}

// TestRolloutPatch: an apply_patch call's patch gives, with its output, a
// file.change of each file it names, kind and lines. The lines are written
// after the custom_tool_call of Codex's apply_patch tool (its patch
// grammar: *** Add File, *** Update File, *** Delete File, *** Move to);
// the lab's edit run gave no patch.
func TestRolloutPatch(t *testing.T) {
	d := codex.NewRolloutDecoder()
	var evs []agentstream.Event
	patch := "*** Begin Patch\n*** Add File: a.txt\n+one\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-x\n+y\n*** Delete File: d.txt\n*** End Patch"
	for _, l := range []string{
		`{"type":"response_item","payload":{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":` + strconv.Quote(patch) + `}}`,
		`{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"Success."}}`,
	} {
		evs = d.Decode(evs, []byte(l))
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Type())
		if fc, ok := e.Payload.(*agentstream.FileChange); ok {
			want := []agentstream.FileChangeItem{
				{Path: "a.txt", Kind: agentstream.ChangeAdd, Diff: "+one"},
				{Path: "b.txt", Kind: agentstream.ChangeRename, MovePath: "c.txt", Diff: "@@\n-x\n+y"},
				{Path: "d.txt", Kind: agentstream.ChangeDelete},
			}
			if diff := cmp.Diff(want, fc.Changes); fc.CallID != "c1" || diff != "" {
				t.Errorf("file.change of %q (-want +got):\n%s", fc.CallID, diff)
			}
		}
	}
	if want := []string{"tool.call", "file.change", "tool.result"}; !cmp.Equal(want, got) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestRolloutInjected: the user messages Codex writes itself (one tagged
// block) are kept raw; the person's are messages.
func TestRolloutInjected(t *testing.T) {
	d := codex.NewRolloutDecoder()
	var evs []agentstream.Event
	for _, text := range []string{"<environment_context>\n  <cwd>/lab/work</cwd>\n</environment_context>", "<b>bold</b> and more", "Say hi."} {
		evs = d.Decode(evs, []byte(`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":`+strconv.Quote(text)+`}]}}`))
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Type())
	}
	if want := []string{"raw", "message", "message"}; !cmp.Equal(want, got) {
		t.Errorf("events %v, want %v", got, want)
	}
}
