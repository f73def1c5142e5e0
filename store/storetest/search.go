package storetest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// Searcher is a Store with full-text search over its events; the suite
// checks it when the store has it. Search finds every event committed
// before it began (see store.SearchQuery), whenever the store indexes it.
type Searcher interface {
	Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error)
}

// hitKey is what a search rule compares of a hit.
type hitKey struct {
	Session string
	Seq     int64
	Type    string
}

func searchRule(c *check) {
	st := c.h.Open(c.t)
	sr, ok := st.(Searcher)
	if !ok {
		c.t.Skip("the store has no Search")
	}
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	ev := func(id string, seq int64, min int, p agentstream.Payload) agentstream.Envelope {
		return agentstream.Envelope{Session: id, Seq: seq, TS: t0.Add(time.Duration(min) * time.Minute), Turn: 1, Harness: "h", Payload: p}
	}
	// s_old: claude-code, model m-old, in /w/proj/sub, succeeded, on day 0.
	old := []agentstream.Envelope{
		ev("s_old", 1, 0, &agentstream.SessionStarted{Harness: "claude-code", Model: "m-old", Cwd: "/w/proj/sub"}),
		ev("s_old", 2, 1, &agentstream.Message{Role: "user", Text: "Please fix the Parser; alpha"}),
		ev("s_old", 3, 2, &agentstream.Thinking{Text: "the quick brown fox thinks, omega"}),
		ev("s_old", 4, 3, &agentstream.ToolCall{CallID: "c1", Name: "Bash", Input: `{"command":"go test ./parser"}`, Summary: "go test ./parser", Category: "execute"}),
		ev("s_old", 5, 4, &agentstream.ToolResult{CallID: "c1", Output: "FAIL zanzibar_output.go:12\nalpha and omega", Name: "Bash"}),
		ev("s_old", 6, 5, &agentstream.SessionEnded{Status: "succeeded", Reason: "completion", Error: "nonindexed"}),
	}
	// s_new: codex, model m-new, in /w/projx, interrupted, a day later.
	day := 24 * 60
	newer := []agentstream.Envelope{
		ev("s_new", 1, day, &agentstream.SessionStarted{Harness: "codex", Model: "m-new", Cwd: "/w/projx"}),
		ev("s_new", 2, day+1, &agentstream.SessionTitle{Title: "Brown quick parsing"}),
		ev("s_new", 3, day+2, &agentstream.Message{Role: "assistant", Text: "parsers are done: ALPHA"}),
		ev("s_new", 4, day+3, &agentstream.Usage{Scope: agentstream.ScopeCall, Model: "nonindexed"}),
	}
	for _, s := range []struct {
		id, harness, cwd string
		start            time.Time
		envs             []agentstream.Envelope
	}{{"s_old", "claude-code", "/w/proj/sub", t0, old}, {"s_new", "codex", "/w/projx", t0.Add(24 * time.Hour), newer}} {
		w, err := st.Create(c.ctx, store.NewSession{ID: s.id, Harness: s.harness, Cwd: s.cwd, StartedAt: s.start})
		c.must(err, "Create")
		c.handleAll(w, s.envs)
		c.must(w.Close(c.ctx), "Close")
	}
	key := func(e agentstream.Envelope) hitKey { return hitKey{e.Session, e.Seq, e.Type()} }
	search := func(q store.SearchQuery) []store.SearchHit {
		c.t.Helper()
		hits, err := sr.Search(c.ctx, q)
		c.must(err, fmt.Sprintf("Search %+v", q))
		return hits
	}
	for _, tc := range []struct {
		name string
		q    store.SearchQuery
		want []hitKey
	}{
		{"a word only in a tool output", store.SearchQuery{Text: "zanzibar"}, []hitKey{key(old[4])}},
		{"without case", store.SearchQuery{Text: "ZANZIBAR"}, []hitKey{key(old[4])}},
		{"tool call input and summary", store.SearchQuery{Text: "test"}, []hitKey{key(old[3])}},
		{"thinking", store.SearchQuery{Text: "fox"}, []hitKey{key(old[2])}},
		{"title", store.SearchQuery{Text: "parsing"}, []hitKey{key(newer[1])}},
		{"every word, latest session first, latest event first", store.SearchQuery{Text: "alpha"}, []hitKey{key(newer[2]), key(old[4]), key(old[1])}},
		{"all words in one event", store.SearchQuery{Text: "alpha omega"}, []hitKey{key(old[4])}},
		{"a phrase in order", store.SearchQuery{Text: `"quick brown"`}, []hitKey{key(old[2])}},
		{"a phrase the other way", store.SearchQuery{Text: `"brown quick"`}, []hitKey{key(newer[1])}},
		{"a whole word is not a prefix", store.SearchQuery{Text: "pars"}, nil},
		{"a prefix", store.SearchQuery{Text: "pars*"}, []hitKey{key(newer[2]), key(newer[1]), key(old[3]), key(old[1])}},
		{"punctuation makes a phrase", store.SearchQuery{Text: "zanzibar_output.go"}, []hitKey{key(old[4])}},
		{"other fields and types are not indexed", store.SearchQuery{Text: "nonindexed"}, nil},
		{"harness", store.SearchQuery{Text: "alpha", Harness: "claude-code"}, []hitKey{key(old[4]), key(old[1])}},
		{"model", store.SearchQuery{Text: "alpha", Model: "m-new"}, []hitKey{key(newer[2])}},
		{"status", store.SearchQuery{Text: "alpha", Status: store.StatusSucceeded}, []hitKey{key(old[4]), key(old[1])}},
		{"project and under it, not its sibling", store.SearchQuery{Text: "alpha", Project: "/w/proj/"}, []hitKey{key(old[4]), key(old[1])}},
		{"project exactly", store.SearchQuery{Text: "alpha", Project: "/w/projx"}, []hitKey{key(newer[2])}},
		{"since and until, by event time", store.SearchQuery{Text: "alpha", Since: old[2].TS, Until: newer[2].TS}, []hitKey{key(old[4])}},
		{"limit", store.SearchQuery{Text: "alpha", Limit: 2}, []hitKey{key(newer[2]), key(old[4])}},
	} {
		var got []hitKey
		for _, h := range search(tc.q) {
			got = append(got, hitKey{h.Session, h.Seq, h.Type})
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			c.errorf("%s: hits of %+v (-want +got):\n%s", tc.name, tc.q, diff)
		}
	}
	// The snippet holds the event's text around the match, highlighted.
	hits := search(store.SearchQuery{Text: "zanzibar"})
	if len(hits) == 1 {
		h := hits[0]
		r := []rune(h.Snippet)
		if !strings.Contains(h.Snippet, "FAIL zanzibar_output.go:12 alpha") || len(h.Highlights) != 1 ||
			string(r[h.Highlights[0][0]:h.Highlights[0][1]]) != "zanzibar" {
			c.errorf("snippet %q, highlights %v: want the output on one line with zanzibar highlighted", h.Snippet, h.Highlights)
		}
		if h.Title != "" || h.Harness != "claude-code" || !h.TS.Equal(old[4].TS) {
			c.errorf("hit %+v: want the session's harness claude-code, no title, the event's time", h)
		}
	}
	for _, bad := range []string{"", "  ", `"unclosed`, "nul\x00", "fo*o", "*", "...", "\xff"} {
		if _, err := sr.Search(c.ctx, store.SearchQuery{Text: bad}); !is(err, store.ErrBadQuery) {
			c.errorf("Search %q: %v, want ErrBadQuery", bad, err)
		}
	}
	if _, err := sr.Search(c.ctx, store.SearchQuery{Text: "alpha", Status: "nope"}); !is(err, store.ErrBadQuery) {
		c.errorf("Search with status nope: %v, want ErrBadQuery", err)
	}
	// A re-normalized session is found by its new events only.
	if r, ok := st.(Replacer); ok {
		fresh := []agentstream.Envelope{old[0], ev("s_old", 2, 1, &agentstream.Message{Role: "user", Text: "renormalized words"})}
		c.must(r.ReplaceEvents(c.ctx, "s_old", fresh), "ReplaceEvents")
		if got := search(store.SearchQuery{Text: "zanzibar"}); len(got) != 0 {
			c.errorf("after ReplaceEvents, zanzibar found in %+v", got)
		}
		got := search(store.SearchQuery{Text: "renormalized"})
		if len(got) != 1 || got[0].Session != "s_old" || got[0].Seq != 2 {
			c.errorf("after ReplaceEvents, renormalized found in %+v, want s_old 2", got)
		}
	}
	// Another process finds what this one stored.
	other := c.h.Reopen(c.t, st)
	if os, ok := other.(Searcher); ok {
		got, err := os.Search(c.ctx, store.SearchQuery{Text: "parsing"})
		c.must(err, "Search from another process")
		if len(got) != 1 || got[0].Session != "s_new" {
			c.errorf("another process: %+v, want s_new's title", got)
		}
	}
	// A deleted session is found no more, nor is anything of it found in
	// a session created after it.
	if d, ok := st.(Deleter); ok {
		c.must(d.DeleteSession(c.ctx, "s_new"), "DeleteSession")
		w, err := st.Create(c.ctx, store.NewSession{ID: "s_after", Harness: "codex"})
		c.must(err, "Create after DeleteSession")
		c.handleAll(w, []agentstream.Envelope{
			ev("s_after", 1, day, &agentstream.SessionStarted{Harness: "codex"}),
			ev("s_after", 2, day, &agentstream.Message{Role: "user", Text: "nothing of the other"}),
			ev("s_after", 3, day, &agentstream.Message{Role: "assistant", Text: "nothing of the other"}),
		})
		c.must(w.Close(c.ctx), "Close")
		for _, word := range []string{"parsing", "parsers"} {
			if got := search(store.SearchQuery{Text: word}); len(got) != 0 {
				c.errorf("after DeleteSession of s_new, %s found in %+v", word, got)
			}
		}
	}
}

