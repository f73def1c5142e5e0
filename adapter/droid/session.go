package droid

import (
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// SessionDecoder reads a session Droid keeps (protocol droid-session),
// ~/.factory/sessions/<project>/<session>.jsonl: a session_start record
// ({id, title, cwd, …}), message records ({id, parentId, timestamp,
// message{role, content[]}}, Anthropic-shaped blocks: text, tool_use,
// tool_result, thinking) and agent_turn_outcome records; then, when the
// importer adds it, the session's settings file (<session>.settings.json)
// compacted to one line, whose tokenUsage is the session's usage. It is
// not safe for concurrent use.
type SessionDecoder struct {
	model   string
	turn    int64
	open    bool
	names   map[string]string // the tool calls' names, by id
	results map[string]bool
	seen    map[string]bool // the messages read, by id
}

var _ agentstream.Decoder = (*SessionDecoder)(nil)

// NewSessionDecoder returns a SessionDecoder for one session.
func NewSessionDecoder() *SessionDecoder {
	return &SessionDecoder{names: map[string]string{}, results: map[string]bool{}, seen: map[string]bool{}}
}

// SessionDeliberate lists the session records kept raw on purpose.
var SessionDeliberate = map[string]string{
	"message": "the context Droid writes itself before the prompt (visibility llm_only: the tools, skills and environment it tells the model)",
}

// SessionFolded lists the session records that may give no event of
// their own.
var SessionFolded = map[string]string{
	"agent_turn_outcome": "a turn's end when no turn is open",
	"(no type)":          "the session's settings with no token counts",
}

// Decode appends the events of one record to dst.
func (s *SessionDecoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, true)
	if !ok {
		return dst
	}
	start := len(dst)
	typ := fields.Str(jsonscan.Get(raw, "type"))
	switch typ {
	case "session_start":
		dst = append(dst, agentstream.E(&agentstream.SessionStarted{
			Harness: Harness, SessionID: fields.Str(jsonscan.Get(raw, "id")), Cwd: fields.Str(jsonscan.Get(raw, "cwd")),
		}))
		if title := fields.Str(jsonscan.Get(raw, "title")); title != "" {
			title, _ = agentstream.Clip(title, agentstream.MaxText)
			dst = append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
		}
	case "message":
		dst = s.message(dst, raw)
	case "agent_turn_outcome":
		if s.open {
			s.open = false
			reason := agentstream.TurnOK
			if r := fields.Str(jsonscan.Get(raw, "reason")); r != "" && r != "completed" {
				reason = agentstream.TurnError
			}
			dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: s.turn, Reason: reason}))
		}
		return dst
	case "":
		if tu := jsonscan.Get(raw, "tokenUsage"); len(tu) > 0 {
			if u := settingsUsage(tu, s.model); u != nil {
				dst = append(dst, agentstream.E(u))
			}
			return dst
		}
	}
	if len(dst) == start {
		dst = append(dst, fields.Raw(raw))
	}
	fields.Stamp(dst[start:], jsonscan.Get(raw, "timestamp"))
	return dst
}

// End ends the open turn.
func (s *SessionDecoder) End(dst []agentstream.Event) []agentstream.Event {
	if s.open {
		s.open = false
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: s.turn, Reason: agentstream.TurnOK}))
	}
	return dst
}

// message maps a message record, once per id: the person's prompt starts a
// turn; tool results; the assistant's model, thoughts, texts and calls.
func (s *SessionDecoder) message(dst []agentstream.Event, v []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(v, "id"))
	if id != "" && s.seen[id] {
		return dst
	}
	if id != "" {
		s.seen[id] = true
	}
	if fields.Str(jsonscan.Get(v, "visibility")) == "llm_only" || fields.Str(jsonscan.GetPath(v, "message", "visibility")) == "llm_only" {
		return dst
	}
	msg := jsonscan.Get(v, "message")
	role := fields.Str(jsonscan.Get(msg, "role"))
	content := jsonscan.Get(msg, "content")
	if role == "assistant" {
		if m := fields.Str(jsonscan.Get(msg, "modelId")); m != "" && m != s.model {
			s.model = m
			dst = append(dst, agentstream.E(&agentstream.SessionUpdated{Model: m}))
		}
	}
	if len(content) > 0 && content[0] == '"' {
		text, trunc, n := fields.Text(content)
		if n > 0 {
			dst = s.text(dst, role, text, trunc)
		}
		return dst
	}
	blocks, _ := jsonscan.Array(content)
	var prompt []string
	for blocks.Next() {
		b := blocks.Value()
		switch fields.Str(jsonscan.Get(b, "type")) {
		case "text":
			text, trunc, n := fields.Text(jsonscan.Get(b, "text"))
			if n == 0 {
				continue
			}
			if role == "user" {
				prompt = append(prompt, text)
				continue
			}
			dst = s.text(dst, role, text, trunc)
		case "thinking":
			if text, trunc, n := fields.Text(jsonscan.Get(b, "thinking")); n > 0 {
				dst = append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
			}
		case "tool_use":
			call, name := fields.Str(jsonscan.Get(b, "id")), fields.Str(jsonscan.Get(b, "name"))
			if call == "" || s.names[call] != "" {
				continue
			}
			s.names[call] = name
			input := jsonscan.Get(b, "input")
			in, trunc := fields.Input(input)
			cat, summary := describeTool(name, input)
			dst = append(dst, agentstream.E(&agentstream.ToolCall{
				CallID: call, Name: name, Input: in, Truncated: trunc, Category: cat, Summary: summary, DisplayName: fields.Display(cat, name),
			}))
		case "tool_result":
			dst = s.toolResult(dst, b)
		}
	}
	if len(prompt) > 0 {
		dst = s.text(dst, "user", strings.Join(prompt, "\n"), false)
	}
	return dst
}

