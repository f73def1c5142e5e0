package jsonscan

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestString(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		want   string
		wantOK bool
	}{
		{"empty", `""`, "", true},
		{"plain", `"hello"`, "hello", true},
		{"surrounding whitespace", " \"a\"\n", "a", true},
		{"short escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", true},
		{"unicode escape", `"caf\u00e9"`, "café", true},
		{"upper hex", `"\u00E9\u00C9"`, "éÉ", true},
		{"nul escape", `"a\u0000b"`, "a\x00b", true},
		{"raw non-ascii", `"日本語 é 😀"`, "日本語 é 😀", true},
		{"surrogate pair", `"\ud83d\ude00"`, "😀", true},
		{"surrogate pair upper", `"\uD83D\uDE00!"`, "😀!", true},
		{"lone high surrogate", `"\ud800"`, "\uFFFD", true},
		{"lone high surrogate then text", `"\ud800abc"`, "\uFFFDabc", true},
		{"lone low surrogate", `"\udc00x"`, "\uFFFDx", true},
		{"reversed pair", `"\ude00\ud83d"`, "\uFFFD\uFFFD", true},
		{"high then non-surrogate escape", `"\ud83d\u0041"`, "\uFFFDA", true},
		{"high then newline escape", `"\ud83d\n"`, "\uFFFD\n", true},
		{"two highs then low", `"\ud83d\ud83d\ude00"`, "\uFFFD😀", true},
		{"invalid utf8 byte", "\"a\xffb\"", "a\uFFFDb", true},
		{"truncated utf8 sequence", "\"\xe2\x82\"", "\uFFFD\uFFFD", true},
		{"overlong encoding", "\"\xc0\xaf\"", "\uFFFD\uFFFD", true},
		{"utf8 surrogate bytes", "\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD", true},
		{"invalid utf8 with escapes", "\"\xff\\n\xfe\"", "\uFFFD\n\uFFFD", true},
		{"raw control passed through", "\"a\tb\x01\"", "a\tb\x01", true},
		{"long with escapes", `"` + strings.Repeat(`ab\"c\\d\n`, 50) + `"`, strings.Repeat("ab\"c\\d\n", 50), true},
		{"not a string", `123`, "", false},
		{"unterminated", `"abc`, "", false},
		{"trailing bytes", `"a"b`, "", false},
		{"two strings", `"a" "b"`, "", false},
		{"bad escape", `"\x"`, "", false},
		{"short unicode escape", `"\u12"`, "", false},
		{"lone quote", `"`, "", false},
		{"empty input", ``, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := String([]byte(tt.in))
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("String(%q) ok (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("String(%q) (-want +got):\n%s", tt.in, diff)
			}
			out, ok := AppendString([]byte("prefix:"), []byte(tt.in))
			want := "prefix:" + tt.want
			if diff := cmp.Diff(want, string(out)); diff != "" {
				t.Errorf("AppendString(%q) (-want +got):\n%s", tt.in, diff)
			}
			if diff := cmp.Diff(tt.wantOK, ok); diff != "" {
				t.Errorf("AppendString(%q) ok (-want +got):\n%s", tt.in, diff)
			}
			if ok {
				if !utf8.ValidString(got) {
					t.Errorf("String(%q) is not valid UTF-8", tt.in)
				}
				if !StringIs([]byte(tt.in), tt.want) {
					t.Errorf("StringIs(%q, %q) = false", tt.in, tt.want)
				}
				if StringIs([]byte(tt.in), tt.want+"x") {
					t.Errorf("StringIs(%q, %q+x) = true", tt.in, tt.want)
				}
			} else if StringIs([]byte(tt.in), tt.want) {
				t.Errorf("StringIs on invalid %q = true", tt.in)
			}
		})
	}
}

