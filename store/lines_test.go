package store_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

type got struct {
	N      int64
	Data   string
	Size   int64
	SHA256 []byte
}

// TestLineSplitter checks that LineSplitter numbers and cuts lines as
// agentstream.LineReader does, however the bytes are written, and gives the
// size and SHA-256 of lines past the soft limit.
func TestLineSplitter(t *testing.T) {
	long := strings.Repeat("z", 100)
	sum := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	tests := []struct {
		name, in string
	}{
		{"plain", "a\nb\n"},
		{"no final newline", "a\nb"},
		{"crlf", "a\r\nb\r\n\r\n"},
		{"bom", "\xef\xbb\xbfa\nb\n"},
		{"blank lines", "\n\n\nx\n"},
		{"oversized", "a\n" + long + "\nb\n"},
		{"oversized crlf", long + "\r\nb"},
		{"oversized last", "a\n" + long},
		{"empty", ""},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 1000} {
			t.Run(fmt.Sprintf("%s/chunks of %d", tt.name, chunk), func(t *testing.T) {
				var want []got
				lr := agentstream.NewLineReader(strings.NewReader(tt.in))
				lr.SoftLimit = 40
				for {
					l, err := lr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					g := got{N: l.N, Data: string(l.Bytes), Size: l.Size}
					if l.Oversized {
						// How much of the head is kept depends on the
						// reads; compare a prefix.
						g.Data = string(l.Head[:20])
						g.SHA256 = sum(long)
					}
					want = append(want, g)
				}
				var out []got
				sp := &store.LineSplitter{Stream: "stdout", SoftLimit: 40, Fn: func(l store.Line) error {
					g := got{N: l.N, Data: string(l.Data), Size: l.Size, SHA256: l.SHA256}
					if l.Truncated() {
						g.Data = g.Data[:20]
					}
					out = append(out, g)
					return nil
				}}
				in := []byte(tt.in)
				for len(in) > 0 {
					n := min(chunk, len(in))
					sp.Write(in[:n])
					in = in[n:]
				}
				if err := sp.Close(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, out, cmp.Comparer(bytes.Equal)); diff != "" {
					t.Errorf("lines (-LineReader +LineSplitter):\n%s", diff)
				}
			})
		}
	}
}
