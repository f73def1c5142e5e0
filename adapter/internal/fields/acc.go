package fields

import (
	"hash/maphash"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
)

// accCap bounds what an Acc keeps of a text: enough bytes for MaxText code
// points, so that a text longer than accCap bytes is always clipped.
const accCap = 4 * agentstream.MaxText

// hashSeed is the seed of the hashes Acc keeps. They are compared only
// within the process, never stored.
var hashSeed = maphash.MakeSeed()

// Acc accumulates the pieces of one streamed text, for dialects that send a
// message only in pieces. It keeps the first bytes (enough for MaxText code
// points), the whole size and a hash of the whole, so that a final copy of
// the whole text can be told from a new piece without keeping everything.
// The zero value is empty and ready.
type Acc struct {
	buf []byte
	h   maphash.Hash
	// N is the number of pieces added and Size their bytes.
	N, Size int
	// Time is the latest piece's own time, and Stamped whether any piece
	// had one.
	Time    time.Time
	Stamped bool
}

// Add appends a piece, with its own time when it has one.
func (a *Acc) Add(s string, t time.Time) {
	if a.N == 0 {
		a.h.SetSeed(hashSeed)
	}
	a.N++
	a.Size += len(s)
	// maphash gives the same sum however the bytes are split into writes.
	a.h.WriteString(s)
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

// Hash returns the hash of the whole text accumulated so far.
func (a *Acc) Hash() uint64 {
	if a.N == 0 {
		return Hash("")
	}
	return a.h.Sum64()
}

// Whole reports whether s is the whole text accumulated so far.
func (a *Acc) Whole(s string) bool {
	return a.N > 0 && len(s) == a.Size && Hash(s) == a.h.Sum64()
}

// Text returns the accumulated text, clipped, and whether it was clipped:
// pieces past accCap bytes were not kept, and make more than MaxText code
// points.
func (a *Acc) Text() (string, bool) {
	t, trunc := agentstream.ClipBytes(a.buf, agentstream.MaxText)
	return t, trunc || a.Size > len(a.buf)
}

// Reset empties the accumulator.
func (a *Acc) Reset() {
	a.buf = a.buf[:0]
	a.Size, a.N = 0, 0
	a.Time, a.Stamped = time.Time{}, false
}

// Hash returns the hash Acc keeps of a whole text, for comparing a later
// copy of it.
func Hash(s string) uint64 { return maphash.String(hashSeed, s) }
