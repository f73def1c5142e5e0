package claude_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/agentstream/agentstream/agentstreamtest"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestConformance(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "claude-json",
		Fixtures: []string{"testdata/*.jsonl"},
		Corpus:   []string{"testdata/corpus/*.jsonl"},
		Unpaired: []string{
			// stdin sides and converted notices carry no calls.
			"tandemtechnology-bb-stdin-approval-allow.jsonl",
			"tandemtechnology-bb-stdin-user-question.jsonl",
			// a collection of separate captures, not one session.
			"meawoppl-rust-claude-codes-captures-2026-01.jsonl",
		},
		Update: *update,
	})
}

// TestTranscripts checks that transcript files, a different format with the
// same messages, normalize without breaking any invariant but pairing
// (excerpts start mid-session).
func TestTranscripts(t *testing.T) {
	a, err := adapter.Lookup("claude-json")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/corpus/transcripts/*.jsonl")
	lab, _ := filepath.Glob("testdata/lab/transcripts/*.jsonl")
	files = append(files, lab...)
	if len(files) == 0 {
		t.Fatal("no transcripts found")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			agentstreamtest.CheckInvariants(t, a, data, false)
		})
	}
}

func FuzzDecode(f *testing.F) { agentstreamtest.FuzzDecoder(f, "claude-json", "testdata/*.jsonl") }

// decode runs one decoder over lines and returns the payloads' JSON, type
// first, one per event.
func decode(t *testing.T, cfg claude.Config, lines ...string) []string {
	t.Helper()
	d := claude.NewDecoder(cfg)
	var evs []agentstream.Event
	for _, l := range lines {
		evs = d.Decode(evs, []byte(l))
	}
	evs = d.End(evs)
	var out []string
	for _, e := range evs {
		out = append(out, e.Type()+" "+string(e.Payload.AppendJSON(nil)))
	}
	return out
}

// TestSpecVectors checks the conformance vectors of the format's section 8:
// each listed payload key must have the listed value.
func TestSpecVectors(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string
	}{
		{"init",
			`{"type":"system","subtype":"init","cwd":"/workspace/demo","session_id":"ef45799e-d353-4d47-9cab-edac253e5cb4","tools":["Task","Bash","Read"],"model":"claude-sonnet-5","permissionMode":"bypassPermissions"}`,
			[]string{`session.started {"harness":"claude-code","model":"claude-sonnet-5","contextWindow":1000000,"cwd":"/workspace/demo","sessionId":"ef45799e-d353-4d47-9cab-edac253e5cb4","tools":["Task","Bash","Read"]}`}},
		{"tool_use",
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_01Su1gEqceMZJJCvrQCx71oT","name":"Bash","input":{"command":"cat README.md 2>/dev/null || ls"}}]}}`,
			[]string{`tool.call {"callId":"toolu_01Su1gEqceMZJJCvrQCx71oT","name":"Bash","input":"{\"command\":\"cat README.md 2>/dev/null || ls\"}","truncated":false}`}},
		{"tool_result",
			`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_01Su1gEqceMZJJCvrQCx71oT","is_error":false,"content":"# demo\n\nDépôt bac à sable"}]}}`,
			[]string{`tool.result {"callId":"toolu_01Su1gEqceMZJJCvrQCx71oT","isError":false,"output":"# demo\n\nDépôt bac à sable","truncated":false}`}},
		{"text and usage",
			`{"type":"assistant","message":{"model":"claude-opus-5","usage":{"input_tokens":4,"cache_creation_input_tokens":1183,"cache_read_input_tokens":41207,"output_tokens":126},"content":[{"type":"text","text":"C'est poussé."}]}}`,
			[]string{
				`message {"role":"assistant","text":"C'est poussé.","truncated":false}`,
				`usage {"scope":"call","model":"claude-opus-5","inputTokens":4,"outputTokens":126,"cacheReadTokens":41207,"cacheCreationTokens":1183,"contextTokens":42394}`,
			}},
		{"TodoWrite",
			`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_todo","name":"TodoWrite","input":{"todos":[{"content":"Lire le README","status":"completed"},{"content":"Écrire STREAM.md","status":"in_progress"}]}}]}}`,
			[]string{
				`tool.call {"callId":"toolu_todo","name":"TodoWrite","input":"{\"todos\":[{\"content\":\"Lire le README\",\"status\":\"completed\"},{\"content\":\"Écrire STREAM.md\",\"status\":\"in_progress\"}]}","truncated":false}`,
				`plan {"steps":[{"text":"Lire le README","status":"completed"},{"text":"Écrire STREAM.md","status":"in_progress"}]}`,
			}},
		{"result",
			`{"type":"result","subtype":"success","result":"STREAM.md créé.","num_turns":4,"duration_ms":8807,"total_cost_usd":0.0667396,"usage":{"input_tokens":8,"output_tokens":456},"stop_reason":"end_turn"}`,
			[]string{
				`usage {"scope":"session","inputTokens":8,"outputTokens":456,"cacheReadTokens":null,"cacheCreationTokens":null,"costUsd":0.0667396,"turns":4,"durationMs":8807}`,
				`session.ended {"status":"succeeded","stopReason":"end_turn","summary":"STREAM.md créé."}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := adapter.ParseStreamLine("claude-json", []byte(tt.line))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				wt, wp, _ := strings.Cut(w, " ")
				if !agentstreamtest.ContainsPayload(evs, wt, wp) {
					t.Errorf("no %s event with %s among:\n%s", wt, wp, agentstreamtest.Describe(evs))
				}
			}
		})
	}
}

func TestUsageOncePerMessage(t *testing.T) {
	u := `"usage":{"input_tokens":3,"output_tokens":17,"cache_read_input_tokens":100}`
	got := decode(t, claude.Claude,
		`{"type":"assistant","message":{"id":"msg_1","model":"m",`+u+`,"content":[{"type":"thinking","thinking":"hmm","signature":"s"}]}}`,
		`{"type":"assistant","message":{"id":"msg_1","model":"m",`+u+`,"content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"assistant","message":{"id":"msg_1","model":"m",`+u+`,"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]}}`,
	)
	n := 0
	for _, g := range got {
		if strings.HasPrefix(g, "usage ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("got %d usage events, want 1:\n%s", n, strings.Join(got, "\n"))
	}
}

// TestPartialUsage checks that with partial messages the final figures of
// message_delta replace the message_start snapshot, counted once.
func TestPartialUsage(t *testing.T) {
	got := decode(t, claude.Claude,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_9","model":"claude-opus-5","usage":{"input_tokens":5,"cache_read_input_tokens":1000,"output_tokens":1}}}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}}`,
		`{"type":"assistant","message":{"id":"msg_9","model":"claude-opus-5","usage":{"input_tokens":5,"cache_read_input_tokens":1000,"output_tokens":1},"content":[{"type":"text","text":"Hello"}]}}`,
		`{"type":"stream_event","event":{"type":"content_block_stop","index":0}}`,
		`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":5,"cache_read_input_tokens":1000,"output_tokens":96}}}`,
		`{"type":"stream_event","event":{"type":"message_stop"}}`,
	)
	want := []string{
		`message.delta {"role":"assistant","text":"Hel"}`,
		`message.delta {"role":"assistant","text":"lo"}`,
		`message {"role":"assistant","text":"Hello","truncated":false}`,
		`usage {"scope":"call","model":"claude-opus-5","inputTokens":5,"outputTokens":96,"cacheReadTokens":1000,"cacheCreationTokens":null,"contextTokens":1005,"reasoningTokens":null,"messageId":"msg_9"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestPartialUsageCutOff checks that a message whose message_delta never
// came still counts its snapshot once at the end of the stream, marked as
// the estimate it is.
func TestPartialUsageCutOff(t *testing.T) {
	got := decode(t, claude.Claude,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_9","model":"m","usage":{"input_tokens":5,"output_tokens":1}}}}`,
		`{"type":"assistant","message":{"id":"msg_9","model":"m","usage":{"input_tokens":5,"output_tokens":1},"content":[{"type":"text","text":"Hel"}]}}`,
	)
	want := []string{
		`message {"role":"assistant","text":"Hel","truncated":false}`,
		`usage {"scope":"call","model":"m","inputTokens":5,"outputTokens":1,"cacheReadTokens":null,"cacheCreationTokens":null,"contextTokens":5,"reasoningTokens":null,"messageId":"msg_9","estimate":true}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestResultStatus(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"success", `{"type":"result","subtype":"success","is_error":false,"result":"ok"}`,
			`session.ended {"status":"succeeded","stopReason":null,"summary":"ok","error":null,"reason":"completion"}`},
		{"success but is_error", `{"is_error":true,"subtype":"success","result":"Not logged in · Please run /login","terminal_reason":"api_error","type":"result"}`,
			`session.ended {"status":"failed","stopReason":null,"summary":"Not logged in · Please run /login","error":"api_error","reason":"completion"}`},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":false,"errors":["Reached maximum number of turns (30)"]}`,
			`session.ended {"status":"failed","stopReason":null,"summary":null,"error":"Reached maximum number of turns (30)","reason":"completion"}`},
		{"aborted", `{"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_streaming"}`,
			`session.ended {"status":"cancelled","stopReason":null,"summary":null,"error":"aborted_streaming","reason":"completion"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decode(t, claude.Claude, tt.line)
			if last := got[len(got)-1]; last != tt.want {
				t.Errorf("got  %s\nwant %s", last, tt.want)
			}
		})
	}
}

func TestSubagentLines(t *testing.T) {
	got := decode(t, claude.Claude,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_A","name":"Agent","input":{"description":"Look around","subagent_type":"Explore","prompt":"x"}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"x"}]},"parent_tool_use_id":"toolu_A"}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":"found it"}]}]}}`,
	)
	want := []string{
		`tool.call {"callId":"toolu_A","name":"Agent","input":"{\"description\":\"Look around\",\"subagent_type\":\"Explore\",\"prompt\":\"x\"}","truncated":false,"category":"delegate","summary":"Look around","displayName":"Agent"}`,
		`subagent {"id":"toolu_A","callId":"toolu_A","name":"Explore","status":"started","description":"Look around"}`,
		`message {"role":"user","text":"x","truncated":false}`,
		`tool.result {"callId":"toolu_A","isError":false,"output":"found it","truncated":false,"name":"Agent","characters":8,"exitCode":null}`,
		`subagent {"id":"toolu_A","callId":"toolu_A","name":null,"status":"finished","description":null}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d := claude.NewDecoder(claude.Claude)
	evs := d.Decode(nil, []byte(`{"type":"user","message":{"role":"user","content":"x"},"parent_tool_use_id":"toolu_A"}`))
	if len(evs) != 1 || evs[0].ParentCallID != "toolu_A" {
		t.Errorf("subagent line: got %+v, want one event with parentCallId toolu_A", evs)
	}
}

func TestInputKeptByteForByte(t *testing.T) {
	got := decode(t, claude.Claude,
		`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{ "z" : 1, "a":"x > y \u003e", "m":[1, 2] }}]}}`)
	want := `tool.call {"callId":"t","name":"Bash","input":"{\"z\":1,\"a\":\"x > y \\u003e\",\"m\":[1,2]}","truncated":false,"category":"execute","summary":null,"displayName":"Shell"}`
	if got[0] != want {
		t.Errorf("got  %s\nwant %s", got[0], want)
	}
}

func TestRepeatedInit(t *testing.T) {
	initLine := func(id, model string) string {
		return `{"type":"system","subtype":"init","session_id":"` + id + `","model":"` + model + `","cwd":"/w","tools":["Bash"]}`
	}
	got := decode(t, claude.Claude, initLine("a", "claude-opus-5"), initLine("a", "claude-sonnet-4-5"), initLine("b", "claude-sonnet-4-5"))
	want := []string{
		`session.started {"harness":"claude-code","model":"claude-opus-5","contextWindow":1000000,"cwd":"/w","sessionId":"a","tools":["Bash"],"version":null,"permissionMode":null}`,
		`session.updated {"model":"claude-sonnet-4-5","permissionMode":null,"mode":null,"cwd":null,"tools":null,"commands":null,"sessionId":null,"mcpServers":null,"skills":null,"backgroundTasks":null}`,
		`session.started {"harness":"claude-code","model":"claude-sonnet-4-5","contextWindow":200000,"cwd":"/w","sessionId":"b","tools":["Bash"],"version":null,"permissionMode":null}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestQwenUsage(t *testing.T) {
	// Qwen splits one response into lines with different ids, all but one
	// reporting zeros, and counts cache reads inside input_tokens.
	got := decode(t, claude.Qwen,
		`{"type":"assistant","message":{"id":"a1","model":"qwen3-coder","usage":{"input_tokens":0,"output_tokens":0},"content":[{"type":"text","text":"x"}]}}`,
		`{"type":"assistant","message":{"id":"a2","model":"qwen3-coder","usage":{"input_tokens":1200,"output_tokens":30,"cache_read_input_tokens":1000},"content":[{"type":"text","text":"y"}]}}`,
	)
	want := []string{
		`message {"role":"assistant","text":"x","truncated":false}`,
		`message {"role":"assistant","text":"y","truncated":false}`,
		`usage {"scope":"call","model":"qwen3-coder","inputTokens":200,"outputTokens":30,"cacheReadTokens":1000,"cacheCreationTokens":null,"contextTokens":1200,"reasoningTokens":null,"messageId":"a2"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestArrayOutput(t *testing.T) {
	got := decode(t, claude.Claude, `[{"type":"system","subtype":"init","session_id":"s","model":"x"},{"type":"result","subtype":"success","result":"done"}]`)
	if len(got) == 0 || !strings.HasPrefix(got[0], "session.started") || !strings.HasPrefix(got[len(got)-1], "session.ended") {
		t.Errorf("array: got %q", got)
	}
}

func TestConformanceQwen(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "qwen-json",
		Fixtures: []string{"testdata/qwen/*.jsonl"},
		Update:   *update,
	})
}

func TestConformanceAmp(t *testing.T) {
	agentstreamtest.RunAdapter(t, agentstreamtest.AdapterCase{
		Protocol: "amp-json",
		Fixtures: []string{"testdata/amp/*.jsonl"},
		// bare tool_use lines from a parser's tests, without results.
		Update: *update,
	})
}

func FuzzDecodeQwen(f *testing.F) {
	agentstreamtest.FuzzDecoder(f, "qwen-json", "testdata/qwen/*.jsonl")
}

// TestQwenSessionUsage reads Qwen Code sessions. In the recorded one, of its
// assistant lines only two report non-zero usage, and input_tokens there
// include the cache reads (19813 = 7047 + 12766), which the adapter
// subtracts. With partial messages in stream order, no message_delta comes:
// each call's usage is its assistant line's (5200 - 4096 and 5262 - 5184
// in; the result's 10462 - 9280).
func TestQwenSessionUsage(t *testing.T) {
	tests := []struct {
		name, file string
		want       []string
	}{
		{
			name: "recorded",
			file: "testdata/qwen/NonoElRobot-plannotator-qwen-0-25-0-stream-json-partial.jsonl",
			want: []string{
				`{"scope":"call","model":"Qwen3.8-27B-UD-Q8_K_XL","inputTokens":7047,"outputTokens":79,"cacheReadTokens":12766,"cacheCreationTokens":null,"contextTokens":19813,"reasoningTokens":null,"messageId":"db5e4d8d-0363-47d3-8c11-884a888545f0"}`,
				`{"scope":"call","model":"Qwen3.8-27B-UD-Q8_K_XL","inputTokens":23,"outputTokens":22,"cacheReadTokens":19891,"cacheCreationTokens":null,"contextTokens":19914,"reasoningTokens":null,"messageId":"66ecdfe7-c730-450a-8783-f4bbe41e3f65"}`,
				`{"scope":"session","inputTokens":36159,"outputTokens":1828,"cacheReadTokens":64602,"cacheCreationTokens":null,"costUsd":null,"turns":2,"durationMs":34939,"reasoningTokens":null}`,
			},
		},
		{
			name: "partial messages in stream order",
			file: "testdata/qwen/synthetic-qwen-stream-json-partial-messages.jsonl",
			want: []string{
				`{"scope":"call","model":"qwen3-coder-plus","inputTokens":1104,"outputTokens":24,"cacheReadTokens":4096,"cacheCreationTokens":null,"contextTokens":5200,"reasoningTokens":null,"messageId":"0e4d8a21-6c3b-47f9-b512-9a7e03c6d4f8"}`,
				`{"scope":"call","model":"qwen3-coder-plus","inputTokens":78,"outputTokens":9,"cacheReadTokens":5184,"cacheCreationTokens":null,"contextTokens":5262,"reasoningTokens":null,"messageId":"3a91f6c2-8e05-4d7b-a3c4-5f2b18e9d067"}`,
				`{"scope":"session","inputTokens":1182,"outputTokens":33,"cacheReadTokens":9280,"cacheCreationTokens":null,"costUsd":null,"turns":2,"durationMs":2410,"reasoningTokens":null}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := adapter.ParseLines("qwen-json", bytesLines(data), 0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range evs {
				if e.Type() == agentstream.TypeUsage {
					got = append(got, string(e.Payload.AppendJSON(nil)))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func bytesLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range strings.Split(string(data), "\n") {
		out = append(out, []byte(l))
	}
	return out
}
