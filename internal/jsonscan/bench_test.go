package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// toolResultText returns about n bytes of text resembling a tool result:
// source code and prose with tabs, quotes, backslashes and non-ASCII.
func toolResultText(n int) string {
	lines := []string{
		"func parse(s string) (int, error) {",
		"\tv, err := strconv.Atoi(strings.TrimSpace(s))",
		"\tif err != nil {",
		"\t\treturn 0, fmt.Errorf(\"parse %q: %w\", s, err) // échec de l'analyse",
		"\t}",
		"\treturn v, nil",
		"}",
		"// Größenänderung für naïve Café-Kunden — 处理用户输入 😀",
		`	re := regexp.MustCompile("^\\d+(\\.\\d+)?$")`,
		"    path := \"C:\\\\Users\\\\dev\\\\project\\\\main.go\"",
		"  1234 | total: 5 files changed, 120 insertions(+), 37 deletions(-)",
		"",
	}
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// proseText returns about n bytes of markdown-like prose and log output:
// a newline every 60-100 bytes, occasional quotes and non-ASCII.
func proseText(n int) string {
	lines := []string{
		"## Summary of the changes made to the configuration loader",
		"The loader now reads `config.yaml` first and falls back to the defaults when the file is missing.",
		"I ran the full test suite: 142 passed, 0 failed, 3 skipped (took 4.2s on the CI runner).",
		"Note: the \"timeout\" option is expressed in seconds, not milliseconds — see the docs.",
		"ok  \tgithub.com/example/project/internal/config\t0.412s\tcoverage: 87.3% of statements",
		"Les résumés sont générés automatiquement; 日本語のテキストも正しく処理されます。",
		"- Updated README.md with the new flags and an example invocation for local development",
		"",
	}
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(lines[i%len(lines)])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// jsonString encodes s the way JSON.stringify does (no HTML escaping).
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// claudeLine is a typical ~1 KB line of Claude Code stream-json output.
var claudeLine = []byte(`{"type":"assistant","message":{"id":"msg_01Q8vYz7mJ2k3R4sT5uV6wX7","type":"message","role":"assistant",` +
	`"model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"I'll look at the failing test first, then check ` +
	`how \"parse\" handles whitespace.\nThe error mentions a trailing newline, so the input is probably not trimmed before strconv.Atoi sees it.\n\nLet me run it."},{"type":"tool_use","id":"toolu_01AbCdEfGhIjKlMnOpQrStUv",` +
	`"name":"Bash","input":{"command":"go test ./internal/parse/ -run TestParse -v 2>&1 | head -50","description":` +
	`"Run the parse tests"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4,` +
	`"cache_creation_input_tokens":2345,"cache_read_input_tokens":18734,"cache_creation":{"ephemeral_5m_input_tokens":2345,` +
	`"ephemeral_1h_input_tokens":0},"output_tokens":187,"service_tier":"standard"},"context_management":null},` +
	`"parent_tool_use_id":null,"session_id":"5f0c2b7e-8a41-4c1d-9e3f-2a7b6c5d4e3f","uuid":"b1e2c3d4-5f60-4718-8a9b-0c1d2e3f4a5b"}`)

var (
	string100K = jsonString(toolResultText(100 << 10))
	string2M   = jsonString(toolResultText(2 << 20))
	prose2M    = jsonString(proseText(2 << 20))
)

func BenchmarkSkipString(b *testing.B) {
	for _, bc := range []struct {
		name string
		v    []byte
	}{{"code-100KB", string100K}, {"code-2MB", string2M}, {"prose-2MB", prose2M}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.v)))
			b.ReportAllocs()
			for b.Loop() {
				if end, err := Skip(bc.v, 0); err != nil || end != len(bc.v) {
					b.Fatal(end, err)
				}
			}
		})
	}
}

func BenchmarkStringClip8000(b *testing.B) {
	for _, bc := range []struct {
		name string
		v    []byte
	}{{"code-2MB", string2M}, {"prose-2MB", prose2M}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.v)))
			b.ReportAllocs()
			for b.Loop() {
				if _, total, trunc, ok := StringClip(bc.v, 8000); !ok || !trunc || total < 8000 {
					b.Fatal(total, trunc, ok)
				}
			}
		})
	}
}

