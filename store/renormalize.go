package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentstream/agentstream"
)

// A Dialect is what reading a session's native lines again needs: a new
// decoder of its protocol, and whether the protocol marks its own turns.
type Dialect struct {
	New           func() agentstream.Decoder
	ExplicitTurns bool
}

// Dialects returns the Dialect of a protocol, false for one it does not
// know. The store does not know the adapters: the command gives it this.
type Dialects func(protocol string) (Dialect, bool)

// Reader is what reading a stored session again needs of a store.
type Reader interface {
	Session(ctx context.Context, id string) (Session, error)
	Events(ctx context.Context, id string, q EventQuery) ([]Event, error)
	Lines(ctx context.Context, id string, fn func(Line) error) error
}

// IsPlatformEvent reports whether a stored event was written by the
// platform rather than read from a native line, so that reading the lines
// again keeps it: a user message the runner sent, a title it probed, a
// session.ended the runner wrote (any reason but completion).
func IsPlatformEvent(e *agentstream.Envelope) bool {
	if e.Source != nil {
		return false
	}
	switch p := e.Payload.(type) {
	case *agentstream.Message:
		return p.Role == agentstream.RoleUser && !p.Partial
	case *agentstream.SessionTitle:
		// A title taken from the prompt is written again by the
		// Normalizer.
		return p.Source != agentstream.TitlePrompt
	case *agentstream.SessionEnded:
		return p.Reason != agentstream.ReasonCompletion
	case *agentstream.SessionState, *agentstream.SentAccepted, *agentstream.SentStarted,
		*agentstream.SentCompleted, *agentstream.Account, *agentstream.Fallback,
		*agentstream.RequestResolved, *agentstream.TurnStarted, *agentstream.TurnEnded:
		// What a live session wrote of its own: its states, the messages
		// it sent, its accounts, the answers it gave and the turns it
		// opened and closed.
		return true
	}
	return false
}

type lineKey struct {
	stream string
	n      int64
}

// Renormalize returns the stored events of a session that is not running
// and those a fresh decoder of d makes of its native lines, with the
// platform's events (IsPlatformEvent) kept in their place: after the
// events of the line the last sourced event before them came from, or at
// the end when no sourced event follows them. The fresh events are
// numbered from 1.
func Renormalize(ctx context.Context, st Reader, id string, d Dialect) (old, fresh []agentstream.Envelope, err error) {
	sess, err := st.Session(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if sess.Running() {
		return nil, nil, fmt.Errorf("session is running")
	}
	r, err := reread(ctx, st, sess, d, true)
	if err != nil {
		return nil, nil, err
	}
	return r.old, r.fresh, nil
}

// reading is a session read again: its stored events, the fresh ones, and
// the place of each native line in the order kept.
type reading struct {
	old, fresh []agentstream.Envelope
	order      map[lineKey]int
}

// reread reads a session again; end says whether the stream's end is
// added (what the decoder owes at its end, and the platform's last
// events).
func reread(ctx context.Context, st Reader, sess Session, d Dialect, end bool) (*reading, error) {
	id := sess.ID
	r := &reading{order: map[lineKey]int{}}
	var last int64
	for {
		evs, err := st.Events(ctx, id, EventQuery{After: last, Limit: 5000})
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			env, err := ev.Envelope()
			if err != nil {
				return nil, fmt.Errorf("seq %d: %w", ev.Seq, err)
			}
			r.old = append(r.old, env)
			last = ev.Seq
		}
		if len(evs) < 5000 {
			break
		}
	}
	old := r.old
	ts := map[lineKey]time.Time{}
	after := map[lineKey][]agentstream.Envelope{}
	var head, tail []agentstream.Envelope
	var anchor *lineKey
	lastSourced := -1
	for i := range old {
		if old[i].Source != nil {
			lastSourced = i
		}
	}
	for i := range old {
		env := &old[i]
		if env.Source != nil {
			k := lineKey{env.Source.Stream, env.Source.Line}
			if _, ok := ts[k]; !ok {
				ts[k] = env.TS
			}
			anchor = &k
			continue
		}
		if !IsPlatformEvent(env) {
			continue
		}
		switch {
		case i > lastSourced:
			tail = append(tail, *env)
		case anchor == nil:
			head = append(head, *env)
		default:
			after[*anchor] = append(after[*anchor], *env)
		}
	}
	n := agentstream.NewNormalizer(d.New(), agentstream.NormalizerConfig{Session: id, Harness: sess.Harness, ExplicitTurns: d.ExplicitTurns})
	var buf []agentstream.Envelope
	add := func(envs []agentstream.Envelope) {
		for _, env := range envs {
			buf = n.Add(buf, agentstream.Event{Payload: env.Payload, ParentCallID: env.ParentCallID, Replay: env.Origin == agentstream.OriginReplay}, env.TS)
		}
	}
	add(head)
	i := 0
	err := st.Lines(ctx, id, func(l Line) error {
		k := lineKey{l.Stream, l.N}
		r.order[k] = i
		i++
		t, ok := ts[k]
		if !ok {
			t = l.TS
		}
		if l.Stream == Stdout {
			buf = n.Line(buf, AgentLine(l), t)
		} else {
			buf = n.Stderr(buf, AgentLine(l), t)
		}
		add(after[k])
		return nil
	})
	if err != nil {
		return nil, err
	}
	if end {
		var endTS time.Time
		if len(old) > 0 {
			endTS = old[len(old)-1].TS
		}
		buf = n.End(buf, endTS)
		add(tail)
	}
	for _, env := range buf {
		if !agentstream.IsLive(env.Type()) {
			r.fresh = append(r.fresh, env)
		}
	}
	return r, nil
}

