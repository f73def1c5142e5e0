package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

const replacement = "\uFFFD"

// stringContent checks that v, without surrounding whitespace, is exactly
// one JSON string and returns the bytes between its quotes and whether they
// contain an escape.
func stringContent(v []byte) (content []byte, esc, ok bool) {
	v = TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return nil, false, false
	}
	end, tails, code := scanString(v, 0)
	if code != errNone || end != len(v) {
		return nil, false, false
	}
	return v[1 : end-1], tails > 0, true
}

// simpleEscape maps the character after a backslash to the byte the
// two-byte escape stands for, and every other byte to 0.
var simpleEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// decodeEscape decodes the escape sequence at the start of s (s[0] is a
// backslash of validated content). It returns the rune and the number of
// bytes consumed: a high surrogate followed by a low surrogate escape is
// combined, any other surrogate becomes U+FFFD.
func decodeEscape(s []byte) (rune, int) {
	if len(s) < 2 {
		return utf8.RuneError, len(s)
	}
	switch s[1] {
	case 'u':
		r := hex4(s, 2)
		switch {
		case r < 0:
			return utf8.RuneError, min(len(s), 6)
		case r < 0xD800 || r >= 0xE000:
			return r, 6
		case r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u':
			if r2 := hex4(s, 8); r2 >= 0xDC00 && r2 < 0xE000 {
				return 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00), 12
			}
		}
		return utf8.RuneError, 6
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	}
	return rune(s[1]), 2
}

// escapeLen returns the number of bytes decodeEscape would consume at s[i:].
func escapeLen(s []byte, i int) int {
	if i+1 >= len(s) {
		return len(s) - i
	}
	if s[i+1] != 'u' {
		return 2
	}
	if r := hex4(s, i+2); r >= 0xD800 && r < 0xDC00 && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
		if r2 := hex4(s, i+8); r2 >= 0xDC00 && r2 < 0xE000 {
			return 12
		}
	}
	return min(6, len(s)-i)
}

// appendUTF8 appends s, replacing each byte that does not belong to a
// well-formed UTF-8 sequence with U+FFFD.
func appendUTF8(dst, s []byte) []byte {
	if utf8.Valid(s) {
		return append(dst, s...)
	}
	start := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		if n := runeLen(s, i); n > 0 {
			i += n
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, replacement...)
		i++
		start = i
	}
	return append(dst, s[start:]...)
}

// AppendString appends the decoded value of the JSON string v (including its
// quotes; surrounding whitespace is allowed) to dst. Invalid UTF-8 bytes and
// unpaired surrogate escapes become U+FFFD, exactly as with encoding/json.
// Raw control characters are passed through. If v is not a valid JSON
// string, ok is false and dst is returned unchanged.
func AppendString(dst, v []byte) (out []byte, ok bool) {
	v = TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return dst, false
	}
	out, end := appendDecodedString(dst, v, 1)
	if end != len(v) {
		return dst, false
	}
	return out, true
}

// appendDecodedString decodes, validating it, the string content that
// starts at data[p] and appends it to dst. It returns the index just past
// the closing quote, or -1 if the string is malformed (dst's contents past
// its original length are then unspecified).
func appendDecodedString(dst, data []byte, p int) ([]byte, int) {
	out, q, closed := appendDecodedUntil(dst, data, p, len(data))
	if !closed {
		return out, -1
	}
	return out, q
}

// String returns the decoded value of the JSON string v; see AppendString.
func String(v []byte) (s string, ok bool) {
	v = TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if len(v) > 64 {
		// Strings without escapes, common for long texts, need a single
		// allocation and copy.
		end, tails, code := scanString(v, 0)
		if code != errNone || end != len(v) {
			return "", false
		}
		if content := v[1 : end-1]; tails == 0 && utf8.Valid(content) {
			return string(content), true
		}
	}
	var buf [128]byte
	out := buf[:0]
	if len(v) > len(buf) {
		out = make([]byte, 0, len(v))
	}
	out, end := appendDecodedString(out, v, 1)
	if end != len(v) {
		return "", false
	}
	return string(out), true
}

