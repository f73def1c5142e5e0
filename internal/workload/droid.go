package workload

import (
	"bufio"
	"fmt"
	"io"
)

// Droid writes about size bytes of Factory Droid stream-json to w: runs of
// init, the prompt, assistant messages, tool_call/tool_result pairs whose
// values follow the heavy-tailed size mix (Execute output ends with Droid's
// exit code line), and a completion with snake_case usage.
func Droid(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	tools := []struct{ name, params string }{
		{"Execute", `{"command":"go test ./... 2>&1 | tail -n 40","timeout":120,"riskLevel":{"value":"low","reason":"tests"}}`},
		{"Read", `{"file_path":"/workspace/demo/src/main.go"}`},
		{"Edit", `{"file_path":"/workspace/demo/src/handler.go","old_string":"return nil","new_string":"return err"}`},
		{"Grep", `{"pattern":"func .*Handler","path":"/workspace/demo"}`},
	}
	for cw.n < size {
		sid := g.ID("")
		ts := int64(1764600000000)
		fmt.Fprintf(cw, `{"type":"system","subtype":"init","cwd":"/workspace/demo","session_id":"%s","tools":["Read","LS","Execute","Edit","MultiEdit","Create","Grep","Glob","TodoWrite"],"model":"claude-sonnet-4-5-20250929"}`+"\n", sid)
		fmt.Fprintf(cw, `{"type":"message","role":"user","id":"%s","text":%s,"timestamp":%d,"session_id":"%s"}`+"\n", g.ID("u-"), Quote(g.Text(120)), ts, sid)
		steps := 5 + g.Intn(20)
		var final string
		for s := 0; s < steps && cw.n < size; s++ {
			msg := g.ID("m-")
			final = g.Text(100 + g.Intn(400))
			ts += int64(500 + g.Intn(5000))
			fmt.Fprintf(cw, `{"type":"message","role":"assistant","id":"%s","text":%s,"timestamp":%d,"session_id":"%s"}`+"\n", msg, Quote(final), ts, sid)
			tool := tools[g.Intn(len(tools))]
			call := g.ID("call_")
			fmt.Fprintf(cw, `{"type":"tool_call","id":"%s","messageId":"%s","toolId":"%s","toolName":"%s","parameters":%s,"timestamp":%d,"session_id":"%s"}`+"\n", call, msg, tool.name, tool.name, tool.params, ts, sid)
			out := g.Text(g.OutputSize())
			if tool.name == "Execute" {
				out += fmt.Sprintf("\n[Process exited with code %d]", g.Intn(2))
			}
			ts += int64(100 + g.Intn(3000))
			fmt.Fprintf(cw, `{"type":"tool_result","id":"%s","messageId":"%s","toolId":"%s","isError":%t,"value":%s,"timestamp":%d,"session_id":"%s"}`+"\n", call, g.ID("m-"), tool.name, g.Intn(20) == 0, Quote(out), ts, sid)
		}
		fmt.Fprintf(cw, `{"type":"completion","finalText":%s,"numTurns":%d,"durationMs":%d,"session_id":"%s","timestamp":%d,"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d}}`+"\n",
			Quote(final), steps, 1000+g.Intn(100000), sid, ts, 100+g.Intn(20000), g.Intn(20000), g.Intn(900000), g.Intn(50000))
	}
	return bw.Flush()
}
