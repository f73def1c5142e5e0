package acp

import (
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
)

var zeroTime time.Time

// maxDiffInput bounds the texts a diff is computed from; a larger file
// change has no diff.
const maxDiffInput = 4 << 20

// unifiedDiff returns a unified diff (one hunk, no context) turning oldText
// into newText, clipped, and whether it was clipped. ACP sends the texts,
// not a diff.
func unifiedDiff(path, oldText, newText string, added bool) (string, bool) {
	if len(oldText)+len(newText) > maxDiffInput || oldText == newText {
		return "", false
	}
	a, b := lines(oldText), lines(newText)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	da, db := a[p:len(a)-s], b[p:len(b)-s]
	var w strings.Builder
	if added {
		w.WriteString("--- /dev/null\n")
	} else {
		w.WriteString("--- a/" + strings.TrimPrefix(path, "/") + "\n")
	}
	w.WriteString("+++ b/" + strings.TrimPrefix(path, "/") + "\n")
	w.WriteString("@@ -" + hunkRange(p, len(da)) + " +" + hunkRange(p, len(db)) + " @@\n")
	for _, l := range da {
		writeLine(&w, '-', l)
	}
	for _, l := range db {
		writeLine(&w, '+', l)
	}
	return agentstream.Clip(w.String(), agentstream.MaxText)
}

// lines splits s into lines, each with its newline (the last one may have
// none).
func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

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

func writeLine(w *strings.Builder, sign byte, l string) {
	w.WriteByte(sign)
	w.WriteString(l)
	if !strings.HasSuffix(l, "\n") {
		w.WriteByte('\n')
	}
}
