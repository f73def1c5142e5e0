package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream/console"
	"github.com/agentstream/agentstream/store"
)

const searchDoc = `Finds the stored events whose text holds every word of QUERY: message
and thinking text, tool inputs and outputs, and session titles, across all
sessions, latest first. Words match whole and without case;
"quoted words" must follow each other; a word ending in * is a prefix
(pars* finds parser). Quote the query for the shell: agentstream search
'"go test" pars*'.

Prints one match a line: session, seq, type and a snippet of the text
(matches in bold on a terminal), tab-separated; --json prints a JSON
array of matches (the shape GET /api/search serves). Open a match with
agentstream show SESSION, or in serve's timeline at
/session.html?id=SESSION#seq-SEQ.`

// A searcher is a store with full-text search (both stores have it).
type searcher interface {
	Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error)
}

func cmdSearch(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "search", "[--json] [--harness H] [--model M] [--project DIR] [--status S] [--since T] [--until T] [--limit N] QUERY", searchDoc)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	harness := fs.String("harness", "", "only sessions of this harness")
	model := fs.String("model", "", "only sessions of this model")
	project := fs.String("project", "", "only sessions run in this working directory or under it")
	status := fs.String("status", "", "only sessions with this status: running, succeeded, failed, cancelled, interrupted")
	since := fs.String("since", "", "only events since: a duration (90m, 36h, 7d), an RFC 3339 time or a date")
	until := fs.String("until", "", "only events before: a duration ago, an RFC 3339 time or a date")
	limit := fs.Int("limit", 50, "at most this many matches (1 to 10000)")
	color := fs.String("color", "auto", "bold matches: auto (on a terminal, without NO_COLOR), always or never")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	fail := func(code int, err any) int {
		fmt.Fprintln(e.stderr, "agentstream search:", err)
		return code
	}
	if len(pos) == 0 {
		return fail(exitUsage, "no query: give the words to search for")
	}
	if *status != "" && !store.ValidStatus(*status) {
		return fail(exitUsage, fmt.Sprintf("bad --status %q: want running, succeeded, failed, cancelled or interrupted", *status))
	}
	if *limit < 1 || *limit > 10000 {
		return fail(exitUsage, fmt.Sprintf("bad --limit %d: want 1 to 10000", *limit))
	}
	if *color != "auto" && *color != "always" && *color != "never" {
		return fail(exitUsage, fmt.Sprintf("--color %q: want auto, always or never", *color))
	}
	q := store.SearchQuery{Text: strings.Join(pos, " "), Harness: *harness, Model: *model, Project: *project,
		Status: *status, Limit: *limit}
	if _, err := store.ParseSearch(q.Text); err != nil {
		return fail(exitUsage, err)
	}
	now := time.Now()
	var err error
	if q.Since, err = parseSince(*since, now); err != nil {
		return fail(exitUsage, fmt.Errorf("--since: %w", err))
	}
	if q.Until, err = parseSince(*until, now); err != nil {
		return fail(exitUsage, fmt.Errorf("--until: %w", err))
	}
	st, _, err := openStore(ctx, e, *db)
	if err != nil {
		return fail(exitError, err)
	}
	defer st.Close()
	sr, ok := st.(searcher)
	if !ok {
		return fail(exitError, "this store has no search")
	}
	hits, err := sr.Search(ctx, q)
	if errors.Is(err, store.ErrBadQuery) {
		return fail(exitUsage, err)
	}
	if err != nil {
		return fail(exitError, err)
	}
	if *asJSON {
		b, _ := json.MarshalIndent(hits, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	bold := console.UseColor(*color, e.stdout, e.getenv)
	var b strings.Builder
	for _, h := range hits {
		b.Reset()
		b.WriteString(h.Session)
		b.WriteByte('\t')
		b.WriteString(strconv.FormatInt(h.Seq, 10))
		b.WriteByte('\t')
		b.WriteString(h.Type)
		b.WriteByte('\t')
		b.WriteString(highlighted(h.Snippet, h.Highlights, bold))
		fmt.Fprintln(e.stdout, b.String())
	}
	if len(hits) == 0 {
		fmt.Fprintln(e.stderr, "agentstream search: no matches")
	}
	return exitOK
}

// highlighted returns a snippet with its highlights in bold when bold is
// set; the snippet's own control characters are already spaces.
func highlighted(snippet string, hl [][2]int, bold bool) string {
	if !bold || len(hl) == 0 {
		return snippet
	}
	r := []rune(snippet)
	var b strings.Builder
	at := 0
	for _, h := range hl {
		if h[0] < at || h[1] > len(r) || h[0] > h[1] {
			continue
		}
		b.WriteString(string(r[at:h[0]]))
		b.WriteString("\x1b[1m")
		b.WriteString(string(r[h[0]:h[1]]))
		b.WriteString("\x1b[22m")
		at = h[1]
	}
	b.WriteString(string(r[at:]))
	return b.String()
}
