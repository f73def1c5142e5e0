package jsonscan

import (
	"bytes"
	"strconv"
)

// Kind is the kind of a JSON value, read from its first byte.
type Kind uint8

// The kinds of JSON values. KindInvalid is returned for empty input and for
// a first byte that cannot start a JSON value. (The names carry a Kind
// prefix because Object, Array and String are functions of this package.)
const (
	KindInvalid Kind = iota
	KindNull
	KindFalse
	KindTrue
	KindNumber
	KindString
	KindObject
	KindArray
)

var kindNames = [...]string{"invalid", "null", "false", "true", "number", "string", "object", "array"}

// String returns the lower-case name of k ("object", "number", ...).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// KindOf returns the kind of the raw value v, judged by its first
// non-whitespace byte. It does not validate the rest of v.
func KindOf(v []byte) Kind {
	i := skipWS(v, 0)
	if i >= len(v) {
		return KindInvalid
	}
	switch c := v[i]; c {
	case 'n':
		return KindNull
	case 'f':
		return KindFalse
	case 't':
		return KindTrue
	case '"':
		return KindString
	case '{':
		return KindObject
	case '[':
		return KindArray
	default:
		if c == '-' || c-'0' < 10 {
			return KindNumber
		}
	}
	return KindInvalid
}

// errCode identifies a syntax error without allocating; it is turned into a
// *SyntaxError only at the API boundary.
type errCode uint8

const (
	errNone errCode = iota
	errEOF
	errValue
	errKey
	errColon
	errAfterMember
	errAfterElem
	errEscape
	errHex
	errNumber
	errLiteral
	errOffset
)

var errContext = [...]string{
	errValue:       "looking for beginning of value",
	errKey:         "looking for beginning of object key string",
	errColon:       "after object key",
	errAfterMember: "after object key:value pair",
	errAfterElem:   "after array element",
	errEscape:      "in string escape code",
	errHex:         `in \u hexadecimal character escape`,
	errNumber:      "in numeric literal",
	errLiteral:     "in literal true, false or null",
}

// SyntaxError describes malformed JSON.
type SyntaxError struct {
	Offset int // byte offset of the input at which the problem was detected
	msg    string
}

// Error returns a lower-case description prefixed with "jsonscan: ".
func (e *SyntaxError) Error() string {
	return "jsonscan: " + e.msg + " at offset " + strconv.Itoa(e.Offset)
}

func newSyntaxError(data []byte, off int, code errCode) *SyntaxError {
	var msg string
	switch {
	case code == errEOF:
		msg = "unexpected end of input"
	case code == errOffset:
		msg = "start offset out of range"
	case off >= 0 && off < len(data) && int(code) < len(errContext):
		msg = "invalid character " + quoteChar(data[off]) + " " + errContext[code]
	default:
		msg = "invalid input"
	}
	return &SyntaxError{Offset: off, msg: msg}
}

