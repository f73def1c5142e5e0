package agentstream

import (
	"math"
	"strconv"

	"github.com/agentstream/agentstream/internal/jsonscan"
)

// The helpers below write the pieces of a payload object. Keys are written by
// the callers as literals; the helpers write values.

func appendStr(b []byte, s string) []byte { return jsonscan.AppendQuote(b, s) }

// appendOptStr writes s, or null when s is empty.
func appendOptStr(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonscan.AppendQuote(b, s)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendOptBool(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendBool(b, *v)
}

func appendOptInt(b []byte, v *int64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *v, 10)
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	abs := math.Abs(f)
	if abs < 1e-6 || abs >= 1e21 {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func appendOptFloat(b []byte, v *float64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendFloat(b, *v)
}

// appendStrings writes a JSON array of strings, or null for a nil slice.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonscan.AppendQuote(b, s)
	}
	return append(b, ']')
}

// appendRawJSON writes v, which must already be valid JSON, or null when v is
// empty.
func appendRawJSON(b []byte, v []byte) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}
