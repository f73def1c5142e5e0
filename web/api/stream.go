package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
)

// catchUpPage is how many stored events one read of a catch-up takes, and
// hubBatch how many events one wake-up takes from the hub (which shares
// them with every subscriber). A stream holds at most a page of events
// and sseChunk bytes at a time, however slow its reader.
const (
	catchUpPage = 32
	hubBatch    = 1000
)

// sseChunk is how many bytes of events a stream holds before it writes
// them, so that a stream's memory stays bounded whatever it catches up on.
const sseChunk = 16 << 10

// sse writes one event stream. Each write must complete within timeout:
// a reader that stops reading is cut, and resumes with Last-Event-ID.
type sse struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
	err     error // the first write error; nothing is written after it
}

// openStreamSlot takes one of the event streams a client may open, or
// answers 429.
func (s *server) openStreamSlot(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, why := s.streams.acquire(r.RemoteAddr)
	if release == nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, why+": close one, or retry later")
		return nil, false
	}
	return release, true
}

func (s *server) startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A stream outlives the server's read and write timeouts, which are
	// for requests and answers: it has no body to read, and each write
	// gets a deadline of its own.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	out := &sse{w: w, rc: rc, timeout: s.opts.StreamWriteTimeout}
	out.buf = append(out.buf, ": agentstream\n\n"...)
	return out
}

// event appends one event: id (when seq > 0), event name and data.
func (s *sse) event(seq int64, name string, data []byte) {
	if seq > 0 {
		s.eventID(strconv.FormatInt(seq, 10), name, data)
		return
	}
	s.eventID("", name, data)
}

