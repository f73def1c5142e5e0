// Package adapter lists the adapters of every dialect agentstream reads, finds
// the one for a protocol, detects a dialect from a stream's first lines, and
// offers the stateless entry points of the format: ParseStreamLine and
// ParseLines.
//
// The list is built explicitly in All; there is no registration by init.
package adapter

import (
	"bufio"
	"fmt"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/acp"
	"github.com/agentstream/agentstream/adapter/claude"
	"github.com/agentstream/agentstream/adapter/codex"
	"github.com/agentstream/agentstream/adapter/copilot"
	"github.com/agentstream/agentstream/adapter/cursor"
	"github.com/agentstream/agentstream/adapter/droid"
	"github.com/agentstream/agentstream/adapter/gemini"
	"github.com/agentstream/agentstream/adapter/jsonl"
	"github.com/agentstream/agentstream/adapter/kimi"
	"github.com/agentstream/agentstream/adapter/opencode"
	"github.com/agentstream/agentstream/adapter/pi"
	"github.com/agentstream/agentstream/adapter/text"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// An Adapter reads one protocol's dialect.
type Adapter struct {
	// Protocol is the protocol the adapter reads.
	agentstream.Protocol
	// New returns a Decoder for one stream.
	New func() agentstream.Decoder
	// Claims reports whether the first non-blank lines of a stream are in
	// this adapter's dialect. Claims of different adapters never overlap on
	// the recorded corpus; nil means the adapter is never detected.
	Claims func(lines [][]byte) bool
	// Deliberate lists the native line types (named as NativeType names
	// them) that the adapter leaves raw on purpose, each with the reason.
	// docs/harnesses.md lists them; normalize --stats counts their raw
	// lines apart from the unmapped ones.
	Deliberate map[string]string
	// Folded lists the native line types whose lines may give no event of
	// their own, because what they say is carried by the events of other
	// lines (a stream's block-stop marker, a usage snapshot the final count
	// replaces), each with where it goes. A line of any other type gives at
	// least one event; docs/harnesses.md lists them.
	Folded map[string]string
}

// All returns every adapter, in the order of the protocol table.
func All() []Adapter {
	get := func(name string) agentstream.Protocol {
		p, ok := agentstream.LookupProtocol(name)
		if !ok {
			panic("adapter: protocol table lacks " + name)
		}
		return p
	}
	return []Adapter{
		{Protocol: get("none"), New: func() agentstream.Decoder { return text.NewDecoder() }},
		{Protocol: get("claude-json"), New: func() agentstream.Decoder { return claude.NewDecoder(claude.Claude) }, Claims: claude.ClaimsClaude, Deliberate: claude.Deliberate, Folded: claude.Folded},
		{Protocol: get("claude-stream"), New: func() agentstream.Decoder { return claude.NewDecoder(claude.Claude) }, Deliberate: claude.Deliberate, Folded: claude.Folded},
		{Protocol: get("jsonl"), New: func() agentstream.Decoder { return jsonl.NewDecoder() }, Claims: claimsJSONL},
		{Protocol: get("codex-json"), New: func() agentstream.Decoder { return codex.NewDecoder() }, Claims: codex.Claims, Folded: codex.Folded},
		{Protocol: get("gemini-json"), New: func() agentstream.Decoder { return gemini.NewDecoder() }, Claims: gemini.Claims},
		{Protocol: get("qwen-json"), New: func() agentstream.Decoder { return claude.NewDecoder(claude.Qwen) }, Claims: claude.ClaimsQwen, Deliberate: claude.Deliberate, Folded: claude.Folded},
		{Protocol: get("opencode-json"), New: func() agentstream.Decoder { return opencode.NewDecoder() }, Claims: opencode.Claims, Folded: opencode.Folded},
		{Protocol: get("cursor-json"), New: func() agentstream.Decoder { return cursor.NewDecoder() }, Claims: cursor.Claims},
		{Protocol: get("amp-json"), New: func() agentstream.Decoder { return claude.NewDecoder(claude.Amp) }, Claims: claude.ClaimsAmp, Deliberate: claude.Deliberate, Folded: claude.Folded},
		{Protocol: get("copilot-json"), New: func() agentstream.Decoder { return copilot.NewDecoder() }, Claims: copilot.Claims, Deliberate: copilot.Deliberate, Folded: copilot.Folded},
		{Protocol: get("droid-json"), New: func() agentstream.Decoder { return droid.NewDecoder() }, Claims: droid.Claims, Folded: droid.Folded},
		{Protocol: get("acp"), New: func() agentstream.Decoder { return acp.NewDecoder() }, Claims: acp.Claims, Deliberate: acp.Deliberate, Folded: acp.Folded},
		{Protocol: get("codex-app"), New: func() agentstream.Decoder { return codex.NewAppServerDecoder() }, Folded: codex.AppServerFolded},
		{Protocol: get("codex-rollout"), New: func() agentstream.Decoder { return codex.NewRolloutDecoder() }, Claims: codex.ClaimsRollout, Deliberate: codex.RolloutDeliberate, Folded: codex.RolloutFolded},
		{Protocol: get("opencode-storage"), New: func() agentstream.Decoder { return opencode.NewStorageDecoder() }, Claims: opencode.ClaimsStorage, Deliberate: opencode.StorageDeliberate, Folded: opencode.StorageFolded},
		{Protocol: get("qwen-chat"), New: func() agentstream.Decoder { return gemini.NewQwenChatDecoder() }, Claims: gemini.ClaimsQwenChat, Deliberate: gemini.QwenChatDeliberate, Folded: gemini.QwenChatFolded},
		{Protocol: get("droid-session"), New: func() agentstream.Decoder { return droid.NewSessionDecoder() }, Claims: droid.ClaimsSession, Deliberate: droid.SessionDeliberate, Folded: droid.SessionFolded},
		{Protocol: get("gemini-chat"), New: func() agentstream.Decoder { return gemini.NewChatDecoder() }, Claims: gemini.ClaimsChat, Deliberate: gemini.ChatDeliberate},
		{Protocol: get("kimi-json"), New: func() agentstream.Decoder { return kimi.NewDecoder() }, Claims: kimi.Claims},
		{Protocol: get("pi-json"), New: func() agentstream.Decoder { return pi.NewDecoder() }, Claims: pi.Claims, Folded: pi.Folded},
	}
}

// Lookup returns the adapter of a protocol.
func Lookup(protocol string) (Adapter, error) {
	for _, a := range All() {
		if a.Name == protocol {
			return a, nil
		}
	}
	return Adapter{}, fmt.Errorf("adapter: unknown protocol %q", protocol)
}

// Names returns the protocol names, in order.
func Names() []string {
	var names []string
	for _, a := range All() {
		names = append(names, a.Name)
	}
	return names
}

// DetectLines is how many non-blank lines Detect wants to see.
const DetectLines = 8

// Detect returns the protocol of a stream from its first non-blank lines:
// the first adapter that claims them, else "none".
func Detect(lines [][]byte) string {
	var sample [][]byte
	for _, l := range lines {
		if t := jsonscan.TrimSpace(l); len(t) > 0 {
			sample = append(sample, t)
			if len(sample) == DetectLines {
				break
			}
		}
	}
	if len(sample) == 0 {
		return "none"
	}
	for _, a := range All() {
		if a.Claims != nil && a.Claims(sample) {
			return a.Name
		}
	}
	return "none"
}

// claimsJSONL claims a stream whose first JSON line has a type of the
// vocabulary that no harness dialect uses as a line type.
func claimsJSONL(lines [][]byte) bool {
	for _, l := range lines {
		t, ok := jsonscan.String(jsonscan.Get(l, "type"))
		if !ok {
			continue
		}
		switch t {
		case agentstream.TypeSessionStarted, agentstream.TypeToolCall, agentstream.TypeToolResult,
			agentstream.TypeSessionEnded, agentstream.TypeMessageDelta:
			return true
		}
		return false
	}
	return false
}

// ParseStreamLine returns the events of one line read by a fresh decoder of
// protocol: zero or more. An adapter that panics costs only the line, which
// becomes raw with reason adapter-error.
func ParseStreamLine(protocol string, line []byte) ([]agentstream.Event, error) {
	a, err := Lookup(protocol)
	if err != nil {
		return nil, err
	}
	return decodeLine(a.New(), nil, line), nil
}

func decodeLine(d agentstream.Decoder, dst []agentstream.Event, line []byte) (out []agentstream.Event) {
	start := len(dst)
	defer func() {
		if r := recover(); r != nil {
			raw := agentstream.NewRaw(agentstream.RawAdapterError, line)
			out = append(dst[:start], agentstream.E(raw))
		}
	}()
	return d.Decode(dst, line)
}

// A SourcedEvent is an event with the trimmed native line it came from,
// which is what makes normalization reversible.
type SourcedEvent struct {
	agentstream.Event
	// Line is the 1-based index of the line in the input.
	Line int
	// Source is the line, without surrounding whitespace.
	Source []byte
}

// ParseLines reads lines with one decoder of protocol and returns their
// events with their source lines, then the events the decoder owes at the
// end, stopping once budget events were collected (budget <= 0 means no
// limit).
func ParseLines(protocol string, lines [][]byte, budget int) ([]SourcedEvent, error) {
	a, err := Lookup(protocol)
	if err != nil {
		return nil, err
	}
	d := a.New()
	var out []SourcedEvent
	var buf []agentstream.Event
	full := func() bool { return budget > 0 && len(out) >= budget }
	for i, l := range lines {
		src := jsonscan.TrimSpace(l)
		buf = decodeLine(d, buf[:0], l)
		for _, ev := range buf {
			if full() {
				return out, nil
			}
			out = append(out, SourcedEvent{Event: ev, Line: i + 1, Source: append([]byte(nil), src...)})
		}
	}
	for _, ev := range d.End(nil) {
		if full() {
			break
		}
		out = append(out, SourcedEvent{Event: ev})
	}
	return out, nil
}

// DetectPeek is how many bytes DetectReader looks at.
const DetectPeek = 1 << 20

// DetectReader returns the protocol of the stream r will read, from the
// lines in its first DetectPeek bytes, without consuming them.
func DetectReader(r *bufio.Reader) string {
	buf, _ := r.Peek(DetectPeek)
	lines, n := agentstream.SplitCompleteLines(buf)
	if n < len(buf) {
		lines = append(lines, buf[n:])
	}
	return Detect(lines)
}