// text maps a message's text: the person's starts a turn.
func (s *SessionDecoder) text(dst []agentstream.Event, role, text string, trunc bool) []agentstream.Event {
	if role != "user" {
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	}
	if s.open {
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: s.turn, Reason: agentstream.TurnOK}))
	}
	s.turn++
	s.open = true
	text, clipped := agentstream.Clip(text, agentstream.MaxText)
	return append(dst, agentstream.E(&agentstream.TurnStarted{Turn: s.turn}), agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc || clipped}))
}

// exitNote is how Droid ends a command's output with its exit status.
const exitNote = "[Process exited with code "

// toolResult maps a tool_result block, once per call: its content, error
// flag and, for a command, the exit status Droid appends to its output.
func (s *SessionDecoder) toolResult(dst []agentstream.Event, b []byte) []agentstream.Event {
	call := fields.Str(jsonscan.Get(b, "tool_use_id"))
	if call == "" || s.results[call] {
		return dst
	}
	s.results[call] = true
	r := &agentstream.ToolResult{CallID: call, Name: s.names[call], IsError: fields.Bool(jsonscan.Get(b, "is_error"))}
	c := jsonscan.Get(b, "content")
	var whole string
	if len(c) > 0 && c[0] == '[' {
		var parts []string
		a, _ := jsonscan.Array(c)
		for a.Next() {
			if t := fields.Str(jsonscan.Get(a.Value(), "text")); t != "" {
				parts = append(parts, t)
			}
		}
		whole = strings.Join(parts, "\n")
	} else {
		whole = fields.Str(c)
	}
	if i := strings.LastIndex(whole, exitNote); i >= 0 {
		rest := strings.TrimSpace(whole[i+len(exitNote):])
		if n, err := strconv.ParseInt(strings.TrimSuffix(rest, "]"), 10, 64); err == nil && strings.HasSuffix(rest, "]") {
			r.ExitCode = &n
		}
	}
	r.Output, r.Truncated = agentstream.Clip(whole, agentstream.MaxText)
	r.Characters = int64(agentstream.CountChars(whole))
	return append(dst, agentstream.E(r))
}

// settingsUsage is the settings file's tokenUsage, the session's totals:
// input without the cache reads and writes (the lab's figures say so);
// the thinking tokens as reasoning, output as Droid counts it (whether it
// includes them is not recorded: the lab's model thinks not).
func settingsUsage(tu []byte, model string) *agentstream.Usage {
	get := func(k string) *int64 { return fields.Int(jsonscan.Get(tu, k)) }
	in, out, read, write, thinking := get("inputTokens"), get("outputTokens"), get("cacheReadTokens"), get("cacheCreationTokens"), get("thinkingTokens")
	if in == nil && out == nil {
		return nil
	}
	u := &agentstream.Usage{Scope: agentstream.ScopeSession, Model: model, InputTokens: in, OutputTokens: out,
		CacheReadTokens: read, CacheCreationTokens: write, ReasoningTokens: thinking}
	if u.IsZero() {
		return nil
	}
	return u
}

// ClaimsSession reports whether the first line is a Droid session's start:
// {"type":"session_start","id",…,"cwd",…}.
func ClaimsSession(lines [][]byte) bool {
	if len(lines) == 0 || !jsonscan.Valid(lines[0]) {
		return false
	}
	return jsonscan.StringIs(jsonscan.Get(lines[0], "type"), "session_start") && len(jsonscan.Get(lines[0], "cwd")) > 0
}
