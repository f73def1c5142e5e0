package jsonscan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type member struct{ Key, Value string }

func collectObj(v string) (ok bool, members []member, err string) {
	o, ok := Object([]byte(v))
	if !ok {
		return false, nil, ""
	}
	for o.Next() {
		members = append(members, member{string(o.Key()), string(o.Value())})
	}
	if e := o.Err(); e != nil {
		err = e.Error()
	}
	if o.Next() || o.Key() != nil || o.Value() != nil {
		members = append(members, member{"<after end>", ""})
	}
	return true, members, err
}

func TestObj(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantOK      bool
		wantMembers []member
		wantErr     string
	}{
		{"not an object", `[1]`, false, nil, ""},
		{"empty input", ``, false, nil, ""},
		{"empty object", `{}`, true, nil, ""},
		{"empty object with spaces", " { \n } ", true, nil, ""},
		{"simple", `{"a":1,"b":"x"}`, true, []member{{"a", "1"}, {"b", `"x"`}}, ""},
		{"whitespace everywhere", " {\n \"a\" :\t1 ,\r\n\"b\" : [ 1 , 2 ] } ", true,
			[]member{{"a", "1"}, {"b", "[ 1 , 2 ]"}}, ""},
		{"nested values", `{"m":{"x":[{}]},"n":null}`, true, []member{{"m", `{"x":[{}]}`}, {"n", "null"}}, ""},
		{"escaped key kept raw", `{"t\u0079pe":1,"a\"b":2}`, true, []member{{`t\u0079pe`, "1"}, {`a\"b`, "2"}}, ""},
		{"duplicate keys", `{"a":1,"a":2}`, true, []member{{"a", "1"}, {"a", "2"}}, ""},
		{"trailing bytes ignored", `{"a":1} trailing`, true, []member{{"a", "1"}}, ""},
		{"garbage after value", `{"a":1x}`, true, []member{{"a", "1"}},
			"jsonscan: invalid character 'x' after object key:value pair at offset 6"},
		{"garbage after literal", `{"a":truex}`, true, []member{{"a", "true"}},
			"jsonscan: invalid character 'x' after object key:value pair at offset 9"},
		{"missing colon", `{"a" 1}`, true, nil, "jsonscan: invalid character '1' after object key at offset 5"},
		{"missing comma", `{"a":1 "b":2}`, true, []member{{"a", "1"}},
			`jsonscan: invalid character '"' after object key:value pair at offset 7`},
		{"trailing comma", `{"a":1,}`, true, []member{{"a", "1"}},
			"jsonscan: invalid character '}' looking for beginning of object key string at offset 7"},
		{"unterminated key", `{"a`, true, nil, "jsonscan: unexpected end of input at offset 3"},
		{"unterminated value string", `{"a":"b`, true, nil, "jsonscan: unexpected end of input at offset 7"},
		{"bad literal", `{"a":nul}`, true, nil, "jsonscan: invalid character '}' in literal true, false or null at offset 8"},
		{"bad nested value", `{"a":1,"b":[1,}`, true, []member{{"a", "1"}},
			"jsonscan: invalid character '}' looking for beginning of value at offset 14"},
		{"missing value", `{"a":}`, true, nil, "jsonscan: invalid character '}' looking for beginning of value at offset 5"},
		{"unclosed", `{"a":1`, true, []member{{"a", "1"}}, "jsonscan: unexpected end of input at offset 6"},
		{"unclosed after brace", `{`, true, nil, "jsonscan: unexpected end of input at offset 1"},
		{"array closer", `{"a":1]`, true, []member{{"a", "1"}},
			"jsonscan: invalid character ']' after object key:value pair at offset 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, members, err := collectObj(tt.in)
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("Object ok (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMembers, members); diff != "" {
				t.Errorf("members (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, err); diff != "" {
				t.Errorf("Err (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjZeroValue(t *testing.T) {
	var o Obj
	if o.Next() || o.Key() != nil || o.Value() != nil || o.KeyIs("") || o.Err() != nil {
		t.Error("zero Obj is not empty and error-free")
	}
	var a Arr
	if a.Next() || a.Value() != nil || a.Err() != nil {
		t.Error("zero Arr is not empty and error-free")
	}
}

func TestObjValueCapacity(t *testing.T) {
	data := []byte(`{"a":"x","b":"y"}`)
	o, _ := Object(data)
	o.Next()
	_ = append(o.Key(), 'Z')
	_ = append(o.Value(), 'Z')
	if got := string(data); got != `{"a":"x","b":"y"}` {
		t.Errorf("appending to Key/Value modified the input: %s", got)
	}
}

func TestKeyIs(t *testing.T) {
	tests := []struct {
		name string
		key  string // raw key between quotes
		is   string
		want bool
	}{
		{"plain", "type", "type", true},
		{"case sensitive", "type", "Type", false},
		{"prefix", "type", "typ", false},
		{"longer", "typ", "type", false},
		{"empty", "", "", true},
		{"escaped letter", `t\u0079pe`, "type", true},
		{"escaped upper hex", `t\u0059pe`, "tYpe", true},
		{"escaped quote", `a\"b`, `a"b`, true},
		{"escaped slash", `a\/b`, "a/b", true},
		{"escaped slash raw compare", `a\/b`, `a\/b`, false},
		{"newline escape", `a\nb`, "a\nb", true},
		{"non-ascii raw", "caf\u00e9", "café", true},
		{"non-ascii escaped", `caf\u00e9`, "café", true},
		{"surrogate pair", `\ud83d\ude00`, "😀", true},
		{"lone surrogate", `\ud83d`, "\uFFFD", true},
		{"lone surrogate raw mismatch", `\ud83d`, "\xed\xa0\xbd", false},
		{"invalid utf8 raw equal bytes", "a\xffb", "a\xffb", false},
		{"invalid utf8 replaced", "a\xffb", "a\uFFFDb", true},
		{"invalid utf8 with escape", "a\xff\\n", "a\uFFFD\n", true},
		{"truncated sequence", "\xe2\x82", "\uFFFD\uFFFD", true},
		{"extra data", `ab\n`, "ab\nc", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, ok := Object([]byte(`{"` + tt.key + `":0}`))
			if !ok || !o.Next() {
				t.Fatalf("bad test object: %v", o.Err())
			}
			if diff := cmp.Diff(tt.want, o.KeyIs(tt.is)); diff != "" {
				t.Errorf("KeyIs(%q) for key %q (-want +got):\n%s", tt.is, tt.key, diff)
			}
			if diff := cmp.Diff(tt.want, StringIs([]byte(`"`+tt.key+`"`), tt.is)); diff != "" {
				t.Errorf("StringIs(%q) for %q (-want +got):\n%s", tt.is, tt.key, diff)
			}
		})
	}
}

func TestArr(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantOK     bool
		wantValues []string
		wantErr    string
	}{
		{"not an array", `{}`, false, nil, ""},
		{"empty", `[]`, true, nil, ""},
		{"empty spaced", " [ \n ] ", true, nil, ""},
		{"values", `[1,"a",{"b":2},[3],true,false,null,-1.5e3]`, true,
			[]string{"1", `"a"`, `{"b":2}`, "[3]", "true", "false", "null", "-1.5e3"}, ""},
		{"spaced", " [ 1 ,\n2\t] ", true, []string{"1", "2"}, ""},
		{"trailing comma", `[1,]`, true, []string{"1"}, "jsonscan: invalid character ']' looking for beginning of value at offset 3"},
		{"leading comma", `[,1]`, true, nil, "jsonscan: invalid character ',' looking for beginning of value at offset 1"},
		{"missing comma", `[1 2]`, true, []string{"1"}, "jsonscan: invalid character '2' after array element at offset 3"},
		{"object closer", `[1}`, true, []string{"1"}, "jsonscan: invalid character '}' after array element at offset 2"},
		{"unclosed", `[1,`, true, []string{"1"}, "jsonscan: unexpected end of input at offset 3"},
		{"bad element", `[tru]`, true, nil, "jsonscan: invalid character ']' in literal true, false or null at offset 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := Array([]byte(tt.in))
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("Array ok (-want +got):\n%s", diff)
			}
			var values []string
			for a.Next() {
				values = append(values, string(a.Value()))
			}
			gotErr := ""
			if err := a.Err(); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantValues, values); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("Err (-want +got):\n%s", diff)
			}
			if a.Next() || a.Value() != nil {
				t.Error("iterator not finished after end")
			}
		})
	}
}

