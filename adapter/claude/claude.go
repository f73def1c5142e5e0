// Package claude is the adapter for Claude Code's stream-json output
// (protocols claude-json and claude-stream) and for the dialects that copy it:
// Amp (amp-json) and Qwen Code (qwen-json). It also reads Claude Code's
// transcript files, whose lines are the same messages with bookkeeping, and
// the JSON array that `--output-format json` prints with --verbose.
package claude

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Config selects the variant of the dialect a Decoder reads.
type Config struct {
	// Harness is the harness named in session.started: "claude-code",
	// "amp" or "qwen-code".
	Harness string
	// VersionKey is the init key that holds the harness's version.
	VersionKey string
	// InputIncludesCache is true when input_tokens counts cache reads
	// (Qwen Code); the adapter then subtracts them.
	InputIncludesCache bool
	// SnapshotUsage is true when an assistant line's usage is the call's
	// usage as it stood when the line was written (Claude Code), not its
	// final count: the call's usage then waits for its last line and is an
	// estimate unless a message_delta gives the final count.
	SnapshotUsage bool
}

// Claude, Amp and Qwen are the configurations of the three harnesses.
var (
	Claude = Config{Harness: "claude-code", VersionKey: "claude_code_version", SnapshotUsage: true}
	Amp    = Config{Harness: "amp", VersionKey: "amp_version"}
	Qwen   = Config{Harness: "qwen-code", VersionKey: "qwen_code_version", InputIncludesCache: true}
)

// Decoder reads one Claude-shaped stream. It is not safe for concurrent use.
type Decoder struct {
	cfg      Config
	sessions map[string]bool
	init     *agentstream.SessionStarted
	commands []string
	tools    map[string]toolInfo
	counted  map[string]bool
	pending  map[string]*callUsage // calls whose usage is still to be given
	order    []string
	current  map[string]string
	requests map[string]string
	tasks    []planTask                  // the plan of the Task tools as it stands
	async    map[string]bool             // subagents running in the background, by call id
	taskCall map[string]string           // the call id of each background task
	hooks    map[string]agentstream.Hook // hook calls awaiting their answer, by request id
	edits    int                         // pending edits that hold their texts
	active   bool                        // the main agent worked since its turn started
	held     int                         // turns ended by a new one whose result is still owed
	inMain   bool                        // the assistant line being read is the main agent's
	// mainCalled says whether the main agent's latest message called a
	// tool; one that did not ended the model's turn. lineCalled says
	// whether the line being read called one.
	mainCalled, lineCalled bool
	turn                   int64
	depth                  int
	buf                    []byte // scratch space for decoding strings in place
	deltas                 fields.Deltas
	run                    runTotals // the running totals of the results so far
}

