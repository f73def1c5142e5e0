package cursor

import (
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
)

// accCap bounds what acc keeps of a text: enough bytes for MaxText code
// points.
const accCap = 4 * agentstream.MaxText

// acc accumulates the pieces of one streamed text. It keeps the first
// accCap bytes, the whole size and a hash of the whole, so that a final copy
// of the whole text can be told from a new piece without keeping everything.
type acc struct {
	buf     []byte
	size    int
	chars   int
	hash    uint64
	n       int       // pieces added
	time    time.Time // the latest piece's time
	stamped bool      // a piece had its own time
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func (a *acc) add(s string, t time.Time) {
	if a.n == 0 {
		a.hash = fnvOffset
	}
	a.n++
	a.size += len(s)
	a.chars += utf8.RuneCountInString(s)
	a.hash = fnv(a.hash, s)
	if room := accCap - len(a.buf); room > 0 {
		if len(s) > room {
			s = s[:room]
		}
		a.buf = append(a.buf, s...)
	}
	if !t.IsZero() {
		a.time, a.stamped = t, true
	}
}

// whole reports whether s is the whole text accumulated so far.
func (a *acc) whole(s string) bool {
	return a.n > 0 && len(s) == a.size && fnv(fnvOffset, s) == a.hash
}

// text returns the accumulated text, clipped, and whether it was clipped.
func (a *acc) text() (string, bool) {
	t, trunc := agentstream.ClipBytes(a.buf, agentstream.MaxText)
	return t, trunc || a.chars > agentstream.MaxText
}

func (a *acc) reset() {
	a.buf = a.buf[:0]
	a.size, a.chars, a.n = 0, 0, 0
	a.time, a.stamped = time.Time{}, false
}
