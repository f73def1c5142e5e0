package redact_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/agentstream/agentstream/redact"
)

// FuzzLine holds, for any line: no panic, the same length, valid JSON
// stays valid JSON, masking is idempotent, Head keeps the length, and the
// stream masks the line as Line does. Seeds: the test cases and the
// recordings of every adapter.
func FuzzLine(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c.line))
	}
	corpusLines(f, func(_ string, _ int, line []byte) {
		if len(line) < 4096 {
			f.Add(bytes.Clone(line))
		}
	})
	rules, err := redact.ParseRules(bytes.NewReader([]byte("name vault_id\npattern x tok_[0-9a-f]{4,}\nallow-pattern ^test")))
	if err != nil {
		f.Fatal(err)
	}
	r := redact.New(redact.Options{Key: testKey, Rules: rules})
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		checkMask(t, r, line)
		want := append(r.Line(bytes.Clone(line)), '\n')
		got, err := io.ReadAll(r.Reader(bytes.NewReader(append(bytes.Clone(line), '\n'))))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("the stream differs from Line:\n%q\n%q", got, want)
		}
	})
}
