package modelsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeGemini answers a generateContent request. The stream is one
// GenerateContentResponse per part (thoughts, text pieces, function calls),
// the last with finishReason and usageMetadata.
func writeGemini(w http.ResponseWriter, r response) {
	rep := r.reply
	respID := fmt.Sprintf("modelsim-%04d", r.id)
	var parts []map[string]any
	if rep.Thinking != "" {
		for _, p := range pieces(rep.Thinking) {
			parts = append(parts, map[string]any{"text": p, "thought": true})
		}
	}
	for _, p := range pieces(rep.Text) {
		if p != "" {
			parts = append(parts, map[string]any{"text": p})
		}
	}
	for _, t := range rep.Tools {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": t.ID, "name": t.Name, "args": json.RawMessage(t.Input)},
			"thoughtSignature": "modelsim"})
	}
	candidate := func(ps []map[string]any, last bool) map[string]any {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		if last {
			c["finishReason"] = "STOP"
		}
		return c
	}
	resp := func(ps []map[string]any, last bool) map[string]any {
		m := map[string]any{"candidates": []any{candidate(ps, last)}, "modelVersion": r.model(), "responseId": respID}
		if last {
			m["usageMetadata"] = geminiUsage(rep.Usage)
		}
		return m
	}
	if !r.conv.stream {
		writeJSON(w, http.StatusOK, resp(parts, true))
		return
	}
	s := startSSE(w)
	if len(parts) == 0 {
		s.event("", resp([]map[string]any{{"text": ""}}, true))
		return
	}
	for i, p := range parts {
		s.event("", resp([]map[string]any{p}, i == len(parts)-1))
	}
}
