// Package gemini is the adapter for Gemini CLI's stream-json output
// (protocol gemini-json, `gemini --output-format stream-json`): init,
// message, tool_use, tool_result, error and result lines. It also reads the
// single object `--output-format json` prints at exit.
package gemini

import (
	"strings"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/adapter/internal/filediff"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// Harness is the harness named in session.started.
const Harness = "gemini-cli"

// Decoder reads one Gemini CLI stream. It is not safe for concurrent use.
type Decoder struct {
	tools   map[string]string         // tool_id -> tool name
	edits   map[string]*filediff.Edit // tool_id -> the change an edit call describes
	turn    int64
	summary string // the latest complete assistant message

	// The assistant text of the current run of delta chunks; its space is
	// reused from one run to the next.
	text   []byte
	chars  int64
	textAt time.Time

	buf    []byte        // scratch for decoding text where it is read
	deltas fields.Deltas // delta payloads, from slabs

	results int64 // result lines so far: each is one process's totals
}

var _ agentstream.Decoder = (*Decoder)(nil)

// NewDecoder returns a Decoder for one stream.
func NewDecoder() *Decoder {
	return &Decoder{tools: map[string]string{}, edits: map[string]*filediff.Edit{}}
}

// textCap bounds the accumulated text: enough for MaxText code points.
const textCap = 4 * agentstream.MaxText

// line is what a line's top level holds, as raw JSON values. The content
// and output strings are also decoded where they are read (the c fields),
// so that a large one is scanned once.
type line struct {
	typ, timestamp, sessionID, model, role, content, delta []byte
	toolName, toolID, parameters, status, output, errorV   []byte
	severity, message, stats, response                     []byte
	contentC, outputC                                      fields.Clipped
}

// Decode appends the events of one line to dst.
func (d *Decoder) Decode(dst []agentstream.Event, raw []byte) []agentstream.Event {
	dst, raw, ok := fields.Object(dst, raw, false)
	if !ok {
		return dst
	}
	var l line
	var obj jsonscan.Obj
	if pos := d.readDeltaHead(raw, &l); pos > 0 {
		obj = jsonscan.ObjectFrom(raw, pos)
	} else {
		obj, _ = jsonscan.Object(raw)
	}
	for obj.NextKey() {
		switch string(obj.Key()) {
		case "type":
			l.typ = obj.Value()
		case "timestamp":
			l.timestamp = obj.Value()
		case "session_id":
			l.sessionID = obj.Value()
		case "model":
			l.model = obj.Value()
		case "role":
			l.role = obj.Value()
		case "content":
			l.contentC, l.content = fields.ClipRaw(&obj, &d.buf)
		case "delta":
			l.delta = obj.Value()
		case "tool_name":
			l.toolName = obj.Value()
		case "tool_id":
			l.toolID = obj.Value()
		case "parameters":
			l.parameters = obj.Value()
		case "status":
			l.status = obj.Value()
		case "output":
			l.outputC, l.output = fields.ClipRaw(&obj, &d.buf)
		case "error":
			l.errorV = obj.Value()
		case "severity":
			l.severity = obj.Value()
		case "message":
			l.message = obj.Value()
		case "stats":
			l.stats = obj.Value()
		case "response":
			l.response = obj.Value()
		}
	}
	if !obj.Complete() {
		return append(dst, fields.Raw(raw))
	}
	at := fields.Time(l.timestamp)
	typ := string(fields.Unquoted(l.typ))
	if typ == "message" && string(fields.Unquoted(l.role)) == agentstream.RoleAssistant && fields.Bool(l.delta) {
		return d.chunk(dst, &l, at)
	}
	dst = d.flush(dst)
	start := len(dst)
	switch typ {
	case "init":
		s := &agentstream.SessionStarted{Harness: Harness, Model: fields.Str(l.model), SessionID: fields.Str(l.sessionID)}
		if w, ok := agentstream.ContextWindow(s.Model); ok {
			s.ContextWindow = &w
		}
		dst = append(dst, agentstream.E(s))
	case "message":
		role := fields.Str(l.role)
		switch role {
		case agentstream.RoleUser, agentstream.RoleAssistant, agentstream.RoleSystem:
		default:
			return append(dst, fields.Raw(raw))
		}
		text, trunc, n := l.contentC.Or(l.content)
		if n == 0 {
			return dst
		}
		if role == agentstream.RoleAssistant {
			d.summary = text
		}
		dst = append(dst, agentstream.E(&agentstream.Message{Role: role, Text: text, Truncated: trunc}))
	case "tool_use":
		dst = d.toolUse(dst, &l)
	case "tool_result":
		dst = d.toolResult(dst, &l)
	case "error":
		dst = append(dst, agentstream.E(notice(&l)))
	case "result":
		if u := statsUsage(l.stats); u != nil {
			dst = append(dst, agentstream.E(d.numbered(u)))
		}
		dst = d.result(dst, fields.Str(l.status) == "success", l.errorV)
	case "":
		if len(l.typ) == 0 && len(l.response) > 0 && len(l.stats) > 0 {
			dst = d.jsonOutput(dst, &l)
			break
		}
		return append(dst, fields.Raw(raw))
	default:
		return append(dst, fields.Raw(raw))
	}
	for i := start; i < len(dst); i++ {
		dst[i].Time = at
	}
	return dst
}

// chunk maps an assistant delta chunk: a live message.delta now, and text
// kept for the complete message emitted when anything else arrives.
func (d *Decoder) chunk(dst []agentstream.Event, l *line, at time.Time) []agentstream.Event {
	s, n := l.contentC.Text, l.contentC.Chars
	if !l.contentC.OK || l.contentC.Truncated {
		s = fields.Str(l.content)
		n = int64(agentstream.CountChars(s))
	}
	if s == "" {
		return dst
	}
	whole := s
	d.chars += n
	if room := textCap - len(d.text); room > 0 {
		if len(s) > room {
			s, _ = agentstream.Clip(s, room/4)
		}
		d.text = append(d.text, s...)
	}
	d.textAt = at
	ev := agentstream.E(d.deltas.Message(agentstream.RoleAssistant, whole))
	ev.Time = at
	return append(dst, ev)
}

// flush emits the complete message of the chunks accumulated so far.
func (d *Decoder) flush(dst []agentstream.Event) []agentstream.Event {
	if d.chars == 0 {
		return dst
	}
	text, trunc := agentstream.ClipBytes(d.text, agentstream.MaxText)
	trunc = trunc || d.chars > int64(agentstream.CountChars(text))
	d.summary = text
	ev := agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc})
	ev.Time = d.textAt
	d.text = d.text[:0]
	d.chars = 0
	d.textAt = time.Time{}
	return append(dst, ev)
}

