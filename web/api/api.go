// Package api is the HTTP API of agentstream: sessions, their events and
// native lines, a server-sent-events stream that resumes exactly once, and
// ingestion from a remote runner. [New] returns the handler; [Client] is
// the remote runner's side.
//
// # Authentication
//
// With Options.Token set, every request must carry
// "Authorization: Bearer TOKEN"; anything else gets 401. A token is never
// taken from the query string (where logs and browser histories keep it):
// a request with ?access_token= or ?token= gets 400. The web timeline
// reads its event streams with fetch, which sends the header.
//
// # Browsers
//
// The handler answers only requests whose Host names the server, and takes
// a request that changes state only as application/json and, with an
// Origin header, from its own origin (see [Guard]): a page of another site
// can neither send it a form nor read it through DNS rebinding.
//
// # Bounds
//
// Request bodies are limited (Options.MaxBody for lines, 1 MiB for the
// rest; 413 beyond), a body is one JSON value (400 for anything after it),
// and the session metadata a request gives is clipped as the format clips
// what an agent reports (agentstream.MaxName, MaxItems). Event streams are
// limited per client address and in all (429 with Retry-After), and a
// stream whose reader stops reading is cut after Options.StreamWriteTimeout;
// it resumes exactly once with Last-Event-ID. A remote session whose runner
// sends nothing, not even an empty heartbeat request, for
// Options.HeartbeatTimeout ends interrupted (reason heartbeat-timeout).
//
// With Options.Tokens, the server also accepts the access tokens and share
// links kept there, as "Authorization: Bearer SECRET" only, each with its
// scopes: read (sessions, events, streams, usage), lines (native lines),
// ingest (a remote runner's sessions) and control (live sessions, share
// links). A share link reads one session's record, events and stream. A
// revoked or expired one gets 401 saying so; a route outside the scopes
// gets 403 naming the scope it needs. Options.Token grants every scope.
// See RouteScope and docs/security.md.
//
// # Errors
//
// Every error is a JSON object {"error": "..."} with a proper status: 400
// for a bad parameter or body, 401 without the token, 403 for a host or
// origin not served or a token without the scope the route needs, 404 for
// an unknown session, line or path, 405 for a wrong method, 409 for an
// ingestion conflict, 413 for a body too large, 415 for a state-changing
// request that is not JSON, 429 for too many event streams, 500 for a
// store failure.
//
// # Server-sent events
//
// GET /api/sessions/{id}/stream sends each stored event as
//
//	id: SEQ
//	event: TYPE
//	data: ENVELOPE
//
// and the live deltas of a running session with no id (their envelope has
// "seq": null). A client that reconnects with Last-Event-ID (or ?after=SEQ)
// receives every event after SEQ exactly once. Comments (": keep-alive")
// are sent while idle. "event: end" ends the stream once the session's
// writer closed and everything was sent (data {"lastSeq", "status",
// "reason"}). A client that falls too far
// behind receives "event: resync" with data {"after": SEQ}, the last seq
// it was sent, and the stream closes: reconnect with after=SEQ.
//
// GET /api/events/stream sends the stored events of every session from the
// moment of the request, each with the id SESSION/SEQ, "event: closed" with
// {"session": ID} when a session's writer closes, and "event: resync" (data
// {"after": null}) when the client fell behind. A client that reconnects
// with Last-Event-ID (or ?after=SESSION/SEQ) receives every event after
// that one exactly once while the server still holds it, else a resync.
//
// # Live sessions
//
// With Options.Live, the server starts sessions of its own profiles (no
// request names a command) and acts on them:
//
//	POST   /api/sessions                      {"profile", "prompt"?, "policy"?} → 201 {"id"}
//	POST   /api/sessions/{id}/messages        {"text", "mode"?}                 → 202 {"messageId"}
//	POST   /api/sessions/{id}/interrupt                                          → 202 (409 when no turn runs)
//	POST   /api/sessions/{id}/requests/{rid}  {"decision", "message"?}          → 200 (409 when answered, 404 unknown)
//	DELETE /api/sessions/{id}                                                    → 202, the session closes
//	GET    /api/profiles                                                         → {"profiles": [names]}
//
// GET /api/sessions/{id} of a live session adds its "state", "stateReason",
// "pending" requests and the whole "live" snapshot. A body that is not the
// JSON above, an unknown profile, mode or decision get 400 and change
// nothing; a message to a closed session gets 409.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/hub"
	"github.com/agentstream/agentstream/store"
)

