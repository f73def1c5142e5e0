package main

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// TestReadAhead reads sources of several sizes, around the chunk size,
// through readAhead in reads of several sizes: the same bytes, then EOF;
// a source's error comes after the bytes read before it; Close before
// the end, and again, is harmless.
func TestReadAhead(t *testing.T) {
	for _, size := range []int{0, 1, aheadChunkSize - 1, aheadChunkSize, aheadChunkSize + 1, 5*aheadChunkSize + 17} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i*7 + i/251)
		}
		for _, read := range []int{1, 4096, aheadChunkSize + 3} {
			ra := readAhead(iotest.HalfReader(bytes.NewReader(src)))
			var got []byte
			buf := make([]byte, read)
			for {
				n, err := ra.Read(buf)
				got = append(got, buf[:n]...)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			ra.Close()
			if !bytes.Equal(got, src) {
				t.Fatalf("size %d, reads of %d: got %d bytes, not the source's", size, read, len(got))
			}
		}
	}

	boom := errors.New("boom")
	ra := readAhead(io.MultiReader(bytes.NewReader([]byte("before")), iotest.ErrReader(boom)))
	got, err := io.ReadAll(ra)
	ra.Close()
	if string(got) != "before" || !errors.Is(err, boom) {
		t.Errorf("got %q, %v; want \"before\", boom", got, err)
	}

	ra = readAhead(bytes.NewReader(make([]byte, 20*aheadChunkSize)))
	if _, err := ra.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	ra.Close()
	ra.Close() // twice is harmless
}
