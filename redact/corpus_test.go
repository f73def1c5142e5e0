package redact_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/redact"
)

// corpusFiles returns the recorded native output of every adapter: the
// .jsonl files of their testdata, goldens aside.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../adapter", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "golden" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") && strings.Contains(filepath.ToSlash(p), "/testdata/") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("found only %d recordings", len(files))
	}
	return files
}

// corpusLines calls fn with every line of the recordings.
func corpusLines(t testing.TB, fn func(file string, n int, line []byte)) {
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			n++
			fn(f, n, sc.Bytes())
		}
	}
}

// TestCorpus holds the properties of the mask on every recorded line: the
// same length, valid JSON stays valid, masking twice is masking once.
func TestCorpus(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	lines := 0
	corpusLines(t, func(file string, n int, line []byte) {
		lines++
		checkMask(t, r, line)
	})
	t.Logf("%d lines", lines)
}

func checkMask(t *testing.T, r *redact.Redactor, line []byte) {
	t.Helper()
	once := r.Line(bytes.Clone(line))
	if len(once) != len(line) {
		t.Fatalf("%q: length %d became %d", line, len(line), len(once))
	}
	if json.Valid(line) && !json.Valid(once) {
		t.Fatalf("valid JSON became invalid:\n%s\n%s", line, once)
	}
	if twice := r.Line(bytes.Clone(once)); !bytes.Equal(twice, once) {
		t.Fatalf("masking twice differs from once:\n%s\n%s", once, twice)
	}
	if head := r.Head(bytes.Clone(line)); len(head) != len(line) {
		t.Fatalf("Head changed the length")
	}
}

// TestCorpusMatches lists what the scan masks in the recordings (go test
// -run CorpusMatches -v): each match has been looked at and is either a
// secret's shape or a false positive, counted in the closing report.
func TestCorpusMatches(t *testing.T) {
	r := redact.New(redact.Options{Key: testKey})
	corpusLines(t, func(file string, n int, line []byte) {
		for _, m := range r.Find(line) {
			ctx := line[max(0, m.Start-40):min(len(line), m.End+10)]
			t.Logf("%s:%d %s %q", strings.TrimPrefix(file, "../adapter/"), n, m.Kind, ctx)
		}
	})
}
