package workload

import (
	"bufio"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// NaiveEvent is what the naive baseline extracts from a line.
type NaiveEvent struct {
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
}

func clipNaive(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= 8000 {
		return s, false
	}
	n := 0
	for i := range s {
		if n == 8000 {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// NaiveDecode is the baseline the benchmarks compare against: it decodes a
// Claude stream-json line with encoding/json into map[string]any and
// extracts the fields the Claude adapter extracts.
func NaiveDecode(dst []NaiveEvent, line []byte) []NaiveEvent {
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		return append(dst, NaiveEvent{Type: "raw", Payload: map[string]any{"reason": "malformed"}})
	}
	typ, _ := m["type"].(string)
	switch typ {
	case "assistant":
		msg, _ := m["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			switch b["type"] {
			case "text":
				s, _ := b["text"].(string)
				s, tr := clipNaive(s)
				dst = append(dst, NaiveEvent{"message", map[string]any{"role": "assistant", "text": s, "truncated": tr}})
			case "thinking":
				s, _ := b["thinking"].(string)
				s, tr := clipNaive(s)
				dst = append(dst, NaiveEvent{"thinking", map[string]any{"text": s, "truncated": tr}})
			case "tool_use":
				in, _ := json.Marshal(b["input"])
				s, tr := clipNaive(string(in))
				dst = append(dst, NaiveEvent{"tool.call", map[string]any{"callId": b["id"], "name": b["name"], "input": s, "truncated": tr}})
			}
		}
		if u, ok := msg["usage"].(map[string]any); ok {
			dst = append(dst, NaiveEvent{"usage", map[string]any{"scope": "call", "inputTokens": u["input_tokens"], "outputTokens": u["output_tokens"],
				"cacheReadTokens": u["cache_read_input_tokens"], "cacheCreationTokens": u["cache_creation_input_tokens"], "messageId": msg["id"]}})
		}
	case "user":
		msg, _ := m["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			b, _ := c.(map[string]any)
			if b["type"] == "tool_result" {
				s, _ := b["content"].(string)
				n := utf8.RuneCountInString(s)
				s, tr := clipNaive(s)
				dst = append(dst, NaiveEvent{"tool.result", map[string]any{"callId": b["tool_use_id"], "isError": b["is_error"], "output": s, "truncated": tr, "characters": n}})
			}
		}
	case "stream_event":
		ev, _ := m["event"].(map[string]any)
		if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			dst = append(dst, NaiveEvent{"message.delta", map[string]any{"role": "assistant", "text": d["text"]}})
		}
	case "system":
		dst = append(dst, NaiveEvent{"session.started", map[string]any{"model": m["model"], "cwd": m["cwd"], "sessionId": m["session_id"], "tools": m["tools"]}})
	case "result":
		u, _ := m["usage"].(map[string]any)
		dst = append(dst, NaiveEvent{"usage", map[string]any{"scope": "session", "inputTokens": u["input_tokens"], "outputTokens": u["output_tokens"], "costUsd": m["total_cost_usd"], "turns": m["num_turns"]}})
		dst = append(dst, NaiveEvent{"session.ended", map[string]any{"status": m["subtype"], "summary": m["result"]}})
	default:
		dst = append(dst, NaiveEvent{"raw", map[string]any{"json": m}})
	}
	return dst
}

// NaiveNormalize reads lines and writes the naive events as JSON lines,
// the end-to-end baseline.
func NaiveNormalize(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 1<<20)
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	var evs []NaiveEvent
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			evs = NaiveDecode(evs[:0], line)
			for _, e := range evs {
				if err := enc.Encode(e); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			return bw.Flush()
		}
		if err != nil {
			return err
		}
	}
}
