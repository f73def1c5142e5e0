package modelsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeAnthropic answers a Messages request. The stream is message_start
// (whose usage has a snapshot output count, as the API's does), a
// content block per thinking, text and tool call, message_delta with the
// final usage, and message_stop.
func writeAnthropic(w http.ResponseWriter, r response) {
	rep := r.reply
	id := fmt.Sprintf("msg_modelsim_%04d", r.id)
	stop := "end_turn"
	if len(rep.Tools) > 0 {
		stop = "tool_use"
	}
	signature := fmt.Sprintf("modelsim-signature-%04d", r.id)
	if !r.conv.stream {
		var content []any
		if rep.Thinking != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": rep.Thinking, "signature": signature})
		}
		if rep.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		for _, t := range rep.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": t.Input})
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": r.model(),
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(rep.Usage, rep.Usage.Output),
		})
		return
	}
	s := startSSE(w)
	snapshot := min(rep.Usage.Output, 1)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": r.model(),
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(rep.Usage, snapshot),
	}})
	s.event("ping", map[string]any{"type": "ping"})
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if rep.Thinking != "" {
		var deltas []map[string]any
		for _, p := range pieces(rep.Thinking) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": signature})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas)
	}
	if rep.Text != "" {
		var deltas []map[string]any
		for _, p := range pieces(rep.Text) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
		block(map[string]any{"type": "text", "text": ""}, deltas)
	}
	for _, t := range rep.Tools {
		var deltas []map[string]any
		for _, p := range halves(string(t.Input)) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		block(map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": json.RawMessage(`{}`)}, deltas)
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": anthropicUsage(rep.Usage, rep.Usage.Output)})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
