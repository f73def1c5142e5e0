package workload

import (
	"bufio"
	"fmt"
	"io"
)

// Copilot writes about size bytes of GitHub Copilot CLI JSON output to w:
// runs of session notices, the prompt, per model turn message deltas and an
// assistant.message with tool requests and outputTokens, tool execution
// start/complete pairs whose results follow the heavy-tailed size mix, and a
// final result with premium requests.
func Copilot(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	tools := []struct{ name, args string }{
		{"bash", `{"command":"go test ./... 2>&1 | tail -n 40","description":"Run the tests"}`},
		{"view", `{"path":"/workspace/demo/src/main.go"}`},
		{"edit", `{"path":"/workspace/demo/src/handler.go","old_str":"return nil","new_str":"return err"}`},
		{"grep", `{"pattern":"func .*Handler","path":"/workspace/demo"}`},
	}
	sec := 0
	ts := func() string {
		sec++
		return fmt.Sprintf("2026-08-03T%02d:%02d:%02d.%03dZ", sec/3600%24, sec/60%60, sec%60, g.Intn(1000))
	}
	for cw.n < size {
		root := g.ID("p-")
		fmt.Fprintf(cw, `{"type":"session.mcp_servers_loaded","data":{"servers":[{"name":"github-mcp-server","status":"connected","source":"builtin"}]},"id":"%s","timestamp":"%s","parentId":"%s","ephemeral":true}`+"\n", g.ID("e-"), ts(), root)
		fmt.Fprintf(cw, `{"type":"session.tools_updated","data":{"model":"claude-sonnet-4.5"},"id":"%s","timestamp":"%s","parentId":"%s","ephemeral":true}`+"\n", g.ID("e-"), ts(), root)
		interaction := g.ID("i-")
		fmt.Fprintf(cw, `{"type":"user.message","data":{"content":%s,"transformedContent":%s,"attachments":[],"agentMode":"autopilot","interactionId":"%s"},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n", Quote(g.Text(120)), Quote(g.Text(160)), interaction, g.ID("e-"), ts(), root)
		premium := 0
		turns := 5 + g.Intn(20)
		for turn := 0; turn < turns && cw.n < size; turn++ {
			start := g.ID("e-")
			fmt.Fprintf(cw, `{"type":"assistant.turn_start","data":{"turnId":"%d","interactionId":"%s"},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n", turn, interaction, start, ts(), root)
			msg := g.ID("m-")
			for d := 3 + g.Intn(15); d > 0; d-- {
				fmt.Fprintf(cw, `{"type":"assistant.message_delta","data":{"messageId":"%s","deltaContent":%s},"id":"%s","timestamp":"%s","parentId":"%s","ephemeral":true}`+"\n", msg, Quote(g.Prefix(g.Text(60), 20+g.Intn(30))), g.ID("e-"), ts(), start)
			}
			tool := tools[g.Intn(len(tools))]
			call := g.ID("toolu_vrtx_")
			fmt.Fprintf(cw, `{"type":"assistant.message","data":{"messageId":"%s","content":%s,"toolRequests":[{"toolCallId":"%s","name":"%s","arguments":%s,"type":"function","intentionSummary":"%s the file"}],"interactionId":"%s","outputTokens":%d},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n",
				msg, Quote(g.Text(100+g.Intn(300))), call, tool.name, tool.args, tool.name, interaction, 10+g.Intn(800), g.ID("e-"), ts(), start)
			fmt.Fprintf(cw, `{"type":"tool.execution_start","data":{"toolCallId":"%s","toolName":"%s","arguments":%s},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n", call, tool.name, tool.args, g.ID("e-"), ts(), start)
			out := Quote(g.Text(g.OutputSize()))
			fmt.Fprintf(cw, `{"type":"tool.execution_complete","data":{"toolCallId":"%s","model":"claude-sonnet-4.5","interactionId":"%s","success":%t,"result":{"content":%s},"toolTelemetry":{"properties":{"command":"%s"},"metrics":{"resultLength":%d}}},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n",
				call, interaction, g.Intn(20) != 0, out, tool.name, len(out), g.ID("e-"), ts(), start)
			fmt.Fprintf(cw, `{"type":"assistant.turn_end","data":{"turnId":"%d"},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n", turn, g.ID("e-"), ts(), start)
			premium++
		}
		fmt.Fprintf(cw, `{"type":"session.task_complete","data":{"summary":%s,"success":true},"id":"%s","timestamp":"%s","parentId":"%s"}`+"\n", Quote(g.Text(150)), g.ID("e-"), ts(), root)
		fmt.Fprintf(cw, `{"type":"result","timestamp":"%s","sessionId":"%s","exitCode":0,"usage":{"premiumRequests":%d,"totalApiDurationMs":%d,"sessionDurationMs":%d,"codeChanges":{"linesAdded":%d,"linesRemoved":%d,"filesModified":["src/handler.go"]}}}`+"\n",
			ts(), g.ID(""), premium, 1000+g.Intn(100000), 2000+g.Intn(200000), g.Intn(100), g.Intn(100))
	}
	return bw.Flush()
}
