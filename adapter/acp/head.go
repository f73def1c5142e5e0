package acp

import (
	"bytes"

	"github.com/agentstream/agentstream/internal/jsonscan"
)

// The shape in which agents print a message or thought chunk, the most
// frequent line, as the schema orders SessionNotification and its update:
// chunkHead, the session id, chunkUpdate, the kind and its closing quote,
// an optional messageId member, chunkContent, the text, and chunkTail.
var (
	chunkHead    = []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`)
	chunkUpdate  = []byte(`,"update":{"sessionUpdate":"`)
	chunkMessage = []byte(`,"messageId":`)
	chunkContent = []byte(`,"content":{"type":"text","text":`)
	chunkTail    = []byte(`}}}}`)
	chunkKinds   = [][]byte{[]byte(`agent_message_chunk"`), []byte(`agent_thought_chunk"`), []byte(`user_message_chunk"`)}

	rawJSONRPC, rawUpdateMethod, rawText = []byte(`"2.0"`), []byte(`"session/update"`), []byte(`"text"`)
)

// readChunkHead reads a text chunk line of that shape whole into l, the
// text decoded where it is read, as the member loop would. It reports
// whether the line had the shape; when not, l is left for the member loop.
func (d *Decoder) readChunkHead(line []byte, l *lineOf) bool {
	if !bytes.HasPrefix(line, chunkHead) {
		return false
	}
	p := len(chunkHead)
	sidEnd, ok := jsonscan.SkipString(line, p)
	if !ok || !bytes.HasPrefix(line[sidEnd:], chunkUpdate) {
		return false
	}
	kindAt := sidEnd + len(chunkUpdate) - 1 // the kind's opening quote
	q := kindAt + 1
	var kind []byte
	for _, k := range chunkKinds {
		if bytes.HasPrefix(line[q:], k) {
			kind = line[kindAt : q+len(k)]
			break
		}
	}
	if kind == nil {
		return false
	}
	q += len(kind) - 1
	var msgID []byte
	if bytes.HasPrefix(line[q:], chunkMessage) {
		at := q + len(chunkMessage)
		end, ok := jsonscan.SkipString(line, at)
		if !ok {
			return false
		}
		msgID, q = line[at:end], end
	}
	if !bytes.HasPrefix(line[q:], chunkContent) {
		return false
	}
	contentAt := q + len(`,"content":`)
	textAt := q + len(chunkContent)
	out, end, ok := jsonscan.StringAt(d.scratch.text[:0], line, textAt)
	if !ok || !bytes.Equal(line[end:], chunkTail) {
		return false
	}
	d.scratch.text = out[:0]
	paramsAt := len(chunkHead) - len(`{"sessionId":`)
	l.jsonrpc, l.method = rawJSONRPC, rawUpdateMethod
	l.params, l.paramsRead = line[paramsAt:len(line)-1], true
	l.sessionID = line[len(chunkHead):sidEnd]
	l.update = line[sidEnd+len(`,"update":`) : len(line)-2]
	l.up = updateOf{
		kind:      kind,
		messageID: msgID,
		content:   line[contentAt : len(line)-3],
		block:     true,
		blockType: rawText,
		blockText: string(out),
	}
	l.upUsed = true
	return true
}