// Options configure the API handler. The zero value gives the defaults.
type Options struct {
	// Token, when set, is required of every request (see the package doc)
	// unless it carries a stored token or share link (see Tokens); it
	// grants every scope.
	Token string
	// Tokens, when set, keeps the access tokens and share links the
	// server accepts beside Token, and the share links POST
	// /api/sessions/{id}/share makes (see auth.go's routes for the scope
	// of each route).
	Tokens store.Tokens
	// RequireToken requires a credential of every request even without
	// Token: then only the stored tokens and share links get in. With
	// neither, the server asks for none and every request may do
	// everything.
	RequireToken bool
	// KeepAlive is how long an idle event stream waits before sending a
	// comment; zero means 15 s.
	KeepAlive time.Duration
	// Coalesce is the shortest time between two writes to one event-stream
	// subscriber: events that arrive meanwhile go out together. It bounds
	// the work per subscriber when a session appends fast; zero means
	// 5 ms, negative means none.
	Coalesce time.Duration
	// MaxLimit is the largest page a client may ask for; zero means 5000.
	MaxLimit int
	// MaxBody is the largest request body accepted; zero means 64 MiB.
	MaxBody int64
	// Now returns the time; nil means time.Now. Ingested lines without a
	// time of their own are stamped with it.
	Now func() time.Time
	// Redact, when set, masks the secrets of every ingested line before
	// it is stored or normalized (package redact provides one).
	Redact Redactor
	// Live, when set, starts live sessions from the server's profiles and
	// acts on them (POST /api/sessions with a profile, messages, interrupt,
	// answers, DELETE); nil means the server starts none.
	Live Live
	// Hosts are the names the server answers to besides the loopback
	// ones (see Guard): its listen address, the names a proxy forwards.
	Hosts []string
	// MaxStreams and MaxStreamsPerClient limit the open event streams in
	// all and per client address; zero means 1024 and 32.
	MaxStreams, MaxStreamsPerClient int
	// StreamWriteTimeout is how long one write to an event stream may
	// block before the stream is cut; zero means 15 s.
	StreamWriteTimeout time.Duration
	// HeartbeatTimeout is how long a remotely run session may go without a
	// request from its runner before it ends interrupted; zero means 2
	// minutes, negative never. Client's Uploader sends a heartbeat every
	// 30 s while idle.
	HeartbeatTimeout time.Duration
	// Health, when set, says how ingestion other than HTTP stands (such
	// as a NATS consumer's status); GET /api/health answers
	// {"ok": true, "ingest": HEALTH}, and {"ok": true, "ingest":
	// {"transport": "http"}} without it.
	Health func() any
}

// maxSmallBody is the largest body of a request other than lines.
const maxSmallBody = 1 << 20

// A Redactor masks the secrets of a native line in place, keeping its
// length. It is safe for concurrent use.
type Redactor interface {
	// Line masks a whole line.
	Line(b []byte) []byte
	// Head masks the kept head of a longer line.
	Head(b []byte) []byte
}

func (o Options) withDefaults() Options {
	if o.KeepAlive <= 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.Coalesce == 0 {
		o.Coalesce = 5 * time.Millisecond
	}
	if o.MaxLimit <= 0 {
		o.MaxLimit = 5000
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 1024
	}
	if o.MaxStreamsPerClient <= 0 {
		o.MaxStreamsPerClient = 32
	}
	if o.StreamWriteTimeout <= 0 {
		o.StreamWriteTimeout = 15 * time.Second
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = 2 * time.Minute
	}
	return o
}

type server struct {
	st   store.Store
	hub  *hub.Hub
	opts Options

	ingestMu sync.Mutex
	ingests  map[string]*ingest

	streams *streamLimit

	tok tokenAuth
}

