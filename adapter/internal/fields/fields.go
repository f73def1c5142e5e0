// Package fields turns raw JSON values of harness lines into the field values
// of the vocabulary: clipped text, compacted tool input, optional numbers. It
// is shared by the adapters and imports only the root package and the JSON
// scanner.
package fields

import (
	"bytes"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Str returns the decoded string of v, or "" when v is not a JSON string.
func Str(v []byte) string {
	if len(v) == 0 || v[0] != '"' {
		return ""
	}
	s, _ := jsonscan.String(v)
	return s
}

// Text returns the string v clipped to MaxText code points, whether it was
// clipped, and its whole length in code points. A non-string v gives "".
func Text(v []byte) (text string, truncated bool, chars int64) {
	if len(v) == 0 || v[0] != '"' {
		return "", false, 0
	}
	s, total, trunc, ok := jsonscan.StringClip(v, agentstream.MaxText)
	if !ok {
		return "", false, 0
	}
	return s, trunc, int64(total)
}

// Clipped is a string value decoded and clipped to MaxText code points where
// it was read; OK is false when the value was not read that way.
type Clipped struct {
	Text      string
	Truncated bool
	Chars     int64
	OK        bool
}

// ClipMember decodes the current member of o, when it is a string, clipped
// to MaxText code points. A member not yet scanned (after NextKey) is
// scanned, decoded and counted in one pass, so a large output is read once.
// buf is scratch space reused between calls. The member's raw value stays
// available through o.Value.
func ClipMember(o *jsonscan.Obj, buf *[]byte) Clipped {
	out, total, trunc, ok := o.AppendStringClip((*buf)[:0], agentstream.MaxText)
	if !ok {
		return Clipped{}
	}
	*buf = out[:0]
	return Clipped{Text: string(out), Truncated: trunc, Chars: int64(total), OK: true}
}

// StrMember decodes the current member of o, when it is a string, in one
// pass (see ClipMember); ok is false otherwise. buf is scratch space.
func StrMember(o *jsonscan.Obj, buf *[]byte) (s string, ok bool) {
	out, ok := o.AppendString((*buf)[:0])
	if !ok {
		return "", false
	}
	*buf = out[:0]
	return string(out), true
}

// ClipRaw is ClipMember returning the member's raw value too, for when the
// value is not a string or the whole of it is wanted later.
func ClipRaw(o *jsonscan.Obj, buf *[]byte) (Clipped, []byte) {
	c := ClipMember(o, buf)
	return c, o.Value()
}

// Kind returns the name among names that t spells, or "" when it is none
// of them: a line's type named once, by a constant string, without
// allocating.
func Kind(t []byte, names []string) string {
	for _, n := range names {
		if string(t) == n {
			return n
		}
	}
	return ""
}

// Or returns the clipped text, or Text(v) when c was not read in place.
func (c Clipped) Or(v []byte) (text string, truncated bool, chars int64) {
	if c.OK {
		return c.Text, c.Truncated, c.Chars
	}
	return Text(v)
}

// Input returns the JSON value v compacted byte for byte and clipped, as
// tool.call input. An absent v gives "null", the JSON for no arguments; a v
// that is not valid JSON is kept as text.
func Input(v []byte) (input string, truncated bool) {
	buf := make([]byte, 0, len(v))
	return InputBuf(&buf, v)
}

// InputBuf is Input compacting into the scratch space buf, kept between
// calls, so that the string returned is the one allocation.
func InputBuf(buf *[]byte, v []byte) (input string, truncated bool) {
	if len(v) == 0 {
		return "null", false
	}
	b, ok := jsonscan.AppendCompact((*buf)[:0], v)
	*buf = b[:0]
	if !ok {
		return agentstream.ClipBytes(v, agentstream.MaxText)
	}
	return agentstream.ClipBytes(b, agentstream.MaxText)
}

// Int returns v as an optional integer: nil unless v is an integral number.
func Int(v []byte) *int64 {
	if n, ok := jsonscan.Int(v); ok {
		return &n
	}
	return nil
}

// Float returns v as an optional number.
func Float(v []byte) *float64 {
	if f, ok := jsonscan.Float(v); ok {
		return &f
	}
	return nil
}

// Bool returns v as a boolean, false unless v is true.
func Bool(v []byte) bool {
	b, _ := jsonscan.Bool(v)
	return b
}

// Strings returns the strings of a JSON array, or nil when v is not an array.
// Elements that are objects with a "name" key give that name.
func Strings(v []byte) []string {
	arr, ok := jsonscan.Array(v)
	if !ok {
		return nil
	}
	out := []string{}
	for arr.Next() {
		e := arr.Value()
		switch {
		case len(e) > 0 && e[0] == '"':
			out = append(out, Str(e))
		case len(e) > 0 && e[0] == '{':
			if n := Str(jsonscan.Get(e, "name")); n != "" {
				out = append(out, n)
			}
		}
	}
	if arr.Err() != nil {
		return nil
	}
	return out
}

// Summary returns the first non-blank line of s, trimmed and clipped: the
// safe one-line description of a tool call.
func Summary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	s, _ = agentstream.Clip(s, agentstream.MaxText)
	return s
}