// eventID writes an event with an id of text (session ids and digits: no
// line breaks), or none when id is empty.
func (s *sse) eventID(id, name string, data []byte) {
	if id != "" {
		s.buf = append(s.buf, "id: "...)
		s.buf = append(s.buf, id...)
		s.buf = append(s.buf, '\n')
	}
	if name != "" {
		s.buf = append(s.buf, "event: "...)
		for i := 0; i < len(name); i++ {
			if c := name[i]; c >= 0x20 && c != 0x7f {
				s.buf = append(s.buf, c)
			}
		}
		s.buf = append(s.buf, '\n')
	}
	// Envelopes are compact JSON, but a line break in data would end the
	// field: split, as the format asks.
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		s.buf = append(s.buf, "data: "...)
		s.buf = append(s.buf, data[:i]...)
		s.buf = append(s.buf, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	if len(s.buf) >= sseChunk {
		s.flush()
	}
}

func (s *sse) comment(text string) {
	s.buf = append(s.buf, ": "...)
	s.buf = append(s.buf, text...)
	s.buf = append(s.buf, "\n\n"...)
}

// flush sends what was appended, within the write timeout.
func (s *sse) flush() error {
	if s.err != nil || len(s.buf) == 0 {
		s.buf = s.buf[:0]
		return s.err
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	_, err := s.w.Write(s.buf)
	if err == nil {
		err = s.rc.Flush()
	}
	if cap(s.buf) > 2*sseChunk {
		s.buf = nil
	}
	s.buf = s.buf[:0]
	s.err = err
	return err
}

// resumeFrom returns the seq after which a stream resumes: Last-Event-ID,
// else ?after=, else 0.
func resumeFrom(r *http.Request) (int64, bool) {
	raw := r.Header.Get("Last-Event-ID")
	if raw == "" {
		raw = r.URL.Query().Get("after")
	}
	if raw == "" {
		return 0, true
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	return v, err == nil && v >= 0
}

// sessionStream follows one session. It subscribes to the hub first, then
// sends the stored events after the resume point, then what the hub
// delivers, skipping by seq what the store already gave: nothing is sent
// twice and nothing is missed, because everything the hub has not
// delivered was committed before the subscription, and so is in the store.
func (s *server) sessionStream(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	last, ok := resumeFrom(r)
	if !ok {
		writeError(w, http.StatusBadRequest, "bad Last-Event-ID or after: want a seq")
		return
	}
	ctx := r.Context()
	release, ok := s.openStreamSlot(w, r)
	if !ok {
		return
	}
	defer release()
	sub := s.hub.Subscribe(id)
	defer sub.Close()
	sess, err := s.st.Session(ctx, id)
	if err != nil {
		storeError(w, err)
		return
	}
	out := s.startSSE(w)

	// catchUp sends the stored events after last, before `before` when it
	// is positive.
	catchUp := func(before int64) error {
		for {
			q := store.EventQuery{After: last, Limit: catchUpPage}
			evs, err := s.st.Events(ctx, id, q)
			if err != nil {
				return err
			}
			for i, ev := range evs {
				if before > 0 && ev.Seq >= before {
					return out.flush()
				}
				out.event(ev.Seq, ev.Type, ev.Data)
				last = ev.Seq
				evs[i] = store.Event{} // sent: let it go while the writes block
			}
			if err := out.flush(); err != nil {
				return err
			}
			if len(evs) < catchUpPage {
				return nil
			}
		}
	}
	end := func() {
		if catchUp(0) != nil {
			return
		}
		sess, err := s.st.Session(ctx, id)
		status, reason := store.StatusInterrupted, ""
		if err == nil {
			status, reason = sess.Status, sess.Reason
		}
		out.event(0, "end", []byte(`{"lastSeq":`+strconv.FormatInt(last, 10)+`,"status":"`+status+`","reason":`+reasonJSON(reason)+`}`))
		out.flush()
	}
	if err := catchUp(0); err != nil {
		return
	}
	if !sess.Running() {
		end()
		return
	}
	var batch []store.Event
	for {
		batch, err = sub.Next(ctx, batch[:0], hubBatch, s.opts.KeepAlive)
		switch {
		case errors.Is(err, hub.ErrEnded):
			s.sendBatch(out, batch, &last, catchUp)
			end()
			return
		case errors.Is(err, hub.ErrResync):
			s.sendBatch(out, batch, &last, catchUp)
			out.event(0, "resync", []byte(`{"after":`+strconv.FormatInt(last, 10)+`}`))
			out.flush()
			return
		case err != nil:
			return
		}
		if len(batch) == 0 {
			out.comment("keep-alive")
		} else if !s.sendBatch(out, batch, &last, catchUp) {
			return
		}
		if out.flush() != nil {
			return
		}
		if !s.pause(ctx) {
			return
		}
	}
}

// sendBatch appends the hub's events that the client has not had: stored
// events after last (filling a gap from the store, which cannot happen
// with one process but costs nothing to guard), and live deltas that no
// stored event sent already supersedes.
func (s *server) sendBatch(out *sse, batch []store.Event, last *int64, catchUp func(before int64) error) bool {
	for _, ev := range batch {
		switch {
		case ev.Seq == 0:
			if ev.Prev >= *last {
				out.event(0, ev.Type, ev.Data)
			}
		case ev.Seq <= *last:
		default:
			if ev.Seq > *last+1 {
				if catchUp(ev.Seq) != nil {
					return false
				}
				if ev.Seq != *last+1 {
					// The store does not have it either: give up cleanly.
					out.event(0, "resync", []byte(`{"after":`+strconv.FormatInt(*last, 10)+`}`))
					out.flush()
					return false
				}
			}
			out.event(ev.Seq, ev.Type, ev.Data)
			*last = ev.Seq
		}
	}
	return true
}

// pause waits Options.Coalesce between two writes to one subscriber.
func (s *server) pause(ctx context.Context) bool {
	if s.opts.Coalesce <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(s.opts.Coalesce)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// allStream follows every session from now on, or from the event a
// client names with Last-Event-ID (or ?after=): SESSION/SEQ, the id each
// stored event is sent with, while the hub still holds it.
func (s *server) allStream(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	release, ok := s.openStreamSlot(w, r)
	if !ok {
		return
	}
	defer release()
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("after")
	}
	var sub *hub.Subscription
	if last != "" {
		sid, seqText, ok := strings.Cut(last, "/")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if !ok || err != nil || seq <= 0 || !store.ValidID(sid) {
			writeError(w, http.StatusBadRequest, "bad event id "+strconv.Quote(last)+": want SESSION/SEQ")
			return
		}
		sub, ok = s.hub.SubscribeAfter(func(ev store.Event) bool { return ev.Session == sid && ev.Seq == seq })
		if !ok {
			// The event fell out of the hub: the client re-reads the
			// sessions it follows from the store.
			out := s.startSSE(w)
			out.event(0, "resync", []byte(`{"after":null}`))
			out.flush()
			return
		}
	} else {
		sub = s.hub.Subscribe("")
	}
	defer sub.Close()
	out := s.startSSE(w)
	if out.flush() != nil {
		return
	}
	var batch []store.Event
	for {
		var err error
		batch, err = sub.Next(ctx, batch[:0], hubBatch, s.opts.KeepAlive)
		for _, ev := range batch {
			if ev.Seq > 0 {
				out.eventID(ev.Session+"/"+strconv.FormatInt(ev.Seq, 10), ev.Type, ev.Data)
			} else {
				out.event(0, ev.Type, ev.Data)
			}
		}
		switch {
		case errors.Is(err, hub.ErrResync):
			out.event(0, "resync", []byte(`{"after":null}`))
			out.flush()
			return
		case err != nil:
			return
		}
		if len(batch) == 0 {
			out.comment("keep-alive")
		}
		if out.flush() != nil || !s.pause(ctx) {
			return
		}
	}
}

// reasonJSON is a reason as JSON: null when there is none.
func reasonJSON(reason string) string {
	if reason == "" {
		return "null"
	}
	return quoteText(reason)
}
