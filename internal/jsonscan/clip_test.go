package jsonscan

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// clipInPlace wraps v as the value of a member, clips it in place after
// NextKey, and checks that the iteration goes on to the member after it.
func clipInPlace(t *testing.T, v []byte, limit int) (out []byte, total int, trunc, ok bool) {
	t.Helper()
	doc := append(append([]byte(`{"k":`), v...), `,"z":1}`...)
	o, _ := Object(doc)
	if !o.NextKey() {
		t.Fatalf("no member in %q", doc)
	}
	out, total, trunc, ok = o.AppendStringClip([]byte("p:"), limit)
	if !ok {
		if !bytes.Equal(out, []byte("p:")) {
			t.Fatalf("failed clip changed dst to %q", out)
		}
		return nil, 0, false, false
	}
	if !o.NextKey() || !o.KeyIs("z") || o.NextKey() || !o.Complete() {
		t.Fatalf("iteration after the clip of %q did not reach the next member: %v", doc, o.Err())
	}
	return out[2:], total, trunc, true
}

func TestIterStringClipEveryMax(t *testing.T) {
	inputs := []string{
		`"` + strings.Repeat(`héllo \"wörld\" \ud83d\ude00\t\u4e2d\\ `, 5) + "\xff\xe2\x82 \\ud800 end" + `"`,
		"\"\xf0\x9f\x98\x80\xf0\x9f\x98 x \\u0041\\u00e9\"",
		`"` + strings.Repeat("a", 17) + `\n` + strings.Repeat("ü", 9) + `"`,
		`"` + strings.Repeat("日本語", 40) + "\x80\x80\x80\x80\x80" + strings.Repeat("ab", 30) + `"`,
		`"` + strings.Repeat(`x\n`, 70) + `"`,
		`""`,
	}
	for i, in := range inputs {
		v := []byte(in)
		full, ok := String(v)
		if !ok {
			t.Fatalf("input %d invalid", i)
		}
		runes := []rune(full)
		for max := -1; max <= len(runes)+2; max++ {
			got, total, trunc, ok := clipInPlace(t, v, max)
			want := string(runes[:min(builtinMax(max, 0), len(runes))])
			if !ok || string(got) != want || total != len(runes) || trunc != (builtinMax(max, 0) < len(runes)) {
				t.Fatalf("input %d max %d: got %q %d %v %v; want %q %d", i, max, got, total, trunc, ok, want, len(runes))
			}
		}
	}
}

