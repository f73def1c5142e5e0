package agentstream

import (
	"bytes"
	"errors"
	"io"
)

// SplitCompleteLines returns the complete lines at the start of buf (without
// their "\n" or "\r\n") and the number of bytes they used; the caller advances
// its cursor by consumed and keeps the rest for the next read, so a line split
// across two reads is parsed once, whole. At EOF, whatever is left after
// consumed is the last line, which had no final newline. The returned lines
// alias buf.
func SplitCompleteLines(buf []byte) (lines [][]byte, consumed int) {
	for {
		i := bytes.IndexByte(buf[consumed:], '\n')
		if i < 0 {
			return lines, consumed
		}
		line := buf[consumed : consumed+i]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		lines = append(lines, line)
		consumed += i + 1
	}
}

// DefaultSoftLimit is the line size above which a LineReader stops buffering
// a line: 16 MiB.
const DefaultSoftLimit = 16 << 20

// ErrLineTooLong is returned by LineReader.Next when a line exceeds the
// reader's HardLimit.
var ErrLineTooLong = errors.New("agentstream: line exceeds the hard limit")

// A Line is one line of a harness's output, as a LineReader returns it.
type Line struct {
	// N is the 1-based line number within its stream.
	N int64
	// Bytes is the line without its terminator ("\n" or "\r\n") and, on the
	// first line, without a UTF-8 byte order mark. It is valid until the next
	// call to Next. It is nil for an oversized line.
	Bytes []byte
	// Size is the size of the whole line in bytes, without its terminator.
	Size int64
	// Oversized is true when the line was longer than the soft limit; it was
	// then read to its end without being held, and only Head was kept.
	Oversized bool
	// Head holds the first bytes of an oversized line: enough for MaxText
	// characters.
	Head []byte
}

// headBytes is how much of an oversized line is kept: MaxText characters of
// up to four bytes each.
const headBytes = 4 * MaxText

// LineReader reads lines from a harness's output in bounded memory: a line
// longer than SoftLimit is read through in chunks and reported as Oversized
// with its first bytes, so memory stays bounded by the soft limit however long
// a line is. It handles "\r\n", a UTF-8 byte order mark at the start, and a
// last line without a final newline. A LineReader is not safe for concurrent
// use.
type LineReader struct {
	// SoftLimit is the largest line held whole; zero means DefaultSoftLimit.
	SoftLimit int
	// HardLimit, when positive, makes Next return ErrLineTooLong for a line
	// longer than it, as soon as that is known.
	HardLimit int64

	r          io.Reader
	buf        []byte
	start, end int
	err        error
	n          int64
}

// NewLineReader returns a LineReader reading r.
func NewLineReader(r io.Reader) *LineReader { return &LineReader{r: r} }

func (lr *LineReader) softLimit() int {
	if lr.SoftLimit > 0 {
		return lr.SoftLimit
	}
	return DefaultSoftLimit
}

// fill reads more input after compacting or growing the buffer; it returns
// false when no more input will come.
func (lr *LineReader) fill(limit int) bool {
	if lr.err != nil {
		return false
	}
	if lr.start > 0 && (lr.start == lr.end || lr.end == len(lr.buf)) {
		copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.end -= lr.start
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		// Double up to 1 MiB, then go straight to the soft limit: a line
		// that long is likely to be much longer, and a chain of doublings
		// would leave twice the buffer behind as garbage at the peak.
		size := 2 * len(lr.buf)
		switch {
		case size == 0:
			size = 64 << 10
		case size > 1<<20:
			size = limit + 1
		}
		if size > limit+1 {
			size = limit + 1
		}
		if size <= len(lr.buf) {
			size = len(lr.buf) + 4096
		}
		nb := make([]byte, size)
		copy(nb, lr.buf[lr.start:lr.end])
		lr.end -= lr.start
		lr.start = 0
		lr.buf = nb
	}
	n, err := lr.r.Read(lr.buf[lr.end:])
	lr.end += n
	if err != nil {
		lr.err = err
	}
	return n > 0 || err == nil
}

// Next returns the next line. It returns io.EOF after the last line, the
// reader's error if reading failed, or ErrLineTooLong.
func (lr *LineReader) Next() (Line, error) {
	limit := lr.softLimit()
	scanned := 0
	for {
		if i := bytes.IndexByte(lr.buf[lr.start+scanned:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.start : lr.start+scanned+i]
			lr.start += scanned + i + 1
			l := lr.line(line)
			if lr.HardLimit > 0 && l.Size > lr.HardLimit {
				return Line{N: l.N, Size: l.Size}, ErrLineTooLong
			}
			return l, nil
		}
		scanned = lr.end - lr.start
		if scanned > limit {
			return lr.oversized()
		}
		if lr.HardLimit > 0 && int64(scanned) > lr.HardLimit {
			lr.n++
			return Line{N: lr.n, Size: int64(scanned)}, ErrLineTooLong
		}
		if !lr.fill(limit) {
			if lr.start < lr.end {
				line := lr.buf[lr.start:lr.end]
				lr.start = lr.end
				return lr.line(line), nil
			}
			if lr.err == nil || lr.err == io.EOF {
				return Line{}, io.EOF
			}
			return Line{}, lr.err
		}
	}
}

func (lr *LineReader) line(b []byte) Line {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	lr.n++
	if lr.n == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return Line{N: lr.n, Bytes: b, Size: int64(len(b))}
}

// oversized reads the rest of a line longer than the soft limit through the
// buffer without holding it, keeping its head.
func (lr *LineReader) oversized() (Line, error) {
	lr.n++
	l := Line{N: lr.n, Oversized: true}
	head := lr.buf[lr.start:lr.end]
	if lr.n == 1 {
		head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	}
	if len(head) > headBytes {
		head = head[:headBytes]
	}
	l.Head = append([]byte(nil), head...)
	size := int64(lr.end - lr.start)
	if lr.n == 1 && bytes.HasPrefix(lr.buf[lr.start:lr.end], []byte("\xef\xbb\xbf")) {
		size -= 3
	}
	lr.start, lr.end = 0, 0
	for {
		if lr.HardLimit > 0 && size > lr.HardLimit {
			l.Size = size
			return l, ErrLineTooLong
		}
		n, err := lr.r.Read(lr.buf)
		if i := bytes.IndexByte(lr.buf[:n], '\n'); i >= 0 {
			size += int64(i)
			lr.start, lr.end = i+1, n
			break
		}
		size += int64(n)
		if err != nil {
			lr.err = err
			break
		}
	}
	// The terminator's "\r" is not part of the line.
	if lr.start > 1 && lr.buf[lr.start-2] == '\r' {
		size--
	}
	l.Size = size
	return l, nil
}
