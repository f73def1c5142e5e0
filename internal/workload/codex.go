package workload

import (
	"bufio"
	"fmt"
	"io"
)

// Codex writes about size bytes of `codex exec --json` output to w: threads
// of one turn each, with reasoning and agent messages, command executions
// (started, then completed with heavy-tailed shell-wrapped outputs), file
// changes, MCP calls, web searches, todo lists, and turn.completed with the
// thread's running usage.
func Codex(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	commands := []string{
		`/bin/zsh -lc 'go test ./... 2>&1 | tail -n 40'`,
		`bash -lc 'rg -n "func .*Handler" src'`,
		"/bin/zsh -lc \"cat <<'EOF' > notes.txt\nétape 1\nEOF\"",
		`bash -lc ls`,
		`/bin/zsh -lc 'sed -n 1,200p internal/server/main.go'`,
	}
	for cw.n < size {
		fmt.Fprintf(cw, `{"type":"thread.started","thread_id":"%s"}`+"\n", g.ID("0199a213-81c0-7800-"))
		fmt.Fprintf(cw, `{"type":"turn.started"}`+"\n")
		items := 5 + g.Intn(30)
		var in, cached, out int64
		for i := 0; i < items && cw.n < size; i++ {
			id := fmt.Sprintf("item_%d", i)
			in += int64(5000 + g.Intn(20000))
			cached += int64(4000 + g.Intn(15000))
			out += int64(50 + g.Intn(800))
			switch p := g.Intn(100); {
			case p < 15:
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"%s","type":"reasoning","text":%s}}`+"\n", id, Quote("**"+g.Text(30)[:20]+"**\n\n"+g.Text(200+g.Intn(600))))
			case p < 25:
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"%s","type":"agent_message","text":%s}}`+"\n", id, Quote(g.Text(100+g.Intn(500))))
			case p < 80:
				cmd := Quote(commands[g.Intn(len(commands))])
				fmt.Fprintf(cw, `{"type":"item.started","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":"","exit_code":null,"status":"in_progress"}}`+"\n", id, cmd)
				code, status := 0, "completed"
				if g.Intn(10) == 0 {
					code, status = 1, "failed"
				}
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"%s","type":"command_execution","command":%s,"aggregated_output":%s,"exit_code":%d,"status":"%s"}}`+"\n",
					id, cmd, Quote(g.Text(g.OutputSize())), code, status)
			case p < 88:
				fmt.Fprintf(cw, `{"type":"item.started","item":{"id":"%s","type":"file_change","changes":[{"path":"/workspace/demo/src/main.go","kind":"update"},{"path":"/workspace/demo/docs/guide-é.md","kind":"add"}],"status":"in_progress"}}`+"\n", id)
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"%s","type":"file_change","changes":[{"path":"/workspace/demo/src/main.go","kind":"update"},{"path":"/workspace/demo/docs/guide-é.md","kind":"add"}],"status":"completed"}}`+"\n", id)
			case p < 94:
				fmt.Fprintf(cw, `{"type":"item.started","item":{"id":"%s","type":"mcp_tool_call","server":"github","tool":"search_issues","arguments":{"q":"exec --json","per_page":20},"result":null,"error":null,"status":"in_progress"}}`+"\n", id)
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"%s","type":"mcp_tool_call","server":"github","tool":"search_issues","arguments":{"q":"exec --json","per_page":20},"result":{"content":[{"type":"text","text":%s}],"structured_content":null},"error":null,"status":"completed"}}`+"\n",
					id, Quote(g.Text(g.OutputSize())))
			case p < 97:
				q := Quote("codex exec json schema " + g.ID(""))
				fmt.Fprintf(cw, `{"type":"item.completed","item":{"id":"ws_%s","type":"web_search","query":%s,"action":{"type":"search","query":%s,"queries":[%s]}}}`+"\n", g.ID(""), q, q, q)
			default:
				fmt.Fprintf(cw, `{"type":"item.updated","item":{"id":"todo_%d","type":"todo_list","items":[{"text":"Inspect repo structure","completed":true},{"text":"Run tests","completed":%t},{"text":"Fix failing tests","completed":false}]}}`+"\n", i, g.Intn(2) == 0)
			}
		}
		fmt.Fprintf(cw, `{"type":"turn.completed","usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d}}`+"\n", in, cached, out)
	}
	return bw.Flush()
}
