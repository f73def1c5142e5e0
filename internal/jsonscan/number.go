package jsonscan

import (
	"math"
	"strconv"
)

// number checks that v, without surrounding whitespace, is exactly one JSON
// number and returns it trimmed.
func number(v []byte) ([]byte, bool) {
	v = TrimSpace(v)
	if len(v) == 0 || (v[0] != '-' && v[0]-'0' >= 10) {
		return nil, false
	}
	end, code := scanNumber(v, 0)
	if code != errNone || end != len(v) {
		return nil, false
	}
	return v, true
}

// Int returns the value of the JSON number v (surrounding whitespace
// allowed) as an int64. It accepts integers and numbers with an integral
// value written with a fraction or an exponent (12.0, 1e3, 1500e-2); it
// returns false for fractional values, values outside the int64 range and
// anything that is not a JSON number.
func Int(v []byte) (int64, bool) {
	v, ok := number(v)
	if !ok {
		return 0, false
	}
	neg := v[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	// Fast path: a plain integer of at most 18 digits cannot overflow.
	if len(v)-i <= 18 {
		var u int64
		j := i
		for ; j < len(v) && v[j]-'0' < 10; j++ {
			u = u*10 + int64(v[j]-'0')
		}
		if j == len(v) {
			if neg {
				u = -u
			}
			return u, true
		}
	}
	// General path: the value is D × 10^e where D is the integer written by
	// the digits of the integer and fraction parts.
	intStart := i
	for i < len(v) && v[i]-'0' < 10 {
		i++
	}
	intPart := v[intStart:i]
	var frac []byte
	if i < len(v) && v[i] == '.' {
		i++
		s := i
		for i < len(v) && v[i]-'0' < 10 {
			i++
		}
		frac = v[s:i]
	}
	// Exponent, saturated well beyond any digit count of v so that
	// saturation cannot change the outcome.
	limit := len(v) + 64
	exp := 0
	if i < len(v) {
		i++ // 'e' or 'E'
		eneg := false
		if v[i] == '+' || v[i] == '-' {
			eneg = v[i] == '-'
			i++
		}
		for ; i < len(v); i++ {
			if exp < limit {
				exp = exp*10 + int(v[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	// Drop trailing zeros, first from the fraction, then from the integer
	// part, each one raising the exponent.
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	e := exp - len(frac)
	if len(frac) == 0 {
		for len(intPart) > 0 && intPart[len(intPart)-1] == '0' {
			intPart = intPart[:len(intPart)-1]
			e++
		}
	}
	// Drop leading zeros.
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) == 0 {
		for len(frac) > 0 && frac[0] == '0' {
			frac = frac[1:]
		}
	}
	nd := len(intPart) + len(frac)
	if nd == 0 {
		return 0, true // zero, whatever its exponent
	}
	if e < 0 || nd+e > 19 {
		return 0, false // fractional, or at least 10^19
	}
	var u uint64
	for _, c := range intPart {
		u = u*10 + uint64(c-'0')
	}
	for _, c := range frac {
		u = u*10 + uint64(c-'0')
	}
	for ; e > 0; e-- {
		u *= 10
	}
	// u < 10^19 < 2^64, so no overflow happened above.
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Float returns the value of the JSON number v (surrounding whitespace
// allowed) as the nearest float64. It returns false for anything that is
// not a JSON number and for numbers beyond the float64 range (which would
// round to ±Inf); numbers too small to represent become 0.
func Float(v []byte) (float64, bool) {
	v, ok := number(v)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Bool returns the value of the literal true or false (surrounding
// whitespace allowed); ok is false for anything else.
func Bool(v []byte) (b, ok bool) {
	switch string(TrimSpace(v)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNull reports whether v is the literal null (surrounding whitespace
// allowed). Empty or nil v is not null.
func IsNull(v []byte) bool {
	return string(TrimSpace(v)) == "null"
}
