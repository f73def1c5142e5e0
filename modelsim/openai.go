package modelsim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// writeResponses answers a Responses request. The stream is
// response.created and response.in_progress, each output item added, its
// deltas, done, and response.completed with the usage.
func writeResponses(w http.ResponseWriter, r response) {
	rep := r.reply
	respID := fmt.Sprintf("resp_modelsim_%04d", r.id)
	base := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id": respID, "object": "response", "created_at": time.Now().Unix(), "status": status,
			"model": r.model(), "output": output, "usage": usage, "error": nil, "incomplete_details": nil,
		}
	}
	// The items of the output, complete.
	var items []map[string]any
	if rep.Thinking != "" {
		items = append(items, map[string]any{"type": "reasoning", "id": fmt.Sprintf("rs_modelsim_%04d", r.id),
			"summary": []any{map[string]any{"type": "summary_text", "text": rep.Thinking}}})
	}
	if rep.Text != "" {
		items = append(items, map[string]any{"type": "message", "id": fmt.Sprintf("msg_modelsim_%04d", r.id),
			"status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for i, t := range rep.Tools {
		id := fmt.Sprintf("fc_modelsim_%04d_%d", r.id, i)
		if t.Custom {
			var input string
			json.Unmarshal(t.Input, &input)
			items = append(items, map[string]any{"type": "custom_tool_call", "id": id, "call_id": t.ID,
				"name": t.Name, "input": input, "status": "completed"})
			continue
		}
		items = append(items, map[string]any{"type": "function_call", "id": id, "call_id": t.ID,
			"name": t.Name, "arguments": string(t.Input), "status": "completed"})
	}
	output := make([]any, len(items))
	for i := range items {
		output[i] = items[i]
	}
	if !r.conv.stream {
		writeJSON(w, http.StatusOK, base("completed", output, responsesUsage(rep.Usage)))
		return
	}
	s := startSSE(w)
	seq := 0
	ev := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		s.event(typ, fields)
	}
	ev("response.created", map[string]any{"response": base("in_progress", []any{}, nil)})
	ev("response.in_progress", map[string]any{"response": base("in_progress", []any{}, nil)})
	for i, it := range items {
		id := it["id"]
		added := map[string]any{}
		for k, v := range it {
			added[k] = v
		}
		switch it["type"] {
		case "reasoning":
			added["summary"] = []any{}
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": ""}})
			for _, p := range pieces(rep.Thinking) {
				ev("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "delta": p})
			}
			ev("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0, "text": rep.Thinking})
			ev("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": rep.Thinking}})
		case "message":
			added["status"], added["content"] = "in_progress", []any{}
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, p := range pieces(rep.Text) {
				ev("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": p})
			}
			ev("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": rep.Text})
			ev("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}})
		case "function_call":
			args := it["arguments"].(string)
			added["status"], added["arguments"] = "in_progress", ""
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			for _, p := range halves(args) {
				ev("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": p})
			}
			ev("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "arguments": args})
		case "custom_tool_call":
			input := it["input"].(string)
			added["status"], added["input"] = "in_progress", ""
			ev("response.output_item.added", map[string]any{"output_index": i, "item": added})
			ev("response.custom_tool_call_input.delta", map[string]any{"item_id": id, "output_index": i, "delta": input})
			ev("response.custom_tool_call_input.done", map[string]any{"item_id": id, "output_index": i, "input": input})
		}
		ev("response.output_item.done", map[string]any{"output_index": i, "item": it})
	}
	ev("response.completed", map[string]any{"response": base("completed", output, responsesUsage(rep.Usage))})
}

// writeChat answers a Chat Completions request. The stream is chunks of
// choices[0].delta (role, reasoning_content, content, tool_calls
// fragments), the chunk with finish_reason, the usage (a chunk of its own
// when stream_options.include_usage asks for it, else on the last chunk),
// and [DONE].
func writeChat(w http.ResponseWriter, r response) {
	rep := r.reply
	id := fmt.Sprintf("chatcmpl-modelsim-%04d", r.id)
	created := time.Now().Unix()
	finish := "stop"
	if len(rep.Tools) > 0 {
		finish = "tool_calls"
	}
	if !r.conv.stream {
		msg := map[string]any{"role": "assistant", "content": nil}
		if rep.Text != "" {
			msg["content"] = rep.Text
		}
		if rep.Thinking != "" {
			msg["reasoning_content"] = rep.Thinking
		}
		if len(rep.Tools) > 0 {
			var calls []any
			for _, t := range rep.Tools {
				calls = append(calls, map[string]any{"id": t.ID, "type": "function",
					"function": map[string]any{"name": t.Name, "arguments": string(t.Input)}})
			}
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": r.model(),
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   chatUsage(rep.Usage),
		})
		return
	}
	s := startSSE(w)
	chunk := func(delta map[string]any, finishReason any, usage any) map[string]any {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.model(),
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finishReason}}}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil))
	for _, p := range pieces(rep.Thinking) {
		if p != "" {
			s.event("", chunk(map[string]any{"reasoning_content": p}, nil, nil))
		}
	}
	for _, p := range pieces(rep.Text) {
		if p != "" {
			s.event("", chunk(map[string]any{"content": p}, nil, nil))
		}
	}
	for i, t := range rep.Tools {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": t.ID, "type": "function",
			"function": map[string]any{"name": t.Name, "arguments": ""}}}}, nil, nil))
		for _, p := range halves(string(t.Input)) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": p}}}}, nil, nil))
		}
	}
	if r.conv.includeUsage {
		s.event("", chunk(map[string]any{}, finish, nil))
		s.event("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": r.model(),
			"choices": []any{}, "usage": chatUsage(rep.Usage)})
	} else {
		s.event("", chunk(map[string]any{}, finish, chatUsage(rep.Usage)))
	}
	s.data("", []byte("[DONE]"))
}
