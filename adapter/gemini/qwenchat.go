package gemini

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// QwenHarness is the harness named in a Qwen Code chat's session.started.
const QwenHarness = "qwen-code"

// QwenChatDecoder reads a chat Qwen Code keeps of a session (protocol
// qwen-chat), ~/.qwen/projects/<project>/chats/<session>.jsonl: one record
// a line, {uuid, parentUuid, sessionId, timestamp, type, cwd, version, …},
// whose type is user (message.parts, Gemini's content parts), assistant
// (the model's parts, its model and usageMetadata), tool_result (a
// functionResponse part and toolCallResult) or system. It is not safe for
// concurrent use.
type QwenChatDecoder struct {
	session string
	model   string
	turn    int64
	open    bool
	names   map[string]string // the tool calls' names, by id
	results map[string]bool   // the tool calls whose result was emitted
	seen    map[string]bool   // the records read, by uuid
}

var _ agentstream.Decoder = (*QwenChatDecoder)(nil)

// NewQwenChatDecoder returns a QwenChatDecoder for one file.
func NewQwenChatDecoder() *QwenChatDecoder {
	return &QwenChatDecoder{names: map[string]string{}, results: map[string]bool{}, seen: map[string]bool{}}
}

// QwenChatDeliberate lists the chat records kept raw on purpose.
var QwenChatDeliberate = map[string]string{
	"system/ui_telemetry":         "the telemetry Qwen Code records of an API response or a tool call, which the assistant and tool_result records say (their tokens come from usageMetadata)",
	"system/attribution_snapshot": "Qwen Code's count of prompts and edited files, for its commit attribution",
}

// QwenChatFolded lists the chat records that may give no event of their
// own.
var QwenChatFolded = map[string]string{
	"user":        "a user record written again (same uuid), or one with no text",
	"assistant":   "an assistant record written again (same uuid)",
	"tool_result": "a tool result written again (same uuid or call id)",
}

// Decode appends the events of one record to dst.
func (c *QwenChatDecoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, true)
	if !ok {
		return dst
	}
	start := len(dst)
	if id := fields.Str(jsonscan.Get(raw, "sessionId")); id != "" && id != c.session {
		c.session = id
		dst = append(dst, agentstream.E(&agentstream.SessionStarted{
			Harness: QwenHarness, SessionID: id, Cwd: fields.Str(jsonscan.Get(raw, "cwd")), Version: fields.Str(jsonscan.Get(raw, "version")),
		}))
	}
	typ := fields.Str(jsonscan.Get(raw, "type"))
	uuid := fields.Str(jsonscan.Get(raw, "uuid"))
	again := uuid != "" && c.seen[uuid]
	if uuid != "" {
		c.seen[uuid] = true
	}
	body := len(dst)
	if !again {
		switch typ {
		case "user":
			dst = c.user(dst, raw)
		case "assistant":
			dst = c.assistant(dst, raw)
		case "tool_result":
			dst = c.toolResult(dst, raw)
		}
	}
	if len(dst) == body && QwenChatFolded[typ] == "" {
		dst = append(dst, fields.Raw(raw))
	}
	fields.Stamp(dst[start:], jsonscan.Get(raw, "timestamp"))
	return dst
}

// End ends the open turn.
func (c *QwenChatDecoder) End(dst []agentstream.Event) []agentstream.Event {
	if c.open {
		c.open = false
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: c.turn, Reason: agentstream.TurnOK}))
	}
	return dst
}

// user maps the person's message: a new turn and its text.
func (c *QwenChatDecoder) user(dst []agentstream.Event, v []byte) []agentstream.Event {
	text := strings.TrimSpace(partsText(jsonscan.GetPath(v, "message", "parts")))
	if text == "" {
		return dst
	}
	if c.open {
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: c.turn, Reason: agentstream.TurnOK}))
	}
	c.turn++
	c.open = true
	t, trunc := agentstream.Clip(text, agentstream.MaxText)
	return append(dst, agentstream.E(&agentstream.TurnStarted{Turn: c.turn}), agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: t, Truncated: trunc}))
}