type toolInfo struct {
	name     string
	subagent bool
	ask      bool
	edit     *pendingEdit // the change an edit tool makes, once it succeeds
	plan     *pendingPlan // the change a plan tool makes, once it succeeds
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for the variant cfg.
func NewDecoder(cfg Config) *Decoder {
	return &Decoder{
		cfg:      cfg,
		sessions: map[string]bool{},
		tools:    map[string]toolInfo{},
		counted:  map[string]bool{},
		pending:  map[string]*callUsage{},
		current:  map[string]string{},
		requests: map[string]string{},
		async:    map[string]bool{},
		taskCall: map[string]string{},
		hooks:    map[string]agentstream.Hook{},
	}
}

// fieldsOf is what a line's top level holds, as raw JSON values, and what
// was read in place from its message or event.
type fieldsOf struct {
	kind                                                string // the line's type
	typ, subtype, message, parent, event, sessionID     []byte
	timestamp, isReplay, isSynthetic, errorV, requestID []byte
	request, response, rateLimit                        []byte

	messageRead bool   // the message was read in place
	hadResult   bool   // the user message carries a tool result
	msgID       []byte // assistant message id, model and usage
	msgModel    []byte
	msgUsage    []byte
	msgText     string   // assistant text given as a plain string
	lastText    string   // the last assistant text of the line
	userContent []byte   // user content given as a plain string
	texts       []string // user text and image blocks
	resultRaw   []byte   // a tool result's output as a string, raw
	eventRead   bool     // the event was read in place
	ev          eventFields
	results     []resultSeen // results of calls whose effect follows them
	tur         toolUseResult
}

// resultSeen is a tool result whose call has an effect that the end of the
// line decides: an edit's file.change, a plan, a subagent's end.
type resultSeen struct {
	callID  string
	isError bool
	output  string
}

// toolUseResult is what the adapter reads of a user line's tool_use_result,
// the structured result of its tool call, as raw values.
type toolUseResult struct {
	typ, status, isAsync, patch, taskID []byte
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, line []byte) []agentstream.Event {
	line = jsonscan.TrimSpace(line)
	if len(line) == 0 {
		return dst
	}
	switch line[0] {
	case '{':
	case '[':
		return d.decodeArray(dst, line)
	default:
		if jsonscan.IsNull(line) {
			return dst
		}
		return append(dst, fields.Raw(line))
	}
	var f fieldsOf
	start := len(dst)
	// One pass over the line: the message and event objects are read in
	// place as they come (their type is known by then in every recorded
	// line), so a large tool output is scanned once, not once per level of
	// nesting. Values of keys not listed are skipped. The head of a delta
	// line, the most frequent kind, is read at once.
	var obj jsonscan.Obj
	if pos := d.readDeltaHead(line, &f); pos > 0 {
		obj = jsonscan.ObjectFrom(line, pos)
	} else {
		obj, _ = jsonscan.Object(line)
	}
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "type":
			f.typ = obj.Value()
			f.kind = fields.Kind(fields.Unquoted(f.typ), lineKinds)
		case "subtype":
			f.subtype = obj.Value()
		case "message":
			if m, ok := obj.Object(); ok && (f.kind == "assistant" || f.kind == "user") {
				dst = d.readMessage(dst, &m, f.kind, &f)
				obj.LeaveObject(&m)
				f.messageRead = true
				continue
			}
			f.message = obj.Value()
		case "event":
			if e, ok := obj.Object(); ok && f.kind == "stream_event" {
				readEvent(&e, &f.ev, &d.buf)
				obj.LeaveObject(&e)
				f.eventRead = true
				continue
			}
			f.event = obj.Value()
		case "parent_tool_use_id":
			f.parent = obj.Value()
		case "session_id":
			f.sessionID = obj.Value()
		case "timestamp":
			f.timestamp = obj.Value()
		case "isReplay":
			f.isReplay = obj.Value()
		case "isSynthetic":
			f.isSynthetic = obj.Value()
		case "error":
			f.errorV = obj.Value()
		case "request_id":
			f.requestID = obj.Value()
		case "request":
			f.request = obj.Value()
		case "response":
			f.response = obj.Value()
		case "rate_limit_info":
			f.rateLimit = obj.Value()
		case "tool_use_result":
			// A Bash result repeats in stdout the output its tool_result
			// block carried: a copy byte for byte is passed over without
			// scanning it again. The rest is checked as usual.
			if r, ok := obj.Object(); ok {
				for r.NextKey() {
					switch string(r.Key()) {
					case "stdout":
						if len(f.resultRaw) > 0 {
							r.SkipCopy(f.resultRaw)
						}
					case "type":
						f.tur.typ = r.Value()
					case "status":
						f.tur.status = r.Value()
					case "isAsync":
						f.tur.isAsync = r.Value()
					case "structuredPatch":
						f.tur.patch = r.Value()
					case "task":
						f.tur.taskID = jsonscan.Get(r.Value(), "id")
					}
				}
				obj.LeaveObject(&r)
			}
		}
	}
	if !obj.Complete() {
		return append(dst[:start], fields.Raw(line))
	}
	flushed := d.flushBefore(nil, &f)
	dst = d.dispatch(dst, line, &f)
	if len(dst) > start {
		parent := fields.Str(f.parent)
		t := fields.Time(f.timestamp)
		replay := fields.Bool(f.isReplay)
		for i := start; i < len(dst); i++ {
			if dst[i].ParentCallID == "" {
				dst[i].ParentCallID = parent
			}
			if dst[i].Time.IsZero() {
				dst[i].Time = t
			}
			dst[i].Replay = dst[i].Replay || replay
		}
	}
	if len(flushed) > 0 {
		// The usage of calls this line shows to be over comes before it.
		dst = append(dst[:start], append(flushed, dst[start:]...)...)
	}
	return dst
}

// decodeArray reads the JSON array `--output-format json --verbose` prints:
// every element is a line of the stream.
func (d *Decoder) decodeArray(dst []agentstream.Event, line []byte) []agentstream.Event {
	if !jsonscan.Valid(line) {
		return append(dst, fields.Raw(line))
	}
	if d.depth > 0 {
		return append(dst, fields.Raw(line))
	}
	d.depth++
	defer func() { d.depth-- }()
	arr, _ := jsonscan.Array(line)
	for arr.Next() {
		dst = d.Decode(dst, arr.Value())
	}
	return dst
}