// Time parses an RFC 3339 timestamp string, or returns the zero time.
func Time(v []byte) time.Time {
	if t, ok := quickTime(v); ok {
		return t
	}
	s := Str(v)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// quickTime reads the usual form of an RFC 3339 timestamp string,
// "2006-01-02T15:04:05[.fraction](Z|±hh:mm)" without escapes, straight from
// the raw bytes and without allocating. It reports false for anything else,
// out-of-range fields included, which Time leaves to time.Parse.
func quickTime(v []byte) (time.Time, bool) {
	if len(v) < 22 || v[0] != '"' || v[len(v)-1] != '"' {
		return time.Time{}, false
	}
	s := v[1 : len(v)-1]
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := s[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return time.Time{}, false
		}
		frac, _ := digits(rest[1:n])
		for k := n - 1; k < 9; k++ {
			frac *= 10
		}
		nsec, rest = frac, rest[n:]
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	switch {
	case len(rest) == 1 && rest[0] == 'Z':
		return t, true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset := time.Duration(oh)*time.Hour + time.Duration(om)*time.Minute
		if rest[0] == '+' {
			offset = -offset
		}
		return t.Add(offset), true
	}
	return time.Time{}, false
}

// digits returns the decimal number b spells, or false if b has another
// byte than a digit.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn returns the number of days of a month of the proleptic Gregorian
// calendar.
func daysIn(year, month int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return int(monthDays[month])
}

// monthDays holds the days of each month of a common year, January at 1.
var monthDays = [13]uint8{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// EpochSeconds formats a number of seconds since 1970 as RFC 3339, or ""
// when v is not a number.
func EpochSeconds(v []byte) string {
	f, ok := jsonscan.Float(v)
	if !ok || f <= 0 || f > 1e11 {
		return ""
	}
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC().Format(time.RFC3339)
}

// Raw returns the raw event for a line: unmapped when it is valid JSON,
// malformed otherwise.
func Raw(line []byte) agentstream.Event {
	if jsonscan.Valid(line) {
		return agentstream.E(agentstream.NewRaw(agentstream.RawUnmapped, line))
	}
	return agentstream.E(agentstream.NewRaw(agentstream.RawMalformed, line))
}

// Unquoted returns the content of the JSON string v without allocating when
// it has no escapes (the bytes between the quotes), else its decoded bytes;
// nil when v is not a string. It suits a switch on a discriminator:
// switch string(fields.Unquoted(v)) does not allocate.
func Unquoted(v []byte) []byte {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil
	}
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		b, _ := jsonscan.AppendString(nil, v)
		return b
	}
	return inner
}

// Object trims a line and says whether it is a JSON object for the
// decoder to map. When it is not, dst comes back with what the line gives
// instead: nothing for an empty line or a JSON null, a raw event for
// anything else. With valid, an object must also be well-formed JSON (a
// decoder that reads members with jsonscan.Get, which does not check the
// rest of the line); without it, the decoder checks the line as it scans
// it.
func Object(dst []agentstream.Event, line []byte, valid bool) ([]agentstream.Event, []byte, bool) {
	line = jsonscan.TrimSpace(line)
	if len(line) == 0 {
		return dst, line, false
	}
	if line[0] != '{' || valid && !jsonscan.Valid(line) {
		if jsonscan.IsNull(line) {
			return dst, line, false
		}
		return append(dst, Raw(line)), line, false
	}
	return dst, line, true
}

// Stamp sets the time of the events evs, those of one line, to the time
// the JSON value ts gives, when it gives one.
func Stamp(evs []agentstream.Event, ts []byte) {
	if t := Time(ts); !t.IsZero() {
		for i := range evs {
			evs[i].Time = t
		}
	}
}
