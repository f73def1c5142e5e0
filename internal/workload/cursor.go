package workload

import (
	"bufio"
	"fmt"
	"io"
)

// Cursor writes about size bytes of Cursor agent stream-json to w: runs of
// init, the prompt, thinking deltas, assistant messages with their
// model_call_id, tool_call started/completed pairs (shell, read, edit, grep)
// whose outputs follow the heavy-tailed size mix, and a result with camelCase
// usage.
func Cursor(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	for cw.n < size {
		sid := g.ID("")
		fmt.Fprintf(cw, `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/workspace/demo","session_id":"%s","model":"Claude 4.5 Sonnet","permissionMode":"default"}`+"\n", sid)
		fmt.Fprintf(cw, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":%s}]},"session_id":"%s"}`+"\n", Quote(g.Text(120)), sid)
		ts := int64(1786000000000)
		calls := 5 + g.Intn(20)
		for c := 0; c < calls && cw.n < size; c++ {
			mc := g.ID("mc-")
			for d := 3 + g.Intn(10); d > 0; d-- {
				ts += int64(20 + g.Intn(80))
				fmt.Fprintf(cw, `{"type":"thinking","subtype":"delta","text":%s,"session_id":"%s","timestamp_ms":%d}`+"\n", Quote(g.Prefix(g.Text(60), 20+g.Intn(30))), sid, ts)
			}
			fmt.Fprintf(cw, `{"type":"thinking","subtype":"completed","session_id":"%s","timestamp_ms":%d}`+"\n", sid, ts)
			fmt.Fprintf(cw, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]},"session_id":"%s","model_call_id":"%s","timestamp_ms":%d}`+"\n", Quote(g.Text(100+g.Intn(400))), sid, mc, ts)
			call := g.ID("toolu_")
			var kind, args, result string
			out := Quote(g.Text(g.OutputSize()))
			switch g.Intn(4) {
			case 0:
				kind = "shellToolCall"
				args = `{"command":"go test ./... 2>&1 | tail -n 40","workingDirectory":"","timeout":0}`
				result = fmt.Sprintf(`{"success":{"command":"go test ./...","workingDirectory":"","exitCode":%d,"signal":"","stdout":%s,"stderr":"","executionTime":%d}}`, g.Intn(2), out, 100+g.Intn(5000))
			case 1:
				kind = "readToolCall"
				args = `{"path":"/workspace/demo/src/main.go"}`
				result = fmt.Sprintf(`{"success":{"content":%s,"isEmpty":false,"exceededLimit":false,"totalLines":%d,"fileSize":%d,"path":"/workspace/demo/src/main.go"}}`, out, 10+g.Intn(900), 100+g.Intn(90000))
			case 2:
				kind = "editToolCall"
				args = `{"path":"/workspace/demo/src/handler.go","strReplace":{"oldText":"return nil","newText":"return err"}}`
				result = fmt.Sprintf(`{"success":{"path":"/workspace/demo/src/handler.go","linesAdded":1,"linesRemoved":1,"diffString":%s,"message":"Edited /workspace/demo/src/handler.go"}}`, Quote("-\treturn nil\n+\treturn err\n"+g.Text(200)))
			default:
				kind = "grepToolCall"
				args = `{"pattern":"func .*Handler","outputMode":"content","caseInsensitive":false}`
				result = fmt.Sprintf(`{"success":{"pattern":"func .*Handler","path":"","outputMode":"content","workspaceResults":{"/workspace/demo":{"content":{"matches":[{"file":"src/handler.go","matches":[{"lineNumber":12,"content":%s}]}]}}}}}`, out)
			}
			fmt.Fprintf(cw, `{"type":"tool_call","subtype":"started","call_id":"%s","tool_call":{"%s":{"args":%s}},"model_call_id":"%s","session_id":"%s","timestamp_ms":%d}`+"\n", call, kind, args, mc, sid, ts)
			ts += int64(100 + g.Intn(3000))
			fmt.Fprintf(cw, `{"type":"tool_call","subtype":"completed","call_id":"%s","tool_call":{"%s":{"args":%s,"result":%s}},"model_call_id":"%s","session_id":"%s","timestamp_ms":%d}`+"\n", call, kind, args, result, mc, sid, ts)
		}
		final := g.Text(200 + g.Intn(300))
		fmt.Fprintf(cw, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%s}]},"session_id":"%s"}`+"\n", Quote(final), sid)
		fmt.Fprintf(cw, `{"type":"result","subtype":"success","duration_ms":%d,"duration_api_ms":%d,"is_error":false,"result":%s,"session_id":"%s","request_id":"%s","usage":{"inputTokens":%d,"outputTokens":%d,"cacheReadTokens":%d,"cacheWriteTokens":%d}}`+"\n",
			1000+g.Intn(100000), 1000+g.Intn(100000), Quote(final), sid, g.ID("req-"), 50+g.Intn(20000), g.Intn(20000), g.Intn(900000), g.Intn(50000))
	}
	return bw.Flush()
}
