package jsonscan

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// gen produces random JSON text, valid unless a caller mutates it.
type gen struct {
	r     *rand.Rand
	ctl   bool // allow raw control characters inside strings
	depth int
}

func (g *gen) ws(b []byte) []byte {
	if g.r.IntN(3) > 0 {
		return b
	}
	for n := g.r.IntN(3); n >= 0; n-- {
		b = append(b, " \t\n\r"[g.r.IntN(4)])
	}
	return b
}

var stringPieces = []string{
	"a", "b", "Z", "0", " ", "type", "é", "中", "😀", "\u2028", "\x7f", "<", "&",
	`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\u00E9`, `\u0000`, `\u001f`,
	`\ud83d\ude00`, `\uD83D\uDE00`, `\ud800`, `\udfff`, `\ude00\ud83d`, `\ud83d\u0041`, `\ufffd`,
	"\xff", "\xc0\xaf", "\xe2\x82", "\xed\xa0\x80", "\xf0\x9f\x98", "\xf4\x90\x80\x80",
}

func (g *gen) str(b []byte) []byte {
	b = append(b, '"')
	n := g.r.IntN(12)
	if g.r.IntN(10) == 0 {
		n += g.r.IntN(200)
	}
	for range n {
		if g.ctl && g.r.IntN(20) == 0 {
			b = append(b, byte(g.r.IntN(0x20)))
			continue
		}
		if g.r.IntN(3) == 0 {
			b = append(b, "abcdefghijklmnopqrstuvwxyz"[g.r.IntN(26)])
			continue
		}
		b = append(b, stringPieces[g.r.IntN(len(stringPieces))]...)
	}
	return append(b, '"')
}

func (g *gen) digits(b []byte, n int, leadingNonZero bool) []byte {
	for i := range n {
		d := g.r.IntN(10)
		if i == 0 && leadingNonZero {
			d = 1 + g.r.IntN(9)
		}
		b = append(b, byte('0'+d))
	}
	return b
}

func (g *gen) num(b []byte) []byte {
	if g.r.IntN(2) == 0 {
		b = append(b, '-')
	}
	if g.r.IntN(4) == 0 {
		b = append(b, '0')
	} else {
		b = g.digits(b, 1+g.r.IntN(21), true)
	}
	if g.r.IntN(3) == 0 {
		b = append(b, '.')
		b = g.digits(b, 1+g.r.IntN(20), false)
	}
	if g.r.IntN(3) == 0 {
		b = append(b, "eE"[g.r.IntN(2)])
		if k := g.r.IntN(3); k > 0 {
			b = append(b, "+-"[k-1])
		}
		b = g.digits(b, 1+g.r.IntN(3), false)
	}
	return b
}

func (g *gen) value(b []byte) []byte {
	k := g.r.IntN(9)
	if g.depth > 5 && k >= 7 {
		k = g.r.IntN(7)
	}
	switch k {
	case 0:
		return append(b, "null"...)
	case 1:
		return append(b, "true"...)
	case 2:
		return append(b, "false"...)
	case 3, 4:
		return g.num(b)
	case 5, 6:
		return g.str(b)
	case 7:
		g.depth++
		b = append(b, '[')
		for i := range g.r.IntN(5) {
			if i > 0 {
				b = append(b, ',')
			}
			b = g.value(g.ws(b))
			b = g.ws(b)
		}
		g.depth--
		return append(g.ws(b), ']')
	default:
		g.depth++
		b = append(b, '{')
		for i := range g.r.IntN(5) {
			if i > 0 {
				b = append(b, ',')
			}
			if g.r.IntN(4) == 0 {
				b = append(g.ws(b), `"dup"`...)
			} else {
				b = g.str(g.ws(b))
			}
			b = append(g.ws(b), ':')
			b = g.value(g.ws(b))
			b = g.ws(b)
		}
		g.depth--
		return append(g.ws(b), '}')
	}
}

func (g *gen) doc() []byte {
	return g.ws(g.value(g.ws(nil)))
}

