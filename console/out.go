package console

import "unicode/utf8"

// SGR parameters of the styles the renderer uses.
const (
	styleDim       = "2"
	styleDimItalic = "2;3"
	styleBold      = "1"
	styleRed       = "31"
	styleGreen     = "32"
	styleYellow    = "33"
	styleCyan      = "36"
)

// out is the text of one Handle call, with the state of the output line
// across calls: the column, the workflow-command guard, and the style in
// force. Every character the renderer prints goes through text, except the
// workflow commands it writes on purpose.
type out struct {
	buf   []byte
	color bool
	col   int
	g     guard
	style string
}

// WriteRune and WriteString let the guard write into buf.
func (o *out) WriteRune(r rune) (int, error) {
	o.buf = utf8.AppendRune(o.buf, r)
	return 0, nil
}

func (o *out) WriteString(s string) (int, error) {
	o.buf = append(o.buf, s...)
	return len(s), nil
}

// text writes s, without its escape sequences and control characters.
func (o *out) text(s string) {
	for _, r := range strip(s) {
		o.rune(r)
	}
}

func (o *out) rune(r rune) {
	switch r {
	case '\n':
		o.newline()
	case '\t':
		for n := 4 - o.col%4; n > 0; n-- {
			o.g.rune(o, ' ')
			o.col++
		}
	default:
		o.g.rune(o, r)
		o.col += runeWidth(r)
	}
}

// newline ends the line. A style in force is closed before the line break
// and opened again after it, so that each line stands on its own in a log
// viewer.
func (o *out) newline() {
	on := o.color && o.style != ""
	if on {
		o.buf = append(o.buf, "\x1b[0m"...)
	}
	o.g.rune(o, '\n')
	o.col = 0
	if on {
		o.buf = append(o.buf, "\x1b["...)
		o.buf = append(o.buf, o.style...)
		o.buf = append(o.buf, 'm')
	}
}

// endLine ends the current line if anything is on it.
func (o *out) endLine() {
	if o.col > 0 {
		o.newline()
	}
}

func (o *out) spaces(n int) {
	for ; n > 0; n-- {
		o.rune(' ')
	}
}

// setStyle makes st (SGR parameters, "" for none) the style in force.
func (o *out) setStyle(st string) {
	if st == o.style {
		return
	}
	if o.color {
		if o.style != "" {
			o.buf = append(o.buf, "\x1b[0m"...)
		}
		if st != "" {
			o.buf = append(o.buf, "\x1b["...)
			o.buf = append(o.buf, st...)
			o.buf = append(o.buf, 'm')
		}
	}
	o.style = st
}

// styled writes s in style st, then returns to the style in force.
func (o *out) styled(st, s string) {
	prev := o.style
	o.setStyle(st)
	o.text(s)
	o.setStyle(prev)
}

// command writes a workflow command line as it is, on a line of its own.
func (o *out) command(s string) {
	o.setStyle("")
	o.endLine()
	o.buf = append(o.buf, s...)
	o.buf = append(o.buf, '\n')
	o.g = guard{}
}
