package jsonscan

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInt(t *testing.T) {
	type result struct {
		N  int64
		OK bool
	}
	tests := []struct {
		name string
		in   string
		want result
	}{
		{"zero", "0", result{0, true}},
		{"negative zero", "-0", result{0, true}},
		{"small", "42", result{42, true}},
		{"negative", "-17", result{-17, true}},
		{"whitespace", " 7\n", result{7, true}},
		{"max", "9223372036854775807", result{math.MaxInt64, true}},
		{"min", "-9223372036854775808", result{math.MinInt64, true}},
		{"max plus one", "9223372036854775808", result{0, false}},
		{"min minus one", "-9223372036854775809", result{0, false}},
		{"twenty digits", "99999999999999999999", result{0, false}},
		{"eighteen digits", "999999999999999999", result{999999999999999999, true}},
		{"integral fraction", "12.0", result{12, true}},
		{"integral fraction zeros", "12.000000000000000000000000", result{12, true}},
		{"fraction", "12.5", result{0, false}},
		{"small fraction", "0.0000001", result{0, false}},
		{"exponent", "1e3", result{1000, true}},
		{"capital exponent plus", "1E+3", result{1000, true}},
		{"negative exponent integral", "1500e-2", result{15, true}},
		{"negative exponent fractional", "1505e-3", result{0, false}},
		{"fraction and exponent", "1.25e2", result{125, true}},
		{"fraction and exponent fractional", "1.255e2", result{0, false}},
		{"zero with huge exponent", "0e99999999999999999999", result{0, true}},
		{"zero fraction with exponent", "-0.000e5", result{0, true}},
		{"huge exponent", "1e999", result{0, false}},
		{"tiny exponent", "1e-99999999999999999999", result{0, false}},
		{"max via exponent", "9.223372036854775807e18", result{math.MaxInt64, true}},
		{"over max via exponent", "9.223372036854775808e18", result{0, false}},
		{"min via exponent", "-9.223372036854775808e18", result{math.MinInt64, true}},
		{"1e18", "1e18", result{1e18, true}},
		{"1e19", "1e19", result{0, false}},
		{"leading zeros in fraction", "0.05e2", result{5, true}},
		{"trailing zeros absorbed", "100e-2", result{1, true}},
		{"many fraction digits integral", "1.0000000000000000000000000000001e31", result{0, false}},
		{"not a number", `"1"`, result{0, false}},
		{"leading zero", "01", result{0, false}},
		{"plus sign", "+1", result{0, false}},
		{"trailing garbage", "1x", result{0, false}},
		{"empty", "", result{0, false}},
		{"minus", "-", result{0, false}},
		{"null", "null", result{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := Int([]byte(tt.in))
			if diff := cmp.Diff(tt.want, result{n, ok}); diff != "" {
				t.Errorf("Int(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFloat(t *testing.T) {
	type result struct {
		F  float64
		OK bool
	}
	tests := []struct {
		name string
		in   string
		want result
	}{
		{"integer", "3", result{3, true}},
		{"fraction", "-2.5", result{-2.5, true}},
		{"exponent", "1.5e3", result{1500, true}},
		{"whitespace", "\t0.25 ", result{0.25, true}},
		{"max", "1.7976931348623157e308", result{math.MaxFloat64, true}},
		{"overflow", "1e999", result{0, false}},
		{"negative overflow", "-1e999", result{0, false}},
		{"underflow to zero", "1e-999", result{0, true}},
		{"long integer", "99999999999999999999", result{1e20, true}},
		{"long mantissa", "0.1000000000000000000000000000000000000001", result{0.1, true}},
		{"not json: hex", "0x10", result{0, false}},
		{"not json: inf", "Infinity", result{0, false}},
		{"not json: nan", "NaN", result{0, false}},
		{"not json: underscore", "1_000", result{0, false}},
		{"not json: leading dot", ".5", result{0, false}},
		{"string", `"1"`, result{0, false}},
		{"empty", "", result{0, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ok := Float([]byte(tt.in))
			if diff := cmp.Diff(tt.want, result{f, ok}); diff != "" {
				t.Errorf("Float(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestBoolAndNull(t *testing.T) {
	type result struct {
		B, OK, Null bool
	}
	tests := []struct {
		name string
		in   string
		want result
	}{
		{"true", "true", result{true, true, false}},
		{"false", " false\n", result{false, true, false}},
		{"null", "null", result{false, false, true}},
		{"spaced null", " null ", result{false, false, true}},
		{"capital", "True", result{false, false, false}},
		{"string", `"true"`, result{false, false, false}},
		{"number", "1", result{false, false, false}},
		{"prefix", "nul", result{false, false, false}},
		{"suffix", "nullx", result{false, false, false}},
		{"empty", "", result{false, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := Bool([]byte(tt.in))
			if diff := cmp.Diff(tt.want, result{b, ok, IsNull([]byte(tt.in))}); diff != "" {
				t.Errorf("Bool/IsNull(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	if IsNull(nil) {
		t.Error("IsNull(nil) = true")
	}
}
