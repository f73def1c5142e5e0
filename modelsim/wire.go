package modelsim

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// response is what an API writer needs: the request, the reply, and a
// number that makes the response's ids unique.
type response struct {
	conv  *conv
	reply Reply
	id    int
}

func (r response) model() string {
	if r.conv.model != "" {
		return r.conv.model
	}
	return "modelsim"
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

// event writes one event: its name line unless name is empty, and its data
// as JSON.
func (s *sse) event(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{}`)
	}
	s.data(name, b)
}

func (s *sse) data(name string, b []byte) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

// pieces splits text into up to three deltas at spaces, so that a stream
// has more than one.
func pieces(text string) []string {
	if len(text) < 8 {
		return []string{text}
	}
	var out []string
	rest := text
	for n := 3; n > 1 && len(rest) > 0; n-- {
		cut := len(rest) / n
		i := strings.IndexByte(rest[cut:], ' ')
		if i < 0 {
			break
		}
		out = append(out, rest[:cut+i+1])
		rest = rest[cut+i+1:]
	}
	if rest != "" {
		out = append(out, rest)
	}
	return out
}

// halves splits a JSON argument string in two fragments.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

// errorType is the usual error type of a status in an API.
func errorType(api string, status int) string {
	switch api {
	case APIAnthropic:
		switch status {
		case 400:
			return "invalid_request_error"
		case 401:
			return "authentication_error"
		case 403:
			return "permission_error"
		case 404:
			return "not_found_error"
		case 413:
			return "request_too_large"
		case 429:
			return "rate_limit_error"
		case 529:
			return "overloaded_error"
		}
		return "api_error"
	case APIGemini:
		switch status {
		case 400:
			return "INVALID_ARGUMENT"
		case 401:
			return "UNAUTHENTICATED"
		case 403:
			return "PERMISSION_DENIED"
		case 404:
			return "NOT_FOUND"
		case 429:
			return "RESOURCE_EXHAUSTED"
		case 503:
			return "UNAVAILABLE"
		case 504:
			return "DEADLINE_EXCEEDED"
		}
		return "INTERNAL"
	}
	switch status {
	case 400, 404, 413:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 429:
		return "rate_limit_error"
	}
	return "server_error"
}

// writeError answers an API error in the API's error JSON, with its
// retry-after header.
func writeError(w http.ResponseWriter, api string, e *APIError) {
	h := w.Header()
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.FormatFloat(math.Ceil(e.RetryAfter), 'f', -1, 64))
		h.Set("Retry-After-Ms", strconv.FormatInt(int64(e.RetryAfter*1000), 10))
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	if len(e.Body) > 0 {
		w.Write(e.Body)
		return
	}
	typ := e.Type
	if typ == "" {
		typ = errorType(api, e.Status)
	}
	var v any
	switch api {
	case APIAnthropic:
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.Message}}
	case APIGemini:
		inner := map[string]any{"code": e.Status, "message": e.Message, "status": typ}
		if e.RetryAfter > 0 {
			inner["details"] = []any{map[string]any{
				"@type":      "type.googleapis.com/google.rpc.RetryInfo",
				"retryDelay": strconv.FormatFloat(e.RetryAfter, 'f', -1, 64) + "s",
			}}
		}
		v = map[string]any{"error": inner}
	default:
		v = map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": nil, "code": openAICode(e.Status)}}
	}
	b, _ := json.Marshal(v)
	w.Write(b)
}

func openAICode(status int) any {
	switch status {
	case 429:
		return "rate_limit_exceeded"
	case 400:
		return "invalid_request"
	}
	return nil
}
