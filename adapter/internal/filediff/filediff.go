// Package filediff writes the unified diffs of file.change events, from the
// old and new texts a harness gives, from the hunks of a patch it printed
// in parts, or from a patch it printed whole. It is the one package that
// holds the diff library (github.com/aymanbagabas/go-udiff, Myers' algorithm
// with a bounded search, as the Go tools use it), so that adapters import
// only the root package and adapter/internal.
//
// Diffs are clipped to MaxText code points like every text; a change whose
// texts are larger than MaxInput gets no diff. Either way the caller marks
// the file.change truncated.
package filediff

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	udiff "github.com/aymanbagabas/go-udiff"
)

// MaxInput is the most text, old and new together in bytes, that a diff is
// computed from. The search is bounded, so time grows with the size of the
// texts, not with the square of it; the cap bounds that size.
const MaxInput = 1 << 20

// contextLines is how many unchanged lines surround each hunk.
const contextLines = 3

// limit is the length past which a diff is sure to be clipped: MaxText code
// points of at most four bytes each.
const limit = utf8.UTFMax*agentstream.MaxText + utf8.UTFMax

// labels returns the file names of a diff's header: /dev/null for the side
// of an added or deleted file.
func labels(path, kind string) (from, to string) {
	name := strings.TrimPrefix(path, "/")
	from, to = "a/"+name, "b/"+name
	switch kind {
	case agentstream.ChangeAdd:
		from = "/dev/null"
	case agentstream.ChangeDelete:
		to = "/dev/null"
	}
	return from, to
}

// Texts returns the change of the file at path from oldText to newText, of
// kind (agentstream.ChangeAdd, ChangeModify, ChangeDelete), with its unified
// diff, and whether the diff was clipped or left out. Equal texts give no
// diff.
func Texts(path, kind, oldText, newText string) (agentstream.FileChangeItem, bool) {
	item := agentstream.FileChangeItem{Path: path, Kind: kind}
	if len(oldText)+len(newText) > MaxInput {
		return item, true
	}
	from, to := labels(path, kind)
	d, err := udiff.ToUnifiedDiff(from, to, oldText, udiff.Lines(oldText, newText), contextLines)
	if err != nil || len(d.Hunks) == 0 {
		return item, false
	}
	var trunc bool
	item.Diff, trunc = agentstream.Clip(d.String(), agentstream.MaxText)
	return item, trunc
}

// A Fragment is one replacement of a text by another inside a file whose
// whole content the harness did not give.
type Fragment struct {
	Old, New string
}

// Fragments returns the change of the file at path made by replacing each
// fragment's old text by its new one: one hunk or more per fragment, whose
// line numbers count from the start of the fragment, since where it lies in
// the file is not known. It also reports whether the diff was clipped or
// left out.
func Fragments(path string, frags []Fragment) (agentstream.FileChangeItem, bool) {
	item := agentstream.FileChangeItem{Path: path, Kind: agentstream.ChangeModify}
	size := 0
	for _, f := range frags {
		size += len(f.Old) + len(f.New)
	}
	if size > MaxInput {
		return item, true
	}
	from, to := labels(path, agentstream.ChangeModify)
	all := udiff.UnifiedDiff{From: from, To: to}
	for _, f := range frags {
		o, n := f.Old, f.New
		// A fragment ends where the next text of the file starts, not at
		// the end of the file: both sides end with a newline, so that no
		// hunk says "No newline at end of file".
		if !strings.HasSuffix(o, "\n") || !strings.HasSuffix(n, "\n") {
			o, n = o+"\n", n+"\n"
		}
		d, err := udiff.ToUnifiedDiff(from, to, o, udiff.Lines(o, n), contextLines)
		if err != nil {
			continue
		}
		all.Hunks = append(all.Hunks, d.Hunks...)
	}
	if len(all.Hunks) == 0 {
		return item, false
	}
	var trunc bool
	item.Diff, trunc = agentstream.Clip(all.String(), agentstream.MaxText)
	return item, trunc
}

