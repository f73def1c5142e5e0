package jsonscan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Kind
	}{
		{"nil", "", KindInvalid},
		{"spaces only", " \t\r\n", KindInvalid},
		{"null", "null", KindNull},
		{"false", "false", KindFalse},
		{"true", " \ttrue", KindTrue},
		{"number", "12", KindNumber},
		{"negative", "-1", KindNumber},
		{"zero", "0", KindNumber},
		{"string", `"x"`, KindString},
		{"object", "\n{}", KindObject},
		{"array", "[1]", KindArray},
		{"closing brace", "}", KindInvalid},
		{"plus", "+1", KindInvalid},
		{"dot", ".5", KindInvalid},
		{"not validated", "nope", KindNull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, KindOf([]byte(tt.in))); diff != "" {
				t.Errorf("KindOf(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	got := []string{}
	for k := KindInvalid; k <= KindArray+1; k++ {
		got = append(got, k.String())
	}
	want := []string{"invalid", "null", "false", "true", "number", "string", "object", "array", "Kind(8)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Kind.String (-want +got):\n%s", diff)
	}
}

func TestTrimSpace(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"all space", " \t\r\n ", ""},
		{"both ends", " \t{}\r\n", "{}"},
		{"inner kept", " [1, 2] ", "[1, 2]"},
		{"other bytes kept", "\v1\f", "\v1\f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(TrimSpace([]byte(tt.in)))); diff != "" {
				t.Errorf("TrimSpace(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestSkip(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		start   int
		wantEnd int
		wantErr string // full error message, "" for none
	}{
		{"null", "null", 0, 4, ""},
		{"true with trailing", "true, 1", 0, 4, ""},
		{"false", "  false", 0, 7, ""},
		{"literal followed by letters", "truex", 0, 4, ""},
		{"start offset", `[1] "ab" 3`, 3, 8, ""},
		{"start at end", "[1]", 3, 3, "jsonscan: unexpected end of input at offset 3"},
		{"negative start", "1", -1, 0, "jsonscan: start offset out of range at offset 0"},
		{"start past end", "1", 2, 1, "jsonscan: start offset out of range at offset 1"},
		{"integer", "123", 0, 3, ""},
		{"number grammar", "-0.5e+10 ", 0, 8, ""},
		{"capital exponent", "1E-7", 0, 4, ""},
		{"huge number", "1e999", 0, 5, ""},
		{"long integer", "99999999999999999999", 0, 20, ""},
		{"leading zero stops", "01", 0, 1, ""},
		{"minus alone", "-", 0, 1, "jsonscan: unexpected end of input at offset 1"},
		{"minus letter", "-a", 0, 1, "jsonscan: invalid character 'a' in numeric literal at offset 1"},
		{"dot without digits", "1.e5", 0, 2, "jsonscan: invalid character 'e' in numeric literal at offset 2"},
		{"exponent without digits", "1e+", 0, 3, "jsonscan: unexpected end of input at offset 3"},
		{"exponent letter", "1ex", 0, 2, "jsonscan: invalid character 'x' in numeric literal at offset 2"},
		{"bad literal", "nul!", 0, 3, "jsonscan: invalid character '!' in literal true, false or null at offset 3"},
		{"short literal", "fals", 0, 4, "jsonscan: unexpected end of input at offset 4"},
		{"capital literal", "True", 0, 0, "jsonscan: invalid character 'T' looking for beginning of value at offset 0"},
		{"empty", "", 0, 0, "jsonscan: unexpected end of input at offset 0"},
		{"string", `"a\"b"x`, 0, 6, ""},
		{"string all escapes", `"\"\\\/\b\f\n\r\t\u00e9\uABCD"`, 0, 30, ""},
		{"string ending in escaped backslash", `"ab\\" `, 0, 6, ""},
		{"string escaped quotes only", `"\"\"\""`, 0, 8, ""},
		{"long string", `"` + strings.Repeat(`abc\"def\\`, 20) + `"`, 0, 202, ""},
		{"raw control characters accepted", "\"a\tb\x00\n\"", 0, 7, ""},
		{"invalid utf8 accepted", "\"\xff\xfe\"", 0, 4, ""},
		{"bad escape", `"a\x"`, 0, 3, "jsonscan: invalid character 'x' in string escape code at offset 3"},
		{"single quote escape", `"\'"`, 0, 2, `jsonscan: invalid character '\'' in string escape code at offset 2`},
		{"short unicode escape", `"\u12"`, 0, 5, `jsonscan: invalid character '"' in \u hexadecimal character escape at offset 5`},
		{"bad hex", `"\u12g4"`, 0, 5, `jsonscan: invalid character 'g' in \u hexadecimal character escape at offset 5`},
		{"unterminated", `"abc`, 0, 4, "jsonscan: unexpected end of input at offset 4"},
		{"unterminated by escape", `"abc\"`, 0, 6, "jsonscan: unexpected end of input at offset 6"},
		{"unterminated long", `"` + strings.Repeat("x", 100) + `\`, 0, 102, "jsonscan: unexpected end of input at offset 102"},
		{"empty object", "{}", 0, 2, ""},
		{"empty array", "[ ]", 0, 3, ""},
		{"object", `{"a":1,"b":[true,null],"c":{"d":"e"}}`, 0, 37, ""},
		{"object with whitespace", " { \"a\" : 1 , \"b\" :\n[ ] }  ", 0, 24, ""},
		{"nested arrays", "[[[]],[[1],2]]", 0, 14, ""},
		{"trailing comma in array", "[1,]", 0, 3, "jsonscan: invalid character ']' looking for beginning of value at offset 3"},
		{"trailing comma in object", `{"a":1,}`, 0, 7, "jsonscan: invalid character '}' looking for beginning of object key string at offset 7"},
		{"missing colon", `{"a" 1}`, 0, 5, "jsonscan: invalid character '1' after object key at offset 5"},
		{"missing comma", `{"a":1 "b":2}`, 0, 7, `jsonscan: invalid character '"' after object key:value pair at offset 7`},
		{"missing array comma", "[1 2]", 0, 3, "jsonscan: invalid character '2' after array element at offset 3"},
		{"unquoted key", "{a:1}", 0, 1, "jsonscan: invalid character 'a' looking for beginning of object key string at offset 1"},
		{"number key", "{1:1}", 0, 1, "jsonscan: invalid character '1' looking for beginning of object key string at offset 1"},
		{"mismatched close", "[1}", 0, 2, "jsonscan: invalid character '}' after array element at offset 2"},
		{"mismatched object close", `{"a":1]`, 0, 6, "jsonscan: invalid character ']' after object key:value pair at offset 6"},
		{"garbage after member", `{"a":1x}`, 0, 6, "jsonscan: invalid character 'x' after object key:value pair at offset 6"},
		{"unclosed array", "[1,2", 0, 4, "jsonscan: unexpected end of input at offset 4"},
		{"unclosed object", `{"a":{}`, 0, 7, "jsonscan: unexpected end of input at offset 7"},
		{"control byte message", "\x01", 0, 0, `jsonscan: invalid character '\x01' looking for beginning of value at offset 0`},
		{"colon in array", "[1:2]", 0, 2, "jsonscan: invalid character ':' after array element at offset 2"},
		{"double colon", `{"a"::1}`, 0, 5, "jsonscan: invalid character ':' looking for beginning of value at offset 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, err := Skip([]byte(tt.in), tt.start)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *SyntaxError", err)
				}
				if se.Offset != end {
					t.Errorf("Offset = %d, end = %d; want equal", se.Offset, end)
				}
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("Skip(%q, %d) error (-want +got):\n%s", tt.in, tt.start, diff)
			}
			if diff := cmp.Diff(tt.wantEnd, end); diff != "" {
				t.Errorf("Skip(%q, %d) end (-want +got):\n%s", tt.in, tt.start, diff)
			}
		})
	}
}

func TestValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"empty", "", false},
		{"whitespace", "  ", false},
		{"number", " 1 ", true},
		{"two values", "1 2", false},
		{"trailing garbage", `{"a":1}x`, false},
		{"trailing newline", "{\"a\":1}\n", true},
		{"leading zero", "01", false},
		{"negative zero", "-0", true},
		{"literal suffix", "nullx", false},
		{"string", `"a"`, true},
		{"unicode escape", `"\uD83D\uDE00"`, true},
		{"lone surrogate escape is valid", `"\ud800"`, true},
		{"vertical tab is not whitespace", "\v1", false},
		{"form feed is not whitespace", "1\f", false},
		{"byte order mark", "\xef\xbb\xbf1", false},
		{"deep mixed", `[{"a":[{"b":[]}]}]`, true},
		{"nested mismatch", `[{"a":[{"b":[]]}]}]`, false},
		{"raw tab in string (lenient)", "\"a\tb\"", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Valid([]byte(tt.in))); diff != "" {
				t.Errorf("Valid(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

const deepN = 200000

func deepDocs() map[string]string {
	return map[string]string{
		"arrays":          strings.Repeat("[", deepN) + strings.Repeat("]", deepN),
		"objects":         strings.Repeat(`{"a":`, deepN) + "1" + strings.Repeat("}", deepN),
		"mixed spaced":    strings.Repeat(`[ { "k" : `, deepN) + `"v"` + strings.Repeat(" } ]", deepN),
		"arrays of pairs": strings.Repeat("[1,", deepN) + "2" + strings.Repeat(",3]", deepN),
	}
}

func TestDeepNesting(t *testing.T) {
	for name, doc := range deepDocs() {
		t.Run(name, func(t *testing.T) {
			data := []byte(doc)
			end, err := Skip(data, 0)
			if err != nil || end != len(data) {
				t.Fatalf("Skip = %d, %v; want %d, nil", end, err, len(data))
			}
			if !Valid(data) {
				t.Fatal("Valid = false")
			}
			compact, ok := AppendCompact(nil, data)
			if !ok || len(compact) != len(strings.ReplaceAll(doc, " ", "")) {
				t.Fatalf("AppendCompact ok=%v len=%d", ok, len(compact))
			}
			san, ok := AppendSanitized(nil, data)
			if !ok || string(san) != string(compact) {
				t.Fatalf("AppendSanitized ok=%v, differs from compact output", ok)
			}
			// Breaking the innermost closer must be detected.
			bad := []byte(doc)
			mid := strings.IndexAny(doc, "]}")
			if bad[mid] == ']' {
				bad[mid] = '}'
			} else {
				bad[mid] = ']'
			}
			if Valid(bad) {
				t.Error("Valid(mismatched) = true")
			}
			if _, ok := AppendCompact(nil, bad); ok {
				t.Error("AppendCompact(mismatched) ok = true")
			}
			// One closer missing.
			if Valid(data[:len(data)-1]) {
				t.Error("Valid(truncated) = true")
			}
		})
	}
	t.Run("iterate deep member", func(t *testing.T) {
		doc := []byte(`{"x":` + deepDocs()["arrays"] + `,"y":2}`)
		if got := string(Get(doc, "y")); got != "2" {
			t.Errorf("Get(y) = %q, want 2", got)
		}
	})
}

// truncationDocs are valid documents none of whose proper prefixes is a
// complete value.
var truncationDocs = []string{
	`{"type":"assistant","message":{"content":[{"type":"text","text":"h\u00e9llo \ud83d\ude00 \"q\" \\ \n"}],` +
		`"usage":{"input_tokens":12,"output_tokens":3.5e2}},"ok":true,"no":false,"nil":null,"neg":-0.5E-3}`,
	` [ 1 , [ 2, [3, {"a": [ ]}]], "x", {} , -12.5e+3 ] `,
	`"\u00e9\ud83d\ude00 abc\\ \"q\" ` + "\xc3\xa9 \xf0\x9f\x98\x80" + `"`,
	`{"a":{"b":{"c":[true,false,null]}}}`,
}

func TestTruncatedPrefixes(t *testing.T) {
	for di, doc := range truncationDocs {
		full := []byte(doc)
		if !Valid(full) {
			t.Fatalf("doc %d is not valid", di)
		}
		end := len(strings.TrimRight(doc, " "))
		for n := 0; n < end; n++ {
			prefix := full[:n:n]
			if _, err := Skip(prefix, 0); err == nil {
				t.Errorf("doc %d: Skip(prefix %d) = nil error", di, n)
			}
			if Valid(prefix) {
				t.Errorf("doc %d: Valid(prefix %d) = true", di, n)
			}
			if _, ok := AppendCompact(nil, prefix); ok {
				t.Errorf("doc %d: AppendCompact(prefix %d) ok", di, n)
			}
			if _, ok := AppendSanitized(nil, prefix); ok {
				t.Errorf("doc %d: AppendSanitized(prefix %d) ok", di, n)
			}
			if o, ok := Object(prefix); ok {
				for o.Next() {
					_ = o.Value()
				}
				if o.Err() == nil {
					t.Errorf("doc %d: Obj over prefix %d: Err() = nil", di, n)
				}
			}
			if a, ok := Array(prefix); ok {
				for a.Next() {
					_ = a.Value()
				}
				if a.Err() == nil {
					t.Errorf("doc %d: Arr over prefix %d: Err() = nil", di, n)
				}
			}
			if _, ok := String(prefix); ok {
				t.Errorf("doc %d: String(prefix %d) ok", di, n)
			}
			if _, _, _, ok := StringClip(prefix, 3); ok {
				t.Errorf("doc %d: StringClip(prefix %d) ok", di, n)
			}
			if Get(prefix, "type") != nil || Get(prefix, "a") != nil {
				t.Errorf("doc %d: Get(prefix %d) != nil", di, n)
			}
		}
	}
}
