package agentstream

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A Decoder translates the native lines of one harness stream into events.
// It is what an adapter provides, one per stream.
//
// A Decoder keeps state across the lines of its stream (tool names by call
// id, usage already counted, streamed deltas) and is not safe for concurrent
// use. It must not retain line after Decode returns, must not read the clock
// or globals, and should never panic; the Normalizer that calls it recovers
// from a panic all the same, and the line costs only itself.
type Decoder interface {
	// Decode appends the events of one line (without its terminator) to dst.
	// Zero events is a normal answer, for a blank line for instance.
	Decode(dst []Event, line []byte) []Event
	// End appends the events owed when the stream ends, such as text a
	// dialect only ever sent in pieces.
	End(dst []Event) []Event
}

// A Handler receives the envelopes of a session in order. Handle is called
// synchronously, from one goroutine at a time; the envelope (and its
// payload) may be kept after Handle returns but must not be modified. An
// error from Handle is the caller's to act on: a runner, for instance, stops
// the run.
type Handler interface {
	Handle(ctx context.Context, e Envelope) error
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, e Envelope) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, e Envelope) error { return f(ctx, e) }

// Fanout returns a Handler that passes each envelope to every handler in
// order and returns the first error, after all of them were called.
func Fanout(handlers ...Handler) Handler {
	return HandlerFunc(func(ctx context.Context, e Envelope) error {
		var first error
		for _, h := range handlers {
			if err := h.Handle(ctx, e); err != nil && first == nil {
				first = err
			}
		}
		return first
	})
}

// NormalizerConfig configures a Normalizer.
type NormalizerConfig struct {
	// Session is this system's session id, written in every envelope.
	Session string
	// Harness is written in every envelope until a session.started payload
	// names one.
	Harness string
	// ExplicitTurns is true for dialects that mark turn starts themselves
	// (with turn.started events); otherwise turn 1 starts at the first event
	// and turn N+1 at the first event after turn N ended that is the main
	// agent's own work, and the Normalizer writes the turn.started. Either
	// way a dialect's turn.started starts the next turn.
	ExplicitTurns bool
	// LastSeq is the sequence number already used, when a session is
	// continued; the next stored event gets LastSeq+1.
	LastSeq int64
	// Turn is the turn already reached, when a session is continued: its
	// events stay in that turn until the next one starts.
	Turn int64
}

// A Normalizer turns the lines of one session into envelopes: it runs the
// Decoder on each stdout line, turns stderr lines and oversized lines into
// their events, numbers stored events densely from 1, keeps the turn number
// (writing turn.started where a dialect does not mark its turns, turn.ended
// before a session.ended that leaves a turn open, and its own number in
// every turn payload), writes a session.title from the first prompt when
// the harness gave none before it,
// recovers from a Decoder that panics (the line becomes raw with reason
// adapter-error), and at the end flushes live deltas that never got their
// complete event as complete events with partial set.
//
// Live events (IsLive) are returned like the others, with Seq 0; a caller
// that stores events skips them. A Normalizer is not safe for concurrent use.
type Normalizer struct {
	cfg     NormalizerConfig
	dec     Decoder
	seq     int64
	turn    int64
	ended   bool
	endLine int64
	titled  bool // a session.title was written
	events  []Event
	partial partials
	sources []Source // a slab the line sources are taken from
}

// source returns a new Source, taken from a slab so that a line costs no
// allocation of its own. Sources handed out are never reused.
func (n *Normalizer) source(stream string, line int64) *Source {
	if len(n.sources) == cap(n.sources) {
		n.sources = make([]Source, 0, 128)
	}
	n.sources = append(n.sources, Source{Stream: stream, Line: line})
	return &n.sources[len(n.sources)-1]
}

// NewNormalizer returns a Normalizer running dec.
func NewNormalizer(dec Decoder, cfg NormalizerConfig) *Normalizer {
	return &Normalizer{cfg: cfg, dec: dec, seq: cfg.LastSeq, turn: cfg.Turn}
}

