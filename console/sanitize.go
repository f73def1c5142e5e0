package console

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is the zero-width space the renderer puts where text would otherwise
// read as a CI workflow command. It is not whitespace, so no trimming by a
// log reader removes it.
const zwsp = "\u200b"

// Sanitize returns s made safe to print in a terminal or a CI log:
//
//   - ANSI escape sequences (CSI, OSC such as hyperlinks and window titles,
//     DCS and the other string sequences, in their 7-bit and 8-bit forms) are
//     removed, and so is every other control character but newline and tab;
//     carriage returns go too, since a CI runner reads one as a line break;
//   - Unicode bidirectional controls are removed, and line and paragraph
//     separators become newlines;
//   - invalid UTF-8 becomes U+FFFD;
//   - text that a CI runner would read as a workflow command is
//     neutralized with a zero-width space: a ':' that starts a line (after
//     any whitespace) is followed by one, so no line starts with "::"
//     (GitHub Actions' ::set-output, ::add-mask, ::error, …), and two '#'
//     in a row are split by one, so no "##[" (the older GitHub form) and no
//     "##vso[" (Azure Pipelines) appears anywhere.
//
// The renderer applies the same rules to text that arrives in pieces,
// keeping the line state across the pieces; Sanitize is for whole strings.
func Sanitize(s string) string {
	s = strip(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	var g guard
	for _, r := range s {
		g.rune(&b, r)
	}
	return b.String()
}

// guard neutralizes workflow commands in text written rune by rune.
type guard struct {
	visible  bool // the current line has a visible character
	prevHash bool // the last rune written was '#'
}

type runeWriter interface{ WriteRune(rune) (int, error) }

func (g *guard) rune(w interface {
	runeWriter
	WriteString(string) (int, error)
}, r rune) {
	switch {
	case r == '\n':
		g.visible, g.prevHash = false, false
		w.WriteRune(r)
		return
	case r == '#' && g.prevHash:
		w.WriteString(zwsp)
	}
	w.WriteRune(r)
	if r == ':' && !g.visible {
		w.WriteString(zwsp)
	}
	g.prevHash = r == '#'
	if !blank(r) {
		g.visible = true
	}
}

// blank reports whether r is whitespace or invisible, as a log reader
// trimming a line might treat it.
func blank(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || r == '\u180e' || r == '\ufeff'
}

// strip removes escape sequences and control characters (keeping "\n" and
// "\t"), removes bidirectional controls, turns line and paragraph separators
// into "\n", and replaces invalid UTF-8 with U+FFFD. It returns s itself when
// there is nothing to change.
func strip(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == 0x1b {
			i = skipEscape(s, i+1)
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
			i++
			continue
		case r == '\n' || r == '\t':
			b.WriteByte(byte(r))
		case r < 0x20 || r == 0x7f:
		case r >= 0x80 && r <= 0x9f:
			// C1 controls; CSI, OSC and the string controls start
			// sequences of their own.
			switch r {
			case 0x9b:
				i = skipCSI(s, i+n)
				continue
			case 0x9d, 0x90, 0x98, 0x9e, 0x9f:
				i = skipString(s, i+n)
				continue
			}
		case r == '\u2028' || r == '\u2029':
			b.WriteByte('\n')
		case bidi(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// bidi reports whether r is a bidirectional formatting control, which can
// make a line display differently from what it says.
func bidi(r rune) bool {
	return r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' ||
		r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// skipEscape skips the sequence after an ESC at s[i-1] and returns the index
// after it.
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(s, i+1)
	}
	// nF sequences: intermediates 0x20–0x2F, then one final byte.
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips a control sequence's parameters, intermediates and final
// byte. A byte that cannot belong to one ends it there.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x30 && c <= 0x3f, c >= 0x20 && c <= 0x2f:
			i++
		case c >= 0x40 && c <= 0x7e:
			return i + 1
		default:
			return i
		}
	}
	return i
}

// skipString skips a string sequence (OSC, DCS, SOS, PM, APC) up to its
// terminator: BEL, ESC \ or ST. A newline ends it too (and is kept), so an
// unterminated sequence costs at most the rest of its line.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b:
			if i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
			return i + 1
		case s[i] == '\n':
			return i
		case strings.HasPrefix(s[i:], "\u009c"):
			return i + 2
		}
		i++
	}
	return i
}

// runeWidth is the number of terminal columns r takes: 0 for combining and
// format characters, 2 for wide East Asian characters and most emoji, else 1.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0xa4cf && r != 0x303f,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f, r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// width is the number of terminal columns s takes.
func width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}
