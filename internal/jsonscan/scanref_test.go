package jsonscan

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// refScanString is a byte-at-a-time reference for scanString: it returns
// the end, the tail count and whether the string is well formed.
func refScanString(data []byte, i int) (end, tails int, ok bool) {
	for p := i + 1; p < len(data); {
		switch data[p] {
		case '"':
			return p + 1, tails, true
		case '\\':
			if p+1 >= len(data) {
				return 0, 0, false
			}
			switch data[p+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				tails++
				p += 2
			case 'u':
				if hex4(data, p+2) < 0 {
					return 0, 0, false
				}
				tails += 5
				if r := hex4(data, p+2); r >= 0xD800 && r < 0xDC00 && p+12 <= len(data) && data[p+6] == '\\' && data[p+7] == 'u' {
					if r2 := hex4(data, p+8); r2 >= 0xDC00 && r2 < 0xE000 {
						tails++
					}
				}
				p += 6
			default:
				return 0, 0, false
			}
		default:
			p++
		}
	}
	return 0, 0, false
}

// refDecode decodes validated content byte by byte, as encoding/json does.
func refDecode(s []byte) []rune {
	var out []rune
	for i := 0; i < len(s); {
		if s[i] == '\\' {
			r, n := decodeEscape(s[i:])
			out = append(out, r)
			i += n
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		out = append(out, r)
		i += n
	}
	return out
}

func TestScanStringReference(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pieces := []string{`\n`, `\t`, `\"`, `\\`, `\\\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\ud83d\u0041`,
		"é", "中", "😀", "\xff", "\xe2\x82", "\x01", "a", "ab", "abcdefg", "abcdefghijklmnopqrstuvwxyz0123456789"}
	bad := []string{`\x`, `\u12`, `\uZZZZ`, `\`, `\'`}
	for iter := 0; iter < 30000; iter++ {
		// Density: how often a piece is an escape rather than plain text.
		var b []byte
		b = append(b, make([]byte, r.IntN(3))...) // vary the alignment
		for k := range b {
			b[k] = ' '
		}
		start := len(b)
		b = append(b, '"')
		n := r.IntN(80)
		if r.IntN(8) == 0 {
			n += r.IntN(400)
		}
		plainBias := r.IntN(10)
		for range n {
			if r.IntN(10) < plainBias {
				b = append(b, "0123456789abcdefghij"[:1+r.IntN(20)]...)
			} else {
				b = append(b, pieces[r.IntN(len(pieces))]...)
			}
		}
		if r.IntN(5) == 0 {
			// Corrupt somewhere.
			pos := start + 1 + r.IntN(len(b)-start)
			ins := bad[r.IntN(len(bad))]
			b = append(b[:pos], append([]byte(ins), b[pos:]...)...)
		}
		if r.IntN(10) > 0 {
			b = append(b, '"')
		}
		if r.IntN(3) == 0 {
			b = append(b, `,"x"`...)
		}
		wantEnd, wantTails, wantOK := refScanString(b, start)
		end, tails, code := scanString(b, start)
		if (code == errNone) != wantOK || (wantOK && (end != wantEnd || tails != wantTails)) {
			t.Fatalf("scanString(%q) = %d, %d, %d; reference %d, %d, %v", b[start:], end, tails, code, wantEnd, wantTails, wantOK)
		}
		if !wantOK {
			if end < start || end > len(b) {
				t.Fatalf("scanString(%q) error offset %d out of range", b[start:], end)
			}
			continue
		}
		v := b[start:wantEnd]
		want := refDecode(v[1 : len(v)-1])
		got, ok := String(v)
		if !ok || got != string(want) {
			t.Fatalf("String(%q) = %q, %v; want %q", v, got, ok, string(want))
		}
		limit := r.IntN(len(want) + 2)
		clip, total, trunc, ok := StringClip(v, limit)
		if !ok || clip != string(want[:min(limit, len(want))]) || total != len(want) || trunc != (limit < len(want)) {
			t.Fatalf("StringClip(%q, %d) = %q, %d, %v, %v; want %d code points", v, limit, clip, total, trunc, ok, len(want))
		}
		if e, c, code := scanCount(v, 1); code != errNone || e != len(v) || c != len(want) {
			t.Fatalf("scanCount(%q) = %d, %d, %d; want %d, %d", v, e, c, code, len(v), len(want))
		}
	}
}