// New returns the API handler, serving the paths under /api/. st is read
// and written; h delivers what st commits to the event streams (the caller
// arranges for st to publish to h, see sqlite.Store.Follow). The handler is
// safe for concurrent use.
func New(st store.Store, h *hub.Hub, opts Options) http.Handler {
	s := &server{st: st, hub: h, opts: opts.withDefaults(), ingests: map[string]*ingest{}}
	s.streams = &streamLimit{total: s.opts.MaxStreams, perClient: s.opts.MaxStreamsPerClient, per: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/sessions", s.listSessions)
	mux.HandleFunc("POST /api/sessions", s.createSession)
	mux.HandleFunc("/api/sessions", methodNotAllowed("GET, POST"))
	mux.HandleFunc("GET /api/sessions/{id}", s.getSession)
	if s.opts.Live != nil {
		mux.HandleFunc("/api/sessions/{id}", methodNotAllowed("GET, DELETE"))
		s.routeLive(mux)
	} else {
		mux.HandleFunc("/api/sessions/{id}", methodNotAllowed("GET"))
	}
	mux.HandleFunc("GET /api/sessions/{id}/events", s.getEvents)
	mux.HandleFunc("/api/sessions/{id}/events", methodNotAllowed("GET"))
	mux.HandleFunc("GET /api/sessions/{id}/lines/{n}", s.getLine)
	mux.HandleFunc("/api/sessions/{id}/lines/{n}", methodNotAllowed("GET"))
	mux.HandleFunc("POST /api/sessions/{id}/lines", s.postLines)
	mux.HandleFunc("/api/sessions/{id}/lines", methodNotAllowed("POST"))
	mux.HandleFunc("GET /api/sessions/{id}/stream", s.sessionStream)
	mux.HandleFunc("/api/sessions/{id}/stream", methodNotAllowed("GET"))
	mux.HandleFunc("GET /api/usage", s.getUsage)
	mux.HandleFunc("/api/usage", methodNotAllowed("GET"))
	mux.HandleFunc("GET /api/search", s.getSearch)
	mux.HandleFunc("/api/search", methodNotAllowed("GET"))
	mux.HandleFunc("GET /api/health", s.getHealth)
	mux.HandleFunc("/api/health", methodNotAllowed("GET"))
	mux.HandleFunc("GET /api/events/stream", s.allStream)
	mux.HandleFunc("/api/events/stream", methodNotAllowed("GET"))
	s.routeAuth(mux)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API path: "+r.URL.Path)
	})
	return Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Has("access_token") || q.Has("token") {
			writeError(w, http.StatusBadRequest, "a token is accepted only in the Authorization header, never in the URL")
			return
		}
		g, ok := s.authenticate(w, r, mux)
		if !ok {
			return
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	}), s.opts.Hosts)
}

func (s *server) authorized(r *http.Request) bool {
	want := []byte(s.opts.Token)
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") &&
			subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), want) == 1 {
			return true
		}
	}
	return false
}

// isControl reports a control character, which no title or name holds and
// a store's text match may treat as the end of the text (NUL).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed (allowed: "+allow+")")
	}
}

// writeError writes {"error": msg} with status code.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"error": msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b = []byte(`{"error":"encoding the response failed"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// storeError maps a store error to a response.
func storeError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not found")
	case errors.Is(err, context.Canceled):
		writeError(w, http.StatusServiceUnavailable, "request cancelled")
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// intParam parses an optional non-negative integer query parameter; ok is
// false (and the 400 written) when it is malformed or below min.
func intParam(w http.ResponseWriter, r *http.Request, name string, min, max int64) (v int64, set, ok bool) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return 0, false, true
	}
	v, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || v < min || v > max {
		writeError(w, http.StatusBadRequest, "bad "+name+" "+strconv.Quote(raw)+": want an integer from "+
			strconv.FormatInt(min, 10)+" to "+strconv.FormatInt(max, 10))
		return 0, true, false
	}
	return v, true, true
}

func (s *server) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sq := store.SessionQuery{Status: q.Get("status"), Harness: q.Get("harness"), Q: q.Get("q"), Cursor: q.Get("cursor")}
	for _, name := range []string{"q", "harness", "status"} {
		if v := q.Get(name); strings.ContainsFunc(v, isControl) || len(v) > 4*agentstream.MaxName {
			writeError(w, http.StatusBadRequest, "bad "+name+": control characters, or longer than "+
				strconv.Itoa(agentstream.MaxName)+" characters")
			return
		}
	}
	if sq.Status != "" && !store.ValidStatus(sq.Status) {
		writeError(w, http.StatusBadRequest, "bad status "+strconv.Quote(sq.Status)+
			": want running, succeeded, failed, cancelled or interrupted")
		return
	}
	limit, _, ok := intParam(w, r, "limit", 1, 500)
	if !ok {
		return
	}
	sq.Limit = int(limit)
	if since := q.Get("since"); since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad since "+strconv.Quote(since)+": want an RFC 3339 time")
			return
		}
		sq.Since = t
	}
	page, err := s.st.Sessions(r.Context(), sq)
	if errors.Is(err, store.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, "bad cursor")
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	var next *string
	if page.Next != "" {
		next = &page.Next
	}
	writeJSON(w, http.StatusOK, struct {
		Sessions []store.Session `json:"sessions"`
		Next     *string         `json:"next"`
	}{page.Sessions, next})
}

