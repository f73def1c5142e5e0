package redact

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"slices"
	"sync"
)

// Kinds of secret a Match reports.
const (
	KindAWS          = "aws-access-key"
	KindGoogle       = "google-api-key"
	KindGitHub       = "github-token"
	KindGitLab       = "gitlab-token"
	KindSlack        = "slack-token"
	KindStripe       = "stripe-key"
	KindOpenAI       = "openai-key"
	KindAnthropic    = "anthropic-key"
	KindHuggingFace  = "huggingface-token"
	KindNPM          = "npm-token"
	KindPyPI         = "pypi-token"
	KindDigitalOcean = "digitalocean-token"
	KindShopify      = "shopify-token"
	KindAgentstream  = "agentstream-token"
	KindJWT          = "jwt"
	KindPrivateKey   = "private-key"
	KindAssignment   = "sensitive-name"
	KindURLPassword  = "url-password"
	// KindRule prefixes the kind of a match of a rule's pattern:
	// "rule:LABEL".
	KindRule = "rule:"
)

// Options configure a Redactor.
type Options struct {
	// Key is the key of the tags (HMAC-SHA256). Without one, masks carry no
	// tag.
	Key []byte
	// Rules add names, patterns and allowed values to the built-in ones.
	Rules Rules
}

// Redactor masks secrets in lines. It is immutable and safe for
// concurrent use.
type Redactor struct {
	key     []byte
	rules   Rules
	names   map[string]bool // the rules' names, normalized
	allow   map[string]bool
	hmacs   sync.Pool
	decoded sync.Pool
}

// New returns a Redactor.
func New(opts Options) *Redactor {
	r := &Redactor{key: slices.Clone(opts.Key), rules: opts.Rules, names: map[string]bool{}, allow: map[string]bool{}}
	for _, n := range opts.Rules.Names {
		var buf [maxName]byte
		if k := normName(buf[:0], []byte(n)); len(k) > 0 {
			r.names[string(k)] = true
		}
	}
	for _, a := range opts.Rules.Allow {
		r.allow[a] = true
	}
	r.hmacs.New = func() any { return hmac.New(sha256.New, r.key) }
	r.decoded.New = func() any { b := make([]byte, 0, 256); return &b }
	return r
}

// Match is one secret found in a line: b[Start:End] is masked, but for its
// first Keep bytes (a known shape's public prefix).
type Match struct {
	Kind       string
	Start, End int
	Keep       int
}

// span is a match as the scanners report it. ctx is where what the match
// depends on starts (the name of an assignment), open says that it touches
// the end of a cut line and may go on past it.
type span struct {
	kind       string
	start, end int
	keep       int
	ctx        int
	open       bool
}

// Line masks the secrets of one whole line in place and returns it: the
// same slice, the same length. A line that holds none is not written to.
func (r *Redactor) Line(b []byte) []byte {
	var arr [8]span
	js := isJSON(b)
	r.apply(b, r.scan(b, js, false, arr[:0]), js)
	return b
}

// Head masks the secrets of the first bytes of a longer line (the head a
// store keeps of an oversized line): what may be a secret cut at the end is
// masked too.
func (r *Redactor) Head(b []byte) []byte {
	var arr [8]span
	js := isJSON(b)
	r.apply(b, r.scan(b, js, true, arr[:0]), js)
	return b
}

// Find returns the secrets of a whole line without masking them, in order.
func (r *Redactor) Find(b []byte) []Match {
	spans := merge(r.scan(b, isJSON(b), false, nil))
	out := make([]Match, 0, len(spans))
	for _, s := range spans {
		out = append(out, Match{Kind: s.kind, Start: s.start, End: s.end, Keep: s.keep})
	}
	return out
}

// scan runs every detector over b; js says that b is (part of) a JSON
// line, cut that the line goes on after b.
func (r *Redactor) scan(b []byte, js, cut bool, out []span) []span {
	if len(b) == 0 {
		return out
	}
	out = r.scanRuns(b, cut, out)
	out = r.scanAssignments(b, js, cut, out)
	out = r.scanURLs(b, cut, out)
	out = r.scanPEM(b, js, cut, out)
	out = r.scanRules(b, cut, out)
	return out
}

// apply masks the spans of b.
func (r *Redactor) apply(b []byte, spans []span, js bool) {
	if len(spans) == 0 {
		return
	}
	for _, s := range merge(spans) {
		r.mask(b, s, js)
	}
}

// merge sorts spans by start and joins the overlapping ones, the first
// (a known shape before an assignment at the same place) giving the kind.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start < last.end {
			last.end = max(last.end, s.end)
			last.open = last.open || s.open
			continue
		}
		out = append(out, s)
	}
	return out
}

