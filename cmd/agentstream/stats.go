package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/internal/jsonscan"
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
}

func newNormalizeStats() *normalizeStats {
	return &normalizeStats{Events: map[string]int64{}, Lines: map[string]*lineCount{}}
}

// nativeType names the type of a native line: its type (with the subtype of
// a system line), else its JSON-RPC method, else the type of a legacy
// {"id","msg"} line's msg; "(blank)", "(no type)", "(not json)" or
// "(oversized)" otherwise.
func nativeType(l agentstream.Line) string {
	if l.Oversized {
		return "(oversized)"
	}
	b := jsonscan.TrimSpace(l.Bytes)
	if len(b) == 0 {
		return "(blank)"
	}
	if !jsonscan.Valid(b) {
		return "(not json)"
	}
	if t, ok := jsonscan.String(jsonscan.Get(b, "type")); ok {
		if sub, ok := jsonscan.String(jsonscan.Get(b, "subtype")); ok && sub != "" {
			return t + "/" + sub
		}
		return t
	}
	if m, ok := jsonscan.String(jsonscan.Get(b, "method")); ok {
		return m
	}
	if t, ok := jsonscan.String(jsonscan.GetPath(b, "msg", "type")); ok {
		return "msg/" + t
	}
	return "(no type)"
}

// line counts one native line (zero Line for the events of the end) and the
// envelopes it gave.
func (s *normalizeStats) line(l agentstream.Line, envs []agentstream.Envelope) {
	raw := false
	for i := range envs {
		t := envs[i].Type()
		s.Events[t]++
		raw = raw || t == agentstream.TypeRaw
	}
	if l.N == 0 {
		return
	}
	nt := nativeType(l)
	c := s.Lines[nt]
	if c == nil {
		c = &lineCount{}
		s.Lines[nt] = c
	}
	c.Lines++
	if raw {
		c.Raw++
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
	for _, k := range sortedKeys(s.Lines) {
		c := s.Lines[k]
		mark := ""
		if c.Raw > 0 && c.Raw == c.Lines && k != "(blank)" {
			mark = "  all raw"
		}
		fmt.Fprintf(w, "  %-30s %6d / %-6d%s\n", k, c.Raw, c.Lines, mark)
	}
}

func (s *normalizeStats) writeJSON(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
