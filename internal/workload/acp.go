package workload

import (
	"bufio"
	"fmt"
	"io"
)

// ACP writes about size bytes of what an Agent Client Protocol agent prints
// on stdout to w: the initialize and session/new results, then prompt turns
// of thought and message chunks, tool_call / tool_call_update sequences
// whose content follows the heavy-tailed size mix, plan and usage updates,
// and the session/prompt result.
func ACP(w io.Writer, size int64, seed int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	g := NewGen(seed)
	id := 0
	kinds := []struct{ kind, title, input string }{
		{"execute", "go test ./... (Run the tests)", `{"command":"go test ./...","description":"Run the tests"}`},
		{"read", "ReadFile src/main.go", `{"absolute_path":"/workspace/demo/src/main.go"}`},
		{"search", "'func .*Handler' within ./", `{"pattern":"func .*Handler"}`},
		{"edit", "handler.go: return nil => return err", `{"file_path":"/workspace/demo/src/handler.go","old_string":"return nil","new_string":"return err"}`},
	}
	update := func(sid, u string) {
		fmt.Fprintf(cw, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%s","update":%s}}`+"\n", sid, u)
	}
	for cw.n < size {
		fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true}},"agentInfo":{"name":"gemini-cli","title":"Gemini CLI","version":"0.31.0"},"authMethods":[]}}`+"\n", id)
		id++
		sid := g.ID("sess_")
		fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"%s","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"YOLO"}]}}}`+"\n", id, sid)
		id++
		update(sid, `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"Analyze the project"},{"name":"memory","description":"Manage memory"}]}`)
		for turn := 3 + g.Intn(5); turn > 0 && cw.n < size; turn-- {
			calls := 3 + g.Intn(10)
			for c := 0; c < calls && cw.n < size; c++ {
				for d := 3 + g.Intn(10); d > 0; d-- {
					update(sid, fmt.Sprintf(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":%s}}`, Quote(g.Prefix(g.Text(60), 20+g.Intn(30)))))
				}
				for d := 3 + g.Intn(15); d > 0; d-- {
					update(sid, fmt.Sprintf(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%s}}`, Quote(g.Prefix(g.Text(60), 20+g.Intn(30)))))
				}
				k := kinds[g.Intn(len(kinds))]
				call := g.ID("call-")
				update(sid, fmt.Sprintf(`{"sessionUpdate":"tool_call","toolCallId":"%s","title":"%s","kind":"%s","status":"pending","locations":[],"rawInput":%s}`, call, k.title, k.kind, k.input))
				update(sid, fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"in_progress"}`, call))
				if k.kind == "edit" {
					old := g.Text(g.OutputSize() / 4)
					update(sid, fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"completed","content":[{"type":"diff","path":"/workspace/demo/src/handler.go","oldText":%s,"newText":%s}]}`, call, Quote(old), Quote(old+"\treturn err\n")))
				} else {
					update(sid, fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"%s","status":"%s","content":[{"type":"content","content":{"type":"text","text":%s}}]}`, call, []string{"completed", "completed", "completed", "failed"}[g.Intn(4)], Quote(g.Text(g.OutputSize()))))
				}
			}
			update(sid, `{"sessionUpdate":"plan","entries":[{"content":"Run the tests","priority":"high","status":"completed"},{"content":"Fix the handler","priority":"medium","status":"in_progress"}]}`)
			update(sid, fmt.Sprintf(`{"sessionUpdate":"usage_update","used":%d,"size":1048576,"cost":{"amount":%.4f,"currency":"USD"}}`, 10000+g.Intn(500000), float64(g.Intn(10000))/1000))
			in := 10000 + g.Intn(500000)
			out := g.Intn(20000)
			fmt.Fprintf(cw, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn","usage":{"totalTokens":%d,"inputTokens":%d,"outputTokens":%d,"thoughtTokens":%d,"cachedReadTokens":%d}}}`+"\n", id, in+out, in, out, g.Intn(5000), g.Intn(in))
			id++
		}
	}
	return bw.Flush()
}