// isJSON reports whether a line is a JSON value, by its first byte.
func isJSON(b []byte) bool {
	i := 0
	if len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		i = 3
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ' ', '\t', '\r':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// escapeLen returns, for a backslash at b[i] that starts an escape, the
// length of the escape.
func escapeLen(b []byte, i int) int {
	if i+1 < len(b) && b[i+1] == 'u' {
		return min(6, len(b)-i)
	}
	return min(2, len(b)-i)
}

// escaped reports whether b[i] is the character of an escape: preceded by
// an odd number of backslashes.
func escaped(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// escapeStart returns where the escape that b[i] is part of starts, or -1
// when b[i] is not inside one (a backslash starting one is not inside).
func escapeStart(b []byte, i int) int {
	for j := i - 1; j >= 0 && j >= i-5; j-- {
		if b[j] == '\\' && !escaped(b, j) {
			if j+escapeLen(b, j) > i {
				return j
			}
			return -1
		}
	}
	return -1
}

// mask writes the mask of s into b.
func (r *Redactor) mask(b []byte, s span, js bool) {
	start, end := s.start+s.keep, s.end
	// Never start inside an escape or a UTF-8 sequence, never end inside
	// a UTF-8 sequence.
	if j := escapeStart(b, start); j >= 0 {
		start = j
	}
	for start > s.start && start < len(b) && b[start]&0xc0 == 0x80 {
		start--
	}
	for end < len(b) && b[end]&0xc0 == 0x80 {
		end++
	}
	if start >= end {
		return
	}
	n := 0
	for i := start; i < end; {
		if c := b[i]; c == '\\' {
			i += escapeLen(b, i)
			continue
		} else if c == '"' && js {
			i++
			continue
		}
		n++
		i++
	}
	if n == 0 {
		return
	}
	var tag [10]byte
	withTag := n >= len(tag) && len(r.key) > 0
	if withTag {
		r.tag(b[s.start:s.end], js, &tag)
	}
	k := 0
	for i := start; i < end; {
		if c := b[i]; c == '\\' {
			i += escapeLen(b, i)
			continue
		} else if c == '"' && js {
			i++
			continue
		}
		if withTag && k < len(tag) {
			b[i] = tag[k]
		} else {
			b[i] = '*'
		}
		k++
		i++
	}
}

// tag writes '*', eight hex digits of the secret's HMAC and '*'.
func (r *Redactor) tag(secret []byte, js bool, out *[10]byte) {
	h := r.hmacs.Get().(hash.Hash)
	h.Reset()
	if js && slices.Contains(secret, '\\') {
		p := r.decoded.Get().(*[]byte)
		*p = unescape((*p)[:0], secret)
		h.Write(*p)
		r.decoded.Put(p)
	} else {
		h.Write(secret)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	r.hmacs.Put(h)
	const hexDigits = "0123456789abcdef"
	out[0], out[9] = '*', '*'
	for i := range 4 {
		out[1+2*i] = hexDigits[sum[i]>>4]
		out[2+2*i] = hexDigits[sum[i]&15]
	}
}

// unescape appends the JSON string content s decoded (escapes the JSON way;
// a bad escape is kept as it is).
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			if i+4 < len(s) {
				if v, ok := hex4(s[i+1 : i+5]); ok {
					dst = appendRune(dst, v)
					i += 4
					continue
				}
			}
			dst = append(dst, '\\', 'u')
		default:
			dst = append(dst, s[i])
		}
	}
	return dst
}

func hex4(b []byte) (rune, bool) {
	var v rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func appendRune(dst []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(dst, byte(r))
	case r < 0x800:
		return append(dst, 0xc0|byte(r>>6), 0x80|byte(r&0x3f))
	default:
		return append(dst, 0xe0|byte(r>>12), 0x80|byte(r>>6&0x3f), 0x80|byte(r&0x3f))
	}
}

// masked reports whether the value b[s:e] holds a mask already: "**" or
// a tag, escapes aside.
func masked(b []byte, s, e int) bool {
	e = min(e, s+maxValue)
	run := 0 // the '*' and hex digits since the last '*'
	star := false
	for i := s; i < e; {
		if b[i] == '\\' {
			i += escapeLen(b, i)
			continue
		}
		c := b[i]
		i++
		switch {
		case c == '*':
			if star && run == 0 || star && run == 8 {
				return true
			}
			star, run = true, 0
		case star && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
			run++
		default:
			star, run = false, 0
		}
	}
	return star && run == 0 && e-s == 1
}
