package jsonscan

import "unicode/utf8"

// AppendCompact appends the JSON value v to dst with insignificant
// whitespace removed and every other byte kept exactly: key order, escape
// sequences (\u003e stays \u003e), the characters < > &, and the spelling
// of numbers all survive. v may have surrounding whitespace. If v is not
// valid JSON, ok is false and dst is returned unchanged.
func AppendCompact(dst, v []byte) (out []byte, ok bool) {
	return appendCompact(dst, v, false)
}

// AppendSanitized is AppendCompact that also guarantees that the output is
// valid UTF-8 JSON acceptable to any strict parser. Inside strings, bytes
// that are not part of well-formed UTF-8 become U+FFFD, unpaired surrogate
// escapes become \ufffd, and raw control characters (below 0x20) are
// escaped as \b, \f, \n, \r, \t or \u00XX. DEL, U+2028 and U+2029 are kept
// as they are, and so is every other byte.
func AppendSanitized(dst, v []byte) (out []byte, ok bool) {
	return appendCompact(dst, v, true)
}

func appendCompact(dst, v []byte, sanitize bool) ([]byte, bool) {
	start := skipWS(v, 0)
	end, code := skip(v, start)
	if code != errNone || skipWS(v, end) != len(v) {
		return dst, false
	}
	// v[start:end] is valid, so a plain pass that copies strings whole and
	// drops whitespace between tokens is enough.
	for i := start; i < end; {
		c := v[i]
		switch {
		case c == '"':
			e := stringEnd(v, i)
			if sanitize {
				dst = appendSanitizedString(dst, v[i+1:e-1])
			} else {
				dst = append(dst, v[i:e]...)
			}
			i = e
		case isSpace(c):
			i++
		default:
			j := i + 1
			for j < end {
				if d := v[j]; d == '"' || isSpace(d) {
					break
				}
				j++
			}
			dst = append(dst, v[i:j]...)
			i = j
		}
	}
	return dst, true
}

// appendSanitizedString appends validated string content s, with quotes,
// repairing it as described for AppendSanitized.
func appendSanitizedString(dst, s []byte) []byte {
	dst = append(dst, '"')
	if sanitaryString(s) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := load64(s, i)
			m := x&msbs | ltMask(x, 0x20) | eqMask(x, '\\')
			if m == 0 {
				i += 8
				continue
			}
			i += firstByte(m)
		}
		c := s[i]
		switch {
		case c == '\\':
			n := escapeLen(s, i)
			if n == 6 {
				if r := hex4(s, i+2); r >= 0xD800 && r < 0xE000 {
					// An unpaired surrogate (pairs have length 12).
					dst = append(dst, s[start:i]...)
					dst = append(dst, `\ufffd`...)
					start = i + n
				}
			}
			i += n
		case c < 0x20:
			dst = append(dst, s[start:i]...)
			dst = appendControl(dst, c)
			i++
			start = i
		case c >= 0x80:
			if n := runeLen(s, i); n > 0 {
				i += n
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, replacement...)
			i++
			start = i
		default:
			i++
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// sanitaryString reports whether validated string content s can be copied
// as is by AppendSanitized: it is valid UTF-8, has no control characters
// and no \u escape that might be a surrogate (\uD800 to \uDFFF; this test
// is conservative, as the backslash may itself be escaped).
func sanitaryString(s []byte) bool {
	i := 0
	for ; i+9 <= len(s); i += 8 {
		x := load64(s, i)
		if ltMask(x, 0x20) != 0 {
			return false
		}
		y := load64(s, i+1) // the byte after each byte of x
		for m := exactEq(x, '\\') & exactEq(y, 'u'); m != 0; m &= m - 1 {
			if maySurrogate(s, i+firstByte(m)) {
				return false
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 || (s[i] == '\\' && i+1 < len(s) && s[i+1] == 'u' && maySurrogate(s, i)) {
			return false
		}
	}
	return utf8.Valid(s)
}

// maySurrogate reports whether the \u at s[j] is followed by the first two
// hex digits of a surrogate.
func maySurrogate(s []byte, j int) bool {
	return j+3 < len(s) && s[j+2]|0x20 == 'd' && hexVal[s[j+3]] >= 8
}

// appendControl appends the JSON escape for the control character c.
func appendControl(dst []byte, c byte) []byte {
	switch c {
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
}