// quoteChar formats a byte for an error message.
func quoteChar(c byte) string {
	switch {
	case c == '\'':
		return `'\''`
	case c == '"':
		return `'"'`
	case c >= 0x20 && c < 0x7f:
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return string([]byte{'\'', '\\', 'x', hex[c>>4], hex[c&15], '\''})
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// skipWS returns the index of the first non-whitespace byte at or after i.
func skipWS(data []byte, i int) int {
	for i < len(data) {
		if c := data[i]; c > ' ' || !isSpace(c) {
			break
		}
		i++
	}
	return i
}

// TrimSpace trims JSON whitespace (space, \t, \r, \n) from both ends of b.
func TrimSpace(b []byte) []byte {
	i := skipWS(b, 0)
	j := len(b)
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

// Skip returns the index just past the JSON value that starts at data[i:]
// (after skipping leading whitespace), validating the value. Bytes after the
// value are not examined. For invalid input err is a *SyntaxError and end is
// the offset at which the problem was detected.
func Skip(data []byte, i int) (end int, err error) {
	if i < 0 || i > len(data) {
		off := max(0, min(i, len(data)))
		return off, newSyntaxError(data, off, errOffset)
	}
	end, code := skip(data, i)
	if code != errNone {
		return end, newSyntaxError(data, end, code)
	}
	return end, nil
}

// Valid reports whether data is exactly one JSON value surrounded by
// optional whitespace.
func Valid(data []byte) bool {
	end, code := skip(data, 0)
	return code == errNone && skipWS(data, end) == len(data)
}

// skip scans the value starting at data[i:] after whitespace. It returns the
// index just past it, or the offset of the error and its code. Nesting is
// tracked in a bit stack (1 = object, 0 = array); no recursion.
func skip(data []byte, i int) (int, errCode) {
	var small [4]uint64
	stack := small[:0]
	depth := 0
	n := len(data)
	for {
		// State: a value is expected at i.
		i = skipWS(data, i)
		if i >= n {
			return n, errEOF
		}
		c := data[i]
		switch c {
		case '"':
			end, _, code := scanString(data, i)
			if code != errNone {
				return end, code
			}
			i = end
		case '{', '[':
			w := depth >> 6
			if w == len(stack) {
				stack = append(stack, 0)
			}
			if c == '{' {
				stack[w] |= 1 << (depth & 63)
			} else {
				stack[w] &^= 1 << (depth & 63)
			}
			depth++
			i = skipWS(data, i+1)
			if i >= n {
				return n, errEOF
			}
			if c == '{' {
				if data[i] == '}' {
					depth--
					i++
					break // to the after-value state
				}
				j, code := scanKey(data, i)
				if code != errNone {
					return j, code
				}
				i = j
				continue
			}
			if data[i] == ']' {
				depth--
				i++
				break
			}
			continue
		case 't':
			j, code := scanLit(data, i, "true")
			if code != errNone {
				return j, code
			}
			i = j
		case 'f':
			j, code := scanLit(data, i, "false")
			if code != errNone {
				return j, code
			}
			i = j
		case 'n':
			j, code := scanLit(data, i, "null")
			if code != errNone {
				return j, code
			}
			i = j
		default:
			if c != '-' && c-'0' >= 10 {
				return i, errValue
			}
			j, code := scanNumber(data, i)
			if code != errNone {
				return j, code
			}
			i = j
		}
		// State: a value has just ended at i.
		for {
			if depth == 0 {
				return i, errNone
			}
			i = skipWS(data, i)
			if i >= n {
				return n, errEOF
			}
			c := data[i]
			d := depth - 1
			inObj := stack[d>>6]>>(d&63)&1 != 0
			if c == ',' {
				i++
				if inObj {
					j, code := scanKey(data, i)
					if code != errNone {
						return j, code
					}
					i = j
				}
				break // to the value state
			}
			if inObj {
				if c != '}' {
					return i, errAfterMember
				}
			} else if c != ']' {
				return i, errAfterElem
			}
			depth--
			i++
		}
	}
}

// scanKey scans `ws "key" ws :` starting at i and returns the index just
// past the colon.
func scanKey(data []byte, i int) (int, errCode) {
	i = skipWS(data, i)
	if i >= len(data) {
		return len(data), errEOF
	}
	if data[i] != '"' {
		return i, errKey
	}
	end, _, code := scanString(data, i)
	if code != errNone {
		return end, code
	}
	i = skipWS(data, end)
	if i >= len(data) {
		return len(data), errEOF
	}
	if data[i] != ':' {
		return i, errColon
	}
	return i + 1, errNone
}

// scanLit checks that the literal lit is spelled at data[i:]; data[i] is
// known to equal lit[0].
func scanLit(data []byte, i int, lit string) (int, errCode) {
	if i+len(lit) <= len(data) && string(data[i:i+len(lit)]) == lit {
		return i + len(lit), errNone
	}
	for k := 1; k < len(lit); k++ {
		if i+k >= len(data) {
			return len(data), errEOF
		}
		if data[i+k] != lit[k] {
			return i + k, errLiteral
		}
	}
	return i + len(lit), errNone
}

// scanNumber scans a number at data[i:] (data[i] is '-' or a digit).
func scanNumber(data []byte, i int) (int, errCode) {
	n := len(data)
	if data[i] == '-' {
		i++
		if i >= n {
			return n, errEOF
		}
	}
	switch c := data[i]; {
	case c == '0':
		i++
	case c-'1' < 9:
		i++
		for i < n && data[i]-'0' < 10 {
			i++
		}
	default:
		return i, errNumber
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n {
			return n, errEOF
		}
		if data[i]-'0' >= 10 {
			return i, errNumber
		}
		for i < n && data[i]-'0' < 10 {
			i++
		}
	}
	if i < n && data[i]|0x20 == 'e' {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n {
			return n, errEOF
		}
		if data[i]-'0' >= 10 {
			return i, errNumber
		}
		for i < n && data[i]-'0' < 10 {
			i++
		}
	}
	return i, errNone
}

// escLen maps the byte after a backslash to the length of the escape
// sequence (2, or 6 for \u), or 0 if it cannot follow a backslash.
var escLen = func() (t [256]uint8) {
	for _, c := range `"\\/bfnrt` {
		t[c] = 2
	}
	t['u'] = 6
	return t
}()

// scanString scans the string whose opening quote is data[i] (only the
// bytes after it are read). It returns the index just past the closing
// quote and the number of "tail" bytes of its escape sequences: every byte
// of an escape but the first, and one more per surrogate pair, so that the
// content decodes to (bytes - UTF-8 continuation bytes - tails) code points
// when it is valid UTF-8. tails > 0 exactly when the string has escapes.
// Raw control characters and invalid UTF-8 are accepted.
//
// Words without quotes or backslashes are skipped 8 bytes at a time; in a
// word that has some, each is examined in order, using exact masks so that
// the next word does not depend on the escapes of this one. After a few
// clean words in a row, bytes.IndexByte takes over, which is much faster on
// long runs; the position q of the next quote is remembered so that it
// never scans the same bytes twice.
func scanString(data []byte, i int) (end, tails int, code errCode) {
	n := len(data)
	p := i + 1
	// Short strings without escapes (keys, enum values) are the most
	// common: check the first words the cheap way.
	for k := 0; k < 2 && p+8 <= n; k++ {
		x := load64(data, p)
		if m := eqMask(x, '"') | eqMask(x, '\\'); m != 0 {
			if j := p + firstByte(m); data[j] == '"' {
				return j + 1, 0, errNone
			}
			break
		}
		p += 8
	}
	q := -1     // position of a quote at or after p, once known
	skipTo := p // bytes before skipTo belong to an escape already checked
	clean := 0  // consecutive words without quotes or backslashes
	for {
		if p+8 <= n && clean < cleanWords {
			x := load64(data, p)
			m := exactEq(x, '"') | exactEq(x, '\\')
			if m == 0 {
				p += 8
				clean++
				continue
			}
			clean = 0
			for ; m != 0; m &= m - 1 {
				j := p + firstByte(m)
				if j < skipTo {
					continue // escaped character
				}
				if data[j] == '"' {
					return j + 1, tails, errNone
				}
				if j+1 >= n {
					return n, tails, errEOF
				}
				switch escLen[data[j+1]] {
				case 2:
					skipTo = j + 2
					tails++
				case 6:
					for k := j + 2; k < j+6; k++ {
						if k >= n {
							return n, tails, errEOF
						}
						if hexVal[data[k]] < 0 {
							return k, tails, errHex
						}
					}
					skipTo = j + 6
					tails += 5 + pairBonus(data, j)
				default:
					return j + 1, tails, errEscape
				}
			}
			p += 8
			if p < skipTo {
				p = skipTo
			}
			continue
		}
		// A long run, or the end of the data: let IndexByte find the next
		// quote and then a backslash before it.
		clean = 0
		if p < skipTo {
			p = skipTo
		}
		if q < p {
			j := bytes.IndexByte(data[p:], '"')
			if j < 0 {
				return n, tails, errEOF
			}
			q = p + j
		}
		j := bytes.IndexByte(data[p:q], '\\')
		if j < 0 {
			return q + 1, tails, errNone
		}
		p += j
		// data[p] is a backslash: check its escape here.
		if p+1 >= n {
			return n, tails, errEOF
		}
		switch escLen[data[p+1]] {
		case 2:
			p += 2
			tails++
		case 6:
			for k := p + 2; k < p+6; k++ {
				if k >= n {
					return n, tails, errEOF
				}
				if hexVal[data[k]] < 0 {
					return k, tails, errHex
				}
			}
			tails += 5 + pairBonus(data, p)
			p += 6
		default:
			return p + 1, tails, errEscape
		}
		skipTo = p
	}
}

// pairBonus returns 1 if the \u escape at data[j] (hex digits already
// checked) is a high surrogate followed by a well-formed low surrogate
// escape: the pair is a single code point.
func pairBonus(data []byte, j int) int {
	if r := hex4(data, j+2); r >= 0xD800 && r < 0xDC00 && j+12 <= len(data) && data[j+6] == '\\' && data[j+7] == 'u' {
		if r2 := hex4(data, j+8); r2 >= 0xDC00 && r2 < 0xE000 {
			return 1
		}
	}
	return 0
}

// cleanWords is the number of consecutive words without quotes or
// backslashes after which scanString switches to bytes.IndexByte.
const cleanWords = 2

// stringEnd returns the index just past the string starting at data[i],
// which must already have been validated.
func stringEnd(data []byte, i int) int {
	p := i + 1
	for {
		q := bytes.IndexByte(data[p:], '"')
		if q < 0 {
			return len(data)
		}
		q += p
		k := q
		for k > p && data[k-1] == '\\' {
			k--
		}
		if (q-k)&1 == 0 {
			return q + 1
		}
		p = q + 1
	}
}
