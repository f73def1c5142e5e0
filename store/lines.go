package store

import (
	"bytes"
	"crypto/sha256"
	"hash"

	"github.com/agentstream/agentstream"
)

// LineSplitter is an io.Writer that cuts the bytes of one native stream
// into lines and calls Fn with each, numbered from 1 the way
// agentstream.LineReader numbers them: "\n" or "\r\n" ends a line, a UTF-8
// byte order mark at the start is dropped, and Close hands over a last
// line without a final newline. A line longer than SoftLimit is not held:
// Fn gets its first bytes, its full Size and its SHA-256, in bounded
// memory.
//
// The Line passed to Fn (and its Data) is valid only during the call. A
// LineSplitter is not safe for concurrent use. The first error Fn returns
// is returned by that Write and every later one.
type LineSplitter struct {
	// Stream is written in every Line.
	Stream string
	// SoftLimit is the largest line held whole; zero means
	// agentstream.DefaultSoftLimit.
	SoftLimit int
	// Fn receives each line.
	Fn func(Line) error

	buf     []byte
	n       int64
	started bool
	over    bool // the current line is past the soft limit
	size    int64
	head    []byte
	sum     hash.Hash
	lastCR  bool // the last byte hashed was '\r', not yet known to be part of the line
	err     error
}

// headKeep is how much of an oversized line is kept (never more than the
// soft limit, so that the head is always shorter than the line).
const headKeep = 4 * agentstream.MaxText

func (s *LineSplitter) limit() int {
	if s.SoftLimit > 0 {
		return s.SoftLimit
	}
	return agentstream.DefaultSoftLimit
}

// Write cuts p into lines.
func (s *LineSplitter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	total := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if s.over {
			chunk := p
			if i >= 0 {
				chunk = p[:i]
			}
			s.overflow(chunk)
			if i < 0 {
				return total, nil
			}
			p = p[i+1:]
			if err := s.endOversized(); err != nil {
				return total, err
			}
			continue
		}
		if i < 0 {
			s.buf = append(s.buf, p...)
			if len(s.buf) > s.limit() {
				s.startOversized()
			}
			return total, nil
		}
		var line []byte
		if len(s.buf) > 0 {
			s.buf = append(s.buf, p[:i]...)
			line = s.buf
		} else {
			line = p[:i]
		}
		p = p[i+1:]
		if len(line) > s.limit() {
			// Whole but too long (the buffer held less than the limit
			// until this write): hand it over as an oversized line too.
			s.buf = append(s.buf[:0], line...)
			s.startOversized()
			if err := s.endOversized(); err != nil {
				return total, err
			}
			continue
		}
		if err := s.emit(line); err != nil {
			return total, err
		}
		s.buf = s.buf[:0]
	}
	return total, nil
}

// Close hands over the last line when it had no final newline.
func (s *LineSplitter) Close() error {
	if s.err != nil {
		return s.err
	}
	if s.over {
		return s.endOversized()
	}
	if len(s.buf) > 0 {
		err := s.emit(s.buf)
		s.buf = s.buf[:0]
		return err
	}
	return nil
}

// Lines returns the number of lines handed over so far.
func (s *LineSplitter) Lines() int64 { return s.n }

func (s *LineSplitter) trimFirst(line []byte) []byte {
	if !s.started {
		s.started = true
		return bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	}
	return line
}

func (s *LineSplitter) emit(line []byte) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	line = s.trimFirst(line)
	s.n++
	if err := s.Fn(Line{Stream: s.Stream, N: s.n, Data: line, Size: int64(len(line))}); err != nil {
		s.err = err
		return err
	}
	return nil
}

func (s *LineSplitter) startOversized() {
	b := s.trimFirst(s.buf)
	s.over = true
	s.size = 0
	s.head = append(s.head[:0], b[:min(len(b), headKeep, s.limit())]...)
	if s.sum == nil {
		s.sum = sha256.New()
	} else {
		s.sum.Reset()
	}
	s.lastCR = false
	s.overflow(b)
	s.buf = s.buf[:0]
}

// overflow hashes the next bytes of an oversized line, holding back a final
// '\r' until it is known not to end the line.
func (s *LineSplitter) overflow(b []byte) {
	if len(b) == 0 {
		return
	}
	if s.lastCR {
		s.sum.Write([]byte{'\r'})
		s.size++
		s.lastCR = false
	}
	if b[len(b)-1] == '\r' {
		s.lastCR = true
		b = b[:len(b)-1]
	}
	s.sum.Write(b)
	s.size += int64(len(b))
}

func (s *LineSplitter) endOversized() error {
	s.over = false
	s.lastCR = false
	s.n++
	l := Line{Stream: s.Stream, N: s.n, Data: s.head, Size: s.size, SHA256: s.sum.Sum(nil)}
	if err := s.Fn(l); err != nil {
		s.err = err
		return err
	}
	return nil
}

// AgentLine returns l as the normalizer reads it: whole, or oversized with
// its head when only the head is kept.
func AgentLine(l Line) agentstream.Line {
	if l.Truncated() {
		return agentstream.Line{N: l.N, Size: l.Size, Oversized: true, Head: l.Data}
	}
	return agentstream.Line{N: l.N, Bytes: l.Data, Size: l.Size}
}
