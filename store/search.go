package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// SearchText returns the text of an event that search indexes, or "" for
// an event that has none: a message's or a thinking's text, a tool call's
// summary and input, a tool result's output and a session's title. It is
// the one place that decides what can be found; a store indexes it when
// the event is appended or shortly after (see SearchQuery), and a schema
// migration indexes the events stored before. The text is what the store holds, secrets already masked.
func SearchText(e *agentstream.Envelope) string {
	switch p := e.Payload.(type) {
	case *agentstream.Message:
		return p.Text
	case *agentstream.Thinking:
		return p.Text
	case *agentstream.ToolCall:
		switch {
		case p.Summary == "" || p.Summary == p.Input:
			return p.Input
		case p.Input == "":
			return p.Summary
		}
		return p.Summary + "\n" + p.Input
	case *agentstream.ToolResult:
		return p.Output
	case *agentstream.SessionTitle:
		return p.Title
	}
	return ""
}

// BodySearchText returns SearchText of a stored event given by its body
// (AppendBody), or "" when the body does not parse. It reads only the
// members that SearchText uses, without decoding the envelope, so that an
// index fed from stored bodies (a migration, a store's indexer) costs
// little more than the strings it copies.
func BodySearchText(body []byte) string {
	obj := make([]byte, 0, len(body)+1)
	obj = append(append(obj, '{'), body...)
	typ, payload := bodyTypePayload(obj)
	if typ == nil || payload == nil {
		return ""
	}
	str := func(key string) string {
		v := jsonscan.Get(payload, key)
		if len(v) == 0 || v[0] != '"' {
			return ""
		}
		out, _, ok := jsonscan.StringAt(nil, v, 0)
		if !ok {
			return ""
		}
		return string(out)
	}
	switch string(typ) {
	case `"` + agentstream.TypeMessage + `"`, `"` + agentstream.TypeThinking + `"`:
		return str("text")
	case `"` + agentstream.TypeToolCall + `"`:
		return SearchText(&agentstream.Envelope{Payload: &agentstream.ToolCall{Input: str("input"), Summary: str("summary")}})
	case `"` + agentstream.TypeToolResult + `"`:
		return str("output")
	case `"` + agentstream.TypeSessionTitle + `"`:
		return str("title")
	}
	return ""
}

// bodyTypePayload returns the raw type and payload of an envelope object,
// nil when it is not one valid object.
func bodyTypePayload(obj []byte) (typ, payload []byte) {
	o, ok := jsonscan.Object(obj)
	if !ok {
		return nil, nil
	}
	for o.Next() {
		switch {
		case o.KeyIs("type"):
			typ = o.Value()
		case o.KeyIs("payload"):
			payload = o.Value()
		}
	}
	if o.Err() != nil {
		return nil, nil
	}
	return typ, payload
}

// ErrBadQuery is returned for a search query that cannot be read: empty,
// holding a NUL or invalid UTF-8, an unclosed quote, a '*' that does not
// end a word, or a term without a letter or digit.
var ErrBadQuery = errors.New("store: bad search query")

// MaxSearchTerms is the most terms a search query may hold.
const MaxSearchTerms = 16

// maxSearchQuery is the longest search query in bytes.
const maxSearchQuery = 1000

// SearchTerm is one term of a search query: a word, or a phrase of words
// that must follow each other, the last one a prefix when Prefix is set.
// Words are lower case and made of letters and digits only.
type SearchTerm struct {
	Words  []string
	Prefix bool
}