var mutationBytes = []byte("{}[],:\"\\ \t\n0123456789.eE+-tfnulrsaxu\x00\x01\x7f\xff\xc3")

func (g *gen) mutate(b []byte) []byte {
	b = bytes.Clone(b)
	for n := 1 + g.r.IntN(3); n > 0; n-- {
		if len(b) == 0 {
			return append(b, mutationBytes[g.r.IntN(len(mutationBytes))])
		}
		i := g.r.IntN(len(b))
		switch g.r.IntN(5) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b = append(b[:i], append([]byte{mutationBytes[g.r.IntN(len(mutationBytes))]}, b[i:]...)...)
		case 2:
			b[i] = mutationBytes[g.r.IntN(len(mutationBytes))]
		case 3:
			b = b[:i]
		default:
			j := i + g.r.IntN(len(b)-i+1)
			b = append(b[:j:j], b[i:]...)
		}
	}
	return b
}

func hasControl(b []byte) bool {
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// checkAgainstStdlib compares every applicable function with encoding/json
// on input x.
func checkAgainstStdlib(t *testing.T, x []byte) {
	t.Helper()
	std := json.Valid(x)
	got := Valid(x)
	if !hasControl(x) && got != std {
		t.Fatalf("Valid(%q) = %v, json.Valid = %v", x, got, std)
	}
	if std && !got {
		t.Fatalf("Valid(%q) = false but json.Valid = true", x)
	}
	end, err := Skip(x, 0)
	if got && (err != nil || end != len(bytes.TrimRight(x, " \t\r\n"))) {
		t.Fatalf("Skip(%q) = %d, %v on valid input", x, end, err)
	}
	if !got && err == nil && skipWS(x, end) == len(x) {
		t.Fatalf("Skip(%q) = %d, nil on invalid input", x, end)
	}
	compact, ok := AppendCompact(nil, x)
	if ok != got {
		t.Fatalf("AppendCompact(%q) ok = %v, Valid = %v", x, ok, got)
	}
	san, sok := AppendSanitized(nil, x)
	if sok != got {
		t.Fatalf("AppendSanitized(%q) ok = %v, Valid = %v", x, sok, got)
	}
	if sok {
		checkSanitized(t, san)
	}
	if !std {
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, x); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compact, want.Bytes()) {
		t.Fatalf("AppendCompact(%q) = %q, json.Compact = %q", x, compact, want.Bytes())
	}
	switch KindOf(x) {
	case KindString:
		var s string
		if err := json.Unmarshal(x, &s); err != nil {
			t.Fatal(err)
		}
		checkStringValue(t, x, s)
	case KindNumber:
		checkNumber(t, TrimSpace(x))
	case KindObject:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(x, &m); err != nil {
			t.Fatal(err)
		}
		n := 0
		o, _ := Object(x)
		for o.Next() {
			n++
		}
		if o.Err() != nil || (n == 0) != (len(m) == 0) {
			t.Fatalf("iterating %q: %d members, err %v; encoding/json found %d", x, n, o.Err(), len(m))
		}
		for k, raw := range m {
			v := Get(x, k)
			a, _ := AppendCompact(nil, v)
			b, _ := AppendCompact(nil, raw)
			if !bytes.Equal(a, b) {
				t.Fatalf("Get(%q, %q) = %q, encoding/json has %q", x, k, v, raw)
			}
		}
	}
}