// lineKinds are the line types dispatch maps.
var lineKinds = []string{
	"system", "assistant", "user", "stream_event", "result", "rate_limit_event",
	"control_request", "control_response", "tool_use", "ai-title", "custom-title",
	"summary", "command_lifecycle", "conversation_reset", "cost-state",
}

func (d *Decoder) dispatch(dst []agentstream.Event, line []byte, f *fieldsOf) []agentstream.Event {
	switch f.kind {
	case "system":
		return d.system(dst, line, f)
	case "assistant":
		return d.assistant(dst, line, f)
	case "user":
		return d.user(dst, line, f)
	case "stream_event":
		if !f.eventRead {
			e, _ := jsonscan.Object(f.event)
			readEvent(&e, &f.ev, &d.buf)
		}
		return d.streamEvent(dst, f)
	case "result":
		return d.result(dst, line)
	case "cost-state":
		if u := d.costState(line); u != nil {
			return append(dst, agentstream.E(u))
		}
	case "rate_limit_event":
		return d.rateLimit(dst, line, f)
	case "control_request":
		return d.controlRequest(dst, line, f)
	case "control_response":
		return d.controlResponse(dst, line, f)
	case "tool_use":
		// Amp prints a tool_use block as a line of its own.
		if v := jsonscan.Get(line, "name"); len(v) > 0 {
			return d.toolUse(dst, fields.Str(jsonscan.Get(line, "id")), fields.Str(v), jsonscan.Get(line, "input"))
		}
	case "command_lifecycle":
		if id := fields.Str(jsonscan.Get(line, "command_uuid")); id != "" {
			return append(dst, agentstream.E(&agentstream.MessageStatus{MessageID: id, Status: fields.Str(jsonscan.Get(line, "state"))}))
		}
	case "conversation_reset":
		// /clear in a long-lived process: what follows is a new
		// conversation under a new session id.
		id := fields.Str(jsonscan.Get(line, "new_conversation_id"))
		if id == "" {
			id = fields.Str(f.sessionID)
		}
		if id != "" {
			d.sessions[id] = true
			return append(dst, agentstream.E(&agentstream.SessionUpdated{SessionID: id}))
		}
	case "ai-title":
		if t := strings.TrimSpace(fields.Str(jsonscan.Get(line, "aiTitle"))); t != "" {
			title, _ := agentstream.Clip(t, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
		}
	case "custom-title":
		if t := strings.TrimSpace(fields.Str(jsonscan.Get(line, "customTitle"))); t != "" {
			title, _ := agentstream.Clip(t, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
		}
	case "summary":
		// An older transcript's title: the summary of the conversation
		// up to its leafUuid.
		if t := strings.TrimSpace(fields.Str(jsonscan.Get(line, "summary"))); t != "" {
			title, _ := agentstream.Clip(t, agentstream.MaxText)
			return append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
		}
	}
	return append(dst, fields.Raw(line))
}

// End appends the usage of the calls whose figures are still to be given.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event {
	return d.flushCalls(dst, nil)
}

// Deliberate lists the native line types (as adapter.NativeType names them)
// that the Claude-shaped dialects leave raw on purpose, each with the reason.
var Deliberate = map[string]string{
	"control_request/mcp_message": "JSON-RPC between the CLI and an MCP server the host runs in its own process (connection setup, tool lists); the calls of its tools are tool.call and tool.result",
	"control_request/initialize":  "the host's own setup of the CLI (hooks, in-process MCP servers, system prompt), written by the host on stdin",
	"control_request/interrupt":   "the host's request to stop the turn, written on stdin; the turn's end says it (turn.ended interrupt)",
	"control_response":            "answers to relayed MCP messages and to interrupts (JSON-RPC results, what stayed queued); the answers to permission requests, hooks and the host's setup are mapped",
	"keep_alive":                  "a heartbeat that carries nothing",
}

// Folded lists the native line types of the Claude-shaped dialects whose
// lines may give no event of their own, with where what they say goes.
var Folded = map[string]string{
	"stream_event/message_start":       "the call's usage snapshot, replaced by its final count on message_delta, or on the assistant line where the harness prints no message_delta (Qwen Code), or else given as an estimate",
	"stream_event/content_block_start": "a block's start: its content comes in deltas and whole in its assistant line",
	"stream_event/content_block_delta": "signature and tool-input deltas, whose block the assistant line carries whole (text and thinking deltas give live events)",
	"stream_event/content_block_stop":  "a block's end: its assistant line carries the block",
	"stream_event/message_stop":        "a call's end: message_delta gave its usage",
	"stream_event/message_delta":       "the final usage of a call, given once per message id",
}