// StringIs reports whether v is a JSON string whose decoded value equals s.
// It does not allocate.
func StringIs(v []byte, s string) bool {
	content, esc, ok := stringContent(v)
	return ok && equalDecoded(content, esc, s)
}

// equalDecoded reports whether the validated string content raw decodes to
// s. esc tells whether raw contains a backslash.
func equalDecoded(raw []byte, esc bool, s string) bool {
	if !esc {
		if string(raw) == s {
			// Equal bytes decode to s only if they are valid UTF-8.
			return utf8.ValidString(s)
		}
		// Without escapes the decoding is never shorter than raw, and it
		// is longer only when raw has invalid UTF-8.
		if len(s) <= len(raw) || utf8.Valid(raw) {
			return false
		}
	}
	for len(raw) > 0 {
		if raw[0] == '\\' {
			r, n := decodeEscape(raw)
			raw = raw[n:]
			var buf [utf8.UTFMax]byte
			w := utf8.EncodeRune(buf[:], r)
			if len(s) < w || s[:w] != string(buf[:w]) {
				return false
			}
			s = s[w:]
			continue
		}
		run := raw
		if b := bytes.IndexByte(raw, '\\'); b >= 0 {
			run = raw[:b]
		}
		raw = raw[len(run):]
		if utf8.Valid(run) {
			if len(s) < len(run) || s[:len(run)] != string(run) {
				return false
			}
			s = s[len(run):]
			continue
		}
		for i := 0; i < len(run); {
			want := replacement
			n := runeLen(run, i)
			if n > 0 {
				want = string(run[i : i+n])
			} else {
				n = 1
			}
			if len(s) < len(want) || s[:len(want)] != want {
				return false
			}
			s = s[len(want):]
			i += n
		}
	}
	return len(s) == 0
}

// scanCount scans string content from data[p], which must be at the start
// of a code point or escape, to the closing quote. It validates escapes as
// scanString does and returns the index just past the closing quote and the
// number of code points the content from p decodes to.
func scanCount(data []byte, p int) (end, count int, code errCode) {
	n := len(data)
	q := -1 // position of a quote at or after p, once known
	for {
		// Find the next quote, backslash or non-ASCII byte: a few words at
		// a time first, then with IndexByte for long runs.
		found := false
		for k := 0; k < 4 && p+8 <= n; k++ {
			x := load64(data, p)
			if m := eqMask(x, '"') | eqMask(x, '\\') | x&msbs; m != 0 {
				f := firstByte(m)
				p += f
				count += f
				found = true
				break
			}
			p += 8
			count += 8
		}
		if !found {
			if q < p {
				j := bytes.IndexByte(data[p:], '"')
				if j < 0 {
					return n, count, errEOF
				}
				q = p + j
			}
			seg := data[p:q]
			j := bytes.IndexByte(seg, '\\')
			if j >= 0 {
				seg = seg[:j]
			}
			count += RuneCount(seg)
			if j < 0 {
				return q + 1, count, errNone
			}
			p += j
		}
		switch c := data[p]; {
		case c == '"':
			return p + 1, count, errNone
		case c == '\\':
			if p+1 >= n {
				return n, count, errEOF
			}
			count++
			switch escLen[data[p+1]] {
			case 2:
				p += 2
			case 6:
				for k := p + 2; k < p+6; k++ {
					if k >= n {
						return n, count, errEOF
					}
					if hexVal[data[k]] < 0 {
						return k, count, errHex
					}
				}
				// A surrogate pair is one code point. The second escape
				// is consumed here only if it is a well-formed low
				// surrogate; otherwise the next round deals with it.
				if r := hex4(data, p+2); r >= 0xD800 && r < 0xDC00 && p+12 <= n && data[p+6] == '\\' && data[p+7] == 'u' {
					if r2 := hex4(data, p+8); r2 >= 0xDC00 && r2 < 0xE000 {
						p += 6
					}
				}
				p += 6
			default:
				return p + 1, count, errEscape
			}
		default:
			// Non-ASCII: count the whole run of it here.
			for p < n && data[p] >= utf8.RuneSelf {
				if k := runeLen(data, p); k > 0 {
					p += k
				} else {
					p++
				}
				count++
			}
		}
	}
}

