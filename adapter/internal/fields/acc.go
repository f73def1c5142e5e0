package fields

import (
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
)

// accCap bounds what an Acc keeps of a text: enough bytes for MaxText code
// points.
const accCap = 4 * agentstream.MaxText

// Acc accumulates the pieces of one streamed text, for dialects that send a
// message only in pieces. It keeps the first bytes (enough for MaxText code
// points), the whole size and a hash of the whole, so that a final copy of
// the whole text can be told from a new piece without keeping everything.
// The zero value is empty and ready.
type Acc struct {
	buf []byte
	// N is the number of pieces added, Size their bytes, Chars their code
	// points, and Hash an FNV-1a hash of their concatenation.
	N, Size, Chars int
	Hash           uint64
	// Time is the latest piece's own time, and Stamped whether any piece
	// had one.
	Time    time.Time
	Stamped bool
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

// Add appends a piece, with its own time when it has one.
func (a *Acc) Add(s string, t time.Time) {
	if a.N == 0 {
		a.Hash = fnvOffset
	}
	a.N++
	a.Size += len(s)
	a.Chars += utf8.RuneCountInString(s)
	a.Hash = fnv(a.Hash, s)
	if room := accCap - len(a.buf); room > 0 {
		if len(s) > room {
			for room > 0 && !utf8.RuneStart(s[room]) {
				room--
			}
			s = s[:room]
		}
		a.buf = append(a.buf, s...)
	}
	if !t.IsZero() {
		a.Time, a.Stamped = t, true
	}
}

// Whole reports whether s is the whole text accumulated so far.
func (a *Acc) Whole(s string) bool {
	return a.N > 0 && len(s) == a.Size && fnv(fnvOffset, s) == a.Hash
}

// Text returns the accumulated text, clipped, and whether it was clipped.
func (a *Acc) Text() (string, bool) {
	t, trunc := agentstream.ClipBytes(a.buf, agentstream.MaxText)
	return t, trunc || a.Chars > agentstream.MaxText
}

// Reset empties the accumulator.
func (a *Acc) Reset() {
	a.buf = a.buf[:0]
	a.Size, a.Chars, a.N = 0, 0, 0
	a.Time, a.Stamped = time.Time{}, false
}

// Hash returns the hash Acc keeps of a whole text, for comparing a later
// copy of it.
func Hash(s string) uint64 { return fnv(fnvOffset, s) }
