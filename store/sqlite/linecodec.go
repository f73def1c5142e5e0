package sqlite

import (
	"fmt"

	"github.com/klauspost/compress/s2"
)

// How a native line's bytes are kept (the lines table's codec column,
// migration 7). Each row says its own, so that the rows stored before the
// column existed (NULL) are read as they are, with no migration rewriting
// them.
const (
	// codecNone: data is the line's bytes as they are (NULL in the
	// column).
	codecNone = 0
	// codecS2: data is the S2 block encoding
	// (github.com/klauspost/compress/s2) of the line's bytes.
	codecS2 = 1
)

// compressMin is the size from which a line is compressed. The lines
// below it are stored as they are: a short line holds little that
// repeats within itself (on the benchmark workload, the 266,000 lines
// under 2 KiB shrink by a third at most), and compressing it would cost
// more than writing the bytes it saves.
const compressMin = 2 << 10

// encodeLine returns how line is to be stored: its S2 encoding, appended
// to buf, when it is at least compressMin long and the encoding saves at
// least an eighth of it; else line itself, with codecNone. The returned
// buf is the one to reuse.
func encodeLine(buf, line []byte) (data, newBuf []byte, codec int) {
	if len(line) < compressMin {
		return line, buf, codecNone
	}
	n := s2.MaxEncodedLen(len(line))
	if n < 0 {
		return line, buf, codecNone
	}
	if cap(buf)-len(buf) < n {
		// A new buffer: the one before stays referenced by the rows
		// already encoded into it.
		buf = make([]byte, 0, max(n, 2*cap(buf), 1<<20))
	}
	enc := s2.Encode(buf[len(buf):len(buf)+n], line)
	if len(enc) > len(line)-len(line)/8 {
		return line, buf, codecNone
	}
	return enc, buf[:len(buf)+len(enc)], codecS2
}

// decodeLine returns the bytes of a line stored with codec, whose whole
// size is size: a line's kept bytes are never more than its size, which
// bounds what decoding may allocate.
func decodeLine(data []byte, codec int64, size int64) ([]byte, error) {
	switch codec {
	case codecNone:
		return data, nil
	case codecS2:
		n, err := s2.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if int64(n) > size {
			return nil, fmt.Errorf("decode: %d bytes, more than the line's size %d", n, size)
		}
		out, err := s2.Decode(make([]byte, n), data)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown codec %d", codec)
	}
}
