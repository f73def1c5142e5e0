package opencode_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/adapter/opencode"
)

// TestClaims checks detection on the whole recorded corpus: every opencode
// recording is claimed and detected as opencode-json, and no recording of
// another harness is claimed.
func TestClaims(t *testing.T) {
	const root = "../../../shared/corpus"
	var files []string
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(path, ".jsonl") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skip("no corpus")
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		harness, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := firstLines(data)
		own := harness == "opencode"
		if got := opencode.Claims(lines); got != own {
			t.Errorf("Claims(%s) = %v, want %v", f, got, own)
		}
		if own {
			if got := adapter.Detect(lines); got != "opencode-json" {
				t.Errorf("Detect(%s) = %q, want opencode-json", f, got)
			}
		}
	}
}

func firstLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			out = append(out, []byte(s))
			if len(out) == adapter.DetectLines {
				break
			}
		}
	}
	return out
}