// ParseSearch reads a search query: terms separated by spaces, each a word,
// a "quoted phrase", or either followed by '*' (a prefix); every term must
// match. Words are runs of letters and digits, compared without case: any
// other character separates them, so that foo.go is the phrase "foo go".
// The error wraps ErrBadQuery and says what is wrong.
func ParseSearch(q string) ([]SearchTerm, error) {
	bad := func(format string, args ...any) ([]SearchTerm, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrBadQuery}, args...)...)
	}
	switch {
	case strings.TrimSpace(q) == "":
		return bad("empty query")
	case len(q) > maxSearchQuery:
		return bad("longer than %d bytes", maxSearchQuery)
	case strings.IndexByte(q, 0) >= 0:
		return bad("a NUL character")
	case !utf8.ValidString(q):
		return bad("invalid UTF-8")
	}
	var terms []SearchTerm
	for i := 0; i < len(q); {
		c := q[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		var raw string
		if c == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return bad("unclosed quote in %q", q[i:])
			}
			raw = q[i+1 : i+1+end]
			i += end + 2
		} else {
			j := i
			for j < len(q) && !strings.ContainsRune(" \t\n\r\"", rune(q[j])) {
				j++
			}
			raw = q[i:j]
			i = j
		}
		t := SearchTerm{}
		if i < len(q) && q[i] == '*' && c == '"' {
			t.Prefix = true
			i++
		} else if c != '"' && strings.HasSuffix(raw, "*") {
			t.Prefix = true
			raw = raw[:len(raw)-1]
		}
		if i < len(q) && !strings.ContainsRune(" \t\n\r", rune(q[i])) {
			return bad("a quote must start or end a term, in %q", q)
		}
		if strings.ContainsRune(raw, '*') && c != '"' {
			return bad("a * must end a word, in %q", raw)
		}
		t.Words = searchWords(raw)
		if len(t.Words) == 0 {
			return bad("nothing to search for in %q: a term needs a letter or digit", raw)
		}
		terms = append(terms, t)
		if len(terms) > MaxSearchTerms {
			return bad("more than %d terms", MaxSearchTerms)
		}
	}
	return terms, nil
}

// wordRune reports whether r belongs to a word: a letter, a digit or a
// private-use character (what SQLite's unicode61 tokenizer keeps).
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func searchWords(s string) []string {
	var words []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return !wordRune(r) }) {
		words = append(words, strings.ToLower(f))
	}
	return words
}

// span is a byte range of a text.
type span struct{ start, end int }

