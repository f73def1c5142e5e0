package gemini

import (
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// ChatDecoder reads a chat Gemini CLI keeps of a session (protocol
// gemini-chat), ~/.gemini/tmp/<project>/chats/*: the JSONL it appends to
// (a first line of the session's metadata, then a line per message, a
// message written again under its id as its tool calls complete, and
// {"$set":…} updates), or the one JSON document of older builds
// ({"sessionId",…,"messages":[…]}), compact or spread over lines. It is not
// safe for concurrent use.
type ChatDecoder struct {
	model string
	turn  int64
	open  bool // a turn is open

	counted map[string]bool // the messages whose tokens were counted
	calls   map[string]bool // the tool calls emitted
	results map[string]bool // the tool calls whose result was emitted

	// doc gathers a JSON document spread over lines, decoded at End.
	doc   []byte
	lines int
}

var _ agentstream.Decoder = (*ChatDecoder)(nil)

// NewChatDecoder returns a ChatDecoder for one file.
func NewChatDecoder() *ChatDecoder {
	return &ChatDecoder{counted: map[string]bool{}, calls: map[string]bool{}, results: map[string]bool{}}
}

// maxChatDoc bounds the document a ChatDecoder gathers from lines.
const maxChatDoc = 256 << 20

// ChatDeliberate lists the chat lines kept raw on purpose.
var ChatDeliberate = map[string]string{
	"(no type)": "a {\"$set\":…} update of the session's metadata (lastUpdated), or of its messages with the context Gemini CLI writes itself (a `<session_context>` block)",
	"user":      "a message of tool results (functionResponse parts), which its call's record gives, or the context Gemini CLI writes itself",
	"gemini":    "a message written again as its tool calls complete, with nothing new",
}

// Decode appends the events of one line to dst.
func (c *ChatDecoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	c.lines++
	if c.doc != nil {
		if len(c.doc)+len(raw) < maxChatDoc {
			c.doc = append(append(c.doc, raw...), '\n')
		}
		return dst
	}
	dst, raw, ok := fields.Object(dst, raw, false)
	if !ok {
		return dst
	}
	if len(raw) == 1 && c.lines == 1 {
		// The first line of a document spread over lines, as
		// JSON.stringify indents it.
		c.doc = append(make([]byte, 0, 4096), raw...)
		return dst
	}
	if !jsonscan.Valid(raw) {
		return append(dst, fields.Raw(raw))
	}
	start := len(dst)
	dst = c.record(dst, raw)
	if len(dst) == start {
		dst = append(dst, fields.Raw(raw))
	}
	return dst
}

// End decodes a document spread over lines and ends the open turn.
func (c *ChatDecoder) End(dst []agentstream.Event) []agentstream.Event {
	if c.doc != nil {
		doc := jsonscan.TrimSpace(c.doc)
		c.doc = nil
		if jsonscan.Valid(doc) {
			dst = c.record(dst, doc)
		}
	}
	if c.open {
		c.open = false
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: c.turn, Reason: agentstream.TurnOK}))
	}
	return dst
}

// record maps one object: the session's metadata (with its messages, in a
// whole document), a $set update, or a message.
func (c *ChatDecoder) record(dst []agentstream.Event, v []byte) []agentstream.Event {
	if set := jsonscan.Get(v, "$set"); len(set) > 0 {
		return c.messages(dst, jsonscan.Get(set, "messages"))
	}
	if id := jsonscan.Get(v, "sessionId"); len(id) > 0 && len(jsonscan.Get(v, "type")) == 0 {
		dst = append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: fields.Str(id)}))
		if t := fields.Time(jsonscan.Get(v, "startTime")); !t.IsZero() {
			dst[len(dst)-1].Time = t
		}
		return c.messages(dst, jsonscan.Get(v, "messages"))
	}
	return c.message(dst, v)
}

func (c *ChatDecoder) messages(dst []agentstream.Event, arr []byte) []agentstream.Event {
	a, _ := jsonscan.Array(arr)
	for a.Next() {
		dst = c.message(dst, a.Value())
	}
	return dst
}

// message maps a message record, each part once however often it is
// written again.
func (c *ChatDecoder) message(dst []agentstream.Event, v []byte) []agentstream.Event {
	start := len(dst)
	id := fields.Str(jsonscan.Get(v, "id"))
	switch fields.Str(jsonscan.Get(v, "type")) {
	case "user":
		text := partsText(jsonscan.Get(v, "content"))
		if text == "" || injectedContext(text) || id != "" && c.counted[id] {
			return dst
		}
		if id != "" {
			c.counted[id] = true
		}
		if c.open {
			dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: c.turn, Reason: agentstream.TurnOK}))
		}
		c.turn++
		c.open = true
		t, trunc := agentstream.Clip(text, agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.TurnStarted{Turn: c.turn}), agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: t, Truncated: trunc}))
	case "gemini":
		dst = c.gemini(dst, id, v)
	case "error":
		text, _, _ := fields.Text(jsonscan.Get(v, "content"))
		dst = append(dst, agentstream.E(&agentstream.Error{Message: text}))
	case "info", "warning":
		text, _, _ := fields.Text(jsonscan.Get(v, "content"))
		dst = append(dst, agentstream.E(&agentstream.Warning{Message: text}))
	}
	fields.Stamp(dst[start:], jsonscan.Get(v, "timestamp"))
	return dst
}

