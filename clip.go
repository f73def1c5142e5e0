package agentstream

import "unicode/utf8"

// Clip returns s cut to at most max Unicode code points, never splitting one,
// and whether anything was cut. An invalid UTF-8 byte counts as one code
// point (it is written as U+FFFD when encoded).
func Clip(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// ClipBytes is Clip for a byte slice; it returns a new string.
func ClipBytes(b []byte, max int) (string, bool) {
	if len(b) <= max {
		return string(b), false
	}
	n, i := 0, 0
	for i < len(b) {
		if n == max {
			return string(b[:i]), true
		}
		_, w := utf8.DecodeRune(b[i:])
		i += w
		n++
	}
	return string(b), false
}

// CountChars returns the number of code points of s, as Clip counts them.
func CountChars(s string) int { return utf8.RuneCountInString(s) }
