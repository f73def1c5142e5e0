package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendQuote(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", `""`},
		{"plain", "hello", `"hello"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"short control escapes", "\n\r\t\b\f", `"\n\r\t\b\f"`},
		{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"no html escaping", "<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"del and separators raw", "\x7f\u2028\u2029", "\"\x7f\u2028\u2029\""},
		{"non-ascii raw", "日本語 é 😀", `"日本語 é 😀"`},
		{"slash not escaped", "a/b", `"a/b"`},
		{"invalid utf8", "a\xffb\xe2\x82", "\"a\uFFFDb\uFFFD\uFFFD\""},
		{"utf8 surrogate bytes", "\xed\xa0\x80", "\"\uFFFD\uFFFD\uFFFD\""},
		{"long", strings.Repeat("abcdefghij\"", 10), `"` + strings.Repeat(`abcdefghij\"`, 10) + `"`},
		{"special at word boundary", "abcdefg\nabcdefgh\n", `"abcdefg\nabcdefgh\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendQuote([]byte("x="), tt.in))
			if diff := cmp.Diff("x="+tt.want, got); diff != "" {
				t.Errorf("AppendQuote(%q) (-want +got):\n%s", tt.in, diff)
			}
			got = string(AppendQuoteBytes([]byte("x="), []byte(tt.in)))
			if diff := cmp.Diff("x="+tt.want, got); diff != "" {
				t.Errorf("AppendQuoteBytes(%q) (-want +got):\n%s", tt.in, diff)
			}
			// Whatever the input, the result must decode, with encoding/json
			// and with String, to what encoding/json would encode.
			var want, viaJSON string
			enc, _ := json.Marshal(tt.in)
			if err := json.Unmarshal(enc, &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &viaJSON); err != nil {
				t.Fatalf("output not accepted by encoding/json: %v", err)
			}
			viaString, ok := String([]byte(tt.want))
			if diff := cmp.Diff([]any{want, want, true}, []any{viaJSON, viaString, ok}); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
