package console

import (
	"io"
	"strconv"
)

// UseColor decides whether output to w gets colour: mode "always" and
// "never" decide by themselves; otherwise ("auto" or "") colour is used
// only when w is a terminal, NO_COLOR is unset or empty, and TERM is not
// "dumb". getenv may be nil.
func UseColor(mode string, w io.Writer, getenv func(string) string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	_, ok := Terminal(w)
	return ok
}

// Width returns the width of output to w: the terminal's width when w is a
// terminal that knows it, else $COLUMNS when it is a positive number, else
// DefaultWidth. getenv may be nil.
func Width(w io.Writer, getenv func(string) string) int {
	if n, ok := Terminal(w); ok && n > 0 {
		return n
	}
	if getenv != nil {
		if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
	}
	return DefaultWidth
}
