package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

func TestParseSearch(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []store.SearchTerm
	}{
		{"Parser", []store.SearchTerm{{Words: []string{"parser"}}}},
		{"go test", []store.SearchTerm{{Words: []string{"go"}}, {Words: []string{"test"}}}},
		{`"Go test" pars*`, []store.SearchTerm{{Words: []string{"go", "test"}}, {Words: []string{"pars"}, Prefix: true}}},
		{`"quick brown"*`, []store.SearchTerm{{Words: []string{"quick", "brown"}, Prefix: true}}},
		{"foo.go", []store.SearchTerm{{Words: []string{"foo", "go"}}}},
		{"  été\t", []store.SearchTerm{{Words: []string{"été"}}}},
	} {
		got, err := store.ParseSearch(tc.q)
		if err != nil {
			t.Errorf("ParseSearch(%q): %v", tc.q, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseSearch(%q) (-want +got):\n%s", tc.q, diff)
		}
	}
	for _, q := range []string{"", " ", "\x00", "a\xffb", `"open`, `a"b"`, "fo*o", "*", "-- ..", strings.Repeat("a ", 17), strings.Repeat("a", 1001)} {
		if _, err := store.ParseSearch(q); !errors.Is(err, store.ErrBadQuery) {
			t.Errorf("ParseSearch(%q): %v, want ErrBadQuery", q, err)
		}
	}
}

func TestSnippet(t *testing.T) {
	terms, _ := store.ParseSearch(`"brown fox" jump*`)
	// The first match near the start: the whole text, on one line.
	text := "the quick\nBrown  fox jumps over the fox"
	snip, hl := store.Snippet(text, terms)
	if want := "the quick Brown  fox jumps over the fox"; snip != want {
		t.Errorf("snippet %q, want %q", snip, want)
	}
	r := []rune(snip)
	var got []string
	for _, h := range hl {
		got = append(got, string(r[h[0]:h[1]]))
	}
	if diff := cmp.Diff([]string{"Brown  fox", "jumps"}, got); diff != "" {
		t.Errorf("highlights (-want +got):\n%s", diff)
	}
	// A match far in: cut before it at a word, with an ellipsis, offsets in
	// code points past multi-byte characters.
	long := strings.Repeat("é ", 100) + "brown fox" + strings.Repeat(" x", 200)
	snip, hl = store.Snippet(long, terms)
	r = []rune(snip)
	if !strings.HasPrefix(snip, "…") || !strings.HasSuffix(snip, "…") || len(hl) != 1 || string(r[hl[0][0]:hl[0][1]]) != "brown fox" {
		t.Errorf("snippet %q highlights %v: want a cut around brown fox", snip, hl)
	}
	if len(snip) > 260 {
		t.Errorf("snippet of %d bytes", len(snip))
	}
	// A word inside another is not a match.
	snip, hl = store.Snippet("brownfox and brown foxes", terms)
	if len(hl) != 0 {
		t.Errorf("snippet %q highlights %v, want none", snip, hl)
	}
}

// TestBodySearchText reads the search text of stored bodies as SearchText
// reads it of their envelopes.
func TestBodySearchText(t *testing.T) {
	for _, p := range []agentstream.Payload{
		&agentstream.Message{Role: "user", Text: "fix the \"parser\"\n\ttab é \u2028 <b>"},
		&agentstream.Thinking{Text: "hmm \\ back\\slash"},
		&agentstream.ToolCall{CallID: "c", Name: "Bash", Input: `{"command":"go test"}`, Summary: "go test"},
		&agentstream.ToolCall{CallID: "c", Name: "Bash", Input: "same", Summary: "same"},
		&agentstream.ToolCall{CallID: "c", Name: "Bash", Summary: "only a summary"},
		&agentstream.ToolCall{CallID: "c", Name: "Bash", Input: "only an input"},
		&agentstream.ToolResult{CallID: "c", Output: "FAIL x.go:12\r\n\x01ctl"},
		&agentstream.ToolResult{CallID: "c"},
		&agentstream.SessionTitle{Title: "A title"},
		&agentstream.Usage{Scope: agentstream.ScopeCall, Model: "not indexed"},
		&agentstream.SessionEnded{Status: "failed", Error: "not indexed"},
	} {
		e := agentstream.Envelope{Session: "s", Seq: 3, Turn: 1, Harness: "h", Payload: p, Source: &agentstream.Source{Stream: "stdout", Line: 2}}
		want := store.SearchText(&e)
		if got := store.BodySearchText(store.AppendBody(nil, &e)); got != want {
			t.Errorf("%s: BodySearchText %q, SearchText %q", e.Type(), got, want)
		}
	}
	for _, bad := range []string{"", `"harness":null,"type":"message","payload":{"text":"x"`, `"type":"message","payload":{"text":1}}`} {
		if got := store.BodySearchText([]byte(bad)); got != "" {
			t.Errorf("BodySearchText(%q) = %q, want empty", bad, got)
		}
	}
}