func TestGet(t *testing.T) {
	doc := `{"type":"assistant","message":{"usage":{"input_tokens":12},"content":[]},"t\u0079pe2":"x","dup":1,"dup":2,"n":null}`
	tests := []struct {
		name string
		in   string
		key  string
		want *string
	}{
		{"top level", doc, "type", ptr(`"assistant"`)},
		{"object value", doc, "message", ptr(`{"usage":{"input_tokens":12},"content":[]}`)},
		{"escaped key", doc, "type2", ptr(`"x"`)},
		{"duplicate returns last", doc, "dup", ptr("2")},
		{"null value is not absent", doc, "n", ptr("null")},
		{"absent", doc, "nope", nil},
		{"case sensitive", doc, "Type", nil},
		{"not an object", `[1]`, "a", nil},
		{"empty", ``, "a", nil},
		{"invalid object", `{"a":1,"b":}`, "a", nil},
		{"invalid after match", `{"a":1,"b":[}`, "a", nil},
		{"trailing garbage", `{"a":1} x`, "a", nil},
		{"surrounding whitespace", " {\"a\" : 1 }\n", "a", ptr("1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Get([]byte(tt.in), tt.key)
			var gotp *string
			if got != nil {
				gotp = ptr(string(got))
			}
			if diff := cmp.Diff(tt.want, gotp); diff != "" {
				t.Errorf("Get(%q, %q) (-want +got):\n%s", tt.in, tt.key, diff)
			}
		})
	}
}

func TestGetPath(t *testing.T) {
	doc := `{"message":{"usage":{"input_tokens":12,"output_tokens":3}},"x":[1]}`
	tests := []struct {
		name string
		in   string
		keys []string
		want *string
	}{
		{"two levels", doc, []string{"message", "usage"}, ptr(`{"input_tokens":12,"output_tokens":3}`)},
		{"three levels", doc, []string{"message", "usage", "output_tokens"}, ptr("3")},
		{"missing middle", doc, []string{"message", "nope", "x"}, nil},
		{"through array", doc, []string{"x", "0"}, nil},
		{"no keys", " " + doc + " ", nil, ptr(doc)},
		{"no keys invalid", "{", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := GetPath([]byte(tt.in), tt.keys...)
			var gotp *string
			if got != nil {
				gotp = ptr(string(got))
			}
			if diff := cmp.Diff(tt.want, gotp); diff != "" {
				t.Errorf("GetPath(%v) (-want +got):\n%s", tt.keys, diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
