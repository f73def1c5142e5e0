package agentstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Version is the format version written in every envelope's "v".
const Version = 1

// Origins of an envelope.
const (
	OriginLive   = "live"
	OriginReplay = "replay"
)

// Source names the native line an event came from.
type Source struct {
	// Stream is "stdout" or "stderr".
	Stream string `json:"stream"`
	// Line is the 1-based line number within that stream.
	Line int64 `json:"line"`
}

// Envelope is an event as it is stored and sent: the payload plus its place
// in the session. Seq is 0 for live events, which are not stored and have no
// place in the sequence (encoded as null). A zero TS is encoded as null. A
// nil Source is an event the platform wrote itself.
type Envelope struct {
	Session      string
	Seq          int64
	TS           time.Time
	Harness      string
	Turn         int64
	Origin       string
	ParentCallID string
	Payload      Payload
	Source       *Source
}

// Type returns the type of the envelope's payload.
func (e *Envelope) Type() string {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.Type()
}

// TimeFormat is the layout of ts: RFC 3339, UTC, milliseconds.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// AppendJSON appends the envelope as one JSON object (no newline).
func (e *Envelope) AppendJSON(b []byte) []byte {
	b = append(b, `{"v":1,"session":`...)
	b = appendStr(b, e.Session)
	b = append(b, `,"seq":`...)
	if e.Seq > 0 {
		b = strconv.AppendInt(b, e.Seq, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"ts":`...)
	if e.TS.IsZero() {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = e.TS.UTC().AppendFormat(b, TimeFormat)
		b = append(b, '"')
	}
	b = append(b, `,"harness":`...)
	b = appendOptStr(b, e.Harness)
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, e.Turn, 10)
	b = append(b, `,"origin":`...)
	origin := e.Origin
	if origin == "" {
		origin = OriginLive
	}
	b = appendStr(b, origin)
	if e.ParentCallID != "" {
		b = append(b, `,"parentCallId":`...)
		b = appendStr(b, e.ParentCallID)
	}
	b = append(b, `,"type":`...)
	b = appendStr(b, e.Type())
	b = append(b, `,"payload":`...)
	if e.Payload == nil {
		b = append(b, "{}"...)
	} else {
		b = e.Payload.AppendJSON(b)
	}
	b = append(b, `,"source":`...)
	if e.Source == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"stream":`...)
		b = appendStr(b, e.Source.Stream)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, e.Source.Line, 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// MarshalJSON encodes the envelope as AppendJSON does.
func (e Envelope) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// UnmarshalJSON decodes an envelope written by AppendJSON (or by a jsonl
// harness following the format).
func (e *Envelope) UnmarshalJSON(data []byte) error {
	got, err := ParseEnvelope(data)
	if err != nil {
		return err
	}
	*e = got
	return nil
}

// ErrNotEnvelope is returned by ParseEnvelope for JSON that is not an
// envelope.
var ErrNotEnvelope = errors.New("agentstream: not an event envelope")

// ParseEnvelope decodes one envelope. Payloads of known types become their
// typed structs; payloads of unknown types are kept as Passthrough.
func ParseEnvelope(data []byte) (Envelope, error) {
	var aux struct {
		V            *int            `json:"v"`
		Session      string          `json:"session"`
		Seq          *int64          `json:"seq"`
		TS           *string         `json:"ts"`
		Harness      string          `json:"harness"`
		Turn         int64           `json:"turn"`
		Origin       string          `json:"origin"`
		ParentCallID string          `json:"parentCallId"`
		Type         *string         `json:"type"`
		Payload      json.RawMessage `json:"payload"`
		Source       *Source         `json:"source"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return Envelope{}, fmt.Errorf("agentstream: envelope: %w", err)
	}
	if aux.V == nil || aux.Type == nil {
		return Envelope{}, ErrNotEnvelope
	}
	e := Envelope{
		Session:      aux.Session,
		Harness:      aux.Harness,
		Turn:         aux.Turn,
		Origin:       aux.Origin,
		ParentCallID: aux.ParentCallID,
		Source:       aux.Source,
	}
	if aux.Seq != nil {
		e.Seq = *aux.Seq
	}
	if aux.TS != nil {
		t, err := time.Parse(time.RFC3339Nano, *aux.TS)
		if err != nil {
			return Envelope{}, fmt.Errorf("agentstream: envelope: ts: %w", err)
		}
		e.TS = t
	}
	p, err := DecodePayload(*aux.Type, aux.Payload)
	if err != nil {
		return Envelope{}, err
	}
	e.Payload = p
	return e, nil
}

var payloadDecoders = map[string]func() Payload{
	TypeSessionStarted:    func() Payload { return new(SessionStarted) },
	TypeSessionTitle:      func() Payload { return new(SessionTitle) },
	TypeMessage:           func() Payload { return new(Message) },
	TypeThinking:          func() Payload { return new(Thinking) },
	TypeToolCall:          func() Payload { return new(ToolCall) },
	TypeToolResult:        func() Payload { return new(ToolResult) },
	TypePlan:              func() Payload { return new(Plan) },
	TypeUsage:             func() Payload { return new(Usage) },
	TypeSessionEnded:      func() Payload { return new(SessionEnded) },
	TypeSessionBackground: func() Payload { return new(SessionBackground) },
	TypeRaw:               func() Payload { return new(Raw) },
	TypeSessionUpdated:    func() Payload { return new(SessionUpdated) },
	TypeTurnStarted:       func() Payload { return new(TurnStarted) },
	TypeTurnEnded:         func() Payload { return new(TurnEnded) },
	TypeMessageDelta:      func() Payload { return new(MessageDelta) },
	TypeThinkingDelta:     func() Payload { return new(ThinkingDelta) },
	TypeToolOutput:        func() Payload { return new(ToolOutput) },
	TypeToolDenied:        func() Payload { return new(ToolDenied) },
	TypeFileChange:        func() Payload { return new(FileChange) },
	TypeSubagent:          func() Payload { return new(Subagent) },
	TypePermissionRequest: func() Payload { return new(PermissionRequest) },
	TypeQuestion:          func() Payload { return new(Question) },
	TypeRequestResolved:   func() Payload { return new(RequestResolved) },
	TypeCompaction:        func() Payload { return new(Compaction) },
	TypeQuota:             func() Payload { return new(Quota) },
	TypeRetry:             func() Payload { return new(Retry) },
	TypeError:             func() Payload { return new(Error) },
	TypeWarning:           func() Payload { return new(Warning) },
	TypeStderr:            func() Payload { return new(Stderr) },
	TypeHook:              func() Payload { return new(Hook) },
	TypeFallback:          func() Payload { return new(Fallback) },
	TypeProgress:          func() Payload { return new(Progress) },
	TypeMessageStatus:     func() Payload { return new(MessageStatus) },
	TypeSessionState:      func() Payload { return new(SessionState) },
	TypeMessageAccepted:   func() Payload { return new(SentAccepted) },
	TypeMessageStarted:    func() Payload { return new(SentStarted) },
	TypeMessageCompleted:  func() Payload { return new(SentCompleted) },
	TypeAccount:           func() Payload { return new(Account) },
}

// DecodePayload decodes the payload JSON of an event of type t. A type this
// version does not know gives a Passthrough holding the JSON as written.
func DecodePayload(t string, data []byte) (Payload, error) {
	data = jsonscan.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	mk, ok := payloadDecoders[t]
	if !ok {
		js, ok := jsonscan.AppendSanitized(nil, data)
		if !ok {
			return nil, fmt.Errorf("agentstream: payload of %q: invalid JSON", t)
		}
		return &Passthrough{EventType: t, JSON: js}, nil
	}
	p := mk()
	if r, ok := p.(*Raw); ok {
		return r, r.decode(data)
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("agentstream: payload of %q: %w", t, err)
	}
	return p, nil
}

func (p *Raw) decode(data []byte) error {
	var aux struct {
		Reason    string          `json:"reason"`
		JSON      json.RawMessage `json:"json"`
		Text      string          `json:"text"`
		Bytes     int64           `json:"bytes"`
		Truncated bool            `json:"truncated"`
	}
	if err := json.Unmarshal(data, &aux); err != nil {
		return fmt.Errorf("agentstream: payload of \"raw\": %w", err)
	}
	*p = Raw{Reason: aux.Reason, Text: aux.Text, Bytes: aux.Bytes, Truncated: aux.Truncated}
	if js := jsonscan.TrimSpace(aux.JSON); len(js) > 0 && !bytes.Equal(js, []byte("null")) {
		p.JSON, _ = jsonscan.AppendCompact(nil, js)
	}
	return nil
}

// Typed returns the typed payload of a Passthrough payload whose type the
// vocabulary knows (what a jsonl harness writes, kept as written), and p
// itself otherwise, so that readers can handle both alike.
func Typed(p Payload) Payload {
	pt, ok := p.(*Passthrough)
	if !ok || !IsKnownType(pt.EventType) {
		return p
	}
	if t, err := DecodePayload(pt.EventType, pt.JSON); err == nil {
		return t
	}
	return p
}