// LastSeq returns the sequence number of the last stored event so far.
func (n *Normalizer) LastSeq() int64 { return n.seq }

// Turn returns the current turn number.
func (n *Normalizer) Turn() int64 { return n.turn }

// Harness returns the harness named in the envelopes.
func (n *Normalizer) Harness() string { return n.cfg.Harness }

// Line appends the envelopes of one stdout line to dst. now is when the line
// was read; a zero now takes each event's own time, if any.
func (n *Normalizer) Line(dst []Envelope, l Line, now time.Time) []Envelope {
	evs, src := n.Decode(l)
	for _, ev := range evs {
		dst = n.stamp(dst, ev, src, now)
	}
	return dst
}

// Decode returns the events of one stdout line and the line's source,
// without making envelopes of them: Line in two steps, for a caller that
// looks at each event before it is stamped (StampLine), and may write events
// of its own in between (Add). The slice is the Normalizer's own, valid
// until its next call.
func (n *Normalizer) Decode(l Line) ([]Event, *Source) {
	src := n.source("stdout", l.N)
	if l.Oversized {
		text, _ := ClipBytes(l.Head, MaxText)
		n.events = append(n.events[:0], E(&Raw{Reason: RawOversized, Text: text, Bytes: l.Size, Truncated: true}))
		return n.events, src
	}
	return n.decode(l.Bytes), src
}

// StampLine appends the envelope of ev, an event of the line whose source
// Decode returned.
func (n *Normalizer) StampLine(dst []Envelope, ev Event, src *Source, now time.Time) []Envelope {
	return n.stamp(dst, ev, src, now)
}

// Stderr appends the stderr event of one stderr line to dst.
func (n *Normalizer) Stderr(dst []Envelope, l Line, now time.Time) []Envelope {
	src := n.source("stderr", l.N)
	b := l.Bytes
	if l.Oversized {
		b = l.Head
	}
	text, trunc := ClipBytes(b, MaxText)
	return n.stamp(dst, E(&Stderr{Text: text, Truncated: trunc || l.Oversized}), src, now)
}

// Add appends the envelope of an event that did not come from a native line,
// such as a timeout the runner wrote or a user message it sent (source null).
func (n *Normalizer) Add(dst []Envelope, ev Event, now time.Time) []Envelope {
	return n.stamp(dst, ev, nil, now)
}

// End appends what the stream owes at its end: the Decoder's own events,
// then a complete message or thinking event, with partial set, for live
// deltas that never got one.
func (n *Normalizer) End(dst []Envelope, now time.Time) []Envelope {
	for _, ev := range n.DecodeEnd() {
		dst = n.stamp(dst, ev, nil, now)
	}
	for _, ev := range n.FlushPartial() {
		dst = n.stamp(dst, ev, nil, now)
	}
	return dst
}

// DecodeEnd returns the decoder's last events, and FlushPartial then the
// partial events of unfinished deltas: End in steps, for a caller that
// looks at each event before it is stamped (StampLine, with a nil source).
// Each is to be stamped before FlushPartial is called, as End does; the
// slice is the Normalizer's own, as Decode's is.
func (n *Normalizer) DecodeEnd() []Event { return n.end() }

// FlushPartial returns the partial events End would stamp after the
// decoder's last events (see DecodeEnd).
func (n *Normalizer) FlushPartial() []Event { return n.partial.flush() }

func (n *Normalizer) decode(line []byte) (evs []Event) {
	n.events = n.events[:0]
	defer func() {
		if r := recover(); r != nil {
			evs = []Event{E(adapterError(line, r))}
		}
	}()
	n.events = n.dec.Decode(n.events, line)
	return n.events
}

func (n *Normalizer) end() (evs []Event) {
	n.events = n.events[:0]
	defer func() {
		if r := recover(); r != nil {
			evs = []Event{E(adapterError(nil, r))}
		}
	}()
	n.events = n.dec.End(n.events)
	return n.events
}

