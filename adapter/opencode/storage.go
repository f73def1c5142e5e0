package opencode

import (
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// StorageDecoder reads the records opencode keeps of one session (protocol
// opencode-storage), one JSON object a line as opencode stores them: the
// session's info ({"id":"ses_…","slug","projectID","directory","title",
// "version","time"}), then each message's info ({"id":"msg_…","sessionID",
// "role",…}) followed by its parts ({"id":"prt_…","messageID","type",…}).
// These are the rows of the session, message and part tables of
// opencode.db, each row's data with its ids, and the files of the older
// storage/{session,message,part} directories. It is not safe for
// concurrent use.
type StorageDecoder struct {
	d       *Decoder
	model   string
	turn    int64
	open    bool              // a turn is open
	roles   map[string]string // the role of each message, by id
	at      time.Time         // the time of the record read last
	steps   map[string]bool   // the step-finish parts counted
	results map[string]bool   // the tool parts whose result was emitted
}

var _ agentstream.Decoder = (*StorageDecoder)(nil)

// NewStorageDecoder returns a StorageDecoder for one session's records.
func NewStorageDecoder() *StorageDecoder {
	return &StorageDecoder{d: NewDecoder(), roles: map[string]string{}, steps: map[string]bool{}, results: map[string]bool{}}
}

// StorageDeliberate lists the part types kept raw on purpose.
var StorageDeliberate = map[string]string{
	"patch":      "the files a step changed, as worktree hashes: the tool parts' file changes say what changed",
	"snapshot":   "a worktree snapshot hash",
	"file":       "a file attached to a prompt, or read into it",
	"compaction": "the marker of a compacted conversation",
	"agent":      "an agent named in a prompt",
	"subtask":    "a subtask a command started",
	"retry":      "a model call opencode retried",
}

// StorageFolded lists the record types whose lines may give no event of
// their own.
var StorageFolded = map[string]string{
	"(no type)":   "a message's info: a user message starts a turn (its text part is the prompt), an assistant message gives its model when it changes and its error; its tokens are its step-finish parts'",
	"step-start":  "a step's start: its parts and its step-finish say what it did",
	"step-finish": "a step whose tokens and cost are all zero, or a step counted already",
	"text":        "a text opencode added itself (synthetic or ignored), an empty text, or a text part of a user message that is not the prompt",
	"reasoning":   "an empty thought",
	"tool":        "a tool part whose result was given already",
}

// Decode appends the events of one record to dst.
func (s *StorageDecoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, true)
	if !ok {
		return dst
	}
	start := len(dst)
	switch {
	case len(jsonscan.Get(raw, "messageID")) > 0:
		dst = s.part(dst, raw)
	case len(jsonscan.Get(raw, "role")) > 0:
		dst = s.message(dst, raw)
	case len(jsonscan.Get(raw, "slug")) > 0 || len(jsonscan.Get(raw, "projectID")) > 0:
		dst = s.session(dst, raw)
		return dst // its own time, set there
	default:
		return append(dst, fields.Raw(raw))
	}
	if len(dst) == start {
		if typ, _ := jsonscan.String(jsonscan.Get(raw, "type")); typ != "" && StorageFolded[typ] == "" {
			dst = append(dst, fields.Raw(raw))
		}
		return dst
	}
	for i := start; i < len(dst); i++ {
		if dst[i].Time.IsZero() {
			dst[i].Time = s.at
		}
	}
	return dst
}

// End ends the open turn.
func (s *StorageDecoder) End(dst []agentstream.Event) []agentstream.Event {
	if s.open {
		s.open = false
		dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: s.turn, Reason: agentstream.TurnOK}))
		dst[len(dst)-1].Time = s.at
	}
	return dst
}

// millis reads an epoch-milliseconds time.
func millis(v []byte) time.Time {
	if ms, ok := jsonscan.Int(v); ok && ms > 0 && ms < 1e14 {
		return time.UnixMilli(ms).UTC()
	}
	return time.Time{}
}

// session maps the session's info: session.started (id, directory,
// version, model) at its creation time, and its title.
func (s *StorageDecoder) session(dst []agentstream.Event, v []byte) []agentstream.Event {
	t := millis(jsonscan.Get(jsonscan.Get(v, "time"), "created"))
	if !t.IsZero() {
		s.at = t
	}
	id := fields.Str(jsonscan.Get(v, "id"))
	s.d.session = id
	model := jsonscan.Get(v, "model")
	s.model = fields.Str(jsonscan.Get(model, "id"))
	if p := fields.Str(jsonscan.Get(model, "providerID")); p != "" && s.model != "" {
		s.model = p + "/" + s.model
	}
	start := len(dst)
	dst = append(dst, agentstream.E(&agentstream.SessionStarted{
		Harness: Harness, SessionID: id, Cwd: fields.Str(jsonscan.Get(v, "directory")),
		Version: fields.Str(jsonscan.Get(v, "version")), Model: s.model,
	}))
	if title := fields.Str(jsonscan.Get(v, "title")); title != "" {
		title, _ = agentstream.Clip(title, agentstream.MaxText)
		dst = append(dst, agentstream.E(&agentstream.SessionTitle{Title: title}))
	}
	for i := start; i < len(dst); i++ {
		dst[i].Time = t
	}
	return dst
}

