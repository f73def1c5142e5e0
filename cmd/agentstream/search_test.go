package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentstream/agentstream"
)

// TestSearchCommand imports a recorded Claude session and finds, with
// agentstream search, a word that occurs only in its tool outputs, on
// SQLite and, when a server is at hand, on PostgreSQL.
func TestSearchCommand(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { searchCommand(t, filepath.Join(t.TempDir(), "s.db")) })
	t.Run("postgres", func(t *testing.T) {
		db := postgresSchema(t)
		if code, _, errs := runCmd(t, "migrate", "--db", db); code != 0 {
			t.Fatalf("migrate: %d %s", code, errs)
		}
		searchCommand(t, db)
	})
}

func searchCommand(t *testing.T, db string) {
	input := filepath.Join("..", "..", "adapter", "claude", "testdata", "lab-claude-2.1.328-edits.jsonl")
	if code, _, errs := runCmd(t, "import", "--db", db, "--id", "s_one", input); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	code, out, errs := runCmd(t, "export", "--db", db, "s_one")
	if code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	// A word of letters that tool outputs hold, whole, and nothing else.
	var outputs []agentstream.Envelope
	var others strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		e, err := agentstream.ParseEnvelope([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Payload.(*agentstream.ToolResult); ok {
			outputs = append(outputs, e)
		} else {
			others.WriteString(strings.ToLower(l))
		}
	}
	var word string
	var seqs []int64
	for _, e := range outputs {
		for _, w := range regexp.MustCompile(`[a-z]{7,}`).FindAllString(strings.ToLower(e.Payload.(*agentstream.ToolResult).Output), -1) {
			if word != "" || strings.Contains(others.String(), w) {
				continue
			}
			whole := regexp.MustCompile(`(^|[^\pL\pN])` + w + `($|[^\pL\pN])`)
			ok := true
			var in []int64
			for _, o := range outputs {
				text := strings.ToLower(o.Payload.(*agentstream.ToolResult).Output)
				if strings.Count(text, w) != len(whole.FindAllString(text, -1)) {
					ok = false
				}
				if whole.MatchString(text) {
					in = append(in, o.Seq)
				}
			}
			if ok {
				word, seqs = w, in
			}
		}
	}
	if word == "" {
		t.Fatal("no word occurs only in tool outputs")
	}
	slices.Reverse(seqs) // latest first
	code, out, errs = runCmd(t, "search", "--db", db, word)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || len(lines) != len(seqs) {
		t.Fatalf("search %s: %d, %q %s; want %d lines (seqs %v)", word, code, out, errs, len(seqs), seqs)
	}
	for i, l := range lines {
		f := strings.SplitN(l, "\t", 4)
		if len(f) != 4 || f[0] != "s_one" || f[1] != strconv.FormatInt(seqs[i], 10) || f[2] != "tool.result" ||
			!strings.Contains(strings.ToLower(f[3]), word) || strings.Contains(f[3], "\x1b") {
			t.Errorf("line %d: %q, want s_one, %d, tool.result and a snippet holding %q, no colour off a terminal", i, l, seqs[i], word)
		}
	}
	code, out, _ = runCmd(t, "search", "--db", db, "--json", "--color", "always", word)
	var hits []struct {
		Session    string   `json:"session"`
		Seq        int64    `json:"seq"`
		Highlights [][2]int `json:"highlights"`
	}
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) != len(seqs) || hits[0].Seq != seqs[0] || len(hits[0].Highlights) == 0 {
		t.Errorf("search --json: %d %v %s", code, err, out)
	}
	if code, out, _ := runCmd(t, "search", "--db", db, "--color", "always", word); code != 0 || !strings.Contains(strings.ToLower(out), "\x1b[1m"+word+"\x1b[22m") {
		t.Errorf("search --color always: %d %q, want %q in bold", code, out, word)
	}
	if code, out, errs := runCmd(t, "search", "--db", db, "--harness", "codex", word); code != 0 || out != "" || !strings.Contains(errs, "no matches") {
		t.Errorf("search --harness codex: %d %q %q, want no matches", code, out, errs)
	}
	for _, bad := range [][]string{{`"unclosed`}, {"fo*o"}, {"a\x00b"}, {}, {"--status", "nope", "x"}, {"--since", "soon", "x"}} {
		code, _, errs := runCmd(t, append([]string{"search", "--db", db}, bad...)...)
		if code != exitUsage || !strings.HasPrefix(errs, "agentstream search: ") {
			t.Errorf("search %q: %d %q, want exit %d and a message", bad, code, errs, exitUsage)
		}
	}
}