func (s *server) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var live json.RawMessage
	if s.opts.Live != nil {
		live, _ = s.opts.Live.Info(id)
	}
	sess, err := s.st.Session(r.Context(), id)
	if err != nil {
		storeError(w, err)
		return
	}
	if live == nil {
		writeJSON(w, http.StatusOK, sess)
		return
	}
	// The stored session, with what the live one is now: its state and
	// pending requests.
	b, err := json.Marshal(sess)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the session failed")
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the session failed")
		return
	}
	var info map[string]json.RawMessage
	if err := json.Unmarshal(live, &info); err != nil {
		writeError(w, http.StatusInternalServerError, "encoding the live session failed")
		return
	}
	obj["live"] = live
	for _, k := range []string{"state", "stateReason", "pending"} {
		obj[k] = info[k]
	}
	writeJSON(w, http.StatusOK, obj)
}

func (s *server) getEvents(w http.ResponseWriter, r *http.Request) {
	max := int64(s.opts.MaxLimit)
	after, afterSet, ok := intParam(w, r, "after", 0, 1<<53)
	if !ok {
		return
	}
	before, beforeSet, ok := intParam(w, r, "before", 1, 1<<53)
	if !ok {
		return
	}
	tail, tailSet, ok := intParam(w, r, "tail", 1, max)
	if !ok {
		return
	}
	limit, limitSet, ok := intParam(w, r, "limit", 1, max)
	if !ok {
		return
	}
	n := 0
	for _, set := range []bool{afterSet, beforeSet, tailSet} {
		if set {
			n++
		}
	}
	if n > 1 {
		writeError(w, http.StatusBadRequest, "after, before and tail exclude each other")
		return
	}
	q := store.EventQuery{After: after, Before: before, Tail: tailSet, Limit: int(limit)}
	if tailSet {
		if limitSet && limit != tail {
			writeError(w, http.StatusBadRequest, "tail=N takes no other limit")
			return
		}
		q.Limit = int(tail)
	}
	if types := r.URL.Query().Get("types"); types != "" {
		for _, t := range strings.Split(types, ",") {
			t = strings.TrimSpace(t)
			if t == "" || len(t) > 64 {
				writeError(w, http.StatusBadRequest, "bad types "+strconv.Quote(types))
				return
			}
			q.Types = append(q.Types, t)
		}
	}
	evs, err := s.st.Events(r.Context(), r.PathValue("id"), q)
	if err != nil {
		storeError(w, err)
		return
	}
	size := 2
	for _, ev := range evs {
		size += len(ev.Data) + 1
	}
	b := make([]byte, 0, size+1)
	b = append(b, '[')
	for i, ev := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, ev.Data...)
	}
	b = append(b, "]\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}

func (s *server) getLine(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	if err != nil || n < 1 {
		writeError(w, http.StatusBadRequest, "bad line number "+strconv.Quote(r.PathValue("n")))
		return
	}
	stream := r.URL.Query().Get("stream")
	if stream == "" {
		stream = store.Stdout
	}
	if stream != store.Stdout && stream != store.Stderr {
		writeError(w, http.StatusBadRequest, "bad stream "+strconv.Quote(stream)+": want stdout or stderr")
		return
	}
	l, err := s.st.Line(r.Context(), r.PathValue("id"), stream, n)
	if err != nil {
		storeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Line-Size", strconv.FormatInt(l.Size, 10))
	if l.Truncated() {
		h.Set("X-Line-Truncated", "true")
		if len(l.SHA256) > 0 {
			h.Set("X-Line-SHA256", hexString(l.SHA256))
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(l.Data)))
	w.Write(l.Data)
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

func (s *server) getHealth(w http.ResponseWriter, r *http.Request) {
	var ingest any = map[string]string{"transport": "http"}
	if s.opts.Health != nil {
		ingest = s.opts.Health()
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "ingest": ingest})
}