// message maps a message's info: a user message starts a turn; an
// assistant message's model, and its error.
func (s *StorageDecoder) message(dst []agentstream.Event, v []byte) []agentstream.Event {
	id := fields.Str(jsonscan.Get(v, "id"))
	role := fields.Str(jsonscan.Get(v, "role"))
	s.roles[id] = role
	if t := millis(jsonscan.Get(jsonscan.Get(v, "time"), "created")); !t.IsZero() {
		s.at = t
	}
	switch role {
	case "user":
		if s.open {
			dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: s.turn, Reason: agentstream.TurnOK}))
		}
		s.turn++
		s.open = true
		dst = append(dst, agentstream.E(&agentstream.TurnStarted{Turn: s.turn}))
	case "assistant":
		model := fields.Str(jsonscan.Get(v, "modelID"))
		if p := fields.Str(jsonscan.Get(v, "providerID")); p != "" && model != "" {
			model = p + "/" + model
		}
		if model != "" && model != s.model {
			s.model = model
			dst = append(dst, agentstream.E(&agentstream.SessionUpdated{Model: model}))
		}
		if e := jsonscan.Get(v, "error"); len(e) > 0 && !jsonscan.IsNull(e) {
			dst = s.d.error(dst, e)
		}
	}
	return dst
}

// part maps a part: the user's prompt, the assistant's texts, thoughts and
// tool calls with their results, and each step's usage.
func (s *StorageDecoder) part(dst []agentstream.Event, raw []byte) []agentstream.Event {
	obj, _ := jsonscan.Object(raw)
	p := readPart(&obj, &s.d.buf)
	if !obj.Complete() {
		return append(dst, fields.Raw(raw))
	}
	typ := fields.Str(jsonscan.Get(raw, "type"))
	tm := jsonscan.Get(raw, "time")
	if t := millis(jsonscan.Get(tm, "start")); !t.IsZero() {
		s.at = t
	}
	if s.roles[fields.Str(p.messageID)] == "user" {
		if typ != "text" || fields.Bool(jsonscan.Get(raw, "synthetic")) || fields.Bool(jsonscan.Get(raw, "ignored")) {
			return dst
		}
		text, trunc, n := p.textC.Or(p.text)
		if n == 0 {
			return dst
		}
		return append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleUser, Text: text, Truncated: trunc}))
	}
	switch typ {
	case "text":
		if fields.Bool(jsonscan.Get(raw, "synthetic")) || len(p.text) == 0 {
			return dst
		}
		return s.d.text(dst, raw, &p, false)
	case "reasoning":
		if len(p.text) == 0 {
			return dst
		}
		return s.d.text(dst, raw, &p, true)
	case "tool":
		return s.tool(dst, raw, &p)
	case "step-finish":
		id := fields.Str(p.id)
		if id != "" && s.steps[id] {
			return dst
		}
		s.steps[id] = true
		if t := millis(jsonscan.Get(tm, "end")); !t.IsZero() {
			s.at = t
		}
		n := len(dst)
		dst = s.d.stepUsage(dst, &p)
		if len(dst) > n {
			if u, ok := dst[len(dst)-1].Payload.(*agentstream.Usage); ok && u.Model == "" {
				u.Model = s.model
			}
		}
		return dst
	}
	return dst
}

// tool maps a tool part: its call at the state's start time, and once it
// completed or failed its result at the end time.
func (s *StorageDecoder) tool(dst []agentstream.Event, raw []byte, p *partOf) []agentstream.Event {
	tm := jsonscan.Get(p.state, "time")
	id := fields.Str(p.callID)
	if id == "" {
		id = fields.Str(p.id)
	}
	if s.results[id] {
		return dst
	}
	if t := millis(jsonscan.Get(tm, "start")); !t.IsZero() {
		s.at = t
	}
	start := len(dst)
	dst = s.d.toolUse(dst, raw, p)
	st := string(fields.Unquoted(p.st.status))
	if st != "completed" && st != "error" {
		return dst
	}
	s.results[id] = true
	end := millis(jsonscan.Get(tm, "end"))
	if end.IsZero() {
		return dst
	}
	// The call's events at its start, the result's from the first of
	// them on.
	at := s.at
	for i := start; i < len(dst); i++ {
		switch dst[i].Payload.(type) {
		case *agentstream.ToolResult, *agentstream.ToolDenied:
			at = end
		}
		dst[i].Time = at
	}
	s.at = end
	return dst
}

// ClaimsStorage reports whether the first line is a session's info as
// opencode stores it: {"id":"ses_…","slug",…,"projectID",…} with neither a
// type nor a role.
func ClaimsStorage(lines [][]byte) bool {
	if len(lines) == 0 || !jsonscan.Valid(lines[0]) {
		return false
	}
	l := lines[0]
	return len(jsonscan.Get(l, "slug")) > 0 && len(jsonscan.Get(l, "projectID")) > 0 &&
		len(jsonscan.Get(l, "type")) == 0 && len(jsonscan.Get(l, "role")) == 0
}
