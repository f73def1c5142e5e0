//go:build !unix

package console

import (
	"io"
	"os"
)

// Terminal reports whether w is a terminal; the width is not known here.
func Terminal(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	st, err := f.Stat()
	return 0, err == nil && st.Mode()&os.ModeCharDevice != 0
}