// assistant maps a model response: its model when it changes, its
// thoughts, texts and function calls, and its usageMetadata as call usage.
func (c *QwenChatDecoder) assistant(dst []agentstream.Event, v []byte) []agentstream.Event {
	model := fields.Str(jsonscan.Get(v, "model"))
	if model != "" && model != c.model {
		c.model = model
		dst = append(dst, agentstream.E(&agentstream.SessionUpdated{Model: model}))
	}
	parts, _ := jsonscan.Array(jsonscan.GetPath(v, "message", "parts"))
	for parts.Next() {
		p := parts.Value()
		if fc := jsonscan.Get(p, "functionCall"); len(fc) > 0 {
			id, name := fields.Str(jsonscan.Get(fc, "id")), fields.Str(jsonscan.Get(fc, "name"))
			if id == "" || c.names[id] != "" {
				continue
			}
			c.names[id] = name
			args := jsonscan.Get(fc, "args")
			in, trunc := fields.Input(args)
			category, summary := describeTool(name, args)
			dst = append(dst, agentstream.E(&agentstream.ToolCall{
				CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, name),
			}))
			continue
		}
		text, trunc, n := fields.Text(jsonscan.Get(p, "text"))
		if n == 0 {
			continue
		}
		if fields.Bool(jsonscan.Get(p, "thought")) {
			dst = append(dst, agentstream.E(&agentstream.Thinking{Text: text, Truncated: trunc}))
			continue
		}
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
	}
	if u := qwenUsage(jsonscan.Get(v, "usageMetadata"), model); u != nil {
		dst = append(dst, agentstream.E(u))
	}
	return dst
}

// qwenUsage is a response's usageMetadata as call usage: Gemini's counts,
// the prompt including the cached input, output with the thoughts.
func qwenUsage(um []byte, model string) *agentstream.Usage {
	if len(um) == 0 || um[0] != '{' {
		return nil
	}
	get := func(k string) int64 {
		n, _ := jsonscan.Int(jsonscan.Get(um, k))
		return n
	}
	prompt, cached, out, thoughts := get("promptTokenCount"), get("cachedContentTokenCount"), get("candidatesTokenCount"), get("thoughtsTokenCount")
	if prompt == 0 && out == 0 && cached == 0 && thoughts == 0 {
		return nil
	}
	input, output := max(prompt-cached, 0), out+thoughts
	var zero int64
	u := &agentstream.Usage{Scope: agentstream.ScopeCall, Model: model, InputTokens: &input, OutputTokens: &output,
		CacheReadTokens: &cached, CacheCreationTokens: &zero, ReasoningTokens: &thoughts}
	u.ContextTokens = u.CallContext()
	return u
}

// toolResult maps a tool's result: the functionResponse's output or error,
// the toolCallResult's status and, for a command, its exit code.
func (c *QwenChatDecoder) toolResult(dst []agentstream.Event, v []byte) []agentstream.Event {
	tcr := jsonscan.Get(v, "toolCallResult")
	parts, _ := jsonscan.Array(jsonscan.GetPath(v, "message", "parts"))
	for parts.Next() {
		fr := jsonscan.Get(parts.Value(), "functionResponse")
		id := fields.Str(jsonscan.Get(fr, "id"))
		if id == "" {
			id = fields.Str(jsonscan.Get(tcr, "callId"))
		}
		if id == "" || c.results[id] {
			continue
		}
		c.results[id] = true
		name := fields.Str(jsonscan.Get(fr, "name"))
		if name == "" {
			name = c.names[id]
		}
		resp := jsonscan.Get(fr, "response")
		r := &agentstream.ToolResult{CallID: id, Name: name}
		var out []string
		for _, k := range []string{"output", "error"} {
			if s := fields.Str(jsonscan.Get(resp, k)); s != "" {
				out = append(out, s)
				r.IsError = r.IsError || k == "error"
			}
		}
		if st := fields.Str(jsonscan.Get(tcr, "status")); st != "" && st != "success" {
			r.IsError = true
		}
		r.ExitCode = fields.Int(jsonscan.GetPath(tcr, "resultDisplay", "exitCode"))
		whole := strings.Join(out, "\n")
		r.Output, r.Truncated = agentstream.Clip(whole, agentstream.MaxText)
		r.Characters = int64(agentstream.CountChars(whole))
		dst = append(dst, agentstream.E(r))
	}
	return dst
}

// ClaimsQwenChat reports whether the first line is a Qwen Code chat's
// record: {"uuid","parentUuid","sessionId","timestamp","type",…}.
func ClaimsQwenChat(lines [][]byte) bool {
	if len(lines) == 0 || !jsonscan.Valid(lines[0]) {
		return false
	}
	l := lines[0]
	return len(jsonscan.Get(l, "uuid")) > 0 && len(jsonscan.Get(l, "parentUuid")) > 0 && len(jsonscan.Get(l, "sessionId")) > 0 &&
		len(jsonscan.Get(l, "type")) > 0 && len(jsonscan.GetPath(l, "message", "parts")) > 0
}