func TestStringIs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		s    string
		want bool
	}{
		{"equal", `"tool_use"`, "tool_use", true},
		{"different", `"tool_use"`, "tool_result", false},
		{"escaped equal", `"tool\u005fuse"`, "tool_use", true},
		{"not a string", `tool_use`, "tool_use", false},
		{"invalid string", `"tool_use`, "tool_use", false},
		{"null is not empty", `null`, "", false},
		{"empty", `""`, "", true},
		{"raw invalid vs invalid", "\"\xff\"", "\xff", false},
		{"raw invalid vs replacement", "\"\xff\"", "\uFFFD", true},
		{"replacement vs invalid input", `"\ufffd"`, "\xff", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, StringIs([]byte(tt.in), tt.s)); diff != "" {
				t.Errorf("StringIs(%q, %q) (-want +got):\n%s", tt.in, tt.s, diff)
			}
		})
	}
}

func TestStringClip(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		max       int
		want      string
		wantTotal int
		wantTrunc bool
		wantOK    bool
	}{
		{"empty", `""`, 5, "", 0, false, true},
		{"empty max 0", `""`, 0, "", 0, false, true},
		{"max 0", `"abc"`, 0, "", 3, true, true},
		{"negative max", `"abc"`, -3, "", 3, true, true},
		{"shorter", `"abc"`, 5, "abc", 3, false, true},
		{"exact boundary", `"abc"`, 3, "abc", 3, false, true},
		{"one short", `"abcd"`, 3, "abc", 4, true, true},
		{"two byte runes", `"ééé"`, 2, "éé", 3, true, true},
		{"four byte rune not split", `"a😀b"`, 2, "a😀", 3, true, true},
		{"escape counts once", `"\n\n\n"`, 2, "\n\n", 3, true, true},
		{"unicode escape counts once", `"\u00e9x"`, 1, "é", 2, true, true},
		{"surrogate pair counts once", `"\ud83d\ude00\ud83d\ude00"`, 1, "😀", 2, true, true},
		{"surrogate pair exact", `"\ud83d\ude00"`, 1, "😀", 1, false, true},
		{"surrogate pair at max 0", `"\ud83d\ude00"`, 0, "", 1, true, true},
		{"lone surrogates count once each", `"\ud83d\ud83d\ude00x"`, 2, "\uFFFD😀", 3, true, true},
		{"lone surrogate before escape", `"\ud83d\u0041\u0042"`, 1, "\uFFFD", 3, true, true},
		{"invalid bytes count each", "\"\xff\xfeab\"", 3, "\uFFFD\uFFFDa", 4, true, true},
		{"truncated sequence", "\"\xe2\x82abc\"", 1, "\uFFFD", 5, true, true},
		{"mixed escapes and text", `"ab\tcd\"ef"`, 4, "ab\tc", 8, true, true},
		{"clip right before escape", `"abcd\nef"`, 4, "abcd", 7, true, true},
		{"clip right after escape", `"abcd\nef"`, 5, "abcd\n", 7, true, true},
		{"long ascii", `"` + strings.Repeat("x", 1000) + `"`, 100, strings.Repeat("x", 100), 1000, true, true},
		{"long mixed", `"` + strings.Repeat(`é\n😀\"abcdefghijk`, 100) + `"`, 32,
			strings.Repeat("é\n😀\"abcdefghijk", 2) + "é\n", 1500, true, true},
		{"huge max", `"abc"`, int(^uint(0) >> 1), "abc", 3, false, true},
		{"invalid", `"abc`, 2, "", 0, false, false},
		{"not a string", `12`, 2, "", 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				S         string
				Total     int
				Truncated bool
				OK        bool
			}
			want := result{tt.want, tt.wantTotal, tt.wantTrunc, tt.wantOK}
			s, total, trunc, ok := StringClip([]byte(tt.in), tt.max)
			if diff := cmp.Diff(want, result{s, total, trunc, ok}); diff != "" {
				t.Errorf("StringClip(%q, %d) (-want +got):\n%s", tt.in, tt.max, diff)
			}
			out, total, trunc, ok := AppendStringClip([]byte("p:"), []byte(tt.in), tt.max)
			want.S = "p:" + want.S
			if diff := cmp.Diff(want, result{string(out), total, trunc, ok}); diff != "" {
				t.Errorf("AppendStringClip(%q, %d) (-want +got):\n%s", tt.in, tt.max, diff)
			}
		})
	}
}