func checkStringValue(t *testing.T, x []byte, want string) {
	t.Helper()
	got, ok := String(x)
	if !ok || got != want {
		t.Fatalf("String(%q) = %q, %v; encoding/json gives %q", x, got, ok, want)
	}
	if !StringIs(x, want) {
		t.Fatalf("StringIs(%q, %q) = false", x, want)
	}
	if StringIs(x, want+"\x00") || (len(want) > 0 && StringIs(x, want[:len(want)-1])) {
		t.Fatalf("StringIs(%q) accepts a different string", x)
	}
	runes := []rune(want)
	for _, limit := range []int{-1, 0, 1, 2, len(runes) / 2, len(runes) - 1, len(runes), len(runes) + 1} {
		clip, total, trunc, ok := StringClip(x, limit)
		wantClip := string(runes[:min(max(limit, 0), len(runes))])
		if !ok || clip != wantClip || total != len(runes) || trunc != (total > max(limit, 0)) {
			t.Fatalf("StringClip(%q, %d) = %q, %d, %v, %v; want %q, %d", x, limit, clip, total, trunc, ok, wantClip, len(runes))
		}
	}
	// Quoting the decoded value gives it back.
	q := AppendQuote(nil, want)
	if back, ok := String(q); !ok || back != want || !json.Valid(q) {
		t.Fatalf("AppendQuote(%q) = %q does not round-trip", want, q)
	}
}

func checkNumber(t *testing.T, x []byte) {
	t.Helper()
	wantF, err := strconv.ParseFloat(string(x), 64)
	wantFOK := err == nil && !math.IsInf(wantF, 0)
	if !wantFOK {
		wantF = 0
	}
	f, ok := Float(x)
	if ok != wantFOK || f != wantF {
		t.Fatalf("Float(%q) = %v, %v; want %v, %v", x, f, ok, wantF, wantFOK)
	}
	var wantI int64
	var wantIOK bool
	var r big.Rat
	if _, ok := r.SetString(string(x)); ok {
		wantIOK = r.IsInt() && r.Num().IsInt64()
		if wantIOK {
			wantI = r.Num().Int64()
		}
	} else {
		// big.Rat refuses huge exponents; such a number is an integer
		// in range only if its mantissa is zero.
		mant, _, _ := strings.Cut(strings.ToLower(string(x)), "e")
		wantIOK = strings.Trim(mant, "-0.") == ""
	}
	i, ok := Int(x)
	if ok != wantIOK || i != wantI {
		t.Fatalf("Int(%q) = %v, %v; want %v, %v", x, i, ok, wantI, wantIOK)
	}
}

func TestPropertyDocuments(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for seed, ctl := range []bool{false, true} {
		g := &gen{r: rand.New(rand.NewPCG(1, uint64(seed))), ctl: ctl}
		for range n {
			doc := g.doc()
			if !Valid(doc) {
				t.Fatalf("generated document %q is not Valid", doc)
			}
			checkAgainstStdlib(t, doc)
			checkAgainstStdlib(t, g.mutate(doc))
		}
	}
}

func TestPropertyStrings(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(3, 4))}
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		s := g.str(nil)
		checkAgainstStdlib(t, s)
		checkAgainstStdlib(t, g.mutate(s))
	}
}

func TestPropertyNumbers(t *testing.T) {
	g := &gen{r: rand.New(rand.NewPCG(5, 6))}
	for range 20000 {
		checkAgainstStdlib(t, g.num(nil))
	}
}

// TestPropertyQuote checks AppendQuote against encoding/json on random
// byte strings.
func TestPropertyQuote(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "b", " ", "<", ">", "&", `"`, `\`, "\n", "\x00", "\x1f", "\x7f", "é", "😀", "\u2028",
		"\xff", "\xe2\x82", "\xed\xa0\x80", "\xc3"}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(40) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		q := AppendQuote(nil, s)
		if !json.Valid(q) || !utf8.Valid(q) {
			t.Fatalf("AppendQuote(%q) = %q is not valid", s, q)
		}
		var got, want string
		enc, _ := json.Marshal(s)
		_ = json.Unmarshal(enc, &want)
		if err := json.Unmarshal(q, &got); err != nil || got != want {
			t.Fatalf("AppendQuote(%q) = %q decodes to %q, want %q", s, q, got, want)
		}
		if qb := AppendQuoteBytes(nil, []byte(s)); !bytes.Equal(qb, q) {
			t.Fatalf("AppendQuoteBytes(%q) = %q, AppendQuote = %q", s, qb, q)
		}
	}
}
