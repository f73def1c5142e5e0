package agentstream

import (
	"strconv"

	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Conventions shared by every payload type below:
//
//   - Optional string fields are null in JSON when empty: a harness that gives
//     an empty model name has given no model name.
//   - Optional numbers and booleans are pointers; nil is null.
//   - Text fields are clipped to MaxText code points by the adapter, which sets
//     Truncated; the encoders never clip.

// SessionStarted is the payload of session.started.
type SessionStarted struct {
	Harness        string   `json:"harness"`
	Model          string   `json:"model"`
	ContextWindow  *int64   `json:"contextWindow"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"sessionId"`
	Tools          []string `json:"tools"`
	Version        string   `json:"version"`
	PermissionMode string   `json:"permissionMode"`
}

// Type returns "session.started".
func (*SessionStarted) Type() string { return TypeSessionStarted }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionStarted) AppendJSON(b []byte) []byte {
	b = append(b, `{"harness":`...)
	b = appendOptStr(b, p.Harness)
	b = append(b, `,"model":`...)
	b = appendOptStr(b, p.Model)
	b = append(b, `,"contextWindow":`...)
	b = appendOptInt(b, p.ContextWindow)
	b = append(b, `,"cwd":`...)
	b = appendOptStr(b, p.Cwd)
	b = append(b, `,"sessionId":`...)
	b = appendOptStr(b, p.SessionID)
	b = append(b, `,"tools":`...)
	b = appendStrings(b, p.Tools)
	b = append(b, `,"version":`...)
	b = appendOptStr(b, p.Version)
	b = append(b, `,"permissionMode":`...)
	b = appendOptStr(b, p.PermissionMode)
	return append(b, '}')
}

// Title sources of session.title.
const (
	// TitlePrompt marks a title taken from the session's first prompt,
	// because the harness gave none.
	TitlePrompt = "prompt"
)

// SessionTitle is the payload of session.title. Source is TitlePrompt for a
// title taken from the first prompt, else empty (and then absent from the
// JSON): the harness's own title.
type SessionTitle struct {
	Title  string `json:"title"`
	Source string `json:"source,omitempty"`
}

// Type returns "session.title".
func (*SessionTitle) Type() string { return TypeSessionTitle }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionTitle) AppendJSON(b []byte) []byte {
	b = append(b, `{"title":`...)
	b = appendOptStr(b, p.Title)
	if p.Source != "" {
		b = append(b, `,"source":`...)
		b = appendStr(b, p.Source)
	}
	return append(b, '}')
}

// Roles of a message.
const (
	RoleAssistant = "assistant"
	RoleUser      = "user"
	RoleSystem    = "system"
)