// RuneCount returns the number of code points of s, counting each byte
// outside a well-formed UTF-8 sequence as one, as utf8.RuneCount does; for
// valid UTF-8 it counts the bytes that start a code point, a word at a time.
func RuneCount(s []byte) int {
	if !utf8.Valid(s) {
		return utf8.RuneCount(s)
	}
	// Valid UTF-8: every byte but the continuation bytes starts a rune.
	return len(s) - continuationBytes(s)
}

// continuationBytes counts the bytes of s of the form 10xxxxxx.
func continuationBytes(s []byte) int {
	n := 0
	i := 0
	for ; i+32 <= len(s); i += 32 {
		a, b, c, d := load64(s, i), load64(s, i+8), load64(s, i+16), load64(s, i+24)
		if (a|b|c|d)&msbs == 0 {
			continue
		}
		n += bits.OnesCount64(a&^(a<<1)&msbs) + bits.OnesCount64(b&^(b<<1)&msbs) +
			bits.OnesCount64(c&^(c<<1)&msbs) + bits.OnesCount64(d&^(d<<1)&msbs)
	}
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		n += bits.OnesCount64(x &^ (x << 1) & msbs)
	}
	for ; i < len(s); i++ {
		if s[i]&0xC0 == 0x80 {
			n++
		}
	}
	return n
}

// plainRun returns the index of the first byte in data[j:lim] that is a
// quote, a backslash or non-ASCII, or lim if there is none.
func plainRun(data []byte, j, lim int) int {
	for j+8 <= lim {
		x := load64(data, j)
		if m := eqMask(x, '"') | eqMask(x, '\\') | x&msbs; m != 0 {
			return j + firstByte(m)
		}
		j += 8
	}
	for j < lim {
		if c := data[j]; c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return j
		}
		j++
	}
	return lim
}

// AppendStringClip decodes at most max code points of the JSON string v into
// dst, never splitting a code point or an escape sequence. total is the
// number of code points of the whole decoded string (counted without
// decoding the rest) and truncated reports total > max. A negative max is
// treated as 0. If v is not a valid JSON string, ok is false and dst is
// returned unchanged.
func AppendStringClip(dst, v []byte, max int) (out []byte, total int, truncated bool, ok bool) {
	v = TrimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return dst, 0, false, false
	}
	max = builtinMax(max, 0)
	out, end, total, code := clipString(dst, v, 0, max)
	if code != errNone || end != len(v) {
		return dst, 0, false, false
	}
	return out, total, total > max, true
}

// bulkMin is the code point budget under which clipString stops decoding
// in chunks and goes one code point at a time.
const bulkMin = 16

