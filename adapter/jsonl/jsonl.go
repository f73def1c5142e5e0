// Package jsonl is the adapter for harnesses that already speak agentstream's
// vocabulary: each line is {"type": …, …}, and every key but type becomes the
// payload, unchanged.
package jsonl

import (
	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Decoder reads a jsonl stream. It keeps no state.
type Decoder struct{}

var _ agentstream.Decoder = Decoder{}

// NewDecoder returns a Decoder.
func NewDecoder() Decoder { return Decoder{} }

// Decode lifts the type out of a line and keeps every other key as the
// payload, exactly as written (compacted). A line whose type is missing or
// not in the vocabulary, whose type is raw, or whose payload does not read
// as its type (a key of the wrong JSON type), becomes raw with its JSON.
func (Decoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	line = jsonscan.TrimSpace(line)
	if len(line) == 0 {
		return dst
	}
	obj, ok := jsonscan.Object(line)
	if !ok {
		if line[0] == '[' && jsonscan.Valid(line) || jsonscan.IsNull(line) {
			return dst
		}
		return append(dst, fields.Raw(line))
	}
	var typ []byte
	for obj.Next() {
		if obj.KeyIs("type") {
			typ = obj.Value()
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(line))
	}
	t := fields.Str(typ)
	if !agentstream.IsKnownType(t) || t == agentstream.TypeRaw {
		return append(dst, fields.Raw(line))
	}
	payload := make([]byte, 0, len(line))
	payload = append(payload, '{')
	obj, _ = jsonscan.Object(line)
	for obj.Next() {
		if obj.KeyIs("type") {
			continue
		}
		if len(payload) > 1 {
			payload = append(payload, ',')
		}
		payload = append(payload, '"')
		payload = append(payload, obj.Key()...)
		payload = append(payload, '"', ':')
		payload = append(payload, obj.Value()...)
	}
	payload = append(payload, '}')
	clean, ok := jsonscan.AppendSanitized(make([]byte, 0, len(payload)), payload)
	if !ok {
		return append(dst, fields.Raw(line))
	}
	// A payload whose keys have the wrong types ("outputTokens": "") could
	// not be read back as its type: such a line is kept as raw instead.
	if _, err := agentstream.DecodePayload(t, clean); err != nil {
		return append(dst, fields.Raw(line))
	}
	return append(dst, agentstream.E(&agentstream.Passthrough{EventType: t, JSON: clean}))
}

// End appends nothing: a jsonl stream owes nothing at its end.
func (Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }
