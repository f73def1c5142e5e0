package gemini

import (
	"bytes"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// How Gemini CLI starts an assistant delta line, the most frequent: the
// type, the timestamp, then deltaRole and the content; rawMessage and
// rawAssistant are its type and role.
var (
	deltaHead                = []byte(`{"type":"message","timestamp":`)
	deltaRole                = []byte(`,"role":"assistant","content":`)
	rawMessage, rawAssistant = []byte(`"message"`), []byte(`"assistant"`)
)

// readDeltaHead reads the members of a line that starts as a delta line
// does, up to its content, into l as the member loop would, the content
// decoded and clipped where it is read. It returns the index just past the
// content, or 0 when the line does not start so.
func (d *Decoder) readDeltaHead(raw []byte, l *line) int {
	if !bytes.HasPrefix(raw, deltaHead) {
		return 0
	}
	p := len(deltaHead)
	end, ok := jsonscan.SkipString(raw, p)
	if !ok || !bytes.HasPrefix(raw[end:], deltaRole) {
		return 0
	}
	c := end + len(deltaRole)
	out, cend, total, trunc, ok := jsonscan.StringClipAt(d.buf[:0], raw, c, agentstream.MaxText)
	if !ok {
		return 0
	}
	d.buf = out[:0]
	l.typ, l.timestamp, l.role = rawMessage, raw[p:end], rawAssistant
	l.content = raw[c:cend]
	l.contentC = fields.Clipped{Text: string(out), Truncated: trunc, Chars: int64(total), OK: true}
	return cend
}
