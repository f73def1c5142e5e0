package sqlite

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
)

// How a native line's bytes are kept (the lines table's codec column,
// migration 7). Each row says its own, so that the rows stored before the
// column existed (NULL) are read as they are, with no migration rewriting
// them; a magic prefix instead would have needed escaping the raw lines
// that begin with it. An event body needs no column: see encodeBody.
const (
	// codecNone: the bytes as they are (NULL in the column).
	codecNone = 0
	// codecS2: the S2 block encoding (github.com/klauspost/compress/s2)
	// of the bytes.
	codecS2 = 1
)

// compressMin is the size from which a line or a body is compressed.
// Shorter ones are stored as they are: they hold little that repeats
// within themselves (on the benchmark workload, the 266,000 lines under
// 2 KiB would shrink by a third at most), and compressing them would cost
// more than writing the bytes it saves.
const compressMin = 2 << 10

// maxBody is the size of the largest event body kept compressed, which
// bounds what reading one may allocate (a line's is bounded by its size).
const maxBody = 256 << 20

// encodeData returns how b is to be stored: its S2 encoding, appended to
// buf, when b is at least compressMin long and the encoding saves at least
// an eighth of it; else b itself, with codecNone. The returned buf is the
// one to reuse; the encodings appended before stay valid.
func encodeData(buf, b []byte) (data, newBuf []byte, codec int) {
	if len(b) < compressMin || len(b) > maxBody {
		return b, buf, codecNone
	}
	n := s2.MaxEncodedLen(len(b))
	if n < 0 {
		return b, buf, codecNone
	}
	if cap(buf)-len(buf) < n {
		// A new buffer: the one before stays referenced by the rows
		// already encoded into it.
		buf = make([]byte, 0, max(n, 2*cap(buf), 1<<20))
	}
	enc := s2.Encode(buf[len(buf):len(buf)+n], b)
	if len(enc) > len(b)-len(b)/8 {
		return b, buf, codecNone
	}
	return enc, buf[:len(buf)+len(enc)], codecS2
}

// encodeBufs holds the buffers commits encode into, so that a commit
// reuses what an earlier one allocated instead of zeroing a new one.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// getEncodeBuf returns an empty buffer for encodeData; putEncodeBuf gives
// it back once the statements that refer to it have run.
func getEncodeBuf() *[]byte { return encodeBufs.Get().(*[]byte) }

func putEncodeBuf(p *[]byte, b []byte) {
	if cap(b) <= 16<<20 {
		*p = b[:0]
		encodeBufs.Put(p)
	}
}

// encodeBody returns how an event body (store.AppendBody, which always
// begins with '"') is to be stored: as encodeData decides. An S2 block of
// compressMin bytes or more begins with its length as a varint of two
// bytes or more, whose first byte is 0x80 or above: a stored body that
// does not begin with '"' is compressed (see decodeBody). This needs no
// column, and so costs the short bodies, most of them, nothing.
func encodeBody(buf, body []byte) (data, newBuf []byte) {
	data, newBuf, _ = encodeData(buf, body)
	return data, newBuf
}

// decodeBody returns the event body stored as data.
func decodeBody(data []byte) ([]byte, error) {
	if len(data) == 0 || data[0] == '"' {
		return data, nil
	}
	return decodeData(data, codecS2, maxBody)
}

// codecArg is the codec column's value for codec.
func codecArg(codec int) any {
	if codec == codecNone {
		return nil
	}
	return codec
}

// decodeData returns the bytes of data stored with codec, which are at
// most limit long: decoding never allocates more.
func decodeData(data []byte, codec int64, limit int64) ([]byte, error) {
	switch codec {
	case codecNone:
		return data, nil
	case codecS2:
		n, err := s2.DecodedLen(data)
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		if int64(n) > limit {
			return nil, fmt.Errorf("decode: %d bytes, more than the %d it can hold", n, limit)
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
