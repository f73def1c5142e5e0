package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// importRecorded stores a recorded session of a dialect and returns its
// stored envelopes.
func (ts *testServer) importRecorded(t *testing.T, id, protocol, path string) []agentstream.Envelope {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := adapter.Lookup(protocol)
	if err != nil {
		t.Fatal(err)
	}
	n := agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{Session: id, Harness: a.Harness, ExplicitTurns: a.ExplicitTurns})
	var envs []agentstream.Envelope
	for i, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		envs = n.Line(envs, agentstream.Line{N: int64(i + 1), Bytes: []byte(l), Size: int64(len(l))}, time.Time{})
	}
	envs = n.End(envs, time.Time{})
	w, err := ts.st.Create(ctx, store.NewSession{ID: id, Protocol: protocol, Harness: a.Harness, StartedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	var kept []agentstream.Envelope
	for _, e := range envs {
		if err := w.Handle(ctx, e); err != nil {
			t.Fatal(err)
		}
		if !agentstream.IsLive(e.Type()) {
			kept = append(kept, e)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return kept
}

// outputOnlyWord returns a word of letters that occurs in the output of a
// tool result and nowhere else in the session's events, with the seqs of
// the results that hold it.
func outputOnlyWord(t *testing.T, envs []agentstream.Envelope) (string, []int64) {
	t.Helper()
	var others strings.Builder
	for _, e := range envs {
		if _, ok := e.Payload.(*agentstream.ToolResult); !ok {
			others.WriteString(strings.ToLower(string(e.AppendJSON(nil))))
		}
	}
	letters := regexp.MustCompile(`[a-z]{7,}`)
	for _, e := range envs {
		r, ok := e.Payload.(*agentstream.ToolResult)
		if !ok {
			continue
		}
		for _, w := range letters.FindAllString(strings.ToLower(r.Output), -1) {
			if strings.Contains(others.String(), w) {
				continue
			}
			// Whole words only, wherever it occurs.
			whole := regexp.MustCompile(`(^|[^\pL\pN])` + w + `($|[^\pL\pN])`)
			part := regexp.MustCompile(w)
			var seqs []int64
			ok := true
			for _, e2 := range envs {
				if r2, is := e2.Payload.(*agentstream.ToolResult); is {
					out := strings.ToLower(r2.Output)
					if len(part.FindAllString(out, -1)) != len(whole.FindAllString(out, -1)) {
						ok = false
					}
					if whole.MatchString(out) {
						seqs = append(seqs, e2.Seq)
					}
				}
			}
			if ok {
				return w, seqs
			}
		}
	}
	t.Fatal("no word occurs only in a tool output")
	return "", nil
}

func getSearch(t *testing.T, ts *testServer, rawQuery string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(ts.srv.URL + "/api/search?" + rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(b.String())
}

// TestSearch stores a recorded Claude session and finds, through the API,
// a word that occurs only in one of its tool outputs.
func TestSearch(t *testing.T) {
	ts := newServer(t, api.Options{}, hub.Options{})
	envs := ts.importRecorded(t, "s_claude", "claude-json", filepath.Join("..", "..", "adapter", "claude", "testdata", "lab-claude-2.1.328-edits.jsonl"))
	ts.fill(t, "s_other", 5)
	word, seqs := outputOnlyWord(t, envs)
	slices.Reverse(seqs) // latest first
	code, body := getSearch(t, ts, "q="+url.QueryEscape(strings.ToUpper(word)))
	if code != http.StatusOK {
		t.Fatalf("GET /api/search?q=%s: %d %s", word, code, body)
	}
	var hits []struct {
		Session    string   `json:"session"`
		Seq        int64    `json:"seq"`
		Type       string   `json:"type"`
		Harness    *string  `json:"harness"`
		Snippet    string   `json:"snippet"`
		Highlights [][2]int `json:"highlights"`
	}
	if err := json.Unmarshal(body, &hits); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(hits) != len(seqs) {
		t.Fatalf("%d hits for %q, want %d (seqs %v): %s", len(hits), word, len(seqs), seqs, body)
	}
	for i, h := range hits {
		if h.Session != "s_claude" || h.Seq != seqs[i] || h.Type != agentstream.TypeToolResult {
			t.Errorf("hit %d: %s %d %s, want s_claude %d tool.result", i, h.Session, h.Seq, h.Type, seqs[i])
		}
		r := []rune(h.Snippet)
		if len(h.Highlights) == 0 || strings.ToLower(string(r[h.Highlights[0][0]:h.Highlights[0][1]])) != word {
			t.Errorf("hit %d: snippet %q highlights %v: want %q highlighted", i, h.Snippet, h.Highlights, word)
		}
	}
	// Filters reach the store.
	if code, body := getSearch(t, ts, "q="+word+"&harness=codex"); code != http.StatusOK || string(body) != "[]\n" {
		t.Errorf("harness codex: %d %s, want []", code, body)
	}
	if code, body := getSearch(t, ts, "q=m3&status=succeeded&since=2020-01-01"); code != http.StatusOK || string(body) != "[]\n" {
		t.Errorf("status succeeded: %d %s, want []", code, body)
	}
	if code, body := getSearch(t, ts, "q=m3&status=interrupted&limit=1"); code != http.StatusOK || strings.Count(string(body), `"seq":3`) != 1 {
		t.Errorf("m3 in s_other: %d %s", code, body)
	}
	// What cannot be read is a 400 saying why, never a 500.
	for _, tc := range []struct{ query, want string }{
		{"", "missing q"},
		{"q=", "empty query"},
		{"q=%00", "NUL"},
		{"q=%22unclosed", "unclosed quote"},
		{"q=fo*o", "must end a word"},
		{"q=%FF", "UTF-8"},
		{"q=x&status=nope", "bad status"},
		{"q=x&since=yesterday", "bad since"},
		{"q=x&limit=0", "bad limit"},
	} {
		code, body := getSearch(t, ts, tc.query)
		if code != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("GET /api/search?%s: %d %s, want 400 saying %q", tc.query, code, body, tc.want)
		}
	}
	resp, err := http.Post(ts.srv.URL+"/api/search?q=x", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/search: %d, want 405", resp.StatusCode)
	}
}
