package workload

import (
	"bufio"
	"fmt"
	"io"
)

// Opencode writes about size bytes of `opencode run --format json` output
// to w: runs of steps, each a step_start, completed tool_use parts with
// heavy-tailed outputs or a text part (and sometimes a reasoning part), and
// a step_finish with the step's tokens and cost.
func Opencode(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	ms := int64(1796162554107)
	now := func() int64 {
		ms += int64(1 + g.Intn(900))
		return ms
	}
	type tool struct{ name, input string }
	tools := []tool{
		{"bash", `{"command":"go test ./... 2>&1 | tail -n 40","description":"Run the tests"}`},
		{"read", `{"filePath":"/workspace/demo/src/main.go"}`},
		{"grep", `{"pattern":"func .*Handler","path":"src"}`},
		{"edit", `{"filePath":"/workspace/demo/README.md","oldString":"Dépôt","newString":"Dépôt bac à sable"}`},
		{"glob", `{"pattern":"**/*.go"}`},
		{"webfetch", `{"url":"https://example.com/docs","format":"markdown"}`},
	}
	for cw.n < size {
		ses := g.ID("ses_dcc5e9016ffe")
		steps := 2 + g.Intn(15)
		for s := 0; s < steps && cw.n < size; s++ {
			msg := g.ID("msg_233a17e1f001")
			last := s == steps-1
			fmt.Fprintf(cw, `{"type":"step_start","timestamp":%d,"sessionID":"%s","part":{"id":"%s","messageID":"%s","sessionID":"%s","snapshot":"5e1c0a9d27b4f3e86a0d1c972b58e4f03a6d9b21","type":"step-start"}}`+"\n", now(), ses, g.ID("prt_"), msg, ses)
			if g.Intn(4) == 0 {
				t0 := now()
				fmt.Fprintf(cw, `{"type":"reasoning","timestamp":%d,"sessionID":"%s","part":{"id":"%s","messageID":"%s","sessionID":"%s","type":"reasoning","text":%s,"time":{"start":%d,"end":%d}}}`+"\n", now(), ses, g.ID("prt_"), msg, ses, Quote(g.Text(200+g.Intn(800))), t0, ms)
			}
			if last {
				t0 := now()
				fmt.Fprintf(cw, `{"type":"text","timestamp":%d,"sessionID":"%s","part":{"id":"%s","messageID":"%s","sessionID":"%s","type":"text","text":%s,"time":{"start":%d,"end":%d}}}`+"\n", now(), ses, g.ID("prt_"), msg, ses, Quote(g.Text(100+g.Intn(600))), t0, ms)
			} else {
				for c := 1 + g.Intn(3); c > 0; c-- {
					t := tools[g.Intn(len(tools))]
					t0 := now()
					fmt.Fprintf(cw, `{"type":"tool_use","timestamp":%d,"sessionID":"%s","part":{"type":"tool","tool":"%s","callID":"%s","state":{"status":"completed","input":%s,"output":%s,"title":"%s","metadata":{"exit":0,"truncated":false},"time":{"start":%d,"end":%d}},"id":"%s","sessionID":"%s","messageID":"%s"}}`+"\n",
						now(), ses, t.name, g.ID("tool-"), t.input, Quote(g.Text(g.OutputSize())), t.name, t0, ms, g.ID("prt_"), ses, msg)
				}
			}
			reason := "tool-calls"
			if last {
				reason = "stop"
			}
			in, out, rsn, read := 200+g.Intn(3000), 10+g.Intn(800), g.Intn(300), 5000+g.Intn(60000)
			fmt.Fprintf(cw, `{"type":"step_finish","timestamp":%d,"sessionID":"%s","part":{"id":"%s","reason":"%s","snapshot":"c4a2e9170b3d58f6e21a7d0c9b84f356e1a0d7c8","messageID":"%s","sessionID":"%s","type":"step-finish","tokens":{"total":%d,"input":%d,"output":%d,"reasoning":%d,"cache":{"write":0,"read":%d}},"cost":%.6f}}`+"\n",
				now(), ses, g.ID("prt_"), reason, msg, ses, in+out+rsn+read, in, out, rsn, read, float64(g.Intn(100000))/1e6)
		}
	}
	return bw.Flush()
}