func BenchmarkAppendString2MB(b *testing.B) {
	b.SetBytes(int64(len(string2M)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(string2M))
	for b.Loop() {
		var ok bool
		if buf, ok = AppendString(buf[:0], string2M); !ok {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkAppendStringSmall decodes texts of the sizes of messages and
// deltas, where the cost of each escape and of each call tells.
func BenchmarkAppendStringSmall(b *testing.B) {
	for _, n := range []int{40, 300} {
		var vs [][]byte
		size := 0
		text := toolResultText(64 << 10)
		for i := 0; i+n < len(text); i += n + 7 {
			v := jsonString(strings.ToValidUTF8(text[i:i+n], ""))
			vs = append(vs, v)
			size += len(v)
		}
		b.Run(strconv.Itoa(n)+"B", func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				for _, v := range vs {
					var ok bool
					if buf, ok = AppendString(buf[:0], v); !ok {
						b.Fatal("invalid")
					}
				}
			}
		})
	}
}

func BenchmarkObjectIterate(b *testing.B) {
	b.Run("top-level", func(b *testing.B) {
		b.SetBytes(int64(len(claudeLine)))
		b.ReportAllocs()
		for b.Loop() {
			o, _ := Object(claudeLine)
			n := 0
			for o.Next() {
				if o.KeyIs("type") && StringIs(o.Value(), "assistant") {
					n++
				}
			}
			if o.Err() != nil || n != 1 {
				b.Fatal(o.Err())
			}
		}
	})
	b.Run("extract", func(b *testing.B) {
		// What an adapter does: find the message, count its tool_use
		// blocks and read the usage counters.
		b.SetBytes(int64(len(claudeLine)))
		b.ReportAllocs()
		for b.Loop() {
			if blocks, in, out, err := extractClaude(claudeLine); err != nil || blocks != 1 || in != 4 || out != 187 {
				b.Fatal(err, blocks, in, out)
			}
		}
	})
}

// extractClaude is the body of the "extract" benchmark. It lives in its own
// function because Go 1.26.8 crashes (internal compiler error in escape
// analysis) on a tagless switch whose case calls a function directly inside
// a b.Loop body.
func extractClaude(line []byte) (blocks int, in, out int64, err error) {
	o, _ := Object(line)
	for o.Next() {
		if !o.KeyIs("message") {
			continue
		}
		m, _ := Object(o.Value())
		for m.Next() {
			switch {
			case m.KeyIs("content"):
				a, _ := Array(m.Value())
				for a.Next() {
					if StringIs(Get(a.Value(), "type"), "tool_use") {
						blocks++
					}
				}
			case m.KeyIs("usage"):
				in, _ = Int(Get(m.Value(), "input_tokens"))
				out, _ = Int(Get(m.Value(), "output_tokens"))
			}
		}
		if err = m.Err(); err != nil {
			return
		}
	}
	return blocks, in, out, o.Err()
}

func BenchmarkValidLine(b *testing.B) {
	b.SetBytes(int64(len(claudeLine)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(claudeLine) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkGetPath(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if GetPath(claudeLine, "message", "usage", "output_tokens") == nil {
			b.Fatal("missing")
		}
	}
}

func BenchmarkAppendQuote(b *testing.B) {
	long := toolResultText(100 << 10)
	for _, bc := range []struct {
		name string
		s    string
	}{{"short", "Run the parse tests"}, {"100KB", long}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			buf := make([]byte, 0, 2*len(bc.s)+2)
			for b.Loop() {
				buf = AppendQuote(buf[:0], bc.s)
			}
		})
	}
}

func BenchmarkAppendSanitized(b *testing.B) {
	doc := []byte(`{"type":"user","content":` + string(string100K) + `}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	buf := make([]byte, 0, len(doc))
	for b.Loop() {
		var ok bool
		if buf, ok = AppendSanitized(buf[:0], doc); !ok {
			b.Fatal("invalid")
		}
	}
}

func TestBenchmarkData(t *testing.T) {
	for name, v := range map[string][]byte{"100K": string100K, "2M": string2M, "prose": prose2M, "line": claudeLine} {
		if !json.Valid(v) || !Valid(v) {
			t.Errorf("%s is not valid", name)
		}
	}
	if n := len(claudeLine); n < 900 || n > 1200 {
		t.Errorf("claudeLine is %d bytes, want about 1 KB", n)
	}
}

func TestZeroAllocs(t *testing.T) {
	escapedKey := []byte(`{"t\u0079pe":"x","a":[1,2,{"b":null}],"n":-12}`)
	buf := make([]byte, 0, 4096)
	tests := []struct {
		name string
		fn   func()
	}{
		{"Skip", func() { _, _ = Skip(claudeLine, 0) }},
		{"Skip string", func() { _, _ = Skip(string100K, 0) }},
		{"Valid", func() { _ = Valid(claudeLine) }},
		{"Valid invalid", func() { _ = Valid(claudeLine[:500]) }},
		{"Obj", func() {
			o, _ := Object(claudeLine)
			for o.Next() {
				_ = o.KeyIs("type") && StringIs(o.Value(), "assistant")
			}
			_ = o.Err()
		}},
		{"KeyIs escaped", func() {
			o, _ := Object(escapedKey)
			for o.Next() {
				_ = o.KeyIs("type")
			}
		}},
		{"Arr", func() {
			a, _ := Array(Get(escapedKey, "a"))
			for a.Next() {
				_ = a.Value()
			}
			_ = a.Err()
		}},
		{"StringIs", func() { _ = StringIs([]byte(`"tool\u005fuse"`), "tool_use") }},
		{"Int", func() { _, _ = Int([]byte("1500e-2")) }},
		{"Bool IsNull KindOf", func() { _, _ = Bool([]byte("true")); _ = IsNull([]byte("null")); _ = KindOf(claudeLine) }},
		{"GetPath", func() { _ = GetPath(claudeLine, "message", "usage", "output_tokens") }},
		{"AppendString", func() { _, _ = AppendString(buf[:0], []byte(`"h\u00e9llo\n\ud83d\ude00"`)) }},
		{"AppendStringClip", func() { _, _, _, _ = AppendStringClip(buf[:0], string100K, 1000) }},
		{"AppendCompact", func() { _, _ = AppendCompact(buf[:0], claudeLine) }},
		{"AppendSanitized", func() { _, _ = AppendSanitized(buf[:0], claudeLine) }},
		{"AppendQuote", func() { _ = AppendQuote(buf[:0], "a \"quoted\"\n\xff string") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.fn); n != 0 {
				t.Errorf("%s allocates %v times per run", tt.name, n)
			}
		})
	}
}