func searchReplay(c *check) {
	st := c.h.Open(c.t)
	if _, ok := st.(Searcher); !ok {
		c.t.Skip("the store has no Search")
	}
	text := func(id string, seq int64, s string) agentstream.Envelope {
		return agentstream.Envelope{Session: id, Seq: seq, Turn: 1, Payload: &agentstream.Message{Role: "assistant", Text: s}}
	}
	a, err := st.Create(c.ctx, store.NewSession{ID: "s_twice", Protocol: "jsonl"})
	c.must(err, "Create")
	c.handleAll(a, []agentstream.Envelope{text("s_twice", 1, "zulu")})
	c.must(a.Flush(c.ctx), "Flush")
	taker := c.h.Takeover(c.t, st)
	b, err := taker.Resume(c.ctx, "s_twice")
	c.must(err, "Resume by the taker")
	c.handleAll(b, []agentstream.Envelope{text("s_twice", 2, "yankee"), text("s_twice", 3, "xray")})
	c.must(b.Flush(c.ctx), "Flush by the taker")
	// The stale writer commits seq 2 again, the same, with a new seq 3
	// that the taker stored already, the same too.
	c.handleAll(a, []agentstream.Envelope{text("s_twice", 2, "yankee"), text("s_twice", 3, "xray")})
	c.must(a.Flush(c.ctx), "Flush of the same events by the stale writer")
	c.must(b.Close(c.ctx), "Close by the taker")
	_ = a.Close(c.ctx)
	// A store that can check itself (SQLite's integrity check covers its
	// full-text index) finds nothing wrong.
	if ic, ok := st.(interface{ IntegrityCheck(context.Context) error }); ok {
		c.must(ic.IntegrityCheck(c.ctx), "IntegrityCheck")
	}
	for _, s := range []Store{st, taker} {
		for w, seq := range map[string]int64{"zulu": 1, "yankee": 2, "xray": 3} {
			hits, err := s.(Searcher).Search(c.ctx, store.SearchQuery{Text: w})
			c.must(err, "Search")
			if len(hits) != 1 || hits[0].Seq != seq {
				c.errorf("%s: %+v, want seq %d once", w, hits, seq)
			}
		}
	}
}