// End appends the message of the chunks that no other line followed.
func (d *Decoder) End(dst []agentstream.Event) []agentstream.Event {
	return d.flush(dst)
}

func (d *Decoder) toolUse(dst []agentstream.Event, l *line) []agentstream.Event {
	id, name := fields.Str(l.toolID), fields.Str(l.toolName)
	in, trunc := fields.Input(l.parameters)
	category, summary := describeTool(name, l.parameters)
	if id != "" {
		d.tools[id] = name
	}
	dst = append(dst, agentstream.E(&agentstream.ToolCall{
		CallID: id, Name: name, Input: in, Truncated: trunc, Category: category, Summary: summary, DisplayName: fields.Display(category, name),
	}))
	if name == "write_todos" {
		if p := fields.TodoPlan(l.parameters, "description", nil); p != nil {
			dst = append(dst, agentstream.E(p))
		}
	}
	if e := editOf(name, l.parameters); e != nil && id != "" && len(d.edits) < maxPendingEdits {
		d.edits[id] = e
	}
	return dst
}

// maxPendingEdits bounds how many edit calls awaiting their result are kept.
const maxPendingEdits = 16

// editOf reads the change an edit tool's parameters describe: replace (and
// edit) give a file's old and new texts, write_file its whole content.
func editOf(name string, params []byte) *filediff.Edit {
	if name != "replace" && name != "edit" && name != "write_file" {
		return nil
	}
	get := func(k string) string { return fields.Str(jsonscan.Get(params, k)) }
	path := fields.Str(firstOf(params, "file_path", "absolute_path", "path"))
	switch name {
	case "replace", "edit":
		return filediff.NewReplace(path, get("old_string"), get("new_string"))
	case "write_file":
		return filediff.NewWrite(path, get("content"))
	}
	return nil
}

