package jsonscan

// AppendQuote appends s to dst as a JSON string literal. It escapes the
// quote, the backslash and control characters (\n \r \t \b \f, others as
// \u00XX), replaces bytes that are not part of well-formed UTF-8 with
// U+FFFD, and leaves everything else as it is: < > & are not HTML-escaped
// and DEL, U+2028 and U+2029 are written raw.
func AppendQuote(dst []byte, s string) []byte {
	return appendQuote(dst, s)
}

// AppendQuoteBytes is AppendQuote for a byte slice.
func AppendQuoteBytes(dst []byte, s []byte) []byte {
	return appendQuote(dst, s)
}

func appendQuote[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			x := load64g(s, i)
			m := x&msbs | ltMask(x, 0x20) | eqMask(x, '\\') | eqMask(x, '"')
			if m == 0 {
				i += 8
				continue
			}
			i += firstByte(m)
		}
		c := s[i]
		switch {
		case c >= 0x80:
			if n := runeLen(s, i); n > 0 {
				i += n
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, replacement...)
			i++
			start = i
		case c < 0x20:
			dst = append(dst, s[start:i]...)
			dst = appendControl(dst, c)
			i++
			start = i
		case c == '"' || c == '\\':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', c)
			i++
			start = i
		default:
			i++
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