// clipString decodes the JSON string whose opening quote is data[i],
// appending its first max (>= 0) code points to dst, and counts the code
// points of the whole string without decoding the rest: the string is
// scanned once. It returns the index just past the closing quote; for a
// malformed string it returns the error's offset and code, and dst's
// contents past its original length are unspecified.
func clipString(dst, data []byte, i, max int) (out []byte, end, total int, code errCode) {
	orig := len(dst)
	p, n := i+1, 0
	// Decode in chunks while the budget is large: k input bytes never
	// decode to more than k code points, so decoding the next max-n bytes
	// cannot go past the budget.
	for max-n >= bulkMin {
		lim := len(data)
		if max-n < lim-p {
			lim = p + max - n
		}
		mark := len(dst)
		var q int
		var closed bool
		dst, q, closed = appendDecodedUntil(dst, data, p, lim)
		if q < 0 {
			return clipFail(dst, data, i)
		}
		if closed {
			s := dst[orig:]
			return dst, q, len(s) - continuationBytes(s), errNone
		}
		if q == p {
			break
		}
		s := dst[mark:]
		n += len(s) - continuationBytes(s)
		p = q
	}
	// One code point at a time up to the budget, validating as we go.
	for n < max {
		if p >= len(data) {
			return clipFail(dst, data, i)
		}
		switch c := data[p]; {
		case c == '"':
			return dst, p + 1, n, errNone
		case c == '\\':
			if p+1 >= len(data) {
				return clipFail(dst, data, i)
			}
			switch escLen[data[p+1]] {
			case 2:
			case 6:
				if hex4(data, p+2) < 0 {
					return clipFail(dst, data, i)
				}
			default:
				return clipFail(dst, data, i)
			}
			r, k := decodeEscape(data[p:])
			dst = utf8.AppendRune(dst, r)
			p += k
			n++
		case c < utf8.RuneSelf:
			lim := len(data)
			if max-n < lim-p {
				lim = p + max - n
			}
			j := plainRun(data, p+1, lim)
			dst = append(dst, data[p:j]...)
			n += j - p
			p = j
		default:
			if k := runeLen(data, p); k > 0 {
				dst = append(dst, data[p:p+k]...)
				p += k
			} else {
				dst = append(dst, replacement...)
				p++
			}
			n++
		}
	}
	// Count the rest without decoding it: scanString (whose start offset
	// only matters as p-1) validates it and sums up the escapes' tail
	// bytes, which gives the count directly for valid UTF-8.
	end, tails, code := scanString(data, p-1)
	if code != errNone {
		return dst, end, 0, code
	}
	rest := data[p : end-1]
	if utf8.Valid(rest) {
		total = n + len(rest) - continuationBytes(rest) - tails
	} else {
		_, c, _ := scanCount(data, p)
		total = n + c
	}
	return dst, end, total, errNone
}

// clipFail is clipString's result for a malformed string.
func clipFail(dst, data []byte, i int) ([]byte, int, int, errCode) {
	end, code := stringError(data, i)
	return dst, end, 0, code
}

// stringError returns where the string starting at data[i], which a
// decoder found malformed, goes wrong, as scanString says.
func stringError(data []byte, i int) (int, errCode) {
	end, _, code := scanString(data, i)
	if code == errNone {
		// Not reached: the decoders and scanString check the same rules.
		code = errEscape
	}
	return end, code
}

// appendDecodedUntil decodes the string content starting at data[p] as
// appendDecodedString does, but stops at lim (or at the first code point
// boundary before it) unless the closing quote comes first; an escape that
// starts before lim is decoded whole. It returns where it stopped (just past
// the quote when closed), or -1 if the string is malformed.
func appendDecodedUntil(dst, data []byte, p, lim int) (out []byte, q int, closed bool) {
	// Escapes are ASCII, so the content is valid UTF-8 exactly when the raw
	// bytes are: check them once, and decode again replacing bad bytes
	// only when they are not.
	orig := len(dst)
	out, q, closed = decodeUntil(dst, data, p, lim, false)
	if q < 0 {
		return out, q, closed
	}
	end := q
	if closed {
		end--
	}
	if utf8.Valid(data[p:end]) {
		return out, q, closed
	}
	return decodeUntil(out[:orig], data, p, lim, true)
}

