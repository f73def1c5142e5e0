package redact

import (
	"bytes"
	"io"
)

// The stream's windows: a line longer than streamWindow is masked a window
// at a time, the last streamKeep bytes of each held back and looked at
// again with what follows, so that a secret shorter than streamKeep is
// found whole wherever the windows fall.
const (
	streamWindow = 1 << 20
	streamKeep   = 64 << 10
)

// Reader returns a reader of src's bytes with the secrets of every line
// masked as Line masks them, the length of everything kept: what the
// runner reads a harness's output through, so that its spool, its decoder
// and its handlers see only masked lines. A line is passed on once it
// ended ("\n"), or a window at a time when it is longer than a MiB; the
// last line, without a final newline, at the end of src. Memory stays
// bounded however long a line is. The reader is not safe for concurrent
// use; src's error is returned once what was read before it is passed on.
func (r *Redactor) Reader(src io.Reader) io.Reader {
	return &reader{red: r, src: src}
}

type reader struct {
	red *Redactor
	src io.Reader
	// buf[out:done] is masked and waits to be read; buf[done:] is the
	// current line's part not passed on, of which buf[done:scanned] holds
	// no newline.
	buf       []byte
	out, done int
	scanned   int
	cont      bool // the current line started before buf[done]
	js        bool // the current line is JSON (when cont)
	err       error
}

func (x *reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for x.out == x.done {
		if x.err != nil {
			if x.done < len(x.buf) {
				x.maskLine(len(x.buf), false)
				continue
			}
			return 0, x.err
		}
		x.fill()
		x.process()
	}
	n := copy(p, x.buf[x.out:x.done])
	x.out += n
	return n, nil
}

// fill reads more of src after moving what is not passed on to the front.
func (x *reader) fill() {
	if x.out == x.done && x.done > 0 {
		n := copy(x.buf, x.buf[x.done:])
		x.buf = x.buf[:n]
		x.scanned -= x.done
		x.out, x.done = 0, 0
	}
	if len(x.buf) == cap(x.buf) {
		nb := make([]byte, len(x.buf), max(64<<10, 2*cap(x.buf)))
		copy(nb, x.buf)
		x.buf = nb
	}
	free := x.buf[len(x.buf):min(cap(x.buf), len(x.buf)+streamWindow/4)]
	n, err := x.src.Read(free)
	x.buf = x.buf[:len(x.buf)+n]
	if err != nil {
		x.err = err
	}
}

// process masks the lines that ended, and a window of a line too long to
// hold.
func (x *reader) process() {
	for {
		i := bytes.IndexByte(x.buf[x.scanned:], '\n')
		if i < 0 {
			x.scanned = len(x.buf)
			break
		}
		end := x.scanned + i
		x.maskLine(end, false)
		x.done = end + 1
		x.scanned = x.done
		x.cont = false
	}
	if len(x.buf)-x.done > streamWindow {
		x.maskLine(len(x.buf), true)
	}
}

// maskLine masks buf[done:end], the end of a line or (cut) a window of
// it, and moves done past what is final.
func (x *reader) maskLine(end int, cut bool) {
	b := x.buf[x.done:end]
	js := x.js
	if !x.cont {
		js = isJSON(b)
	}
	var arr [8]span
	spans := merge(x.red.scan(b, js, cut, arr[:0]))
	if !cut {
		for _, s := range spans {
			x.red.mask(b, s, js)
		}
		x.done = end
		return
	}
	// Hold back the last streamKeep bytes, and what a secret that may go
	// on past the window depends on.
	hold := len(b) - streamKeep
	for _, s := range spans {
		if s.open && s.start >= len(b)-streamKeep {
			hold = min(hold, s.ctx)
		}
	}
	hold = max(hold, 1)
	for _, s := range spans {
		if s.open && s.start >= len(b)-streamKeep {
			continue
		}
		x.red.mask(b, s, js)
	}
	x.done += hold
	x.scanned = max(x.scanned, x.done)
	x.cont, x.js = true, js
}
