//go:build unix

package console

import (
	"io"

	"golang.org/x/sys/unix"
)

// Terminal reports whether w is a terminal and, when it is, its width in
// columns (0 when the terminal does not say).
func Terminal(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, false
	}
	return int(ws.Col), true
}
