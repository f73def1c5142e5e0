package store

import (
	"bytes"
	"strconv"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// bodyPrefix is what Envelope.AppendJSON writes before the body of an
// envelope with no session, seq or time.
const bodyPrefix = `{"v":1,"session":"","seq":null,"ts":null,`

// AppendBody appends the body of a stored event: its envelope JSON as
// Envelope.AppendJSON writes it, from "harness" to the closing brace, that
// is everything but the session, the seq and the time, which a store keeps
// apart. Two envelopes with the same body have the same content: that is
// how a store tells a replayed event from a different one (see
// ErrConflict).
func AppendBody(b []byte, e *agentstream.Envelope) []byte {
	c := *e
	c.Session, c.Seq, c.TS = "", 0, time.Time{}
	start := len(b)
	b = c.AppendJSON(b)
	n := copy(b[start:], b[start+len(bodyPrefix):])
	return b[:start+n]
}

// AppendEnvelope appends the envelope JSON of a stored event from its
// session, seq, time (zero for none) and body: byte for byte what
// Envelope.AppendJSON writes for the event.
func AppendEnvelope(b []byte, session string, seq int64, ts time.Time, body []byte) []byte {
	b = append(b, `{"v":1,"session":`...)
	b = jsonscan.AppendQuote(b, session)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"ts":`...)
	if ts.IsZero() {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = ts.UTC().AppendFormat(b, agentstream.TimeFormat)
		b = append(b, '"')
	}
	b = append(b, ',')
	return append(b, body...)
}

// SameLine reports whether two native lines with the same stream and
// number hold the same bytes: the same data and size, and the same
// SHA-256 when both know it. Their times do not count.
func SameLine(a, b *Line) bool {
	if a.Size != b.Size || !bytes.Equal(a.Data, b.Data) {
		return false
	}
	return len(a.SHA256) == 0 || len(b.SHA256) == 0 || bytes.Equal(a.SHA256, b.SHA256)
}