// tokens returns the words of text as byte ranges.
func tokens(text string) []span {
	var out []span
	start := -1
	for i, r := range text {
		if wordRune(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			out = append(out, span{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, span{start, len(text)})
	}
	return out
}

// matches returns the byte ranges of text where a term matches, in order.
func matches(text string, terms []SearchTerm) []span {
	toks := tokens(text)
	var out []span
	for i := range toks {
		for _, t := range terms {
			if i+len(t.Words) > len(toks) {
				continue
			}
			ok := true
			for k, w := range t.Words {
				tok := text[toks[i+k].start:toks[i+k].end]
				if k == len(t.Words)-1 && t.Prefix {
					ok = strings.HasPrefix(strings.ToLower(tok), w)
				} else {
					ok = strings.EqualFold(tok, w)
				}
				if !ok {
					break
				}
			}
			if ok {
				out = append(out, span{toks[i].start, toks[i+len(t.Words)-1].end})
				break
			}
		}
	}
	return out
}

// MatchesAll reports whether every term of a parsed query matches text, as
// a store's search decides.
func MatchesAll(text string, terms []SearchTerm) bool {
	for _, t := range terms {
		if len(matches(text, []SearchTerm{t})) == 0 {
			return false
		}
	}
	return true
}

// Snippet sizes, in bytes: the context kept before the first match, and
// the whole snippet.
const (
	snippetBefore = 60
	snippetSize   = 200
)

// Snippet returns the part of text around the first match of terms, on
// one line (line breaks and tabs become spaces), with "…" where text was
// cut, and the ranges of the matches in it as [start, end) offsets in
// Unicode code points. Without a match it is the start of text.
func Snippet(text string, terms []SearchTerm) (string, [][2]int) {
	ms := matches(text, terms)
	start := 0
	if len(ms) > 0 && ms[0].start > snippetBefore {
		start = ms[0].start - snippetBefore
		// Start at a word.
		for start < ms[0].start && wordRune(runeAt(text, start)) {
			start++
		}
		for start < len(text) && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	end := min(len(text), start+snippetSize)
	if len(ms) > 0 && ms[0].end > end {
		end = ms[0].end
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end--
	}
	var b strings.Builder
	lead := 0
	if start > 0 {
		b.WriteString("…")
		lead = 1
	}
	for _, r := range text[start:end] {
		if r == '\n' || r == '\r' || r == '\t' || r < ' ' {
			r = ' '
		}
		b.WriteRune(r)
	}
	if end < len(text) {
		b.WriteString("…")
	}
	var hl [][2]int
	for _, m := range ms {
		if m.start < start || m.end > end {
			continue
		}
		s := lead + utf8.RuneCountInString(text[start:m.start])
		hl = append(hl, [2]int{s, s + utf8.RuneCountInString(text[m.start:m.end])})
	}
	return b.String(), hl
}

func runeAt(s string, i int) rune {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// SearchQuery selects stored events whose SearchText matches a query. A
// search returns them latest first: the sessions the store created last
// first, and within a session the last events first.
//
// A search finds every event committed before it began, by any writer of
// the store. A store may index events after their commit rather than in it
// (SQLite's does, so that appending never waits for the full-text index);
// it then indexes what is pending before it answers, so that a caller
// never waits for the index nor misses an event: a search right after an
// import finds what was imported, paying for the indexing the import left.
type SearchQuery struct {
	// Text is the query (see ParseSearch).
	Text string
	// Harness, Model and Status, when set, must equal the session's.
	Harness, Model, Status string
	// Project, when set, keeps the sessions whose working directory is it
	// or under it.
	Project string
	// Since and Until, when set, keep the events of time in [Since, Until)
	// (a session's start time for an event without one).
	Since, Until time.Time
	// Limit is the most matches returned; zero means 50.
	Limit int
}

// DefaultSearchLimit is the number of matches a search returns when its
// query has no Limit.
const DefaultSearchLimit = 50

// SearchHit is one stored event that matched a search.
type SearchHit struct {
	Session string
	Seq     int64
	Type    string
	// TS is the event's time, zero when it has none.
	TS time.Time
	// Title and Harness are the session's, "" when unknown.
	Title, Harness string
	// Snippet and Highlights are what Snippet returns of the event's text.
	Snippet    string
	Highlights [][2]int
}

// MarshalJSON encodes the hit as the API serves it: session, seq, type,
// ts (null when unknown), title, harness, snippet and highlights (pairs of
// code point offsets into snippet, never HTML).
func (h SearchHit) MarshalJSON() ([]byte, error) {
	var ts *string
	if !h.TS.IsZero() {
		s := h.TS.UTC().Format(agentstream.TimeFormat)
		ts = &s
	}
	hl := h.Highlights
	if hl == nil {
		hl = [][2]int{}
	}
	return json.Marshal(struct {
		Session    string   `json:"session"`
		Seq        int64    `json:"seq"`
		Type       string   `json:"type"`
		TS         *string  `json:"ts"`
		Title      *string  `json:"title"`
		Harness    *string  `json:"harness"`
		Snippet    string   `json:"snippet"`
		Highlights [][2]int `json:"highlights"`
	}{h.Session, h.Seq, h.Type, ts, optStr(h.Title), optStr(h.Harness), h.Snippet, hl})
}

// Prepare checks a search query and returns its terms and its limit.
func (q *SearchQuery) Prepare() ([]SearchTerm, int, error) {
	terms, err := ParseSearch(q.Text)
	if err != nil {
		return nil, 0, err
	}
	if q.Status != "" && !ValidStatus(q.Status) {
		return nil, 0, fmt.Errorf("%w: unknown status %q", ErrBadQuery, q.Status)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	return terms, limit, nil
}

// ProjectDir returns the Project filter without its trailing slashes, as
// the stores compare it ("/" stays).
func (q *SearchQuery) ProjectDir() string {
	p := strings.TrimRight(q.Project, "/")
	if p == "" && q.Project != "" {
		return "/"
	}
	return p
}