// A Hunk is one hunk of a patch a harness printed in parts: where it starts
// and how many lines it spans on each side, and its lines, each with its
// leading ' ', '-' or '+'.
type Hunk struct {
	OldStart, OldLines, NewStart, NewLines int
	Lines                                  []string
}

// Hunks returns the change of the file at path that the hunks describe,
// written as a unified diff, and whether the diff was clipped.
func Hunks(path, kind string, hunks []Hunk) (agentstream.FileChangeItem, bool) {
	item := agentstream.FileChangeItem{Path: path, Kind: kind}
	if len(hunks) == 0 {
		return item, false
	}
	from, to := labels(path, kind)
	var b strings.Builder
	b.WriteString("--- " + from + "\n+++ " + to + "\n")
	for _, h := range hunks {
		if b.Len() > limit {
			break
		}
		b.WriteString("@@ -" + hunkRange(h.OldStart, h.OldLines) + " +" + hunkRange(h.NewStart, h.NewLines) + " @@\n")
		for _, l := range h.Lines {
			if b.Len() > limit {
				break
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	var trunc bool
	item.Diff, trunc = agentstream.Clip(b.String(), agentstream.MaxText)
	return item, trunc
}

// hunkRange writes one side of a hunk header: "start" for one line,
// "start,n" otherwise.
func hunkRange(start, n int) string {
	if n == 1 {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}

// Patch returns the change of the file at path with a patch the harness
// printed whole as its diff, clipped, and whether it was clipped.
func Patch(path, kind, patch string) (agentstream.FileChangeItem, bool) {
	item := agentstream.FileChangeItem{Path: path, Kind: kind}
	var trunc bool
	item.Diff, trunc = agentstream.Clip(patch, agentstream.MaxText)
	return item, trunc
}

// An Edit is the change an edit tool's call describes, kept from the call
// until its result says whether it was made: replacements of texts, or the
// whole new content of a file written.
type Edit struct {
	Path     string
	Frags    []Fragment // the replacements, for a tool that replaces texts
	Content  string     // the new content, for a tool that writes the file
	Write    bool       // the tool writes the whole file
	TooLarge bool       // the texts were more than MaxInput and not kept
}

// NewReplace returns the edit of a tool that replaces old by new in the
// file at path; texts over MaxInput are not kept.
func NewReplace(path, old, new string) *Edit {
	if len(old)+len(new) > MaxInput {
		return &Edit{Path: path, TooLarge: true}
	}
	return &Edit{Path: path, Frags: []Fragment{{Old: old, New: new}}}
}

// NewWrite returns the edit of a tool that writes content as the whole file
// at path; content over MaxInput is not kept.
func NewWrite(path, content string) *Edit {
	if len(content) > MaxInput {
		return &Edit{Path: path, Write: true, TooLarge: true}
	}
	return &Edit{Path: path, Write: true, Content: content}
}

// Change returns the file.change of the edit, made by the call callID.
// created says the write made a new file (kind add); a file written over
// whose old content is not known shows its new content as added lines.
func (e *Edit) Change(callID string, created bool) *agentstream.FileChange {
	kind := agentstream.ChangeModify
	if e.Write && created {
		kind = agentstream.ChangeAdd
	}
	var item agentstream.FileChangeItem
	var trunc bool
	switch {
	case e.TooLarge:
		item, trunc = agentstream.FileChangeItem{Path: e.Path, Kind: kind}, true
	case e.Write:
		item, trunc = Texts(e.Path, kind, "", e.Content)
	default:
		item, trunc = Fragments(e.Path, e.Frags)
	}
	return &agentstream.FileChange{CallID: callID, Changes: []agentstream.FileChangeItem{item}, Truncated: trunc}
}

// Created reports whether a tool's result text says it created the file.
func Created(output string) bool {
	if i := strings.IndexAny(output, "\r\n"); i >= 0 {
		output = output[:i]
	}
	return strings.Contains(strings.ToLower(output), "created")
}
