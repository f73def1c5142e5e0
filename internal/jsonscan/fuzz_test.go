package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	``, ` `, `null`, `true`, `false`, `0`, `-0`, `-12.5e+3`, `1E9`, `01`, `1.`, `-`, `1e999`,
	`99999999999999999999`, `""`, `"abc"`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`,
	`"\udc00\ud800"`, `"\ud83d\u0041"`, `"\u12"`, `"\x"`, "\"\xff\xfe\xe2\x82\"", "\"a\tb\x00\"",
	`{}`, `[]`, `{"a":1}`, `{"a":1,"a":2}`, `{"t\u0079pe":"x"}`, `[1,[2,[3,{"a":[]}]]]`,
	` { "a" : [ 1 , "b" , { } ] } `, `{"a":1x}`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `[1}`, `{"a":]`,
	`{"type":"assistant","message":{"content":[{"type":"text","text":"hi\n"}],"usage":{"input_tokens":3}}}`,
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
	strings.Repeat(`{"a":`, 70) + "0" + strings.Repeat("}", 70),
	`"` + strings.Repeat(`0123456\"\\`, 10) + `"`,
	"\"\u2028\u2029\x7f\"",
}

// FuzzSkip checks Skip and Valid against encoding/json and that the
// iterators and compaction functions agree with them.
func FuzzSkip(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := Valid(data)
		std := json.Valid(data)
		if std && !valid {
			t.Fatalf("Valid = false, json.Valid = true for %q", data)
		}
		if valid && !std && !hasControl(data) {
			t.Fatalf("Valid = true, json.Valid = false for %q", data)
		}
		end, err := Skip(data, 0)
		if err != nil {
			var se *SyntaxError
			if e, ok := err.(*SyntaxError); ok {
				se = e
			}
			if se == nil || se.Offset != end || end < 0 || end > len(data) || !strings.HasPrefix(err.Error(), "jsonscan: ") {
				t.Fatalf("bad error %v (end %d) for %q", err, end, data)
			}
		} else if end < 1 || end > len(data) {
			t.Fatalf("Skip end %d out of range for %q", end, data)
		}
		if valid != (err == nil && skipWS(data, end) == len(data)) {
			t.Fatalf("Valid disagrees with Skip for %q", data)
		}
		if _, ok := AppendCompact(nil, data); ok != valid {
			t.Fatalf("AppendCompact ok = %v, Valid = %v for %q", ok, valid, data)
		}
		// Iterating a value found by Skip must succeed.
		if o, ok := Object(data); ok {
			for o.Next() {
				_ = o.KeyIs("type")
			}
			if (o.Err() == nil) != (err == nil) {
				t.Fatalf("Obj.Err = %v, Skip err = %v for %q", o.Err(), err, data)
			}
		}
		if a, ok := Array(data); ok {
			for a.Next() {
				_ = KindOf(a.Value())
			}
			if (a.Err() == nil) != (err == nil) {
				t.Fatalf("Arr.Err = %v, Skip err = %v for %q", a.Err(), err, data)
			}
		}
		_ = Get(data, "type")
		_, _ = Int(data)
		_, _ = Float(data)
	})
}

// FuzzString checks the string decoders.
func FuzzString(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), 3)
	}
	f.Add([]byte(`"\ud83d\ude00\ud83d\ude00"`), 1)
	f.Add([]byte("\"\xf0\x9f\x98\x80x\""), 0)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		// Also try the bytes as string content, to reach deeper.
		for _, v := range [][]byte{data, append(append([]byte{'"'}, data...), '"')} {
			full, ok := AppendString(nil, v)
			if !ok {
				if _, ok := String(v); ok {
					t.Fatalf("String ok but AppendString not for %q", v)
				}
				if _, _, _, ok := AppendStringClip(nil, v, limit); ok {
					t.Fatalf("AppendStringClip ok but AppendString not for %q", v)
				}
				continue
			}
			if KindOf(v) != KindString || !Valid(v) {
				t.Fatalf("decoded a non-string %q", v)
			}
			if !utf8.Valid(full) {
				t.Fatalf("decoding of %q is not valid UTF-8: %q", v, full)
			}
			if s, _ := String(v); s != string(full) {
				t.Fatalf("String = %q, AppendString = %q", s, full)
			}
			if !StringIs(v, string(full)) {
				t.Fatalf("StringIs(%q, own decoding) = false", v)
			}
			if json.Valid(v) {
				var want string
				if err := json.Unmarshal(v, &want); err != nil || want != string(full) {
					t.Fatalf("decoding %q = %q; encoding/json gives %q (%v)", v, full, want, err)
				}
			}
			clip, total, trunc, ok := AppendStringClip(nil, v, limit)
			if !ok || !bytes.HasPrefix(full, clip) || !utf8.Valid(clip) {
				t.Fatalf("clip %q of %q is not a valid prefix of %q", clip, v, full)
			}
			n := utf8.RuneCount(full)
			if total != n || trunc != (n > max(limit, 0)) || utf8.RuneCount(clip) != min(n, max(limit, 0)) {
				t.Fatalf("AppendStringClip(%q, %d) = %q, %d, %v; full has %d code points", v, limit, clip, total, trunc, n)
			}
			if ic, itotal, itrunc, iok := clipInPlace(t, v, limit); !iok || !bytes.Equal(ic, clip) || itotal != total || itrunc != trunc {
				t.Fatalf("in-place clip of %q, %d = %q, %d, %v, %v; want %q, %d, %v", v, limit, ic, itotal, itrunc, iok, clip, total, trunc)
			}
			q := AppendQuoteBytes(nil, full)
			if back, ok := String(q); !ok || back != string(full) || !json.Valid(q) {
				t.Fatalf("AppendQuoteBytes(%q) = %q does not round-trip", full, q)
			}
		}
		// Quoting arbitrary bytes always yields valid JSON.
		q := AppendQuote(nil, string(data))
		if !json.Valid(q) || !utf8.Valid(q) {
			t.Fatalf("AppendQuote(%q) = %q is invalid", data, q)
		}
	})
}

// FuzzSanitize checks that sanitized output is strict, valid UTF-8 JSON and
// a fixed point of compaction.
func FuzzSanitize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, ok := AppendSanitized(nil, data)
		if ok != Valid(data) {
			t.Fatalf("AppendSanitized ok = %v, Valid = %v for %q", ok, !ok, data)
		}
		if !ok {
			if len(out) != 0 {
				t.Fatalf("output %q on failure", out)
			}
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("AppendSanitized(%q) = %q is not valid UTF-8 JSON", data, out)
		}
		if again, ok := AppendCompact(nil, out); !ok || !bytes.Equal(again, out) {
			t.Fatalf("compacting %q again gives %q", out, again)
		}
		if again, ok := AppendSanitized(nil, out); !ok || !bytes.Equal(again, out) {
			t.Fatalf("sanitizing %q again gives %q", out, again)
		}
		compact, _ := AppendCompact(nil, data)
		if json.Valid(data) && utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) && !bytes.Equal(compact, out) {
			t.Fatalf("clean input %q: sanitized %q differs from compact %q", data, out, compact)
		}
		// Decoded strings are preserved for inputs encoding/json accepts.
		if json.Valid(data) {
			ja, jb := remarshal(data), remarshal(out)
			if ja == nil || jb == nil || !bytes.Equal(ja, jb) {
				t.Fatalf("sanitizing %q changed its meaning: %s vs %s", data, ja, jb)
			}
		}
	})
}

// remarshal decodes data with encoding/json (keeping numbers as written)
// and encodes it again, or returns nil.
func remarshal(data []byte) []byte {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
