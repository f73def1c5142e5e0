// Package workload generates realistic harness output for benchmarks:
// deterministic streams of a dialect's lines with a heavy-tailed mix of tool
// output sizes, escapes and non-ASCII text. It also holds the naive baseline
// decoder the benchmarks compare against.
package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Gen is a deterministic source of generated text.
type Gen struct {
	r *rand.Rand
	n int
}

// NewGen returns a generator seeded with seed.
func NewGen(seed int64) *Gen { return &Gen{r: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))} }

var fragments = []string{
	"func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
	"    if err != nil {\n        return fmt.Errorf(\"read %s: %w\", path, err)\n    }\n",
	"Le dépôt contient déjà un fichier « README » — voyez la section 2.\n",
	"日本語のテキストとコードの混在した出力です。\n",
	"PASS: TestParse (0.01s) ✓ 🚀\n",
	"C:\\Users\\dev\\project\\src\\main.rs:42:7: warning: unused variable\n",
	"{\"key\": \"value\", \"n\": 12, \"nested\": {\"a\": [1, 2, 3]}}\n",
	"drwxr-xr-x  5 dev dev 4096 Nov 29 16:20 src\n-rw-r--r--  1 dev dev  812 Nov 29 16:20 go.mod\n",
	"\tat org.example.Main.run(Main.java:17)\n",
	"Ελληνικά και русский текст в одной строке.\n",
}

// Text returns about n bytes of mixed source code, prose, paths, escapes
// and non-ASCII text.
func (g *Gen) Text(n int) string {
	var b strings.Builder
	b.Grow(n + 128)
	for b.Len() < n {
		b.WriteString(fragments[g.r.IntN(len(fragments))])
	}
	return b.String()
}

// Prefix returns the first n code points of s.
func (g *Gen) Prefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// OutputSize draws a tool output size: mostly 200 B–5 KB, some about 100
// KB, a few about 2 MB.
func (g *Gen) OutputSize() int {
	switch p := g.r.Float64(); {
	case p < 0.0008:
		return 2<<20 + g.r.IntN(64<<10)
	case p < 0.015:
		return 100<<10 + g.r.IntN(16<<10)
	default:
		return 200 + g.r.IntN(4800)
	}
}

// ID returns a fresh identifier with prefix.
func (g *Gen) ID(prefix string) string {
	g.n++
	return fmt.Sprintf("%s%08x%06d", prefix, g.r.Uint32(), g.n)
}

