package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
)

// droidRecords reads a Droid session file up to its last newline, then
// the settings file beside it (<session>.settings.json, where Droid keeps
// the session's token totals) compacted to one last line, as protocol
// droid-session reads them. A session without its settings file is its
// lines alone.
func droidRecords(ctx context.Context, path string) ([]localRecord, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	size, err := completeLines(fh, fi.Size())
	if err != nil || size == 0 {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.NewSectionReader(fh, 0, size)); err != nil {
		return nil, err
	}
	mod := fi.ModTime()
	settings := strings.TrimSuffix(path, ".jsonl") + ".settings.json"
	data, err := os.ReadFile(settings)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		// A settings file being rewritten may not be whole yet: the
		// session's lines are read without it until it is.
		if err := json.Compact(&b, bytes.TrimSpace(data)); err == nil {
			b.WriteByte('\n')
			if st, err := os.Stat(settings); err == nil && st.ModTime().After(mod) {
				mod = st.ModTime()
			}
		}
	}
	return []localRecord{{body: b.Bytes(), mod: mod}}, nil
}