// Message is the payload of message. Mode is "inject" or "queue" for a user
// message sent while a turn runs, else empty (and then absent from the JSON).
// Partial is true when the reader flushed accumulated deltas because the
// stream ended before the complete message (absent when false).
type Message struct {
	Role      string `json:"role"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Mode      string `json:"mode,omitempty"`
	Partial   bool   `json:"partial,omitempty"`
}

// Type returns "message".
func (*Message) Type() string { return TypeMessage }

// AppendJSON appends the payload's JSON object to b.
func (p *Message) AppendJSON(b []byte) []byte {
	b = append(b, `{"role":`...)
	b = appendOptStr(b, p.Role)
	b = append(b, `,"text":`...)
	b = appendStr(b, p.Text)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	if p.Mode != "" {
		b = append(b, `,"mode":`...)
		b = appendStr(b, p.Mode)
	}
	if p.Partial {
		b = append(b, `,"partial":true`...)
	}
	return append(b, '}')
}

// Thinking is the payload of thinking. Redacted is true when the harness hid
// the reasoning (Text is then usually empty).
type Thinking struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
	Redacted  bool   `json:"redacted"`
	Partial   bool   `json:"partial,omitempty"`
}

// Type returns "thinking".
func (*Thinking) Type() string { return TypeThinking }

// AppendJSON appends the payload's JSON object to b.
func (p *Thinking) AppendJSON(b []byte) []byte {
	b = append(b, `{"text":`...)
	b = appendStr(b, p.Text)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	b = append(b, `,"redacted":`...)
	b = appendBool(b, p.Redacted)
	if p.Partial {
		b = append(b, `,"partial":true`...)
	}
	return append(b, '}')
}

// Tool categories of tool.call.
const (
	CategoryRead     = "read"
	CategoryEdit     = "edit"
	CategoryDelete   = "delete"
	CategoryMove     = "move"
	CategorySearch   = "search"
	CategoryExecute  = "execute"
	CategoryFetch    = "fetch"
	CategoryThink    = "think"
	CategoryDelegate = "delegate"
	CategoryPlan     = "plan"
	CategoryAsk      = "ask"
	CategoryMCP      = "mcp"
	CategoryOther    = "other"
)

// ToolCall is the payload of tool.call. Input is the harness's own JSON for
// the arguments, compacted byte for byte, then clipped. Summary is a safe
// one-line description, empty (null) for tools the adapter does not know.
// DisplayName is the name of the tool's kind, the same for every harness
// (one of the Tool* names), or the native name for a tool of no known kind.
type ToolCall struct {
	CallID      string `json:"callId"`
	Name        string `json:"name"`
	Input       string `json:"input"`
	Truncated   bool   `json:"truncated"`
	Category    string `json:"category"`
	Summary     string `json:"summary"`
	DisplayName string `json:"displayName"`
}

// Display names of tool.call: one per kind of tool, whatever each harness
// calls it.
const (
	ToolShell     = "Shell"     // runs a command
	ToolRead      = "Read"      // reads a file
	ToolList      = "List"      // lists a directory
	ToolEdit      = "Edit"      // changes part of a file
	ToolWrite     = "Write"     // writes a whole file
	ToolDelete    = "Delete"    // deletes a file
	ToolMove      = "Move"      // moves or renames a file
	ToolSearch    = "Search"    // searches files by name or content
	ToolWebSearch = "WebSearch" // searches the web
	ToolFetch     = "Fetch"     // fetches a URL
	ToolAgent     = "Agent"     // delegates to a subagent
	ToolPlan      = "Plan"      // writes or updates the plan
	ToolAsk       = "Ask"       // asks the person a question
	ToolThink     = "Think"     // thinks aloud, or remembers
	ToolMCP       = "MCP"       // a tool of an MCP server
)

// Type returns "tool.call".
func (*ToolCall) Type() string { return TypeToolCall }

// AppendJSON appends the payload's JSON object to b.
func (p *ToolCall) AppendJSON(b []byte) []byte {
	b = append(b, `{"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"input":`...)
	b = appendStr(b, p.Input)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	b = append(b, `,"category":`...)
	b = appendOptStr(b, p.Category)
	b = append(b, `,"summary":`...)
	b = appendOptStr(b, p.Summary)
	b = append(b, `,"displayName":`...)
	b = appendOptStr(b, p.DisplayName)
	return append(b, '}')
}

// ToolResult is the payload of tool.result. Characters is the length in code
// points of the whole output before clipping.
type ToolResult struct {
	CallID     string `json:"callId"`
	IsError    bool   `json:"isError"`
	Output     string `json:"output"`
	Truncated  bool   `json:"truncated"`
	Name       string `json:"name"`
	Characters int64  `json:"characters"`
	ExitCode   *int64 `json:"exitCode"`
}

// Type returns "tool.result".
func (*ToolResult) Type() string { return TypeToolResult }

// AppendJSON appends the payload's JSON object to b.
func (p *ToolResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"isError":`...)
	b = appendBool(b, p.IsError)
	b = append(b, `,"output":`...)
	b = appendStr(b, p.Output)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"characters":`...)
	b = strconv.AppendInt(b, p.Characters, 10)
	b = append(b, `,"exitCode":`...)
	b = appendOptInt(b, p.ExitCode)
	return append(b, '}')
}

// Plan step statuses.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepCancelled  = "cancelled"
)

// PlanStep is one step of a plan.
type PlanStep struct {
	Text   string `json:"text"`
	Status string `json:"status"`
}

// Plan is the payload of plan: the whole plan as it stands now.
type Plan struct {
	Steps []PlanStep `json:"steps"`
}

// Type returns "plan".
func (*Plan) Type() string { return TypePlan }

// AppendJSON appends the payload's JSON object to b.
func (p *Plan) AppendJSON(b []byte) []byte {
	b = append(b, `{"steps":[`...)
	for i, s := range p.Steps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"text":`...)
		b = appendStr(b, s.Text)
		b = append(b, `,"status":`...)
		b = appendOptStr(b, s.Status)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// Usage scopes.
const (
	ScopeCall    = "call"
	ScopeSession = "session"
)

// Usage is the payload of usage. Scope "call" is what one model call
// consumed; scope "session" is the harness's own running total, of which
// readers take the latest of each run and never add them up. Token fields
// follow one meaning for every harness: InputTokens excludes cached input.
//
// The keys written depend on the scope (docs/format.md); CostUSD and
// Estimate on a call, and PremiumRequests, ContextTokens/ContextWindow,
// Run, Unpriced and Models on a session are written only when set.
type Usage struct {
	Scope               string   `json:"scope"`
	Model               string   `json:"model,omitempty"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	ContextTokens       *int64   `json:"contextTokens,omitempty"`
	ContextWindow       *int64   `json:"contextWindow,omitempty"`
	ReasoningTokens     *int64   `json:"reasoningTokens"`
	MessageID           string   `json:"messageId,omitempty"`
	CostUSD             *float64 `json:"costUsd,omitempty"`
	// Turns is, for historical reasons, the harness's count of model calls
	// (Claude's num_turns), not of turns.
	Turns           *int64   `json:"turns,omitempty"`
	DurationMs      *int64   `json:"durationMs,omitempty"`
	PremiumRequests *float64 `json:"premiumRequests,omitempty"`
	// Estimate marks call usage whose final count the harness never
	// printed: the figures are the snapshot taken when the call started, so
	// OutputTokens is a lower bound (input and cache counts are final).
	Estimate bool `json:"estimate,omitempty"`
	// Run numbers, from 1, the harness's running totals a session total
	// belongs to: a session total replaces the previous one of the same
	// run, and the totals of different runs add up (a file holding several
	// processes' output). It is written from run 2 on: 0 is run 1.
	Run int64 `json:"run,omitempty"`
	// Models breaks a session total down by model, as the harness reported
	// it, each under its native name.
	Models []ModelUsage `json:"models,omitempty"`
	// Thread is set on the session totals of a harness whose totals go on
	// across processes (Codex's thread, resumed with exec resume): the id
	// of the conversation they are the running total of, so that a later
	// process's totals are known to include this one's.
	Thread string `json:"thread,omitempty"`
	// Unpriced, on a session total, says the harness had no price for
	// part of what the total covers (Claude Code's hasUnknownModelCost):
	// CostUSD, when set, is a lower bound.
	Unpriced bool `json:"unpriced,omitempty"`
}

// ModelUsage is one model's share of a session total.
type ModelUsage struct {
	Model               string   `json:"model"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	CostUSD             *float64 `json:"costUsd"`
	ContextWindow       *int64   `json:"contextWindow,omitempty"`
}

func (m *ModelUsage) appendJSON(b []byte) []byte {
	b = append(b, `{"model":`...)
	b = appendOptStr(b, m.Model)
	b = append(b, `,"inputTokens":`...)
	b = appendOptInt(b, m.InputTokens)
	b = append(b, `,"outputTokens":`...)
	b = appendOptInt(b, m.OutputTokens)
	b = append(b, `,"cacheReadTokens":`...)
	b = appendOptInt(b, m.CacheReadTokens)
	b = append(b, `,"cacheCreationTokens":`...)
	b = appendOptInt(b, m.CacheCreationTokens)
	b = append(b, `,"costUsd":`...)
	b = appendOptFloat(b, m.CostUSD)
	if m.ContextWindow != nil {
		b = append(b, `,"contextWindow":`...)
		b = appendOptInt(b, m.ContextWindow)
	}
	return append(b, '}')
}

// Type returns "usage".
func (*Usage) Type() string { return TypeUsage }

// AppendJSON appends the payload's JSON object to b.
func (p *Usage) AppendJSON(b []byte) []byte {
	b = append(b, `{"scope":`...)
	b = appendOptStr(b, p.Scope)
	if p.Scope == ScopeCall {
		b = append(b, `,"model":`...)
		b = appendOptStr(b, p.Model)
	}
	b = append(b, `,"inputTokens":`...)
	b = appendOptInt(b, p.InputTokens)
	b = append(b, `,"outputTokens":`...)
	b = appendOptInt(b, p.OutputTokens)
	b = append(b, `,"cacheReadTokens":`...)
	b = appendOptInt(b, p.CacheReadTokens)
	b = append(b, `,"cacheCreationTokens":`...)
	b = appendOptInt(b, p.CacheCreationTokens)
	if p.Scope == ScopeCall {
		b = append(b, `,"contextTokens":`...)
		b = appendOptInt(b, p.ContextTokens)
		b = append(b, `,"reasoningTokens":`...)
		b = appendOptInt(b, p.ReasoningTokens)
		b = append(b, `,"messageId":`...)
		b = appendOptStr(b, p.MessageID)
		if p.CostUSD != nil {
			b = append(b, `,"costUsd":`...)
			b = appendFloat(b, *p.CostUSD)
		}
		if p.Estimate {
			b = append(b, `,"estimate":true`...)
		}
		return append(b, '}')
	}
	b = append(b, `,"costUsd":`...)
	b = appendOptFloat(b, p.CostUSD)
	b = append(b, `,"turns":`...)
	b = appendOptInt(b, p.Turns)
	b = append(b, `,"durationMs":`...)
	b = appendOptInt(b, p.DurationMs)
	b = append(b, `,"reasoningTokens":`...)
	b = appendOptInt(b, p.ReasoningTokens)
	if p.Model != "" {
		b = append(b, `,"model":`...)
		b = appendStr(b, p.Model)
	}
	if p.ContextTokens != nil {
		b = append(b, `,"contextTokens":`...)
		b = appendOptInt(b, p.ContextTokens)
	}
	if p.ContextWindow != nil {
		b = append(b, `,"contextWindow":`...)
		b = appendOptInt(b, p.ContextWindow)
	}
	if p.PremiumRequests != nil {
		b = append(b, `,"premiumRequests":`...)
		b = appendFloat(b, *p.PremiumRequests)
	}
	if p.Run != 0 {
		b = append(b, `,"run":`...)
		b = strconv.AppendInt(b, p.Run, 10)
	}
	if p.Thread != "" {
		b = append(b, `,"thread":`...)
		b = appendStr(b, p.Thread)
	}
	if p.Unpriced {
		b = append(b, `,"unpriced":true`...)
	}
	if len(p.Models) > 0 {
		b = append(b, `,"models":[`...)
		for i := range p.Models {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.Models[i].appendJSON(b)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// CallContext returns InputTokens + CacheReadTokens + CacheCreationTokens, the
// size of the prompt a call sent, or nil when none of them is known.
func (p *Usage) CallContext() *int64 {
	if p.InputTokens == nil && p.CacheReadTokens == nil && p.CacheCreationTokens == nil {
		return nil
	}
	var n int64
	for _, v := range []*int64{p.InputTokens, p.CacheReadTokens, p.CacheCreationTokens} {
		if v != nil {
			n += *v
		}
	}
	return &n
}

// ClearUnpricedCost sets CostUSD to nil when it is 0 while tokens were
// spent: harnesses print a cost of 0 for a model they have no price for
// (a custom model), which is no price, not $0.00 spent.
func (p *Usage) ClearUnpricedCost() {
	if p.CostUSD != nil && *p.CostUSD == 0 && !p.IsZero() {
		p.CostUSD = nil
	}
}

// IsZero reports whether every token counter is absent or zero.
func (p *Usage) IsZero() bool {
	for _, v := range []*int64{p.InputTokens, p.OutputTokens, p.CacheReadTokens, p.CacheCreationTokens, p.ReasoningTokens} {
		if v != nil && *v != 0 {
			return false
		}
	}
	return true
}

// Session end statuses.
const (
	StatusSucceeded = "succeeded"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	// StatusInterrupted is the status of a session whose runner went
	// away without saying how it ended (see ReasonHeartbeatTimeout).
	StatusInterrupted = "interrupted"
)

// Reasons a session ended (session.ended reason).
const (
	ReasonCompletion     = "completion"
	ReasonExit           = "exit"
	ReasonIdleTimeout    = "idle-timeout"
	ReasonDeadline       = "deadline"
	ReasonAborted        = "aborted"
	ReasonOversizedEvent = "oversized-event"
	ReasonBudget         = "budget"
	// ReasonHeartbeatTimeout ends a remote session whose runner sent
	// nothing, not even a heartbeat, for longer than the server waits.
	ReasonHeartbeatTimeout = "heartbeat-timeout"
)

// SessionEnded is the payload of session.ended.
type SessionEnded struct {
	Status     string `json:"status"`
	StopReason string `json:"stopReason"`
	Summary    string `json:"summary"`
	Error      string `json:"error"`
	Reason     string `json:"reason"`
	Truncated  bool   `json:"truncated,omitempty"`
}

// Type returns "session.ended".
func (*SessionEnded) Type() string { return TypeSessionEnded }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionEnded) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"stopReason":`...)
	b = appendOptStr(b, p.StopReason)
	b = append(b, `,"summary":`...)
	b = appendOptStr(b, p.Summary)
	b = append(b, `,"error":`...)
	b = appendOptStr(b, p.Error)
	b = append(b, `,"reason":`...)
	b = appendOptStr(b, p.Reason)
	if p.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// SessionBackground is the payload of session.background: work the agent
// runs beside its turns (a background shell, a subagent, a workflow).
type SessionBackground struct {
	TaskID      string `json:"taskId"`
	Kind        string `json:"kind"`
	Status      string `json:"status"`
	Description string `json:"description"`
	Summary     string `json:"summary"`
	CallID      string `json:"callId"`
}

// Type returns "session.background".
func (*SessionBackground) Type() string { return TypeSessionBackground }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionBackground) AppendJSON(b []byte) []byte {
	b = append(b, `{"taskId":`...)
	b = appendOptStr(b, p.TaskID)
	b = append(b, `,"kind":`...)
	b = appendOptStr(b, p.Kind)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"description":`...)
	b = appendOptStr(b, p.Description)
	b = append(b, `,"summary":`...)
	b = appendOptStr(b, p.Summary)
	b = append(b, `,"callId":`...)
	b = appendOptStr(b, p.CallID)
	return append(b, '}')
}

// Reasons a line became raw.
const (
	RawUnmapped     = "unmapped"
	RawMalformed    = "malformed"
	RawOversized    = "oversized"
	RawText         = "text"
	RawAdapterError = "adapter-error"
)

// Raw is the payload of raw: a line no mapping covered. JSON holds the parsed
// value (valid, compact JSON) when the line parsed and is at most MaxText
// characters; otherwise Text holds the line, clipped. Bytes is the line's
// full size.
type Raw struct {
	Reason    string `json:"reason"`
	JSON      []byte `json:"json"`
	Text      string `json:"text"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

// Type returns "raw".
func (*Raw) Type() string { return TypeRaw }

// AppendJSON appends the payload's JSON object to b.
func (p *Raw) AppendJSON(b []byte) []byte {
	b = append(b, `{"reason":`...)
	b = appendOptStr(b, p.Reason)
	b = append(b, `,"json":`...)
	b = appendRawJSON(b, p.JSON)
	b = append(b, `,"text":`...)
	if len(p.JSON) > 0 {
		b = append(b, "null"...)
	} else {
		b = appendStr(b, p.Text)
	}
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, p.Bytes, 10)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	return append(b, '}')
}

// NewRaw returns the raw payload for line: its JSON when it is valid JSON of
// at most MaxText characters, else its text clipped to MaxText.
func NewRaw(reason string, line []byte) *Raw {
	p := &Raw{Reason: reason, Bytes: int64(len(line))}
	if reason != RawText && reason != RawMalformed && len(line) <= 4*MaxText && CountChars(string(line)) <= MaxText {
		if js, ok := jsonscan.AppendSanitized(nil, line); ok {
			p.JSON = js
			return p
		}
	}
	p.Text, p.Truncated = ClipBytes(line, MaxText)
	return p
}

// SessionUpdated is the payload of session.updated; empty or nil fields are
// unchanged. SessionID is the harness's new id for the session (Claude
// Code's /clear starts a new conversation in the same process); MCPServers,
// Skills and BackgroundTasks are each the whole list as it stands, empty
// when there are none.
type SessionUpdated struct {
	Model           string           `json:"model"`
	PermissionMode  string           `json:"permissionMode"`
	Mode            string           `json:"mode"`
	Cwd             string           `json:"cwd"`
	Tools           []string         `json:"tools"`
	Commands        []string         `json:"commands"`
	SessionID       string           `json:"sessionId"`
	MCPServers      []MCPServer      `json:"mcpServers"`
	Skills          []string         `json:"skills"`
	BackgroundTasks []BackgroundTask `json:"backgroundTasks"`
}

// MCPServer is one MCP server of a session and the state of its
// connection, as the harness names it (connected, failed, pending, …).
type MCPServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// BackgroundTask is one task running beside the agent's turns (a subagent,
// a shell), as session.background names them.
type BackgroundTask struct {
	TaskID      string `json:"taskId"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
}

// Type returns "session.updated".
func (*SessionUpdated) Type() string { return TypeSessionUpdated }

// AppendJSON appends the payload's JSON object to b.
func (p *SessionUpdated) AppendJSON(b []byte) []byte {
	b = append(b, `{"model":`...)
	b = appendOptStr(b, p.Model)
	b = append(b, `,"permissionMode":`...)
	b = appendOptStr(b, p.PermissionMode)
	b = append(b, `,"mode":`...)
	b = appendOptStr(b, p.Mode)
	b = append(b, `,"cwd":`...)
	b = appendOptStr(b, p.Cwd)
	b = append(b, `,"tools":`...)
	b = appendStrings(b, p.Tools)
	b = append(b, `,"commands":`...)
	b = appendStrings(b, p.Commands)
	b = append(b, `,"sessionId":`...)
	b = appendOptStr(b, p.SessionID)
	b = append(b, `,"mcpServers":`...)
	if p.MCPServers == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range p.MCPServers {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendOptStr(b, m.Name)
			b = append(b, `,"status":`...)
			b = appendOptStr(b, m.Status)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"skills":`...)
	b = appendStrings(b, p.Skills)
	b = append(b, `,"backgroundTasks":`...)
	if p.BackgroundTasks == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, t := range p.BackgroundTasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"taskId":`...)
			b = appendOptStr(b, t.TaskID)
			b = append(b, `,"kind":`...)
			b = appendOptStr(b, t.Kind)
			b = append(b, `,"description":`...)
			b = appendOptStr(b, t.Description)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// TurnStarted is the payload of turn.started.
type TurnStarted struct {
	Turn int64 `json:"turn"`
}

// Type returns "turn.started".
func (*TurnStarted) Type() string { return TypeTurnStarted }

// AppendJSON appends the payload's JSON object to b.
func (p *TurnStarted) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, p.Turn, 10)
	return append(b, '}')
}

// Turn end reasons.
const (
	TurnOK        = "ok"
	TurnInterrupt = "interrupt"
	TurnError     = "error"
)

// TurnEnded is the payload of turn.ended.
type TurnEnded struct {
	Turn   int64  `json:"turn"`
	Reason string `json:"reason"`
}

// Type returns "turn.ended".
func (*TurnEnded) Type() string { return TypeTurnEnded }

// AppendJSON appends the payload's JSON object to b.
func (p *TurnEnded) AppendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, p.Turn, 10)
	b = append(b, `,"reason":`...)
	b = appendOptStr(b, p.Reason)
	return append(b, '}')
}

// MessageDelta is the payload of message.delta (live).
type MessageDelta struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// Type returns "message.delta".
func (*MessageDelta) Type() string { return TypeMessageDelta }

// AppendJSON appends the payload's JSON object to b.
func (p *MessageDelta) AppendJSON(b []byte) []byte {
	b = append(b, `{"role":`...)
	b = appendOptStr(b, p.Role)
	b = append(b, `,"text":`...)
	b = appendStr(b, p.Text)
	return append(b, '}')
}

// ThinkingDelta is the payload of thinking.delta (live).
type ThinkingDelta struct {
	Text string `json:"text"`
}

// Type returns "thinking.delta".
func (*ThinkingDelta) Type() string { return TypeThinkingDelta }

// AppendJSON appends the payload's JSON object to b.
func (p *ThinkingDelta) AppendJSON(b []byte) []byte {
	b = append(b, `{"text":`...)
	b = appendStr(b, p.Text)
	return append(b, '}')
}

// ToolOutput is the payload of tool.output (live): output a running tool
// printed.
type ToolOutput struct {
	CallID    string `json:"callId"`
	Channel   string `json:"channel"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// Type returns "tool.output".
func (*ToolOutput) Type() string { return TypeToolOutput }

// AppendJSON appends the payload's JSON object to b.
func (p *ToolOutput) AppendJSON(b []byte) []byte {
	b = append(b, `{"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"channel":`...)
	b = appendOptStr(b, p.Channel)
	b = append(b, `,"text":`...)
	b = appendStr(b, p.Text)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	return append(b, '}')
}

// ToolDenied is the payload of tool.denied.
type ToolDenied struct {
	CallID string `json:"callId"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Type returns "tool.denied".
func (*ToolDenied) Type() string { return TypeToolDenied }

// AppendJSON appends the payload's JSON object to b.
func (p *ToolDenied) AppendJSON(b []byte) []byte {
	b = append(b, `{"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"reason":`...)
	b = appendOptStr(b, p.Reason)
	return append(b, '}')
}

// File change kinds.
const (
	ChangeAdd    = "add"
	ChangeModify = "modify"
	ChangeDelete = "delete"
	ChangeRename = "rename"
)

// FileChangeItem is one file of a file.change.
type FileChangeItem struct {
	Path     string `json:"path"`
	Kind     string `json:"kind"`
	MovePath string `json:"movePath"`
	Diff     string `json:"diff"`
}

// FileChange is the payload of file.change.
type FileChange struct {
	CallID    string           `json:"callId"`
	Changes   []FileChangeItem `json:"changes"`
	Truncated bool             `json:"truncated,omitempty"`
}

// Type returns "file.change".
func (*FileChange) Type() string { return TypeFileChange }

// AppendJSON appends the payload's JSON object to b.
func (p *FileChange) AppendJSON(b []byte) []byte {
	b = append(b, `{"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"changes":[`...)
	for i, c := range p.Changes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"path":`...)
		b = appendOptStr(b, c.Path)
		b = append(b, `,"kind":`...)
		b = appendOptStr(b, c.Kind)
		b = append(b, `,"movePath":`...)
		b = appendOptStr(b, c.MovePath)
		b = append(b, `,"diff":`...)
		b = appendOptStr(b, c.Diff)
		b = append(b, '}')
	}
	b = append(b, ']')
	if p.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// Subagent statuses.
const (
	SubagentStarted  = "started"
	SubagentFinished = "finished"
	SubagentFailed   = "failed"
)

// Subagent is the payload of subagent.
type Subagent struct {
	ID          string `json:"id"`
	CallID      string `json:"callId"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

// Type returns "subagent".
func (*Subagent) Type() string { return TypeSubagent }

// AppendJSON appends the payload's JSON object to b.
func (p *Subagent) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendOptStr(b, p.ID)
	b = append(b, `,"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"description":`...)
	b = appendOptStr(b, p.Description)
	return append(b, '}')
}

// PermissionOption is one answer a permission request offers.
type PermissionOption struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Kind  string `json:"kind"`
}

// PermissionRequest is the payload of permission.request. Input is the
// tool's arguments as compact JSON text.
type PermissionRequest struct {
	RequestID string             `json:"requestId"`
	CallID    string             `json:"callId"`
	Name      string             `json:"name"`
	Input     string             `json:"input"`
	Options   []PermissionOption `json:"options"`
	Truncated bool               `json:"truncated,omitempty"`
}

// Type returns "permission.request".
func (*PermissionRequest) Type() string { return TypePermissionRequest }

// AppendJSON appends the payload's JSON object to b.
func (p *PermissionRequest) AppendJSON(b []byte) []byte {
	b = append(b, `{"requestId":`...)
	b = appendOptStr(b, p.RequestID)
	b = append(b, `,"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"input":`...)
	b = appendOptStr(b, p.Input)
	b = append(b, `,"options":`...)
	if p.Options == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, o := range p.Options {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendOptStr(b, o.ID)
			b = append(b, `,"label":`...)
			b = appendOptStr(b, o.Label)
			b = append(b, `,"kind":`...)
			b = appendOptStr(b, o.Kind)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if p.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// QuestionOption is one offered answer of a question.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// QuestionItem is one question the agent asks.
type QuestionItem struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// Question is the payload of question: the agent asks the person.
type Question struct {
	RequestID string         `json:"requestId"`
	CallID    string         `json:"callId"`
	Questions []QuestionItem `json:"questions"`
}

// Type returns "question".
func (*Question) Type() string { return TypeQuestion }

// AppendJSON appends the payload's JSON object to b.
func (p *Question) AppendJSON(b []byte) []byte {
	b = append(b, `{"requestId":`...)
	b = appendOptStr(b, p.RequestID)
	b = append(b, `,"callId":`...)
	b = appendOptStr(b, p.CallID)
	b = append(b, `,"questions":[`...)
	for i, q := range p.Questions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"question":`...)
		b = appendStr(b, q.Question)
		b = append(b, `,"header":`...)
		b = appendOptStr(b, q.Header)
		b = append(b, `,"options":[`...)
		for j, o := range q.Options {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"label":`...)
			b = appendStr(b, o.Label)
			b = append(b, `,"description":`...)
			b = appendOptStr(b, o.Description)
			b = append(b, '}')
		}
		b = append(b, `],"multiSelect":`...)
		b = appendBool(b, q.MultiSelect)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// Request outcomes of request.resolved.
const (
	OutcomeAllowed   = "allowed"
	OutcomeDenied    = "denied"
	OutcomeAnswered  = "answered"
	OutcomeCancelled = "cancelled"
)

// Who answered a request (RequestResolved.By).
const (
	// ResolvedByPolicy: the session's permission policy answered (Auto is
	// true).
	ResolvedByPolicy = "policy"
	// ResolvedByPerson: a person answered.
	ResolvedByPerson = "person"
	// ResolvedByHarness: the harness withdrew its request.
	ResolvedByHarness = "harness"
	// ResolvedBySession: the session withdrew it (an interrupt, the end of
	// the session) before anyone answered.
	ResolvedBySession = "session"
)

// RequestResolved is the payload of request.resolved. Auto is true when a
// policy answered, not a person. By, when known, says who resolved it (a
// ResolvedBy constant); it is absent from the JSON when empty.
type RequestResolved struct {
	RequestID string `json:"requestId"`
	Outcome   string `json:"outcome"`
	Answer    string `json:"answer"`
	Auto      bool   `json:"auto"`
	By        string `json:"by,omitempty"`
}

// Type returns "request.resolved".
func (*RequestResolved) Type() string { return TypeRequestResolved }

// AppendJSON appends the payload's JSON object to b.
func (p *RequestResolved) AppendJSON(b []byte) []byte {
	b = append(b, `{"requestId":`...)
	b = appendOptStr(b, p.RequestID)
	b = append(b, `,"outcome":`...)
	b = appendOptStr(b, p.Outcome)
	b = append(b, `,"answer":`...)
	b = appendOptStr(b, p.Answer)
	b = append(b, `,"auto":`...)
	b = appendBool(b, p.Auto)
	if p.By != "" {
		b = append(b, `,"by":`...)
		b = appendStr(b, p.By)
	}
	return append(b, '}')
}

// Compaction is the payload of compaction: the harness summarised its
// context.
type Compaction struct {
	Trigger    string `json:"trigger"`
	PreTokens  *int64 `json:"preTokens"`
	PostTokens *int64 `json:"postTokens"`
}

// Type returns "compaction".
func (*Compaction) Type() string { return TypeCompaction }

// AppendJSON appends the payload's JSON object to b.
func (p *Compaction) AppendJSON(b []byte) []byte {
	b = append(b, `{"trigger":`...)
	b = appendOptStr(b, p.Trigger)
	b = append(b, `,"preTokens":`...)
	b = appendOptInt(b, p.PreTokens)
	b = append(b, `,"postTokens":`...)
	b = appendOptInt(b, p.PostTokens)
	return append(b, '}')
}

// Quota is the payload of quota: the state of a rate limit. ResetAt is RFC
// 3339.
type Quota struct {
	Message     string   `json:"message"`
	Status      string   `json:"status"`
	LimitType   string   `json:"limitType"`
	Utilization *float64 `json:"utilization"`
	ResetAt     string   `json:"resetAt"`
}

// Type returns "quota".
func (*Quota) Type() string { return TypeQuota }

// AppendJSON appends the payload's JSON object to b.
func (p *Quota) AppendJSON(b []byte) []byte {
	b = append(b, `{"message":`...)
	b = appendOptStr(b, p.Message)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"limitType":`...)
	b = appendOptStr(b, p.LimitType)
	b = append(b, `,"utilization":`...)
	b = appendOptFloat(b, p.Utilization)
	b = append(b, `,"resetAt":`...)
	b = appendOptStr(b, p.ResetAt)
	return append(b, '}')
}

// Retry is the payload of retry: the harness retries a failed API call.
// DelayMs may be fractional.
type Retry struct {
	Attempt    *int64   `json:"attempt"`
	MaxRetries *int64   `json:"maxRetries"`
	DelayMs    *float64 `json:"delayMs"`
	Error      string   `json:"error"`
	Status     *int64   `json:"status"`
}

// Type returns "retry".
func (*Retry) Type() string { return TypeRetry }

// AppendJSON appends the payload's JSON object to b.
func (p *Retry) AppendJSON(b []byte) []byte {
	b = append(b, `{"attempt":`...)
	b = appendOptInt(b, p.Attempt)
	b = append(b, `,"maxRetries":`...)
	b = appendOptInt(b, p.MaxRetries)
	b = append(b, `,"delayMs":`...)
	b = appendOptFloat(b, p.DelayMs)
	b = append(b, `,"error":`...)
	b = appendOptStr(b, p.Error)
	b = append(b, `,"status":`...)
	b = appendOptInt(b, p.Status)
	return append(b, '}')
}

// Error is the payload of error.
type Error struct {
	Message     string `json:"message"`
	ErrorType   string `json:"errorType"`
	Recoverable *bool  `json:"recoverable"`
}

// Type returns "error".
func (*Error) Type() string { return TypeError }

// AppendJSON appends the payload's JSON object to b.
func (p *Error) AppendJSON(b []byte) []byte {
	b = append(b, `{"message":`...)
	b = appendOptStr(b, p.Message)
	b = append(b, `,"errorType":`...)
	b = appendOptStr(b, p.ErrorType)
	b = append(b, `,"recoverable":`...)
	b = appendOptBool(b, p.Recoverable)
	return append(b, '}')
}

// Warning is the payload of warning.
type Warning struct {
	Message string `json:"message"`
}

// Type returns "warning".
func (*Warning) Type() string { return TypeWarning }

// AppendJSON appends the payload's JSON object to b.
func (p *Warning) AppendJSON(b []byte) []byte {
	b = append(b, `{"message":`...)
	b = appendOptStr(b, p.Message)
	return append(b, '}')
}

// Stderr is the payload of stderr: one line of the harness's stderr.
type Stderr struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// Type returns "stderr".
func (*Stderr) Type() string { return TypeStderr }

// AppendJSON appends the payload's JSON object to b.
func (p *Stderr) AppendJSON(b []byte) []byte {
	b = append(b, `{"text":`...)
	b = appendStr(b, p.Text)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	return append(b, '}')
}

// Hook is the payload of hook: a harness hook started or finished.
type Hook struct {
	Event     string `json:"event"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Outcome   string `json:"outcome"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
}

// Type returns "hook".
func (*Hook) Type() string { return TypeHook }

// AppendJSON appends the payload's JSON object to b.
func (p *Hook) AppendJSON(b []byte) []byte {
	b = append(b, `{"event":`...)
	b = appendOptStr(b, p.Event)
	b = append(b, `,"name":`...)
	b = appendOptStr(b, p.Name)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	b = append(b, `,"outcome":`...)
	b = appendOptStr(b, p.Outcome)
	b = append(b, `,"output":`...)
	b = appendOptStr(b, p.Output)
	b = append(b, `,"truncated":`...)
	b = appendBool(b, p.Truncated)
	return append(b, '}')
}

// FallbackTarget names one entry of a fallback chain.
type FallbackTarget struct {
	Index   *int64 `json:"index"`
	Harness string `json:"harness"`
	Model   string `json:"model"`
}

func (t *FallbackTarget) appendJSON(b []byte) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"index":`...)
	b = appendOptInt(b, t.Index)
	b = append(b, `,"harness":`...)
	b = appendOptStr(b, t.Harness)
	b = append(b, `,"model":`...)
	b = appendOptStr(b, t.Model)
	return append(b, '}')
}

// Fallback is the payload of fallback: the run moved to another harness or
// model because the current one failed.
type Fallback struct {
	From    *FallbackTarget `json:"from"`
	To      *FallbackTarget `json:"to"`
	Failure string          `json:"failure"`
	Message string          `json:"message"`
	ResetAt string          `json:"resetAt"`
}

// Type returns "fallback".
func (*Fallback) Type() string { return TypeFallback }

// AppendJSON appends the payload's JSON object to b.
func (p *Fallback) AppendJSON(b []byte) []byte {
	b = append(b, `{"from":`...)
	b = p.From.appendJSON(b)
	b = append(b, `,"to":`...)
	b = p.To.appendJSON(b)
	b = append(b, `,"failure":`...)
	b = appendOptStr(b, p.Failure)
	b = append(b, `,"message":`...)
	b = appendOptStr(b, p.Message)
	b = append(b, `,"resetAt":`...)
	b = appendOptStr(b, p.ResetAt)
	return append(b, '}')
}

// Passthrough is a payload kept exactly as written: the payload of a jsonl
// harness's event, or of a stored event whose type this version does not
// know. JSON is a valid, compact JSON object.
type Passthrough struct {
	EventType string
	JSON      []byte
}

// Type returns the event type the payload was written with.
func (p *Passthrough) Type() string { return p.EventType }

// AppendJSON appends the payload's JSON as written.
func (p *Passthrough) AppendJSON(b []byte) []byte {
	if len(p.JSON) == 0 {
		return append(b, "{}"...)
	}
	return append(b, p.JSON...)
}

// Activities of progress.
const (
	ActivityRequesting = "requesting" // a model call is being sent
	ActivityThinking   = "thinking"   // the model is thinking
	ActivityCompacting = "compacting" // the harness is compacting its context
	ActivityIdle       = "idle"       // the harness reports no activity
)

// Progress is the payload of progress (live): what the harness is busy
// with. Tokens is the estimated count of the activity's tokens so far (a
// model's thinking), when the harness gives one.
type Progress struct {
	Activity string `json:"activity"`
	Tokens   *int64 `json:"tokens"`
	Message  string `json:"message"`
}

// Type returns "progress".
func (*Progress) Type() string { return TypeProgress }

// AppendJSON appends the payload's JSON object to b.
func (p *Progress) AppendJSON(b []byte) []byte {
	b = append(b, `{"activity":`...)
	b = appendOptStr(b, p.Activity)
	b = append(b, `,"tokens":`...)
	b = appendOptInt(b, p.Tokens)
	b = append(b, `,"message":`...)
	b = appendOptStr(b, p.Message)
	return append(b, '}')
}

// Statuses of message.status.
const (
	MessageQueued    = "queued"
	MessageStarted   = "started"
	MessageCompleted = "completed"
	MessageCancelled = "cancelled"
	MessageDiscarded = "discarded"
)

// MessageStatus is the payload of message.status: where the harness is
// with a message sent to it (queued behind a running turn, started,
// completed, cancelled, or discarded unanswered). MessageID is the id the
// message was sent with.
type MessageStatus struct {
	MessageID string `json:"messageId"`
	Status    string `json:"status"`
}

// Type returns "message.status".
func (*MessageStatus) Type() string { return TypeMessageStatus }

// AppendJSON appends the payload's JSON object to b.
func (p *MessageStatus) AppendJSON(b []byte) []byte {
	b = append(b, `{"messageId":`...)
	b = appendOptStr(b, p.MessageID)
	b = append(b, `,"status":`...)
	b = appendOptStr(b, p.Status)
	return append(b, '}')
}