// decodeUntil is appendDecodedUntil, replacing invalid UTF-8 only when
// check is set.
//
// The output is written at dst[w:], with room made as it goes: without
// check, text between escapes is stored a word at a time, so that the short
// runs between dense escapes, as in source code, cost one 8-byte store each
// rather than an append. Long runs go to IndexByte and copy.
func decodeUntil(dst, data []byte, p, lim int, check bool) (out []byte, q int, closed bool) {
	n := len(data)
	w := len(dst)
	dst = dst[:cap(dst)]
	quote := -1 // the first quote at or after p and before lim, or lim
	clean := 0  // words without a quote or backslash in a row
	for p < lim {
		start, j := p, p
		found := false
		for clean < 4 && j+8 <= lim {
			x := load64(data, j)
			m := eqMask(x, '"') | eqMask(x, '\\')
			if !check {
				at := w + j - start
				dst = room(dst, at, 8)
				binary.LittleEndian.PutUint64(dst[at:], x)
			}
			if m != 0 {
				j += firstByte(m)
				found = true
				break
			}
			j += 8
			clean++
		}
		if !check {
			// The words stored hold data[start:j].
			w += j - start
			start = j
		}
		if found {
			clean = 0
		} else {
			clean = 0
			if quote < j {
				quote = lim
				if k := bytes.IndexByte(data[j:lim], '"'); k >= 0 {
					quote = j + k
				}
			}
			if k := bytes.IndexByte(data[j:quote], '\\'); k >= 0 {
				j += k
			} else {
				j = quote
			}
		}
		if j >= lim {
			// No quote or backslash before lim: stop at a byte that cannot
			// continue a code point, so that no UTF-8 sequence is cut. p is
			// such a byte, and a run of four continuation bytes ending at
			// lim leaves no sequence across it.
			c := lim
			for k := 0; k < 3 && c > p && c < n && data[c]&0xC0 == 0x80; k++ {
				c--
			}
			if c < n && data[c]&0xC0 == 0x80 {
				c = lim
			}
			if c < start {
				w -= start - c // stored past the cut
			} else {
				dst, w = appendAt(dst, w, data[start:c], check)
			}
			return dst[:w], c, false
		}
		if j > start {
			dst, w = appendAt(dst, w, data[start:j], check)
		}
		if data[j] == '"' {
			return dst[:w], j + 1, true
		}
		if j+1 >= n {
			return dst[:w], -1, false
		}
		dst = room(dst, w, utf8.UTFMax)
		if c := simpleEscape[data[j+1]]; c != 0 {
			dst[w] = c
			w++
			p = j + 2
			continue
		}
		if data[j+1] != 'u' || hex4(data, j+2) < 0 {
			return dst[:w], -1, false
		}
		r, k := decodeEscape(data[j:])
		w += utf8.EncodeRune(dst[w:], r)
		p = j + k
	}
	return dst[:w], p, false
}

// room returns dst, grown if need be so that dst[w:w+k] exists, resliced
// to its capacity.
func room(dst []byte, w, k int) []byte {
	if w+k <= len(dst) {
		return dst
	}
	dst = slices.Grow(dst[:w], k)
	return dst[:cap(dst)]
}

// appendAt writes s at dst[w:], with invalid UTF-8 replaced when check is
// set, and returns dst (grown if need be) and the new end.
func appendAt(dst []byte, w int, s []byte, check bool) ([]byte, int) {
	if len(s) == 0 {
		return dst, w
	}
	if check {
		out := appendUTF8(dst[:w], s)
		return out[:cap(out)], len(out)
	}
	dst = room(dst, w, len(s))
	return dst, w + copy(dst[w:], s)
}

// builtinMax is the max builtin, which AppendStringClip's parameter shadows.
func builtinMax(a, b int) int { return max(a, b) }

// StringClip is AppendStringClip returning a string.
func StringClip(v []byte, max int) (s string, total int, truncated bool, ok bool) {
	var buf [256]byte
	out := buf[:0]
	// At most 4 bytes per code point, and usually no more than len(v).
	if size := len(v); size > len(buf) {
		if max < size/utf8.UTFMax {
			size = builtinMax(max, 0) * utf8.UTFMax
		}
		if size > len(buf) {
			out = make([]byte, 0, size)
		}
	}
	out, total, truncated, ok = AppendStringClip(out, v, max)
	if !ok {
		return "", 0, false, false
	}
	return string(out), total, truncated, true
}
