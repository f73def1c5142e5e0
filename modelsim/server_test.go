package modelsim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// event is one server-sent event.
type event struct {
	name string
	data string
}

// readSSE reads a whole event stream.
func readSSE(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line in the stream: %q", line)
		}
	}
	return out
}

// get reads one value at a path of keys and indexes from JSON text.
func get(t *testing.T, data string, path ...any) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("not JSON: %s", data)
	}
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// wireScenario answers one call with thinking, text and a shell call, and
// reports every kind of token.
const wireScenario = `{"prompt":"p","calls":[{"thinking":"Let me think about it.","text":"Running the lab command now.",
	"tools":[{"role":"shell","command":"echo lab"}],
	"usage":{"input":100,"output":20,"cacheRead":30,"cacheCreation":5,"reasoning":4}}]}`

// Requests offering one shell tool, in each API's shape.
const (
	shellSchema      = `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`
	anthropicRequest = `{"model":"claude-x","max_tokens":100,"stream":%s,"system":"sys","messages":[{"role":"user","content":"hi"}],
		"tools":[{"name":"Bash","description":"run","input_schema":` + shellSchema + `}]}`
	responsesRequest = `{"model":"gpt-x","stream":%s,"instructions":"sys","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],
		"tools":[{"type":"function","name":"exec_command","description":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}]}`
	chatRequest = `{"model":"gpt-x","stream":%s,%s"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}],
		"tools":[{"type":"function","function":{"name":"bash","description":"run","parameters":` + shellSchema + `}}]}`
	geminiRequest = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"sys"}]},
		"tools":[{"functionDeclarations":[{"name":"run_shell_command","description":"run","parametersJsonSchema":` + shellSchema + `}]}]}`
)

func fill(format string, a ...any) string {
	out := format
	for _, v := range a {
		out = strings.Replace(out, "%s", v.(string), 1)
	}
	return out
}

func newTestServer(t *testing.T, scenario string, log io.Writer) (*Server, *httptest.Server) {
	t.Helper()
	s, err := Decode("test.json", []byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	srv := New(s, Options{Dir: "/w", Log: log})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAnthropicStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	resp := post(t, hs.URL+"/v1/messages?beta=true", fill(anthropicRequest, "true"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	evs := readSSE(t, resp.Body)
	var names []string
	var thinking, text, input, signature string
	for _, e := range evs {
		names = append(names, e.name)
		if typ := get(t, e.data, "type"); typ != e.name {
			t.Errorf("event %s has type %v", e.name, typ)
		}
		switch get(t, e.data, "delta", "type") {
		case "thinking_delta":
			thinking += get(t, e.data, "delta", "thinking").(string)
		case "signature_delta":
			signature = get(t, e.data, "delta", "signature").(string)
		case "text_delta":
			text += get(t, e.data, "delta", "text").(string)
		case "input_json_delta":
			input += get(t, e.data, "delta", "partial_json").(string)
		}
	}
	start := evs[0].data
	if got := get(t, start, "message", "usage"); !cmp.Equal(got, map[string]any{
		"input_tokens": 100.0, "cache_read_input_tokens": 30.0, "cache_creation_input_tokens": 5.0, "output_tokens": 1.0,
	}) {
		t.Errorf("message_start usage %v: want the input figures and an output snapshot of 1", got)
	}
	var deltaUsage any
	var toolStart string
	for _, e := range evs {
		if e.name == "message_delta" {
			deltaUsage = get(t, e.data, "usage")
			if r := get(t, e.data, "delta", "stop_reason"); r != "tool_use" {
				t.Errorf("stop_reason %v", r)
			}
		}
		if e.name == "content_block_start" && get(t, e.data, "content_block", "type") == "tool_use" {
			toolStart = e.data
		}
	}
	if !cmp.Equal(deltaUsage, map[string]any{
		"input_tokens": 100.0, "cache_read_input_tokens": 30.0, "cache_creation_input_tokens": 5.0, "output_tokens": 20.0,
	}) {
		t.Errorf("message_delta usage %v: want the final output count", deltaUsage)
	}
	if thinking != "Let me think about it." || text != "Running the lab command now." || input != `{"command":"echo lab"}` || signature == "" {
		t.Errorf("thinking %q text %q input %q signature %q", thinking, text, input, signature)
	}
	if get(t, toolStart, "content_block", "name") != "Bash" || !strings.HasPrefix(get(t, toolStart, "content_block", "id").(string), "toolu_") {
		t.Errorf("tool_use block %s", toolStart)
	}
	// The sequence: start, ping, thinking, text and tool blocks, delta, stop.
	block := []string{"content_block_start", "content_block_delta", "content_block_delta"}
	want := []string{"message_start", "ping"}
	for _, n := range []int{len(pieces("Let me think about it.")) + 1, len(pieces("Running the lab command now.")), 2} {
		want = append(want, block[0])
		for range n {
			want = append(want, block[1])
		}
		want = append(want, "content_block_stop")
	}
	want = append(want, "message_delta", "message_stop")
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("event sequence (-want +got):\n%s", diff)
	}
}

func TestAnthropicNonStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	body := readAll(t, post(t, hs.URL+"/v1/messages", fill(anthropicRequest, "false")).Body)
	var types []string
	for i := 0; i < 3; i++ {
		types = append(types, get(t, body, "content", i, "type").(string))
	}
	if diff := cmp.Diff([]string{"thinking", "text", "tool_use"}, types); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if got := get(t, body, "content", 2, "input", "command"); got != "echo lab" {
		t.Errorf("tool input command %v", got)
	}
	if got := get(t, body, "usage", "output_tokens"); got != 20.0 {
		t.Errorf("output_tokens %v", got)
	}
	if got := get(t, body, "usage", "input_tokens"); got != 100.0 {
		t.Errorf("input_tokens %v: want the input not read from cache", got)
	}
}

func TestResponsesStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	evs := readSSE(t, post(t, hs.URL+"/v1/responses", fill(responsesRequest, "true")).Body)
	var names []string
	var args, text, summary string
	for i, e := range evs {
		names = append(names, e.name)
		if get(t, e.data, "sequence_number") != float64(i) {
			t.Errorf("event %d: sequence_number %v", i, get(t, e.data, "sequence_number"))
		}
		switch e.name {
		case "response.function_call_arguments.delta":
			args += get(t, e.data, "delta").(string)
		case "response.output_text.delta":
			text += get(t, e.data, "delta").(string)
		case "response.reasoning_summary_text.delta":
			summary += get(t, e.data, "delta").(string)
		}
	}
	if args != `{"cmd":"echo lab"}` || text != "Running the lab command now." || summary != "Let me think about it." {
		t.Errorf("args %q text %q summary %q", args, text, summary)
	}
	if names[0] != "response.created" || names[1] != "response.in_progress" || names[len(names)-1] != "response.completed" {
		t.Errorf("sequence %v", names)
	}
	done := evs[len(evs)-1].data
	wantUsage := map[string]any{
		"input_tokens": 135.0, "input_tokens_details": map[string]any{"cached_tokens": 30.0},
		"output_tokens": 20.0, "output_tokens_details": map[string]any{"reasoning_tokens": 4.0}, "total_tokens": 155.0,
	}
	if diff := cmp.Diff(wantUsage, get(t, done, "response", "usage")); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	var items []string
	for i := 0; i < 3; i++ {
		items = append(items, get(t, done, "response", "output", i, "type").(string))
	}
	if diff := cmp.Diff([]string{"reasoning", "message", "function_call"}, items); diff != "" {
		t.Errorf("output items (-want +got):\n%s", diff)
	}
	if get(t, done, "response", "output", 2, "name") != "exec_command" || get(t, done, "response", "output", 2, "call_id") == nil {
		t.Errorf("function call item %v", get(t, done, "response", "output", 2))
	}
}

func TestResponsesNonStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	body := readAll(t, post(t, hs.URL+"/v1/responses", fill(responsesRequest, "false")).Body)
	if get(t, body, "status") != "completed" || get(t, body, "output", 2, "arguments") != `{"cmd":"echo lab"}` {
		t.Errorf("response %s", body)
	}
	if get(t, body, "usage", "input_tokens") != 135.0 {
		t.Errorf("input_tokens %v: want input with cache", get(t, body, "usage", "input_tokens"))
	}
}

func TestChatStream(t *testing.T) {
	for _, include := range []bool{true, false} {
		name := "usage in its own chunk"
		opts := `"stream_options":{"include_usage":true},`
		if !include {
			name, opts = "usage on the last chunk", ""
		}
		t.Run(name, func(t *testing.T) {
			_, hs := newTestServer(t, wireScenario, nil)
			evs := readSSE(t, post(t, hs.URL+"/v1/chat/completions", fill(chatRequest, "true", opts)).Body)
			if evs[len(evs)-1].data != "[DONE]" {
				t.Fatalf("last event %q, want [DONE]", evs[len(evs)-1].data)
			}
			evs = evs[:len(evs)-1]
			var text, reasoning, args, finish, name string
			var usage any
			for _, e := range evs {
				if get(t, e.data, "object") != "chat.completion.chunk" {
					t.Errorf("chunk %s", e.data)
				}
				if u := get(t, e.data, "usage"); u != nil {
					usage = u
				}
				d := func(k ...any) any { return get(t, e.data, append([]any{"choices", 0, "delta"}, k...)...) }
				if s, ok := d("content").(string); ok {
					text += s
				}
				if s, ok := d("reasoning_content").(string); ok {
					reasoning += s
				}
				if s, ok := d("tool_calls", 0, "function", "arguments").(string); ok {
					args += s
				}
				if s, ok := d("tool_calls", 0, "function", "name").(string); ok {
					name = s
				}
				if f, ok := get(t, e.data, "choices", 0, "finish_reason").(string); ok {
					finish = f
				}
			}
			if text != "Running the lab command now." || reasoning != "Let me think about it." || args != `{"command":"echo lab"}` || name != "bash" || finish != "tool_calls" {
				t.Errorf("text %q reasoning %q args %q name %q finish %q", text, reasoning, args, name, finish)
			}
			last := evs[len(evs)-1].data
			if include && len(get(t, last, "choices").([]any)) != 0 {
				t.Errorf("usage chunk has choices: %s", last)
			}
			wantUsage := map[string]any{
				"prompt_tokens": 135.0, "completion_tokens": 20.0, "total_tokens": 155.0,
				"prompt_tokens_details":     map[string]any{"cached_tokens": 30.0},
				"completion_tokens_details": map[string]any{"reasoning_tokens": 4.0},
			}
			if diff := cmp.Diff(wantUsage, usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatNonStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	body := readAll(t, post(t, hs.URL+"/v1/chat/completions", fill(chatRequest, "false", "")).Body)
	if get(t, body, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"command":"echo lab"}` ||
		get(t, body, "choices", 0, "message", "content") != "Running the lab command now." {
		t.Errorf("completion %s", body)
	}
	if get(t, body, "usage", "prompt_tokens") != 135.0 {
		t.Errorf("prompt_tokens %v", get(t, body, "usage", "prompt_tokens"))
	}
}

func TestGeminiStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	evs := readSSE(t, post(t, hs.URL+"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", geminiRequest).Body)
	var thought, text string
	var call any
	for i, e := range evs {
		part := get(t, e.data, "candidates", 0, "content", "parts", 0).(map[string]any)
		switch {
		case part["thought"] == true:
			thought += part["text"].(string)
		case part["functionCall"] != nil:
			call = part["functionCall"]
		default:
			text += part["text"].(string)
		}
		last := i == len(evs)-1
		if (get(t, e.data, "usageMetadata") != nil) != last || (get(t, e.data, "candidates", 0, "finishReason") == "STOP") != last {
			t.Errorf("chunk %d of %d: %s: only the last has the usage and the finish reason", i, len(evs), e.data)
		}
	}
	if thought != "Let me think about it." || text != "Running the lab command now." {
		t.Errorf("thought %q text %q", thought, text)
	}
	if diff := cmp.Diff(map[string]any{"id": get(t, evs[len(evs)-1].data, "candidates", 0, "content", "parts", 0, "functionCall", "id"),
		"name": "run_shell_command", "args": map[string]any{"command": "echo lab"}}, call); diff != "" {
		t.Errorf("function call (-want +got):\n%s", diff)
	}
	wantUsage := map[string]any{
		"promptTokenCount": 135.0, "cachedContentTokenCount": 30.0, "candidatesTokenCount": 16.0,
		"thoughtsTokenCount": 4.0, "totalTokenCount": 155.0,
		"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": 135.0}},
	}
	if diff := cmp.Diff(wantUsage, get(t, evs[len(evs)-1].data, "usageMetadata")); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestGeminiNonStream(t *testing.T) {
	_, hs := newTestServer(t, wireScenario, nil)
	body := readAll(t, post(t, hs.URL+"/v1beta/models/gemini-x:generateContent", geminiRequest).Body)
	parts := get(t, body, "candidates", 0, "content", "parts").([]any)
	if len(parts) != len(pieces("Let me think about it."))+len(pieces("Running the lab command now."))+1 {
		t.Errorf("parts %v", parts)
	}
	if get(t, body, "usageMetadata", "promptTokenCount") != 135.0 {
		t.Errorf("usage %v", get(t, body, "usageMetadata"))
	}
}

