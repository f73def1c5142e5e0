package agentstreamtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentstream/agentstream"
)

// CompareFastPath checks an adapter's fast path for the head of a frequent
// line against its member-by-member reading: it decodes lines with two
// decoders of the adapter, one given each line as it is and one given it
// with a space after the first brace (the same JSON, which no head reader
// takes), and reports where their events differ; raw events, whose text
// holds the line, are compared by reason only. It returns how many lines
// began with head, for the caller to check that the fast path was tried.
func CompareFastPath(t testing.TB, newDecoder func() agentstream.Decoder, head string, lines [][]byte) int {
	t.Helper()
	fast, loop := newDecoder(), newDecoder()
	heads := 0
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(head)) {
			heads++
		}
		spaced := l
		if len(l) > 0 && l[0] == '{' {
			spaced = append([]byte("{ "), l[1:]...)
		}
		a, b := fast.Decode(nil, l), loop.Decode(nil, spaced)
		if got, want := describeFull(a), describeFull(b); got != want {
			t.Errorf("line %d %.200q:\nread at once: %s\nmember loop:  %s", i, l, got, want)
		}
	}
	return heads
}

// describeFull renders events with everything the envelope takes from them.
func describeFull(evs []agentstream.Event) string {
	var b bytes.Buffer
	for _, e := range evs {
		if r, ok := e.Payload.(*agentstream.Raw); ok {
			fmt.Fprintf(&b, "raw %s; ", r.Reason)
			continue
		}
		fmt.Fprintf(&b, "%s %s parent=%q time=%v replay=%v; ", e.Type(), e.Payload.AppendJSON(nil), e.ParentCallID, e.Time, e.Replay)
	}
	return b.String()
}

// FileLines returns the lines of every file matching the globs, for
// comparisons such as CompareFastPath that take lines one by one.
func FileLines(t testing.TB, globs ...string) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, bytes.Split(data, []byte("\n"))...)
		}
	}
	return lines
}
