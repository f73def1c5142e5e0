package acp

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
)

var zeroTime time.Time

// maxDiffInput bounds the texts a diff is computed from; a larger file
// change has no diff.
const maxDiffInput = 4 << 20

// diffLimit is the length past which a diff is sure to be clipped.
const diffLimit = utf8.UTFMax*agentstream.MaxText + utf8.UTFMax

func hunkRange(before, n int) string {
	start := before + 1
	if n == 0 {
		start = before
	}
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// unifiedDiff returns a unified diff (one hunk, no context) turning oldText
// into newText, clipped, and whether it was clipped. ACP sends the texts,
// not a diff.
func unifiedDiff(path string, oldText, newText []byte, added bool) (string, bool) {
	if len(oldText)+len(newText) > maxDiffInput || bytes.Equal(oldText, newText) {
		return "", false
	}
	a, b := lines(oldText), lines(newText)
	p := 0
	for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && bytes.Equal(a[len(a)-1-s], b[len(b)-1-s]) {
		s++
	}
	da, db := a[p:len(a)-s], b[p:len(b)-s]
	// Past diffLimit bytes the diff has more than MaxText code points (at
	// most 4 bytes each), so what follows is clipped away: it is not
	// written, and the clipped diff is the same.
	size := 128 + 2*len(path)
	for _, l := range da {
		size += len(l) + 2
	}
	for _, l := range db {
		size += len(l) + 2
	}
	var w strings.Builder
	w.Grow(min(size, diffLimit+maxLine(da, db)+2))
	if added {
		w.WriteString("--- /dev/null\n")
	} else {
		w.WriteString("--- a/" + strings.TrimPrefix(path, "/") + "\n")
	}
	w.WriteString("+++ b/" + strings.TrimPrefix(path, "/") + "\n")
	w.WriteString("@@ -" + hunkRange(p, len(da)) + " +" + hunkRange(p, len(db)) + " @@\n")
	for _, l := range da {
		if w.Len() > diffLimit {
			break
		}
		writeLine(&w, '-', l)
	}
	for _, l := range db {
		if w.Len() > diffLimit {
			break
		}
		writeLine(&w, '+', l)
	}
	return agentstream.Clip(w.String(), agentstream.MaxText)
}

// lines splits s into lines, each with its newline (the last one may have
// none).
func lines(s []byte) [][]byte {
	l := bytes.SplitAfter(s, []byte("\n"))
	if len(l[len(l)-1]) == 0 {
		l = l[:len(l)-1]
	}
	return l
}

// maxLine returns the length of the longest line of a and b.
func maxLine(a, b [][]byte) int {
	n := 0
	for _, l := range a {
		n = max(n, len(l))
	}
	for _, l := range b {
		n = max(n, len(l))
	}
	return n
}

func writeLine(w *strings.Builder, sign byte, l []byte) {
	w.WriteByte(sign)
	w.Write(l)
	if !bytes.HasSuffix(l, []byte("\n")) {
		w.WriteByte('\n')
	}
}
