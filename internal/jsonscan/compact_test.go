package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestAppendCompact(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{"already compact", `{"a":[1,2],"b":"c"}`, `{"a":[1,2],"b":"c"}`, true},
		{"whitespace removed", " {\n\t\"a\" : [ 1 , 2 ] ,\r\n \"b\" : \"c d\" }\n", `{"a":[1,2],"b":"c d"}`, true},
		{"escapes kept", `{"h":"\u003cb\u003e \u0026 <i> & \/ \n \ud83d\ude00"}`, `{"h":"\u003cb\u003e \u0026 <i> & \/ \n \ud83d\ude00"}`, true},
		{"key order and duplicates kept", `{"z":1, "a":2, "z":3}`, `{"z":1,"a":2,"z":3}`, true},
		{"number spelling kept", `[1.0, -0, 1E+2, 0.10]`, `[1.0,-0,1E+2,0.10]`, true},
		{"string whitespace kept", `[" a\t b "]`, `[" a\t b "]`, true},
		{"escaped quote then spaces", `["a\" ", "b\\" , "c"]`, `["a\" ","b\\","c"]`, true},
		{"scalar", "  true ", "true", true},
		{"lone surrogate kept", `"\ud800"`, `"\ud800"`, true},
		{"invalid utf8 kept", "\"\xff\"", "\"\xff\"", true},
		{"raw control kept", "\"a\tb\"", "\"a\tb\"", true},
		{"invalid", `{"a":}`, "", false},
		{"two values", `1 2`, "", false},
		{"trailing garbage", `{} x`, "", false},
		{"empty", ``, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := AppendCompact([]byte("<"), []byte(tt.in))
			want := "<" + tt.want
			if diff := cmp.Diff(want, string(out)); diff != "" {
				t.Errorf("AppendCompact(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("AppendCompact(%q) ok (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestAppendSanitized(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{"clean input only compacted", "{ \"a\" : \"\u00e9 \\u003e <>&\" }", `{"a":"é \u003e <>&"}`, true},
		{"invalid utf8 replaced", "[\"a\xffb\", \"\xe2\x82\"]", "[\"a\uFFFDb\",\"\uFFFD\uFFFD\"]", true},
		{"invalid utf8 in key", "{\"\xc0\":1}", "{\"\uFFFD\":1}", true},
		{"lone high surrogate", `"x\ud800y"`, `"x\ufffdy"`, true},
		{"lone low surrogate", `"\udc00"`, `"\ufffd"`, true},
		{"pair kept", `"\ud83d\ude00"`, `"\ud83d\ude00"`, true},
		{"upper-case pair kept", `"\uD83D\uDE00"`, `"\uD83D\uDE00"`, true},
		{"reversed pair", `"\ude00\ud83d"`, `"\ufffd\ufffd"`, true},
		{"two highs then low", `"\ud83d\ud83d\ude00"`, `"\ufffd\ud83d\ude00"`, true},
		{"high then other escape", `"\ud83d\u0041"`, `"\ufffd\u0041"`, true},
		{"control characters escaped", "\"\t\n\r\b\f\x00\x1f\x01\"", `"\t\n\r\b\f\u0000\u001f\u0001"`, true},
		{"del and separators kept", "\"\x7f\u2028\u2029\"", "\"\x7f\u2028\u2029\"", true},
		{"long mixed", "\"" + strings.Repeat("abcdefgh\xff\t\\u00e9\\ud800", 10) + "\"",
			"\"" + strings.Repeat("abcdefgh\uFFFD\\t\\u00e9\\ufffd", 10) + "\"", true},
		{"escaped backslash then ud800 text", `"\\ud800"`, `"\\ud800"`, true},
		{"long escaped backslash then udc00 text", `"abcdefgh\\udc00xyz abcdefgh"`, `"abcdefgh\\udc00xyz abcdefgh"`, true},
		{"long lone surrogate", `"abcdefgh\udc00xyz abcdefgh"`, `"abcdefgh\ufffdxyz abcdefgh"`, true},
		{"long non-surrogate u escape", `"abcdefgh\u00e9\uD7FF\uE000 abcdefgh"`, `"abcdefgh\u00e9\uD7FF\uE000 abcdefgh"`, true},
		{"long control at end", "\"abcdefghijklmnop\x01\"", `"abcdefghijklmnop\u0001"`, true},
		{"invalid", "\"\xff", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := AppendSanitized([]byte("<"), []byte(tt.in))
			want := "<" + tt.want
			if diff := cmp.Diff(want, string(out)); diff != "" {
				t.Errorf("AppendSanitized(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("AppendSanitized(%q) ok (-want +got):\n%s", tt.in, diff)
			}
			if ok {
				checkSanitized(t, out[1:])
			}
		})
	}
}

// checkSanitized verifies the guarantees of AppendSanitized output.
func checkSanitized(t *testing.T, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Errorf("output %q is not accepted by encoding/json", out)
	}
	if !utf8.Valid(out) {
		t.Errorf("output %q is not valid UTF-8", out)
	}
	if again, ok := AppendCompact(nil, out); !ok || string(again) != string(out) {
		t.Errorf("compacting output %q again gives %q, %v", out, again, ok)
	}
	if again, ok := AppendSanitized(nil, out); !ok || string(again) != string(out) {
		t.Errorf("sanitizing output %q again gives %q, %v", out, again, ok)
	}
}