func TestIterStringClipInvalid(t *testing.T) {
	long := strings.Repeat("abcdefgh", 20)
	for _, in := range []string{
		`"a\qb` + long + `"`,
		`"ab` + long + `\q"`,
		`"\u12x4` + long + `"`,
		`"ab` + long + `\u12x4"`,
		`"ab` + long,
		`"ab` + long + `\`,
	} {
		for _, limit := range []int{0, 1, 20, 50, 1 << 30} {
			o, _ := Object([]byte(`{"k":` + in))
			o.NextKey()
			out, total, trunc, ok := o.AppendStringClip([]byte("keep"), limit)
			if ok || total != 0 || trunc || string(out) != "keep" {
				t.Errorf("clip of %q, %d = %q, %d, %v, %v; want a failure", in, limit, out, total, trunc, ok)
			}
			if o.Err() == nil || o.NextKey() {
				t.Errorf("iteration over %q goes on after a malformed string", in)
			}
		}
	}
	// A value that is not a string is left to the iteration.
	o, _ := Object([]byte(`{"k":[1,2],"z":1}`))
	o.NextKey()
	if _, _, _, ok := o.AppendStringClip(nil, 5); ok {
		t.Fatal("clip of an array ok")
	}
	if v := o.Value(); string(v) != "[1,2]" || !o.NextKey() || !o.KeyIs("z") {
		t.Fatalf("iteration after a refused clip: value %q, err %v", v, o.Err())
	}
}

func TestIterAppendString(t *testing.T) {
	for _, in := range []string{`""`, `"a\u00e9\n\ud83d\ude00"`, "\"\xff日本\"", `"` + strings.Repeat(`x\"`, 50) + `"`} {
		want, ok := AppendString([]byte("p:"), []byte(in))
		if !ok {
			t.Fatalf("%q invalid", in)
		}
		o, _ := Object([]byte(`{"k":` + in + `,"z":1}`))
		o.NextKey()
		got, ok := o.AppendString([]byte("p:"))
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("in place %q = %q, %v; want %q", in, got, ok, want)
		}
		if !o.NextKey() || !o.KeyIs("z") || o.NextKey() || !o.Complete() {
			t.Errorf("iteration after %q: %v", in, o.Err())
		}
	}
	for _, in := range []string{`"a\q"`, `"abc`, `12`, `"ab\u12`} {
		o, _ := Object([]byte(`{"k":` + in))
		o.NextKey()
		if got, ok := o.AppendString([]byte("keep")); ok || string(got) != "keep" {
			t.Errorf("in place %q = %q, %v; want a failure", in, got, ok)
		}
	}
}

func TestStringAtAndObjectFrom(t *testing.T) {
	doc := []byte(`{"a":"x\ty","b":[1,2],"c":null}`)
	out, end, ok := StringAt([]byte("p:"), doc, 5)
	if !ok || string(out) != "p:x\ty" || end != 11 {
		t.Fatalf("StringAt = %q, %d, %v", out, end, ok)
	}
	for _, i := range []int{-1, 0, 4, len(doc)} {
		if out, _, ok := StringAt([]byte("keep"), doc, i); ok || string(out) != "keep" {
			t.Errorf("StringAt(%d) = %q, %v; want a failure", i, out, ok)
		}
	}
	if _, _, ok := StringAt(nil, []byte(`"a\q"`), 0); ok {
		t.Error("StringAt accepted a bad escape")
	}
	o := ObjectFrom(doc, end)
	var keys []string
	for o.Next() {
		keys = append(keys, string(o.Key())+"="+string(o.Value()))
	}
	if strings.Join(keys, " ") != "b=[1,2] c=null" || !o.Complete() {
		t.Fatalf("ObjectFrom members %v, complete %v, err %v", keys, o.Complete(), o.Err())
	}
	bad := ObjectFrom([]byte(`{"a":1 "b":2}`), 6)
	if bad.NextKey() || bad.Err() == nil {
		t.Fatal("ObjectFrom went on past a missing comma")
	}
}

func TestSkipCopy(t *testing.T) {
	v := []byte(`"out\nput \"x\""`)
	doc := []byte(`{"a":` + string(v) + `,"b":` + string(v) + `,"c":"other","d":` + string(v) + `x}`)
	o, _ := Object(doc)
	o.NextKey()
	if o.SkipCopy(v[:len(v)-1]) {
		t.Fatal("SkipCopy took an unfinished string")
	}
	if string(o.Value()) != string(v) || o.SkipCopy(v) {
		t.Fatalf("member a: %q; SkipCopy after Value must refuse", o.Value())
	}
	o.NextKey()
	if !o.SkipCopy(v) || string(o.Value()) != string(v) {
		t.Fatalf("SkipCopy of a copy: value %q", o.Value())
	}
	o.NextKey()
	if o.SkipCopy(v) || string(o.Value()) != `"other"` {
		t.Fatal("SkipCopy of another string")
	}
	// A copy followed by bytes that break the object: the iteration still
	// finds it.
	o.NextKey()
	if !o.SkipCopy(v) || o.NextKey() || o.Err() == nil {
		t.Fatalf("the bytes after a skipped copy were not checked: %v", o.Err())
	}
	n, _ := Object([]byte(`{"n":12}`))
	n.NextKey()
	if n.SkipCopy([]byte(`1`)) || string(n.Value()) != "12" {
		t.Fatal("SkipCopy took a number")
	}
}

func TestRuneCount(t *testing.T) {
	for _, s := range []string{
		"", "ascii only, more than eight bytes", "héllo wörld 日本語 🚀 and more text",
		"bad \xff\xfe bytes", "\xe6\x97", "cut at the end \xe6\x97", "\x80\x80\x80\x80\x80 stray",
		strings.Repeat("日本", 50) + "\xed\xa0\x80 surrogate",
	} {
		if got, want := RuneCount([]byte(s)), utf8.RuneCount([]byte(s)); got != want {
			t.Errorf("RuneCount(%q) = %d; utf8.RuneCount gives %d", s, got, want)
		}
	}
}

// TestStringClipAt checks that clipping a string where it lies gives what
// clipping it in an iteration does, and where it ends.
func TestStringClipAt(t *testing.T) {
	for _, in := range []string{`""`, `"a\u00e9\n\ud83d\ude00"`, "\"\xff日本\"", `"` + strings.Repeat(`x\"ü`, 50) + `"`} {
		data := []byte(`[` + in + `,1]`)
		for _, limit := range []int{-1, 0, 1, 3, 40, 1 << 20} {
			want, wantTotal, wantTrunc, _ := clipInPlace(t, []byte(in), limit)
			out, end, total, trunc, ok := StringClipAt([]byte("p:"), data, 1, limit)
			if !ok || string(out) != "p:"+string(want) || end != 1+len(in) || total != wantTotal || trunc != wantTrunc {
				t.Errorf("StringClipAt(%q, %d) = %q, %d, %d, %v, %v; want %q, %d, %d, %v", in, limit, out, end, total, trunc, ok, "p:"+string(want), 1+len(in), wantTotal, wantTrunc)
			}
		}
	}
	for _, in := range []string{`"a\q"`, `"abc`, `12`, `"ab\u12`, ``} {
		for _, limit := range []int{0, 2, 1 << 20} {
			if out, _, _, _, ok := StringClipAt([]byte("keep"), []byte(in), 0, limit); ok || string(out) != "keep" {
				t.Errorf("StringClipAt(%q, %d) = %q, %v; want a failure", in, limit, out, ok)
			}
		}
	}
}

// TestSkipString checks that SkipString ends a string where Skip does and
// refuses what Skip refuses, or what is not a string.
func TestSkipString(t *testing.T) {
	for _, in := range []string{`""`, `"a"`, `"a\u00e9\n\ud83d\ude00"`, "\"\xff日本\"", "\"raw\tcontrol\"", `"` + strings.Repeat(`x\"ü`, 50) + `"`,
		`"a\q"`, `"abc`, `"ab\u12"`, `"ab\`, `12`, `{"a":1}`, ` "a"`, ``} {
		data := []byte(in + `,1`)
		want, err := Skip(data, 0)
		wantOK := err == nil && strings.HasPrefix(in, `"`)
		end, ok := SkipString(data, 0)
		if ok != wantOK || (ok && end != want) {
			t.Errorf("SkipString(%q) = %d, %v; want %d, %v", in, end, ok, want, wantOK)
		}
	}
	for _, i := range []int{-1, 3, 4} {
		if _, ok := SkipString([]byte(`"a"`), i); ok {
			t.Errorf("SkipString at %d ok", i)
		}
	}
}