func (d *Decoder) toolResult(dst []agentstream.Event, l *line) []agentstream.Event {
	id := fields.Str(l.toolID)
	name, ok := d.tools[id]
	if ok {
		delete(d.tools, id)
	} else {
		name = nameFromID(id)
	}
	r := &agentstream.ToolResult{CallID: id, Name: name, IsError: fields.Str(l.status) == "error"}
	r.Output, r.Truncated, r.Characters = l.outputC.Or(l.output)
	if len(l.errorV) > 0 && !jsonscan.IsNull(l.errorV) {
		r.IsError = true
		if r.Characters == 0 {
			r.Output, r.Truncated, r.Characters = fields.Text(jsonscan.Get(l.errorV, "message"))
		}
	}
	dst = append(dst, agentstream.E(r))
	if e, ok := d.edits[id]; ok {
		delete(d.edits, id)
		if !r.IsError {
			dst = append(dst, agentstream.E(e.Change(id, filediff.Created(r.Output))))
		}
	}
	return dst
}

// nameFromID recovers a tool's name from its id when the call was not seen:
// ids are "<tool>-<epoch ms>-<hex>" (or "<tool>__<tool>_<ms>_<n>" in 0.45).
func nameFromID(id string) string {
	if i := strings.Index(id, "__"); i > 0 {
		return id[:i]
	}
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return ""
	}
	j := strings.LastIndexByte(id[:i], '-')
	if j <= 0 {
		return ""
	}
	for _, c := range id[j+1 : i] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return id[:j]
}

// notice maps an error line: severity warning is a warning; severity error
// (a result follows it) or none is an error.
func notice(l *line) agentstream.Payload {
	msg, _, _ := fields.Text(l.message)
	if msg == "" {
		msg, _, _ = fields.Text(jsonscan.Get(l.errorV, "message"))
	}
	if fields.Str(l.severity) == "warning" {
		return &agentstream.Warning{Message: msg}
	}
	return &agentstream.Error{Message: msg, ErrorType: fields.Str(jsonscan.Get(l.errorV, "type"))}
}

// result ends the run: turn.ended and session.ended, with the error
// object of a run that failed.
func (d *Decoder) result(dst []agentstream.Event, success bool, errorV []byte) []agentstream.Event {
	end := &agentstream.SessionEnded{Status: agentstream.StatusSucceeded, Reason: agentstream.ReasonCompletion, Summary: d.summary}
	reason := agentstream.TurnOK
	if !success {
		end.Status = agentstream.StatusFailed
		reason = agentstream.TurnError
		end.Error = errorText(errorV)
		if end.Error == "" {
			end.Error = "error"
		}
	}
	end.StopReason = fields.Str(jsonscan.Get(errorV, "type"))
	d.turn++
	d.summary = ""
	dst = append(dst, agentstream.E(&agentstream.TurnEnded{Turn: d.turn, Reason: reason}))
	return append(dst, agentstream.E(end))
}

// errorText says what an {type, message} error object (or a string) holds.
func errorText(v []byte) string {
	msg := fields.Str(jsonscan.Get(v, "message"))
	if msg == "" {
		msg = fields.Str(v)
	}
	if t := fields.Str(jsonscan.Get(v, "type")); t != "" && msg == "" {
		msg = t
	}
	s, _ := agentstream.Clip(msg, agentstream.MaxText)
	return s
}

// numbered gives a process's totals their run: Gemini CLI prints one
// result per process, so each result of a stream is a run of its own.
func (d *Decoder) numbered(u *agentstream.Usage) *agentstream.Usage {
	d.results++
	if d.results > 1 {
		u.Run = d.results
	}
	return u
}

// statsUsage maps result.stats, the whole process's tokens summed over all
// models: input_tokens includes cached tokens, which the newer "input" key
// excludes.
func statsUsage(stats []byte) *agentstream.Usage {
	var total, in, nonCached, cached, out, duration []byte
	obj, ok := jsonscan.Object(stats)
	if !ok {
		return nil
	}
	var models []byte
	for obj.Next() {
		v := obj.Value()
		switch string(obj.Key()) {
		case "models":
			models = v
		case "total_tokens":
			total = v
		case "input_tokens":
			in = v
		case "input":
			nonCached = v
		case "cached":
			cached = v
		case "output_tokens":
			out = v
		case "duration_ms":
			duration = v
		}
	}
	u := &agentstream.Usage{
		Scope:           agentstream.ScopeSession,
		OutputTokens:    fields.Int(out),
		CacheReadTokens: fields.Int(cached),
		DurationMs:      fields.Int(duration),
	}
	u.InputTokens = fields.Int(nonCached)
	if u.InputTokens == nil {
		if n := fields.Int(in); n != nil {
			if u.CacheReadTokens != nil {
				*n = max(*n-*u.CacheReadTokens, 0)
			}
			u.InputTokens = n
		}
	}
	if u.InputTokens == nil && u.OutputTokens == nil && len(total) == 0 && u.DurationMs == nil {
		return nil
	}
	u.Models = statsModels(models, u.CacheReadTokens == nil || *u.CacheReadTokens == 0)
	return u
}