// Repair gives a session whose writer died the events of its stored lines
// that it lacks: a writer commits native lines before the events made of
// them, so a crash between the two commits leaves lines without events.
// The lines are read again from the first by a fresh decoder of d; the
// events of the lines up to the last one the stored events came from (as
// many of that line's as are stored) are the stored ones, and the events
// that follow, but the platform's, are appended with the seq after the
// last stored one. The session is resumed for that and closed again
// (status by its events, interrupted without a session.ended), its end
// time kept; closing clears the store's mark of a session to repair, so a
// session is repaired once. It returns how many events it added.
// ErrRunning and ErrClosed come from Resume: a session another process is
// repairing, or one that ended.
func Repair(ctx context.Context, st Store, id string, d Dialect) (int, error) {
	w, err := st.Resume(ctx, id)
	if err != nil {
		return 0, err
	}
	sess, err := st.Session(ctx, id)
	if err != nil {
		w.Close(ctx)
		return 0, err
	}
	endedAt := sess.EndedAt
	added, err := repair(ctx, st, w, sess, d)
	var cerr error
	if c, ok := w.(interface {
		CloseAt(context.Context, time.Time) error
	}); ok && !endedAt.IsZero() {
		cerr = c.CloseAt(ctx, endedAt)
	} else {
		cerr = w.Close(ctx)
	}
	return added, errors.Join(err, cerr)
}

func repair(ctx context.Context, st Reader, w Writer, sess Session, d Dialect) (int, error) {
	r, err := reread(ctx, st, sess, d, false)
	if err != nil {
		return 0, err
	}
	// The last line stored events came from, and how many of its events
	// are stored.
	lastLine, count := -1, 0
	tailOwn := 0 // events after the last sourced one, not the platform's
	for i := len(r.old) - 1; i >= 0; i-- {
		e := &r.old[i]
		if e.Source == nil {
			if lastLine < 0 && !IsPlatformEvent(e) {
				tailOwn++
			}
			continue
		}
		k, ok := r.order[lineKey{e.Source.Stream, e.Source.Line}]
		if !ok {
			return 0, fmt.Errorf("store: repair %s: event %d comes from %s line %d, which is not stored", sess.ID, e.Seq, e.Source.Stream, e.Source.Line)
		}
		if lastLine < 0 {
			lastLine = k
		}
		if k != lastLine {
			break
		}
		count++
	}
	if lastLine < 0 {
		tailOwn = 0
		for i := range r.old {
			if !IsPlatformEvent(&r.old[i]) {
				tailOwn++
			}
		}
	}
	// A live session (package session) shapes its turns itself: it writes
	// turn.started and turn.ended of its own and drops the adapter's, so
	// the fresh turn marks are not its events.
	live := false
	for i := range r.old {
		if _, ok := r.old[i].Payload.(*agentstream.SessionState); ok {
			live = true
			break
		}
	}
	// The events of the last line stored are matched by content, since a
	// live session may have dropped some of the line's fresh events.
	storedOfLast := map[string]int{}
	for i := len(r.old) - 1; i >= 0 && count > 0; i-- {
		e := &r.old[i]
		if e.Source == nil {
			continue
		}
		if r.order[lineKey{e.Source.Stream, e.Source.Line}] != lastLine {
			break
		}
		storedOfLast[contentKey(e)]++
	}
	// Where the fresh events pass what is stored, and those of the last
	// stored line that are stored already.
	p := 0
	skip := map[int]bool{}
	for i := range r.fresh {
		e := &r.fresh[i]
		if e.Source == nil {
			continue
		}
		k := r.order[lineKey{e.Source.Stream, e.Source.Line}]
		switch {
		case k < lastLine:
			p = i + 1
		case k == lastLine:
			p = i + 1
			if key := contentKey(e); storedOfLast[key] > 0 {
				storedOfLast[key]--
				skip[i] = true
			} else if live && isTurnMark(e) {
				skip[i] = true
			}
		}
	}
	seq := w.LastSeq()
	added := 0
	for i := range r.fresh {
		if i < p && !r.missingOfLast(i, lastLine, skip) {
			continue
		}
		e := r.fresh[i]
		if IsPlatformEvent(&e) || live && isTurnMark(&e) {
			continue
		}
		if e.Source == nil && tailOwn > 0 {
			// Stored already, after the last sourced event.
			tailOwn--
			continue
		}
		tailOwn = 0
		seq++
		e.Seq = seq
		if err := w.Handle(ctx, e); err != nil {
			return added, err
		}
		added++
	}
	return added, w.Flush(ctx)
}

// missingOfLast reports whether fresh event i comes from the last stored
// line and is not stored.
func (r *reading) missingOfLast(i, lastLine int, skip map[int]bool) bool {
	e := &r.fresh[i]
	if e.Source == nil || skip[i] {
		return false
	}
	return r.order[lineKey{e.Source.Stream, e.Source.Line}] == lastLine
}

// contentKey names an event by its type and payload, which a replay of its
// line gives again.
func contentKey(e *agentstream.Envelope) string {
	return e.Type() + " " + string(e.Payload.AppendJSON(nil))
}

func isTurnMark(e *agentstream.Envelope) bool {
	switch e.Type() {
	case agentstream.TypeTurnStarted, agentstream.TypeTurnEnded:
		return true
	}
	return false
}
