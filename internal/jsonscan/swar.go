package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Word-at-a-time helpers. Each mask function returns a word with the high bit
// of a byte set for bytes matching the predicate. Bits above the first match
// may be spurious (borrow propagation), but the lowest set bit is always
// exact, which is all firstByte needs.

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// load64 loads the 8 bytes b[i:i+8] with b[i] in the low byte.
func load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64(b[i : i+8])
}

// load64g is load64 for either a string or a byte slice.
func load64g[T string | []byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// zeroMask flags the zero bytes of x.
func zeroMask(x uint64) uint64 { return (x - lsbs) & ^x & msbs }

// eqMask flags the bytes of x equal to c.
func eqMask(x uint64, c byte) uint64 { return zeroMask(x ^ (lsbs * uint64(c))) }

// exactEq flags exactly the bytes of x equal to c (no spurious bits).
func exactEq(x uint64, c byte) uint64 {
	y := x ^ (lsbs * uint64(c))
	const low7 = 0x7F7F7F7F7F7F7F7F
	return ^(((y & low7) + low7) | y) & msbs
}

// ltMask flags the bytes of x below n (n must be at most 0x80).
func ltMask(x uint64, n byte) uint64 { return (x - lsbs*uint64(n)) & ^x & msbs }

// firstByte returns the index of the byte holding the lowest set bit of m.
func firstByte(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// hexVal maps a byte to its hexadecimal digit value, or -1.
var hexVal = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = int8(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = int8(c - 'a' + 10)
		t[c-'a'+'A'] = int8(c - 'a' + 10)
	}
	return t
}()

// hex4 decodes four hexadecimal digits at s[i:i+4]; it returns -1 if there
// are fewer than four bytes or one of them is not a hex digit.
func hex4(s []byte, i int) rune {
	if i < 0 || i+4 > len(s) {
		return -1
	}
	a, b, c, d := hexVal[s[i]], hexVal[s[i+1]], hexVal[s[i+2]], hexVal[s[i+3]]
	if a|b|c|d < 0 {
		return -1
	}
	return rune(a)<<12 | rune(b)<<8 | rune(c)<<4 | rune(d)
}

// runeLen returns the length of the well-formed UTF-8 sequence starting at
// s[i], or 0 if the bytes there are not one (utf8.DecodeRune would return
// RuneError with width 1). s[i] must exist.
func runeLen[T string | []byte](s T, i int) int {
	c := s[i]
	if c < 0x80 {
		return 1
	}
	n := len(s) - i
	switch {
	case c < 0xC2:
		return 0
	case c < 0xE0:
		if n >= 2 && s[i+1]&0xC0 == 0x80 {
			return 2
		}
	case c < 0xF0:
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
		if n >= 3 && s[i+1] >= lo && s[i+1] <= hi && s[i+2]&0xC0 == 0x80 {
			return 3
		}
	case c < 0xF5:
		lo, hi := byte(0x80), byte(0xBF)
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
		if n >= 4 && s[i+1] >= lo && s[i+1] <= hi && s[i+2]&0xC0 == 0x80 && s[i+3]&0xC0 == 0x80 {
			return 4
		}
	}
	return 0
}