func adapterError(line []byte, r any) *Raw {
	p := NewRaw(RawAdapterError, line)
	if len(line) == 0 {
		p.Text = fmt.Sprint("adapter panic: ", r)
		p.Text, p.Truncated = Clip(p.Text, MaxText)
	}
	return p
}

// stamp wraps ev in its envelope and appends it, after the turn events its
// place in the turns calls for: a turn.started before the first event of a
// turn the dialect does not mark, and a turn.ended before a session.ended
// that comes while a turn is open.
func (n *Normalizer) stamp(dst []Envelope, ev Event, src *Source, now time.Time) []Envelope {
	if ev.Payload == nil {
		return dst
	}
	t := ev.Payload.Type()
	if n.advanceTurn(t, ev, src) {
		dst = n.wrap(dst, Event{Payload: &TurnStarted{}, Time: ev.Time}, src, now)
	}
	if t == TypeSessionEnded && n.turn > 0 && !n.ended {
		dst = n.wrap(dst, Event{Payload: &TurnEnded{Reason: turnEndOf(ev.Payload)}, Time: ev.Time}, src, now)
	}
	dst = n.wrap(dst, ev, src, now)
	if title := n.promptTitle(ev); title != nil {
		dst = n.wrap(dst, Event{Payload: title, Time: ev.Time}, src, now)
	}
	return dst
}

// maxPromptTitle is how many code points of a prompt's first line a title
// taken from it keeps.
const maxPromptTitle = 200