// Intn returns a number in [0, n).
func (g *Gen) Intn(n int) int { return g.r.IntN(n) }

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Claude writes about size bytes of Claude Code stream-json (with partial
// messages) to w: sessions of init, per API call a run of small stream_event
// delta lines, assistant thinking/text/tool_use lines carrying usage, user
// tool_result lines of heavy-tailed sizes, rate limit events and results.
func Claude(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	tools := []string{"Bash", "Read", "Edit", "Grep", "Glob", "Write", "WebFetch"}
	for cw.n < size {
		sid := g.ID("")
		fmt.Fprintf(cw, `{"type":"system","subtype":"init","cwd":"/workspace/demo","session_id":"%s","tools":["Task","Bash","Read","Edit","Write","Grep","Glob"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"bypassPermissions","apiKeySource":"none","claude_code_version":"2.1.238","uuid":"%s"}`+"\n", sid, g.ID("u-"))
		calls := 5 + g.Intn(20)
		for c := 0; c < calls && cw.n < size; c++ {
			msg := g.ID("msg_")
			usage := fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d,"service_tier":"standard"}`,
				2+g.Intn(10), g.Intn(3000), 20000+g.Intn(40000), 10+g.Intn(800))
			fmt.Fprintf(cw, `{"type":"stream_event","event":{"type":"message_start","message":{"model":"claude-sonnet-4-5","id":"%s","type":"message","role":"assistant","content":[],"stop_reason":null,"usage":%s}},"session_id":"%s","parent_tool_use_id":null,"uuid":"%s"}`+"\n", msg, usage, sid, g.ID("u-"))
			deltas := 5 + g.Intn(30)
			for d := 0; d < deltas; d++ {
				fmt.Fprintf(cw, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}},"session_id":"%s","parent_tool_use_id":null,"uuid":"%s"}`+"\n", Quote(g.Prefix(g.Text(40), 20+g.Intn(10))), sid, g.ID("u-"))
			}
			fmt.Fprintf(cw, `{"type":"assistant","message":{"id":"%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":%s,"signature":"EqQBCkYIBxgCKkD%s"}],"stop_reason":null,"usage":%s},"parent_tool_use_id":null,"session_id":"%s","uuid":"%s"}`+"\n",
				msg, Quote(g.Text(200+g.Intn(600))), g.ID("sig"), usage, sid, g.ID("u-"))
			fmt.Fprintf(cw, `{"type":"assistant","message":{"id":"%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"stop_reason":null,"usage":%s},"parent_tool_use_id":null,"session_id":"%s","uuid":"%s"}`+"\n",
				msg, Quote(g.Text(100+g.Intn(400))), usage, sid, g.ID("u-"))
			tool := tools[g.Intn(len(tools))]
			call := g.ID("toolu_")
			fmt.Fprintf(cw, `{"type":"assistant","message":{"id":"%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"%s","name":"%s","input":{"command":"go test ./... 2>&1 | tail -n 40","file_path":"/workspace/demo/src/main.go","pattern":"func .*Handler","description":"Run the tests"}}],"stop_reason":null,"usage":%s},"parent_tool_use_id":null,"session_id":"%s","uuid":"%s"}`+"\n",
				msg, call, tool, usage, sid, g.ID("u-"))
			fmt.Fprintf(cw, `{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":%s},"session_id":"%s","parent_tool_use_id":null,"uuid":"%s"}`+"\n", usage, sid, g.ID("u-"))
			fmt.Fprintf(cw, `{"type":"stream_event","event":{"type":"message_stop"},"session_id":"%s","parent_tool_use_id":null,"uuid":"%s"}`+"\n", sid, g.ID("u-"))
			out := Quote(g.Text(g.OutputSize()))
			fmt.Fprintf(cw, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"%s","type":"tool_result","content":%s,"is_error":%t}]},"parent_tool_use_id":null,"session_id":"%s","uuid":"%s","tool_use_result":{"stdout":%s,"stderr":"","interrupted":false,"isImage":false}}`+"\n",
				call, out, g.Intn(20) == 0, sid, g.ID("u-"), out)
		}
		fmt.Fprintf(cw, `{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","resetsAt":1787288400,"rateLimitType":"five_hour","isUsingOverage":false},"uuid":"%s","session_id":"%s"}`+"\n", g.ID("u-"), sid)
		fmt.Fprintf(cw, `{"type":"result","subtype":"success","is_error":false,"duration_ms":%d,"duration_api_ms":%d,"num_turns":%d,"result":%s,"session_id":"%s","total_cost_usd":%.6f,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":%d},"permission_denials":[],"uuid":"%s"}`+"\n",
			1000+g.Intn(100000), 900+g.Intn(90000), calls, Quote(g.Text(300)), sid, g.r.Float64(), 100+g.Intn(1000), g.Intn(50000), g.Intn(900000), g.Intn(20000), g.ID("u-"))
	}
	return bw.Flush()
}

// ClaudeDeltas writes about size bytes of small stream_event delta lines
// (about 260 bytes each).
func ClaudeDeltas(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	sid := g.ID("")
	for cw.n < size {
		fmt.Fprintf(cw, `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}},"session_id":"%s","parent_tool_use_id":null,"uuid":"%s"}`+"\n", Quote(g.Prefix(g.Text(60), 30+g.Intn(20))), sid, g.ID("u-"))
	}
	return bw.Flush()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
