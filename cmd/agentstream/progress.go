package main

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentstream/agentstream/console"
)

// progressEvery is how often a progress line is redrawn at most.
const progressEvery = 200 * time.Millisecond

// A progress draws, on one line of a terminal, how far a long reading has
// come: bytes and lines done of the total, and the rate. A nil *progress
// draws nothing (stderr is not a terminal); its methods may be called all
// the same. It is safe for concurrent use.
type progress struct {
	mu           sync.Mutex
	w            io.Writer
	what         string
	total, done  int64
	lines        int64
	start, drawn time.Time
	now          func() time.Time
}

// newProgress returns a progress of what over total bytes (0 when not
// known) drawn on e's stderr, or nil when stderr is not a terminal.
func newProgress(e *env, what string, total int64) *progress {
	if _, ok := console.Terminal(e.stderr); !ok {
		return nil
	}
	now := time.Now
	return &progress{w: e.stderr, what: what, total: total, start: now(), now: now}
}

// add counts bytes read, and the lines among them.
func (p *progress) add(b []byte) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += int64(len(b))
	p.lines += int64(bytes.Count(b, []byte{'\n'}))
	if t := p.now(); t.Sub(p.drawn) >= progressEvery {
		p.drawn = t
		p.draw("")
	}
}

// addLine counts one line of n bytes read (without its newline).
func (p *progress) addLine(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += int64(n)
	p.lines++
	if t := p.now(); t.Sub(p.drawn) >= progressEvery {
		p.drawn = t
		p.draw("")
	}
}

// setWhat names what is read now (a file of many).
func (p *progress) setWhat(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.what = what
	p.mu.Unlock()
}

// finish draws the final count and ends the line, if anything was read.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done > 0 {
		p.draw("\n")
	}
}

// draw writes the progress line over the last one; p.mu is held.
func (p *progress) draw(end string) {
	el := p.now().Sub(p.start).Seconds()
	rate := ""
	if el > 0 {
		rate = fmt.Sprintf(", %s/s", sizeText(int64(float64(p.done)/el)))
	}
	of := ""
	if p.total > 0 {
		of = fmt.Sprintf(" of %s (%d%%)", sizeText(p.total), p.done*100/p.total)
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s: %s%s, %d lines%s%s", p.what, sizeText(p.done), of, p.lines, rate, end)
}

// reader returns r counting what is read from it into p.
func (p *progress) reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return &progressReader{r: r, p: p}
}

type progressReader struct {
	r io.Reader
	p *progress
}

func (r *progressReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.p.add(b[:n])
	return n, err
}

// sizeText writes a byte count with a binary unit: 512 B, 1.5 KiB, 3.2 MiB.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/unit, 0
	for v >= unit && u < 3 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[u])
}