// promptTitle returns the session.title of the session's first prompt, when
// ev is that prompt and no title came before it: the prompt's first
// non-blank line, marked with source prompt. A later title of the harness's
// own is the session's title then.
func (n *Normalizer) promptTitle(ev Event) *SessionTitle {
	m, ok := ev.Payload.(*Message)
	if n.titled || !ok || m.Role != RoleUser || m.Mode != "" || ev.ParentCallID != "" {
		return nil
	}
	line := ""
	for _, l := range strings.Split(m.Text, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	if line == "" {
		return nil
	}
	n.titled = true
	if clipped, cut := Clip(line, maxPromptTitle); cut {
		line = strings.TrimSpace(clipped) + "…"
	}
	return &SessionTitle{Title: line, Source: TitlePrompt}
}

// turnEndOf is the reason of the turn a session.ended closes.
func turnEndOf(p Payload) string {
	switch e, _ := p.(*SessionEnded); {
	case e == nil || e.Status == StatusSucceeded:
		return TurnOK
	case e.Status == StatusCancelled:
		return TurnInterrupt
	}
	return TurnError
}

// wrap appends the envelope of ev. The turn of a turn.started or
// turn.ended payload is the envelope's.
func (n *Normalizer) wrap(dst []Envelope, ev Event, src *Source, now time.Time) []Envelope {
	Bound(ev.Payload)
	t := ev.Payload.Type()
	switch p := ev.Payload.(type) {
	case *SessionStarted:
		if p.Harness != "" {
			n.cfg.Harness = p.Harness
		}
	case *TurnStarted:
		p.Turn = n.turn
	case *TurnEnded:
		p.Turn = n.turn
	case *SessionTitle:
		n.titled = true
	}
	n.partial.observe(ev)
	e := Envelope{
		Session:      n.cfg.Session,
		Harness:      n.cfg.Harness,
		Turn:         n.turn,
		Origin:       OriginLive,
		ParentCallID: ev.ParentCallID,
		Payload:      ev.Payload,
		Source:       src,
		TS:           now,
	}
	if now.IsZero() {
		e.TS = ev.Time
	}
	if ev.Replay {
		e.Origin = OriginReplay
	}
	if !IsLive(t) {
		n.seq++
		e.Seq = n.seq
	}
	switch t {
	case TypeTurnEnded, TypeSessionEnded:
		n.ended = true
		n.endLine = lineOf(src)
	}
	return append(dst, e)
}

func lineOf(src *Source) int64 {
	if src == nil {
		return -1
	}
	if src.Stream == "stderr" {
		return -2 - src.Line
	}
	return src.Line
}

// advanceTurn applies the turn rules before an event of type t is stamped,
// and reports whether the event starts a turn the dialect did not mark, so
// that a turn.started goes before it.
func (n *Normalizer) advanceTurn(t string, ev Event, src *Source) bool {
	if t == TypeTurnStarted {
		n.turn++
		n.ended = false
		return false
	}
	if n.cfg.ExplicitTurns {
		return false
	}
	if n.turn == 0 {
		n.turn = 1
		return true
	}
	if !n.ended {
		return false
	}
	switch t {
	case TypeTurnEnded, TypeSessionEnded, TypeSessionTitle, TypeUsage, TypeStderr:
		return false
	case TypeSessionBackground, TypeSubagent, TypeMessageStatus, TypeQuota, TypeProgress:
		// Work beside the turns (a background task, a subagent still
		// running, the state of a sent message) does not start one.
		return false
	}
	if ev.ParentCallID != "" {
		return false
	}
	if src != nil && lineOf(src) == n.endLine {
		return false
	}
	n.turn++
	n.ended = false
	return true
}

// partials accumulates live deltas until their complete event arrives.
type partials struct {
	open []*partial
	free []*partial // dropped ones, whose buffers are reused
}

type partial struct {
	parent   string
	thinking bool
	role     string
	text     []byte
	dropped  bool // deltas were not kept in text
}

// partialCap bounds what is accumulated for one partial event: enough for
// MaxText characters.
const partialCap = 4 * MaxText

func (ps *partials) find(parent string, thinking bool) *partial {
	for _, p := range ps.open {
		if p.parent == parent && p.thinking == thinking {
			return p
		}
	}
	return nil
}

func (ps *partials) observe(ev Event) {
	switch p := ev.Payload.(type) {
	case *MessageDelta:
		ps.add(ev.ParentCallID, false, p.Role, p.Text)
	case *ThinkingDelta:
		ps.add(ev.ParentCallID, true, "", p.Text)
	case *Message:
		ps.drop(ev.ParentCallID, false)
	case *Thinking:
		ps.drop(ev.ParentCallID, true)
	}
}

func (ps *partials) add(parent string, thinking bool, role, text string) {
	p := ps.find(parent, thinking)
	if p == nil {
		if n := len(ps.free); n > 0 {
			p = ps.free[n-1]
			ps.free = ps.free[:n-1]
			*p = partial{parent: parent, thinking: thinking, role: role, text: p.text[:0]}
		} else {
			p = &partial{parent: parent, thinking: thinking, role: role}
		}
		ps.open = append(ps.open, p)
	}
	room := partialCap - len(p.text)
	if len(text) <= room {
		p.text = append(p.text, text...)
		return
	}
	kept := ""
	if room > 0 {
		kept, _ = Clip(text, room/4)
		p.text = append(p.text, kept...)
	}
	p.dropped = p.dropped || kept != text
}

func (ps *partials) drop(parent string, thinking bool) {
	for i, p := range ps.open {
		if p.parent == parent && p.thinking == thinking {
			ps.open = append(ps.open[:i], ps.open[i+1:]...)
			ps.free = append(ps.free, p)
			return
		}
	}
}

func (ps *partials) flush() []Event {
	var evs []Event
	for _, p := range ps.open {
		if len(p.text) == 0 {
			continue
		}
		// Deltas were dropped only past partialCap bytes, which is more
		// than MaxText code points.
		text, trunc := ClipBytes(p.text, MaxText)
		trunc = trunc || p.dropped
		var pl Payload
		if p.thinking {
			pl = &Thinking{Text: text, Truncated: trunc, Partial: true}
		} else {
			role := p.role
			if role == "" {
				role = RoleAssistant
			}
			pl = &Message{Role: role, Text: text, Truncated: trunc, Partial: true}
		}
		evs = append(evs, Event{Payload: pl, ParentCallID: p.parent})
	}
	ps.open = nil
	return evs
}
