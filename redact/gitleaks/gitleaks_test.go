package gitleaks_test

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/redact"
	"github.com/agentstream/agentstream/redact/gitleaks"
)

func TestScan(t *testing.T) {
	s, err := gitleaks.New()
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(redact.Options{Key: []byte("k")})
	for _, c := range []struct {
		name, line, secret string
	}{
		{"github token", `{"text":"export GITHUB_TOKEN=ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO"}`, "ghp_R8nQz3XkL0pV7aWc2TfYbM5uJ9sHd4EgK1iO"},
		{"slack token", `SLACK=xoxb-2048192837465-4096384756192-Zk9pL2vQzR7mN3bT8wYcAbCd`, "xoxb-2048192837465-4096384756192-Zk9pL2vQzR7mN3bT8wYcAbCd"},
		{"nothing", `{"type":"assistant","text":"all tests pass"}`, ""},
		{"a message id", `{"apiCallId":"msg_011CeYoB6Q6Mg8r8GgoEmSUw","api_key_id":"toolu_01ABCdefGHIjklMNOpqrSTU"}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range s.Scan([]byte(c.line)) {
				got = append(got, c.line[f.Start:f.End])
			}
			var want []string
			if c.secret != "" {
				want = []string{c.secret}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if fs := s.Scan(red.Line([]byte(c.line))); len(fs) != 0 {
				t.Errorf("the masked line still has %v", fs)
			}
		})
	}
}

// TestCorpus runs the deep scan over every recorded line, masked: what it
// finds there would make an export of a recorded session fail. (Unmasked,
// it finds ten message ids of one Copilot recording, before the filter of
// the model APIs' ids.)
func TestCorpus(t *testing.T) {
	s, err := gitleaks.New()
	if err != nil {
		t.Fatal(err)
	}
	red := redact.New(redact.Options{Key: []byte("k")})
	masked, lines := 0, 0
	err = filepath.WalkDir("../../adapter", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") || strings.Contains(p, "/golden/") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			n++
			lines++
			line := sc.Bytes()
			for _, f := range s.Scan(red.Line(bytes.Clone(line))) {
				masked++
				t.Errorf("masked %s:%d %s %q", p, n, f.Rule, line[max(0, f.Start-30):min(len(line), f.End+10)])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d lines: %d findings once masked", lines, masked)
}