// gemini maps a model message: the first time its id is seen, its model,
// thoughts, text and tokens; each time, the tool calls and results not
// given yet.
func (c *ChatDecoder) gemini(dst []agentstream.Event, id string, v []byte) []agentstream.Event {
	if id == "" || !c.counted[id] {
		if id != "" {
			c.counted[id] = true
		}
		model := fields.Str(jsonscan.Get(v, "model"))
		if model != "" && model != c.model {
			c.model = model
			dst = append(dst, agentstream.E(&agentstream.SessionUpdated{Model: model}))
		}
		th, _ := jsonscan.Array(jsonscan.Get(v, "thoughts"))
		for th.Next() {
			t := th.Value()
			text := fields.Str(jsonscan.Get(t, "description"))
			if s := fields.Str(jsonscan.Get(t, "subject")); s != "" {
				text = strings.TrimSpace("**" + s + "** " + text)
			}
			if text != "" {
				s, trunc := agentstream.Clip(text, agentstream.MaxText)
				dst = append(dst, agentstream.E(&agentstream.Thinking{Text: s, Truncated: trunc}))
			}
		}
		content := jsonscan.Get(v, "content")
		text, trunc, n := fields.Text(content)
		if len(content) > 0 && content[0] == '[' {
			text, trunc = agentstream.Clip(partsText(content), agentstream.MaxText)
			n = int64(len(text))
		}
		if n > 0 {
			dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
		}
		if u := chatUsage(jsonscan.Get(v, "tokens"), model); u != nil {
			dst = append(dst, agentstream.E(u))
		}
	}
	calls, _ := jsonscan.Array(jsonscan.Get(v, "toolCalls"))
	for calls.Next() {
		dst = c.toolCall(dst, calls.Value())
	}
	return dst
}

// chatUsage is a model message's tokens as call usage: input less the
// cached input (plus the tool-use prompt), output with the thoughts.
func chatUsage(tok []byte, model string) *agentstream.Usage {
	if len(tok) == 0 || tok[0] != '{' {
		return nil
	}
	get := func(k string) int64 {
		n, _ := jsonscan.Int(jsonscan.Get(tok, k))
		return n
	}
	in, cached, out, thoughts, tool := get("input"), get("cached"), get("output"), get("thoughts"), get("tool")
	if in == 0 && out == 0 && cached == 0 && thoughts == 0 {
		return nil
	}
	input, output := max(in-cached, 0)+tool, out+thoughts
	var zero int64
	return &agentstream.Usage{Scope: agentstream.ScopeCall, Model: model, InputTokens: &input, OutputTokens: &output,
		CacheReadTokens: &cached, CacheCreationTokens: &zero, ReasoningTokens: &thoughts}
}

// toolCall maps one of a message's tool calls: its call, once, and once it
// has a result, the result (and the file change an edit describes).
func (c *ChatDecoder) toolCall(dst []agentstream.Event, tc []byte) []agentstream.Event {
	id, name := fields.Str(jsonscan.Get(tc, "id")), fields.Str(jsonscan.Get(tc, "name"))
	if id == "" {
		return dst
	}
	args := jsonscan.Get(tc, "args")
	if !c.calls[id] {
		c.calls[id] = true
		in, trunc := fields.Input(args)
		category, summary := describeTool(name, args)
		dst = append(dst, agentstream.E(&agentstream.ToolCall{
			CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, name),
		}))
	}
	status := fields.Str(jsonscan.Get(tc, "status"))
	if c.results[id] || status != "success" && status != "error" && status != "cancelled" {
		return dst
	}
	c.results[id] = true
	r := &agentstream.ToolResult{CallID: id, Name: name, IsError: status != "success"}
	res, _ := jsonscan.Array(jsonscan.Get(tc, "result"))
	var out []string
	for res.Next() {
		resp := jsonscan.GetPath(res.Value(), "functionResponse", "response")
		for _, k := range []string{"output", "error"} {
			if s := fields.Str(jsonscan.Get(resp, k)); s != "" {
				out = append(out, s)
			}
		}
	}
	whole := strings.Join(out, "\n")
	r.Output, r.Truncated = agentstream.Clip(whole, agentstream.MaxText)
	r.Characters = int64(agentstream.CountChars(whole))
	dst = append(dst, agentstream.E(r))
	if e := editOf(name, args); e != nil && !r.IsError {
		created := fields.Bool(jsonscan.GetPath(tc, "resultDisplay", "isNewFile"))
		dst = append(dst, agentstream.E(e.Change(id, created)))
	}
	return dst
}

// partsText joins the text of a message's content: a string, or parts
// with text (function calls and responses have none).
func partsText(v []byte) string {
	if len(v) > 0 && v[0] == '"' {
		return fields.Str(v)
	}
	var b strings.Builder
	a, _ := jsonscan.Array(v)
	for a.Next() {
		if s := fields.Str(jsonscan.Get(a.Value(), "text")); s != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// injectedContext reports whether a user message is one Gemini CLI wrote
// itself: a single tagged block such as <session_context>…</session_context>.
func injectedContext(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "<") || !strings.HasSuffix(s, ">") {
		return false
	}
	end := strings.IndexAny(s, "> \n")
	return end > 1 && strings.HasSuffix(s, "</"+s[1:end]+">")
}

// ClaimsChat reports whether the first line is a chat's: the session's
// metadata, {"sessionId","projectHash",…} without a type.
func ClaimsChat(lines [][]byte) bool {
	if len(lines) == 0 || !jsonscan.Valid(lines[0]) {
		return false
	}
	return len(jsonscan.Get(lines[0], "sessionId")) > 0 && len(jsonscan.Get(lines[0], "projectHash")) > 0 && len(jsonscan.Get(lines[0], "type")) == 0
}