// TestErrors checks an error call in each API's error JSON, with its
// retry-after header and the status the API gets.
func TestErrors(t *testing.T) {
	scenario := `{"prompt":"p","calls":[{"error":{"status":529,"statusFor":{"gemini":503,"chat":503},"message":"lab overloaded","retryAfter":1.5}}]}`
	tests := []struct {
		name, path, body string
		status           int
		message, typ     []any // paths to the message and the type
		wantType         string
	}{
		{"anthropic", "/v1/messages", fill(anthropicRequest, "true"), 529, []any{"error", "message"}, []any{"error", "type"}, "overloaded_error"},
		{"responses", "/v1/responses", fill(responsesRequest, "true"), 529, []any{"error", "message"}, []any{"error", "type"}, "server_error"},
		{"chat", "/v1/chat/completions", fill(chatRequest, "true", ""), 503, []any{"error", "message"}, []any{"error", "type"}, "server_error"},
		{"gemini", "/v1beta/models/g:streamGenerateContent?alt=sse", geminiRequest, 503, []any{"error", "message"}, []any{"error", "status"}, "UNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, hs := newTestServer(t, scenario, nil)
			resp := post(t, hs.URL+tt.path, tt.body)
			body := readAll(t, resp.Body)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if ra := resp.Header.Get("Retry-After"); ra != "2" {
				t.Errorf("retry-after %q, want 2 (1.5 s rounded up)", ra)
			}
			if ms := resp.Header.Get("Retry-After-Ms"); ms != "1500" {
				t.Errorf("retry-after-ms %q, want 1500", ms)
			}
			if got := get(t, body, tt.message...); got != "lab overloaded" {
				t.Errorf("message %v in %s", got, body)
			}
			if got := get(t, body, tt.typ...); got != tt.wantType {
				t.Errorf("type %v, want %s", got, tt.wantType)
			}
			rec := srv.Records()[0]
			if rec.Kind != KindCall || rec.Status != tt.status || rec.Reply.Error == nil || rec.Reply.Error.Status != tt.status {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

// TestRefused checks that a request the scenario has no answer for gets an
// error in the API's JSON, that the log says why, and that a role no tool
// fills names the scenario, the call and the tools offered.
func TestRefused(t *testing.T) {
	var log syncBuffer
	srv, hs := newTestServer(t, `{"prompt":"p","calls":[{"text":"one"},{"tools":[{"role":"edit","path":"f","old":"a","new":"b"}]}]}`, &log)
	first := post(t, hs.URL+"/v1/messages", fill(anthropicRequest, "false"))
	readAll(t, first.Body)
	resp := post(t, hs.URL+"/v1/messages", fill(anthropicRequest, "false"))
	body := readAll(t, resp.Body)
	if resp.StatusCode != http.StatusBadRequest || get(t, body, "type") != "error" || get(t, body, "error", "type") != "invalid_request_error" {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	want := "modelsim: scenario test: call 2: tool 1: role edit: no offered tool fills it (offered: Bash)"
	if get(t, body, "error", "message") != want {
		t.Errorf("message %v, want %q", get(t, body, "error", "message"), want)
	}
	resp = post(t, hs.URL+"/v1beta/models/g:generateContent", geminiRequest)
	body = readAll(t, resp.Body)
	if resp.StatusCode != 400 || get(t, body, "error", "status") != "INVALID_ARGUMENT" ||
		!strings.Contains(get(t, body, "error", "message").(string), "scenario test has no unused main call") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	resp = post(t, hs.URL+"/v2/nothing", "{}")
	readAll(t, resp.Body)
	if resp.StatusCode != 404 {
		t.Errorf("unknown path: status %d", resp.StatusCode)
	}
	recs := srv.Records()
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind)
	}
	if diff := cmp.Diff([]string{KindCall, KindRefused, KindRefused, KindRefused}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	for _, w := range []string{"refused: " + strings.TrimPrefix(want, "modelsim: "), "no unused main call", "no API has the path POST /v2/nothing"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, log.String())
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSideCalls checks the answers to requests beside the conversation: a
// structured-output call gets JSON of its schema, a call without tools gets
// text, token counts get a count; none takes a scenario call.
func TestSideCalls(t *testing.T) {
	srv, hs := newTestServer(t, `{"prompt":"p","calls":[{"text":"main"}]}`, nil)
	router := `{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json",
		"responseJsonSchema":{"type":"OBJECT","properties":{"model_choice":{"type":"STRING","enum":["flash","pro"]}},"required":["model_choice"]}}}`
	body := readAll(t, post(t, hs.URL+"/v1beta/models/g:generateContent", router).Body)
	if got := get(t, body, "candidates", 0, "content", "parts", 0, "text"); got != `{"model_choice":"flash"}` {
		t.Errorf("router answer %v", got)
	}
	title := `{"model":"m","stream":true,"messages":[{"role":"system","content":"make a title"},{"role":"user","content":"hi"}]}`
	evs := readSSE(t, post(t, hs.URL+"/v1/chat/completions", title).Body)
	if got := get(t, evs[1].data, "choices", 0, "delta", "content"); got != "modelsim" {
		t.Errorf("title answer %v", got)
	}
	classify := `{"model":"m","stream":false,"tool_choice":"required","messages":[{"role":"user","content":"classify"}],
		"tools":[{"type":"function","function":{"name":"respond_in_schema","parameters":{"type":"object","properties":{"shouldBlock":{"type":"boolean"}},"required":["shouldBlock"]}}}]}`
	body = readAll(t, post(t, hs.URL+"/v1/chat/completions", classify).Body)
	if get(t, body, "choices", 0, "message", "tool_calls", 0, "function", "arguments") != `{"shouldBlock":false}` {
		t.Errorf("forced tool answer %s", body)
	}
	body = readAll(t, post(t, hs.URL+"/v1/messages/count_tokens", fill(anthropicRequest, "false")).Body)
	if n, ok := get(t, body, "input_tokens").(float64); !ok || n <= 0 {
		t.Errorf("count_tokens %s", body)
	}
	body = readAll(t, post(t, hs.URL+"/v1beta/models/g:countTokens", geminiRequest).Body)
	if n, ok := get(t, body, "totalTokens").(float64); !ok || n <= 0 {
		t.Errorf("countTokens %s", body)
	}
	// The scenario's call is still there.
	body = readAll(t, post(t, hs.URL+"/v1/messages", fill(anthropicRequest, "false")).Body)
	if get(t, body, "content", 0, "text") != "main" {
		t.Errorf("main call %s", body)
	}
	var kinds []string
	for _, r := range srv.Records() {
		kinds = append(kinds, r.Kind)
		if r.Kind == KindSide && r.Reply.Usage != (Usage{}) {
			t.Errorf("side call with usage %+v", r.Reply.Usage)
		}
	}
	if diff := cmp.Diff([]string{KindSide, KindSide, KindSide, KindSide, KindSide, KindCall}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

// TestThreads checks that a subagent's requests take the subagent's calls,
// that conditions pick a call, and that Times repeats one.
func TestThreads(t *testing.T) {
	srv, hs := newTestServer(t, `{"prompt":"p","calls":[
		{"error":{"status":429,"message":"slow down"},"times":2},
		{"tools":[{"role":"subagent","prompt":"SUB: go"}]},
		{"if":{"toolResults":1},"text":"after the subagent"}],
		"subagent":{"marker":"SUB:","calls":[{"text":"sub done"}]}}`, nil)
	agent := `{"model":"m","messages":[{"role":"user","content":%s}],"tools":[{"name":"Task","input_schema":{"type":"object",
		"properties":{"prompt":{"type":"string"},"subagent_type":{"type":"string"}},"required":["prompt"]}}]}`
	send := func(content string) (int, string) {
		resp := post(t, hs.URL+"/v1/messages", fill(agent, content))
		return resp.StatusCode, readAll(t, resp.Body)
	}
	for i := 0; i < 2; i++ {
		if st, _ := send(`"hi"`); st != 429 {
			t.Fatalf("request %d: status %d, want 429", i+1, st)
		}
	}
	_, body := send(`"hi"`)
	if get(t, body, "content", 0, "name") != "Task" || get(t, body, "content", 0, "input", "prompt") != "SUB: go" {
		t.Fatalf("subagent call %s", body)
	}
	_, body = send(`"SUB: go"`)
	if get(t, body, "content", 0, "text") != "sub done" {
		t.Errorf("subagent's answer %s", body)
	}
	_, body = send(`[{"type":"text","text":"hi"},{"type":"tool_result","tool_use_id":"x","content":"sub done"}]`)
	if get(t, body, "content", 0, "text") != "after the subagent" {
		t.Errorf("answer after the tool result %s", body)
	}
	var got []string
	for _, r := range srv.Calls() {
		got = append(got, r.Thread+" "+string(rune('0'+r.Call)))
	}
	if diff := cmp.Diff([]string{"main 1", "main 1", "main 2", "subagent 1", "main 3"}, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestRecordJSON(t *testing.T) {
	r := Record{Seq: 1, Body: []byte(`{"a":1}`), Kind: KindCall}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"body":{"a":1}`) {
		t.Errorf("JSON body not written as JSON: %s", b)
	}
	r.Body = []byte("not json")
	b, _ = json.Marshal(r)
	if !strings.Contains(string(b), `"body":"not json"`) {
		t.Errorf("text body not written as a string: %s", b)
	}
}
