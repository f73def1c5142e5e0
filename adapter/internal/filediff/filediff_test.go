package filediff_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/google/go-cmp/cmp"
)

func TestTexts(t *testing.T) {
	tests := []struct {
		name, kind, old, new string
		want                 string
		trunc                bool
	}{
		{"one line changed", agentstream.ChangeModify, "alpha\nbeta\ngamma\n", "alpha\nBETA\ndelta\ngamma\n",
			"--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,3 +1,4 @@\n alpha\n-beta\n+BETA\n+delta\n gamma\n", false},
		{"added file", agentstream.ChangeAdd, "", "one\ntwo\n",
			"--- /dev/null\n+++ b/w/notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n", false},
		{"deleted file", agentstream.ChangeDelete, "one\n", "",
			"--- a/w/notes.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-one\n", false},
		{"no final newline", agentstream.ChangeModify, "a\nb", "a\nc",
			"--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n", false},
		{"far apart changes make two hunks", agentstream.ChangeModify,
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\ny\n",
			"--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+y\n", false},
		{"equal texts", agentstream.ChangeModify, "same\n", "same\n", "", false},
		{"too large", agentstream.ChangeModify, strings.Repeat("a\n", filediff.MaxInput/2), "b\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, trunc := filediff.Texts("/w/notes.txt", tt.kind, tt.old, tt.new)
			want := agentstream.FileChangeItem{Path: "/w/notes.txt", Kind: tt.kind, Diff: tt.want}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if trunc != tt.trunc {
				t.Errorf("truncated = %v, want %v", trunc, tt.trunc)
			}
		})
	}
}

func TestFragments(t *testing.T) {
	got, trunc := filediff.Fragments("/w/a.go", []filediff.Fragment{
		{Old: "beta", New: "BETA\ndelta"},
		{Old: "x := 1\ny := 2\n", New: "x := 1\ny := 3\n"},
	})
	want := agentstream.FileChangeItem{Path: "/w/a.go", Kind: agentstream.ChangeModify,
		Diff: "--- a/w/a.go\n+++ b/w/a.go\n@@ -1 +1,2 @@\n-beta\n+BETA\n+delta\n@@ -1,2 +1,2 @@\n x := 1\n-y := 2\n+y := 3\n"}
	if diff := cmp.Diff(want, got); diff != "" || trunc {
		t.Errorf("truncated %v (-want +got):\n%s", trunc, diff)
	}
}

func TestHunks(t *testing.T) {
	// The structuredPatch of a recorded Claude Code Edit.
	got, trunc := filediff.Hunks("/w/notes.txt", agentstream.ChangeModify, []filediff.Hunk{
		{OldStart: 1, OldLines: 3, NewStart: 1, NewLines: 4, Lines: []string{" alpha", "-beta", "+BETA", "+delta", " gamma"}},
	})
	want := agentstream.FileChangeItem{Path: "/w/notes.txt", Kind: agentstream.ChangeModify,
		Diff: "--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,3 +1,4 @@\n alpha\n-beta\n+BETA\n+delta\n gamma\n"}
	if diff := cmp.Diff(want, got); diff != "" || trunc {
		t.Errorf("truncated %v (-want +got):\n%s", trunc, diff)
	}
}

// TestClipped checks that a large diff is clipped to MaxText code points,
// never in the middle of a character, and marked.
func TestClipped(t *testing.T) {
	big := strings.Repeat("é line\n", 3000)
	for name, f := range map[string]func() (agentstream.FileChangeItem, bool){
		"texts": func() (agentstream.FileChangeItem, bool) { return filediff.Texts("/a", agentstream.ChangeAdd, "", big) },
		"fragments": func() (agentstream.FileChangeItem, bool) {
			return filediff.Fragments("/a", []filediff.Fragment{{Old: "", New: big}})
		},
		"hunks": func() (agentstream.FileChangeItem, bool) {
			return filediff.Hunks("/a", agentstream.ChangeAdd, []filediff.Hunk{{NewStart: 1, NewLines: 3000, Lines: strings.Split(big, "\n")}})
		},
		"patch": func() (agentstream.FileChangeItem, bool) { return filediff.Patch("/a", agentstream.ChangeAdd, big) },
	} {
		t.Run(name, func(t *testing.T) {
			item, trunc := f()
			if !trunc {
				t.Error("not marked truncated")
			}
			if n := utf8.RuneCountInString(item.Diff); n != agentstream.MaxText || !utf8.ValidString(item.Diff) {
				t.Errorf("diff has %d code points (valid UTF-8: %v), want %d", n, utf8.ValidString(item.Diff), agentstream.MaxText)
			}
		})
	}
}

// BenchmarkTexts measures a diff of two unrelated texts just under
// MaxInput, the worst case the bounded search meets.
func BenchmarkTexts(b *testing.B) {
	var o, n strings.Builder
	for i := 0; o.Len()+n.Len() < filediff.MaxInput-200; i++ {
		o.WriteString("old line " + strings.Repeat("x", i%50) + "\n")
		n.WriteString("new line " + strings.Repeat("y", i%37) + "\n")
	}
	old, new := o.String(), n.String()
	b.SetBytes(int64(len(old) + len(new)))
	for b.Loop() {
		filediff.Texts("/a", agentstream.ChangeModify, old, new)
	}
}