// statsModels is result.stats.models, each model's tokens as statsUsage
// reads the totals; models that spent nothing are left out. A model's
// input_tokens includes its cached tokens: without its own "input" or
// "cached", its input not read from cache is unknown unless nothing was
// (noCache).
func statsModels(models []byte, noCache bool) []agentstream.ModelUsage {
	var out []agentstream.ModelUsage
	obj, ok := jsonscan.Object(models)
	if !ok {
		return nil
	}
	for obj.Next() {
		v := obj.Value()
		get := func(k string) *int64 { return fields.Int(jsonscan.Get(v, k)) }
		m := agentstream.ModelUsage{Model: string(obj.Key()), OutputTokens: get("output_tokens"), CacheReadTokens: get("cached"), InputTokens: get("input")}
		if m.InputTokens == nil && (m.CacheReadTokens != nil || noCache) {
			if n := get("input_tokens"); n != nil {
				if m.CacheReadTokens != nil {
					*n = max(*n-*m.CacheReadTokens, 0)
				}
				m.InputTokens = n
			}
		}
		if spent(get("input_tokens"), m.InputTokens, m.OutputTokens, m.CacheReadTokens) {
			out = append(out, m)
		}
	}
	return out
}

func spent(vs ...*int64) bool {
	for _, v := range vs {
		if v != nil && *v != 0 {
			return true
		}
	}
	return false
}

// jsonOutput maps the object `--output-format json` prints at exit:
// {session_id?, response, stats{models{…}}, error?}.
func (d *Decoder) jsonOutput(dst []agentstream.Event, l *line) []agentstream.Event {
	if id := fields.Str(l.sessionID); id != "" {
		dst = append(dst, agentstream.E(&agentstream.SessionStarted{Harness: Harness, SessionID: id}))
	}
	text, trunc, n := fields.Text(l.response)
	if n > 0 {
		dst = append(dst, agentstream.E(&agentstream.Message{Role: agentstream.RoleAssistant, Text: text, Truncated: trunc}))
		d.summary = text
	}
	if u := modelsUsage(jsonscan.Get(l.stats, "models")); u != nil {
		dst = append(dst, agentstream.E(d.numbered(u)))
	}
	failed := len(l.errorV) > 0 && !jsonscan.IsNull(l.errorV)
	return d.result(dst, !failed, l.errorV)
}

// modelsUsage sums the per-model tokens of the json output's session
// metrics: prompt includes cached; thoughts are output the model did not
// show.
func modelsUsage(models []byte) *agentstream.Usage {
	obj, ok := jsonscan.Object(models)
	if !ok {
		return nil
	}
	var in, out, cached, thoughts int64
	var breakdown []agentstream.ModelUsage
	seen := false
	for obj.Next() {
		name := string(obj.Key())
		tok := jsonscan.Get(obj.Value(), "tokens")
		get := func(k string) int64 {
			n, _ := jsonscan.Int(jsonscan.Get(tok, k))
			return n
		}
		if len(tok) == 0 {
			continue
		}
		seen = true
		p, c := get("prompt"), get("cached")
		mIn, mOut := max(p-c, 0), get("candidates")+get("thoughts")
		in += mIn
		cached += c
		out += mOut
		thoughts += get("thoughts")
		if mIn != 0 || mOut != 0 || c != 0 {
			breakdown = append(breakdown, agentstream.ModelUsage{Model: name, InputTokens: &mIn, OutputTokens: &mOut, CacheReadTokens: &c})
		}
	}
	if !seen {
		return nil
	}
	return &agentstream.Usage{
		Scope: agentstream.ScopeSession, InputTokens: &in, OutputTokens: &out,
		CacheReadTokens: &cached, ReasoningTokens: &thoughts, Models: breakdown,
	}
}