// TestStringClipEveryMax checks, for every max, that the clip is a prefix
// of the full decoding made of whole code points and that total is right.
func TestStringClipEveryMax(t *testing.T) {
	inputs := []string{
		`"` + strings.Repeat(`héllo \"wörld\" \ud83d\ude00\t\u4e2d\\ `, 5) + "\xff\xe2\x82 \\ud800 end" + `"`,
		"\"\xf0\x9f\x98\x80\xf0\x9f\x98 x \\u0041\\u00e9\"",
		`"` + strings.Repeat("a", 17) + `\n` + strings.Repeat("ü", 9) + `"`,
	}
	for i, in := range inputs {
		full, ok := String([]byte(in))
		if !ok {
			t.Fatalf("input %d invalid", i)
		}
		runes := []rune(full)
		for max := 0; max <= len(runes)+2; max++ {
			got, total, trunc, ok := StringClip([]byte(in), max)
			want := string(runes[:min(max, len(runes))])
			if !ok || got != want || total != len(runes) || trunc != (max < len(runes)) {
				t.Fatalf("input %d max %d: got %q %d %v %v; want %q %d %v", i, max, got, total, trunc, ok,
					want, len(runes), max < len(runes))
			}
		}
	}
}

func TestStringClipInvalid(t *testing.T) {
	long := strings.Repeat("abcdefgh", 20)
	tests := []struct {
		name string
		in   string
	}{
		{"bad escape inside clip", `"a\qb` + long + `"`},
		{"bad escape after clip", `"ab` + long + `\q"`},
		{"bad hex inside clip", `"\u12x4` + long + `"`},
		{"bad hex after clip", `"ab` + long + `\u12x4"`},
		{"bad second surrogate hex after clip", `"ab` + long + `\ud83d\udXYZ"`},
		{"unterminated after clip", `"ab` + long},
		{"unterminated by escaped quote", `"ab` + long + `\"`},
		{"backslash at end", `"ab` + long + `\`},
		{"trailing bytes", `"ab` + long + `"x`},
		{"quote inside clip then bytes", `"a"` + long},
		{"no opening quote", `ab"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{0, 1, 2, 50, 1 << 30} {
				dst := []byte("keep")
				out, total, trunc, ok := AppendStringClip(dst, []byte(tt.in), limit)
				if ok || total != 0 || trunc || string(out) != "keep" {
					t.Errorf("AppendStringClip(%q, %d) = %q, %d, %v, %v; want unchanged dst and ok=false",
						tt.in, limit, out, total, trunc, ok)
				}
			}
			if out, ok := AppendString([]byte("keep"), []byte(tt.in)); ok || string(out) != "keep" {
				t.Errorf("AppendString(%q) = %q, %v", tt.in, out, ok)
			}
			if _, ok := String([]byte(tt.in)); ok {
				t.Errorf("String(%q) ok", tt.in)
			}
			if Valid([]byte(tt.in)) {
				t.Errorf("Valid(%q) = true", tt.in)
			}
		})
	}
}

func TestStringLong(t *testing.T) {
	// Long strings exercise the IndexByte paths of the scanners.
	text := strings.Repeat("x", 300) + "é" + strings.Repeat("y", 300) + "\n\"" + strings.Repeat("z", 100) + "\xff"
	v := jsonString(text)
	v = bytes.Replace(v, []byte(`\ufffd`), []byte("\xff"), 1) // put the raw invalid byte back
	want := strings.ToValidUTF8(text, "\uFFFD")
	got, ok := String(v)
	if !ok || got != want {
		t.Fatalf("String: ok=%v, mismatch", ok)
	}
	for _, limit := range []int{0, 299, 300, 301, 302, 601, 602, 603, 700, 704, 705, 10000} {
		runes := []rune(want)
		clip, total, trunc, ok := StringClip(v, limit)
		wantClip := string(runes[:min(limit, len(runes))])
		if !ok || clip != wantClip || total != len(runes) || trunc != (limit < len(runes)) {
			t.Errorf("StringClip(%d) = %d bytes, %d, %v, %v; want %d bytes, %d", limit, len(clip), total, trunc, ok,
				len(wantClip), len(runes))
		}
	}
}
