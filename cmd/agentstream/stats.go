package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
)

// normalizeStats counts what normalize produced: events per type, and per
// native line type the lines read and the lines that became raw.
type normalizeStats struct {
	Events map[string]int64      `json:"events"`
	Lines  map[string]*lineCount `json:"lines"`
}

type lineCount struct {
	Lines int64 `json:"lines"`
	Raw   int64 `json:"raw"`
	// Deliberate counts the raw lines of a type the adapter leaves raw on
	// purpose (adapter.Adapter.Deliberate); Raw - Deliberate is the drift.
	Deliberate int64 `json:"deliberate"`
}

func newNormalizeStats() *normalizeStats {
	return &normalizeStats{Events: map[string]int64{}, Lines: map[string]*lineCount{}}
}

// line counts one native line (zero Line for the events of the end) and the
// envelopes it gave, read by adapter a.
func (s *normalizeStats) line(a adapter.Adapter, l agentstream.Line, envs []agentstream.Envelope) {
	raw := false
	for i := range envs {
		t := envs[i].Type()
		s.Events[t]++
		raw = raw || t == agentstream.TypeRaw
	}
	if l.N == 0 {
		return
	}
	nt := adapter.NativeType(l)
	c := s.Lines[nt]
	if c == nil {
		c = &lineCount{}
		s.Lines[nt] = c
	}
	c.Lines++
	if raw {
		c.Raw++
		if _, ok := a.DeliberateRaw(nt); ok {
			c.Deliberate++
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *normalizeStats) print(w io.Writer) {
	fmt.Fprintln(w, "events by type:")
	for _, k := range sortedKeys(s.Events) {
		fmt.Fprintf(w, "  %-22s %8d\n", k, s.Events[k])
	}
	fmt.Fprintln(w, "native lines by type (lines that became raw / lines):")
	var lines, unmapped int64
	for _, k := range sortedKeys(s.Lines) {
		c := s.Lines[k]
		if k != "(blank)" {
			lines += c.Lines
			unmapped += c.Raw - c.Deliberate
		}
		mark := ""
		switch {
		case c.Deliberate > 0 && c.Deliberate == c.Raw:
			mark = "  raw on purpose"
		case c.Deliberate > 0:
			mark = fmt.Sprintf("  %d of them raw on purpose", c.Deliberate)
		case c.Raw > 0 && c.Raw == c.Lines && k != "(blank)":
			mark = "  all raw"
		}
		fmt.Fprintf(w, "  %-30s %6d / %-6d%s\n", k, c.Raw, c.Lines, mark)
	}
	if lines > 0 {
		fmt.Fprintf(w, "unmapped raw lines: %d of %d (%.1f%%), not counting those raw on purpose\n",
			unmapped, lines, 100*float64(unmapped)/float64(lines))
	}
}

func (s *normalizeStats) writeJSON(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
