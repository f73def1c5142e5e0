package pi_test

import (
	"flag"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/pi"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "pi-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Update:   *update,
	})
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "pi-json", "testdata/*.jsonl") }

// TestRetriedRun: pi 0.73.1 ends a run that failed with agent_end, then
// retries it (auto_retry_start, agent_start again): the retry goes on in
// the same turn, and only the retry's own end ends it; a failed bash result
// gives the exit code its text ends with (lines shortened from the lab's
// captures).
func TestRetriedRun(t *testing.T) {
	lines := []string{
		`{"type":"session","version":3,"id":"s1","cwd":"/lab/work"}`,
		`{"type":"agent_start"}`,
		`{"type":"message_end","message":{"role":"assistant","content":[],"model":"m","usage":{"input":0,"output":0},"stopReason":"error","errorMessage":"429 rate limited"}}`,
		`{"type":"agent_end","messages":[]}`,
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"429 rate limited"}`,
		`{"type":"agent_start"}`,
		`{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"lab-fail-out\n\n\nCommand exited with code 3"}],"details":{}},"isError":true}`,
		`{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"model":"m","usage":{"input":5,"output":2},"stopReason":"stop"}}`,
		`{"type":"agent_end","messages":[]}`,
	}
	d := pi.NewDecoder()
	var got []string
	for _, l := range lines {
		for _, e := range d.Decode(nil, []byte(l)) {
			switch e.Type() {
			case agentstream.TypeTurnStarted, agentstream.TypeTurnEnded, agentstream.TypeSessionEnded, agentstream.TypeRetry, agentstream.TypeToolResult:
				got = append(got, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
			}
		}
	}
	for _, e := range d.End(nil) {
		got = append(got, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	want := []string{
		`turn.started {"turn":0}`,
		`retry {"attempt":1,"maxRetries":3,"delayMs":2000,"error":"429 rate limited","status":null}`,
		`tool.result {"callId":"c1","isError":true,"output":"lab-fail-out\n\n\nCommand exited with code 3","truncated":false,"name":"bash","characters":41,"exitCode":3}`,
		`turn.ended {"turn":0,"reason":"ok"}`,
		`session.ended {"status":"succeeded","stopReason":"stop","summary":"ok","error":null,"reason":"completion"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
