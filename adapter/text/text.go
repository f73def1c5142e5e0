// Package text is the adapter of protocol none: a program whose stdout is
// prose. Every non-blank line becomes raw with reason text.
package text

import (
	"bytes"

	"github.com/agentstream/agentstream"
)

// Decoder reads prose. It keeps no state.
type Decoder struct{}

var _ agentstream.Decoder = Decoder{}

// NewDecoder returns a Decoder.
func NewDecoder() Decoder { return Decoder{} }

// Decode maps a non-blank line to raw text.
func (Decoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	if len(bytes.TrimSpace(line)) == 0 {
		return dst
	}
	return append(dst, agentstream.E(agentstream.NewRaw(agentstream.RawText, line)))
}

// End appends nothing.
func (Decoder) End(dst []agentstream.Event) []agentstream.Event { return dst }
