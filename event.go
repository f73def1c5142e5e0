package agentstream

import "time"

// Event types of the vocabulary (docs/format.md). The first eleven are the
// core; the others are extensions. A reader that meets a type it does not know
// treats it like raw.
const (
	TypeSessionStarted    = "session.started"
	TypeSessionTitle      = "session.title"
	TypeMessage           = "message"
	TypeThinking          = "thinking"
	TypeToolCall          = "tool.call"
	TypeToolResult        = "tool.result"
	TypePlan              = "plan"
	TypeUsage             = "usage"
	TypeSessionEnded      = "session.ended"
	TypeSessionBackground = "session.background"
	TypeRaw               = "raw"

	TypeSessionUpdated    = "session.updated"
	TypeTurnStarted       = "turn.started"
	TypeTurnEnded         = "turn.ended"
	TypeMessageDelta      = "message.delta"
	TypeThinkingDelta     = "thinking.delta"
	TypeToolOutput        = "tool.output"
	TypeToolDenied        = "tool.denied"
	TypeFileChange        = "file.change"
	TypeSubagent          = "subagent"
	TypePermissionRequest = "permission.request"
	TypeQuestion          = "question"
	TypeRequestResolved   = "request.resolved"
	TypeCompaction        = "compaction"
	TypeQuota             = "quota"
	TypeRetry             = "retry"
	TypeError             = "error"
	TypeWarning           = "warning"
	TypeStderr            = "stderr"
	TypeHook              = "hook"
	TypeFallback          = "fallback"
	TypeProgress          = "progress"
	TypeMessageStatus     = "message.status"

	TypeSessionState     = "session.state"
	TypeMessageAccepted  = "message.accepted"
	TypeMessageStarted   = "message.started"
	TypeMessageCompleted = "message.completed"
	TypeAccount          = "account"
)

// Types lists every event type of the vocabulary, core first.
func Types() []string {
	return []string{
		TypeSessionStarted, TypeSessionTitle, TypeMessage, TypeThinking,
		TypeToolCall, TypeToolResult, TypePlan, TypeUsage, TypeSessionEnded,
		TypeSessionBackground, TypeRaw,
		TypeSessionUpdated, TypeTurnStarted, TypeTurnEnded, TypeMessageDelta,
		TypeThinkingDelta, TypeToolOutput, TypeToolDenied, TypeFileChange,
		TypeSubagent, TypePermissionRequest, TypeQuestion, TypeRequestResolved,
		TypeCompaction, TypeQuota, TypeRetry, TypeError, TypeWarning,
		TypeStderr, TypeHook, TypeFallback, TypeProgress, TypeMessageStatus,
		TypeSessionState, TypeMessageAccepted, TypeMessageStarted,
		TypeMessageCompleted, TypeAccount,
	}
}

// IsLive reports whether events of type t are live: sent to watchers and
// renderers but not stored, because a complete event follows with the same
// content (the deltas), or because they only say what the harness is busy
// with now (progress).
func IsLive(t string) bool {
	return t == TypeMessageDelta || t == TypeThinkingDelta || t == TypeToolOutput || t == TypeProgress
}

// IsKnownType reports whether t is a type of the vocabulary.
func IsKnownType(t string) bool {
	_, ok := payloadDecoders[t]
	return ok
}

// MaxText is the number of Unicode code points a text field keeps; the rest is
// clipped and the payload's Truncated is set.
const MaxText = 8000

// A Payload is the typed content of one event. Each payload type knows its
// event type and encodes itself as the JSON object of docs/format.md, with
// every key present (null when unknown).
type Payload interface {
	// Type is the event type, such as "tool.call".
	Type() string
	// AppendJSON appends the payload's JSON object to dst.
	AppendJSON(dst []byte) []byte
}

// An Event is what an adapter produces for one native line: a payload plus
// the facts about it that the envelope records.
type Event struct {
	// Payload is the event's content; its Type is the event's type.
	Payload Payload
	// ParentCallID is the callId of the tool call that spawned the subagent
	// this event came from, or "" for the main agent.
	ParentCallID string
	// Replay is true for history the harness re-sent when a conversation was
	// loaded or resumed (origin "replay").
	Replay bool
	// Time is the line's own timestamp when it carries one, else zero.
	Time time.Time
}

// Type returns the event's type, or "" when it has no payload.
func (e Event) Type() string {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.Type()
}

// E returns an event carrying p, for adapters that need nothing else.
func E(p Payload) Event { return Event{Payload: p} }
