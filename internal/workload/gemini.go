package workload

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// Gemini writes about size bytes of Gemini CLI stream-json output to w:
// runs of init, the user prompt, runs of small assistant delta chunks,
// tool_use and tool_result lines (parallel calls included) with
// heavy-tailed outputs, error notices, and result with stats.
func Gemini(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	at := time.Date(2026, 6, 4, 5, 22, 4, 0, time.UTC)
	ts := func() string {
		at = at.Add(time.Duration(1+g.Intn(900)) * time.Millisecond)
		return at.Format("2006-01-02T15:04:05.000Z")
	}
	type tool struct{ name, params string }
	tools := []tool{
		{"run_shell_command", `{"command":"go test ./... 2>&1 | tail -n 40","description":"Run the tests"}`},
		{"read_file", `{"absolute_path":"/workspace/demo/src/main.go"}`},
		{"search_file_content", `{"pattern":"func .*Handler","path":"src"}`},
		{"replace", `{"file_path":"/workspace/demo/README.md","old_string":"Dépôt","new_string":"Dépôt bac à sable","instruction":"Rename"}`},
		{"list_directory", `{"dir_path":"."}`},
		{"google_web_search", `{"query":"gemini cli stream-json"}`},
	}
	for cw.n < size {
		fmt.Fprintf(cw, `{"type":"init","timestamp":"%s","session_id":"%s","model":"gemini-2.5-pro"}`+"\n", ts(), g.ID("38359eb7-c8e9-48e9-"))
		fmt.Fprintf(cw, `{"type":"message","timestamp":"%s","role":"user","content":%s}`+"\n", ts(), Quote(g.Text(80+g.Intn(300))))
		rounds := 3 + g.Intn(15)
		calls := 0
		for r := 0; r < rounds && cw.n < size; r++ {
			chunks := 3 + g.Intn(25)
			for c := 0; c < chunks; c++ {
				fmt.Fprintf(cw, `{"type":"message","timestamp":"%s","role":"assistant","content":%s,"delta":true}`+"\n", ts(), Quote(g.Text(60)[:20+g.Intn(40)]))
			}
			n := 1 + g.Intn(3)
			ids := make([]string, n)
			for i := range ids {
				t := tools[g.Intn(len(tools))]
				ids[i] = fmt.Sprintf("%s-%d-%s", t.name, at.UnixMilli(), g.ID("")[:13])
				fmt.Fprintf(cw, `{"type":"tool_use","timestamp":"%s","tool_name":"%s","tool_id":"%s","parameters":%s}`+"\n", ts(), t.name, ids[i], t.params)
			}
			for _, id := range ids {
				calls++
				if g.Intn(15) == 0 {
					fmt.Fprintf(cw, `{"type":"tool_result","timestamp":"%s","tool_id":"%s","status":"error","output":"File not found.","error":{"type":"file_not_found","message":"ENOENT: no such file or directory"}}`+"\n", ts(), id)
					continue
				}
				fmt.Fprintf(cw, `{"type":"tool_result","timestamp":"%s","tool_id":"%s","status":"success","output":%s}`+"\n", ts(), id, Quote(g.Text(g.OutputSize())))
			}
			if g.Intn(40) == 0 {
				fmt.Fprintf(cw, `{"type":"error","timestamp":"%s","severity":"warning","message":"Loop detected, stopping execution"}`+"\n", ts())
			}
		}
		in, cached := 20000+g.Intn(200000), g.Intn(20000)
		fmt.Fprintf(cw, `{"type":"result","timestamp":"%s","status":"success","stats":{"total_tokens":%d,"input_tokens":%d,"output_tokens":%d,"cached":%d,"input":%d,"duration_ms":%d,"tool_calls":%d,"models":{"gemini-2.5-pro":{"total_tokens":%d,"input_tokens":%d,"output_tokens":%d}}}}`+"\n",
			ts(), in+cached+900, in+cached, 800, cached, in, 1000+g.Intn(90000), calls, in+cached+900, in+cached, 800)
	}
	return bw.Flush()
}
