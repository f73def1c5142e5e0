package api

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter"
	"github.com/agentstream/agentstream/store"
)

// CreateRequest is the body of POST /api/sessions: a session a remote
// runner is about to send.
type CreateRequest struct {
	// ID is the session id; empty means one the server makes.
	ID string `json:"id,omitempty"`
	// Protocol names the dialect of the lines that will be sent.
	Protocol string            `json:"protocol"`
	Harness  string            `json:"harness,omitempty"`
	Command  []string          `json:"command,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	Parent   string            `json:"parent,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
}

// LineIn is one native line sent to POST /api/sessions/{id}/lines. The line
// is Text, or Data (base64) when it is not valid UTF-8. A line longer than
// the runner's soft limit is sent as its head with Size (the whole line's
// size, larger than the head) and, when known, SHA256 (hex).
type LineIn struct {
	Stream string `json:"stream"`
	N      int64  `json:"n"`
	Text   string `json:"text,omitempty"`
	Data   []byte `json:"data,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// TS is when the runner read the line; zero means when it arrived.
	TS time.Time `json:"ts,omitzero"`
}

// NewLineIn returns the LineIn of a native line.
func NewLineIn(l store.Line) LineIn {
	in := LineIn{Stream: l.Stream, N: l.N, TS: l.TS}
	if utf8.Valid(l.Data) {
		in.Text = string(l.Data)
	} else {
		in.Data = append([]byte(nil), l.Data...)
	}
	if l.Truncated() {
		in.Size = l.Size
		in.SHA256 = hex.EncodeToString(l.SHA256)
	}
	return in
}

// End says how the runner's process ended; it closes the session.
type End struct {
	// ExitCode is the process's exit code, nil when it was killed by a
	// signal or never started.
	ExitCode *int `json:"exitCode"`
	// Reason is a session.ended reason of the runner (exit, idle-timeout,
	// deadline, aborted, oversized-event, budget); empty means exit.
	Reason string `json:"reason,omitempty"`
	// Error says what went wrong, if anything.
	Error string `json:"error,omitempty"`
	// Lines, when set, is the number of the last line of each stream
	// the run printed (Spool.End sets it). The server closes the session
	// only once it holds those lines: an end that comes before them (a
	// message delivered again after a later one) is refused with a 409
	// naming the line expected, and is taken when it comes again. An end
	// without it closes the session whatever lines the server holds.
	Lines map[string]int64 `json:"lines,omitempty"`
}

// LinesRequest is the body of POST /api/sessions/{id}/lines.
type LinesRequest struct {
	Lines []LineIn `json:"lines"`
	End   *End     `json:"end"`
}

// LinesResponse is the answer to POST /api/sessions/{id}/lines: where the
// session stands once the lines were committed.
type LinesResponse struct {
	LastLine map[string]int64 `json:"lastLine"`
	LastSeq  int64            `json:"lastSeq"`
	Status   string           `json:"status"`
}

// ingest is the server side of one remotely run session: its writer and
// its normalizer, kept across requests.
type ingest struct {
	mu    sync.Mutex
	w     store.Writer
	n     *agentstream.Normalizer
	ended bool // a session.ended came after the last turn.started
	gone  bool // closed; the entry is being removed
	envs  []agentstream.Envelope

	// last is when the runner last sent a request; timer ends the
	// session interrupted once it has been silent for the heartbeat
	// timeout (nil when there is none).
	last  time.Time
	timer *time.Timer
}

// watch starts the heartbeat timer of a new ingestion. It takes in.mu,
// which the timer's expire takes too, so that a timer that fires at once
// sees the ingestion whole.
func (s *server) watch(in *ingest) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.last = time.Now()
	if s.opts.HeartbeatTimeout > 0 {
		in.timer = time.AfterFunc(s.opts.HeartbeatTimeout, func() { s.expire(in) })
	}
}

// touch notes a request of the runner; in.mu is held.
func (s *server) touch(in *ingest) {
	in.last = time.Now()
	if in.timer != nil {
		in.timer.Reset(s.opts.HeartbeatTimeout)
	}
}

// expire ends a session whose runner has been silent for the heartbeat
// timeout: what the stream owes is flushed, then a session.ended with
// status interrupted and reason heartbeat-timeout closes it. The runner
// that comes back resumes it, as after a restart of the server.
func (s *server) expire(in *ingest) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.gone {
		return
	}
	if idle := time.Since(in.last); idle < s.opts.HeartbeatTimeout {
		// A request came as the timer fired.
		in.timer.Reset(s.opts.HeartbeatTimeout - idle)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := s.opts.Now()
	in.envs = in.n.End(in.envs[:0], now)
	if in.handle(ctx) == nil {
		p := &agentstream.SessionEnded{Status: agentstream.StatusInterrupted, Reason: agentstream.ReasonHeartbeatTimeout,
			Error: "the runner sent nothing for " + s.opts.HeartbeatTimeout.String()}
		in.envs = in.n.Add(in.envs[:0], agentstream.E(p), now)
		_ = in.handle(ctx)
	}
	// A store that fails here fails every request too; the session is
	// then left to the store's own reaping.
	_ = s.close(ctx, in)
}

// close closes the session's writer and forgets the ingestion; in.mu is
// held.
func (s *server) close(ctx context.Context, in *ingest) error {
	if in.timer != nil {
		in.timer.Stop()
	}
	err := in.w.Close(ctx)
	in.gone = true
	s.ingestMu.Lock()
	if s.ingests[in.w.Session()] == in {
		delete(s.ingests, in.w.Session())
	}
	s.ingestMu.Unlock()
	return err
}

func (s *server) createSession(w http.ResponseWriter, r *http.Request) {
	b, ok := readBody(w, r, maxSmallBody)
	if !ok {
		return
	}
	if isOpenRequest(b) {
		if requireScope(w, r, ScopeControl, "starting a live session") {
			s.openSession(w, r, b)
		}
		return
	}
	if !requireScope(w, r, ScopeIngest, "recording a runner's session") {
		return
	}
	var req CreateRequest
	if !decodeBytes(w, b, &req) {
		return
	}
	sess, err := s.create(r.Context(), req)
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			writeError(w, le.code, le.msg)
			return
		}
		storeError(w, err)
		return
	}
	w.Header().Set("Location", "/api/sessions/"+sess.ID)
	writeJSON(w, http.StatusCreated, sess)
}

// create creates the session of a remote runner and starts its ingestion;
// a request it refuses is a *lineError (400, or 409 for an id that exists).
func (s *server) create(ctx context.Context, req CreateRequest) (store.Session, error) {
	a, err := adapter.Lookup(req.Protocol)
	if err != nil {
		return store.Session{}, &lineError{code: http.StatusBadRequest, msg: "bad protocol " + strconv.Quote(req.Protocol) + ": want one of the protocols (auto is not accepted here)"}
	}
	if req.ID != "" && !store.ValidID(req.ID) {
		return store.Session{}, &lineError{code: http.StatusBadRequest, msg: "bad id " + quoteText(clipName(req.ID))}
	}
	if req.Parent != "" && !store.ValidID(req.Parent) {
		return store.Session{}, &lineError{code: http.StatusBadRequest, msg: "bad parent " + quoteText(clipName(req.Parent))}
	}
	req.bound()
	if req.ID != "" {
		if _, err := s.st.Session(ctx, req.ID); err == nil {
			return store.Session{}, &lineError{code: http.StatusConflict, msg: "session " + req.ID + " exists", exists: true}
		}
	}
	harness := req.Harness
	if harness == "" {
		harness = a.Harness
	}
	wr, err := s.st.Create(ctx, store.NewSession{
		ID: req.ID, Protocol: a.Name, Harness: harness, Command: req.Command, Cwd: req.Cwd,
		Parent: req.Parent, Labels: req.Labels, StartedAt: s.opts.Now(),
	})
	if err != nil {
		return store.Session{}, err
	}
	in := &ingest{w: wr, n: agentstream.NewNormalizer(a.New(), agentstream.NormalizerConfig{
		Session: wr.Session(), Harness: harness, ExplicitTurns: a.ExplicitTurns})}
	s.watch(in)
	s.ingestMu.Lock()
	s.ingests[wr.Session()] = in
	s.ingestMu.Unlock()
	return s.st.Session(ctx, wr.Session())
}

// bound clips what a runner says of its session as the format clips what
// an agent reports: names and paths to agentstream.MaxName code points,
// the command's arguments to MaxText, lists to MaxItems entries.
func (req *CreateRequest) bound() {
	req.Harness = clipName(req.Harness)
	req.Cwd = clipName(req.Cwd)
	if len(req.Command) > agentstream.MaxItems {
		req.Command = req.Command[:agentstream.MaxItems]
	}
	for i := range req.Command {
		req.Command[i], _ = agentstream.Clip(req.Command[i], agentstream.MaxText)
	}
	if len(req.Labels) > 0 {
		labels := make(map[string]string, min(len(req.Labels), agentstream.MaxItems))
		for _, k := range slices.Sorted(maps.Keys(req.Labels)) {
			if len(labels) == agentstream.MaxItems {
				break
			}
			labels[clipName(k)] = clipName(req.Labels[k])
		}
		req.Labels = labels
	}
}

func clipName(s string) string {
	s, _ = agentstream.Clip(s, agentstream.MaxName)
	return s
}

// lineError is a LinesRequest that cannot be taken as it is.
type lineError struct {
	code     int
	msg      string
	expected map[string]int64
	ended    bool
	exists   bool
	running  bool // another process writes the session
}

func (e *lineError) Error() string { return e.msg }

func (e *lineError) Is(target error) bool { return target == errEnded && e.ended }

// errEnded matches the lineError of a session that ended.
var errEnded = errors.New("api: session ended")

// alreadyTaken reports whether the store holds every line of lines, and
// where the (ended) session stands.
func (s *server) alreadyTaken(ctx context.Context, id string, lines []LineIn) (LinesResponse, bool) {
	sess, err := s.st.Session(ctx, id)
	if err != nil {
		return LinesResponse{}, false
	}
	last := map[string]int64{}
	for _, l := range lines {
		last[l.Stream] = max(last[l.Stream], l.N)
	}
	for stream, n := range last {
		if _, err := s.st.Line(ctx, id, stream, n); err != nil {
			return LinesResponse{}, false
		}
	}
	kept := map[string]int64{store.Stdout: 0, store.Stderr: 0}
	if err := s.st.Lines(ctx, id, func(l store.Line) error {
		kept[l.Stream] = max(kept[l.Stream], l.N)
		return nil
	}); err != nil {
		return LinesResponse{}, false
	}
	return LinesResponse{LastLine: kept, LastSeq: sess.LastSeq, Status: sess.Status}, true
}

func (s *server) postLines(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b, ok := readBody(w, r, s.opts.MaxBody)
	if !ok {
		return
	}
	var req LinesRequest
	if !decodeBytes(w, b, &req) {
		return
	}
	if err := checkLines(req.Lines); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.ingestLines(w, r, id, &req, false)
}

// checkLines returns an error for a line that cannot be taken: a bad
// stream, number or hash, or both text and data.
func checkLines(lines []LineIn) error {
	for i, l := range lines {
		if l.Stream != store.Stdout && l.Stream != store.Stderr {
			return fmt.Errorf("line %d: bad stream %q", i, l.Stream)
		}
		if l.N < 1 {
			return fmt.Errorf("line %d: bad number %d", i, l.N)
		}
		if l.Text != "" && len(l.Data) > 0 {
			return fmt.Errorf("line %d: both text and data", i)
		}
		if l.SHA256 != "" {
			if b, err := hex.DecodeString(l.SHA256); err != nil || len(b) != 32 {
				return fmt.Errorf("line %d: bad sha256", i)
			}
		}
	}
	return nil
}

// ingestLines takes the lines of a request; again says it is the second
// try, after the ingestion it found had just closed.
func (s *server) ingestLines(w http.ResponseWriter, r *http.Request, id string, req *LinesRequest, again bool) {
	resp, err := s.lines(r.Context(), id, req, again)
	var le *lineError
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, resp)
	case errors.As(err, &le) && le.expected != nil:
		writeJSON(w, le.code, map[string]any{"error": le.msg, "expected": le.expected, "lastSeq": resp.LastSeq})
	case errors.As(err, &le):
		writeError(w, le.code, le.msg)
	default:
		storeError(w, err)
	}
}

// lines takes the lines of a request and returns where the session
// stands; a request it refuses is a *lineError.
func (s *server) lines(ctx context.Context, id string, req *LinesRequest, again bool) (LinesResponse, error) {
	in, err := s.ingestFor(ctx, id)
	if errors.Is(err, errEnded) && req.End != nil {
		// A retried last request, whose answer was lost: if the server
		// has every line of it, it took effect.
		if resp, ok := s.alreadyTaken(ctx, id, req.Lines); ok {
			return resp, nil
		}
	}
	if err != nil {
		return LinesResponse{}, err
	}
	in.mu.Lock()
	if in.gone && !again {
		// It ended meanwhile (its runner's heartbeat timed out, or a
		// request ended it): look again, as the next request would.
		in.mu.Unlock()
		return s.lines(ctx, id, req, true)
	}
	defer in.mu.Unlock()
	if in.gone {
		return LinesResponse{}, &lineError{code: http.StatusConflict, msg: "session " + id + " has ended"}
	}
	s.touch(in)
	lerr := s.take(ctx, in, req.Lines)
	if lerr == nil && req.End != nil {
		lerr = endEarly(in, req.End)
	}
	if lerr == nil && req.End != nil {
		if err := s.finish(ctx, in, req.End); err != nil {
			return LinesResponse{}, err
		}
	} else if err := in.w.Flush(ctx); err != nil {
		return LinesResponse{}, err
	}
	resp := LinesResponse{
		LastLine: map[string]int64{store.Stdout: in.w.LastLine(store.Stdout), store.Stderr: in.w.LastLine(store.Stderr)},
		LastSeq:  in.w.Acked(),
		Status:   store.StatusRunning,
	}
	if in.gone {
		if sess, err := s.st.Session(ctx, id); err == nil {
			resp.Status = sess.Status
		}
	}
	if lerr != nil {
		return resp, lerr
	}
	return resp, nil
}

// take normalizes and keeps the lines that follow the last ones kept,
// ignoring those already kept; a gap stops it with a 409 naming the line
// expected.
func (s *server) take(ctx context.Context, in *ingest, lines []LineIn) *lineError {
	now := s.opts.Now()
	for _, l := range lines {
		last := in.w.LastLine(l.Stream)
		if l.N <= last {
			continue
		}
		if l.N != last+1 {
			return &lineError{code: http.StatusConflict,
				msg:      fmt.Sprintf("%s line %d sent before line %d", l.Stream, l.N, last+1),
				expected: map[string]int64{l.Stream: last + 1}}
		}
		data := l.Data
		if len(data) == 0 && l.Text != "" {
			data = []byte(l.Text)
		}
		sl := store.Line{Stream: l.Stream, N: l.N, Data: data, Size: max(l.Size, int64(len(data))), TS: l.TS}
		if l.SHA256 != "" && sl.Truncated() {
			sl.SHA256, _ = hex.DecodeString(l.SHA256)
		}
		if r := s.opts.Redact; r != nil {
			if sl.Truncated() {
				r.Head(sl.Data)
			} else {
				r.Line(sl.Data)
			}
		}
		ts := l.TS
		if ts.IsZero() {
			ts = now
		}
		if err := in.w.Line(ctx, sl); err != nil {
			return &lineError{code: http.StatusInternalServerError, msg: err.Error()}
		}
		al := store.AgentLine(sl)
		if l.Stream == store.Stdout {
			in.envs = in.n.Line(in.envs[:0], al, ts)
		} else {
			in.envs = in.n.Stderr(in.envs[:0], al, ts)
		}
		if err := in.handle(ctx); err != nil {
			return &lineError{code: http.StatusInternalServerError, msg: err.Error()}
		}
	}
	return nil
}

// endEarly returns the 409 of an end that came before lines it says the
// run printed, naming the first line missing (stdout's first).
func endEarly(in *ingest, end *End) *lineError {
	for _, stream := range []string{store.Stdout, store.Stderr} {
		if have, want := in.w.LastLine(stream), end.Lines[stream]; want > have {
			return &lineError{code: http.StatusConflict,
				msg:      fmt.Sprintf("the end came before %s line %d (the run printed %d)", stream, have+1, want),
				expected: map[string]int64{stream: have + 1}}
		}
	}
	return nil
}

func (in *ingest) handle(ctx context.Context) error {
	for i := range in.envs {
		switch in.envs[i].Type() {
		case agentstream.TypeSessionEnded:
			in.ended = true
		case agentstream.TypeTurnStarted:
			in.ended = false
		}
		if err := in.w.Handle(ctx, in.envs[i]); err != nil {
			return err
		}
	}
	return nil
}

// finish flushes what the stream owes, writes session.ended when the
// harness did not, and closes the session.
func (s *server) finish(ctx context.Context, in *ingest, end *End) error {
	now := s.opts.Now()
	in.envs = in.n.End(in.envs[:0], now)
	if err := in.handle(ctx); err != nil {
		return err
	}
	if !in.ended {
		reason := end.Reason
		if reason == "" {
			reason = agentstream.ReasonExit
		}
		p := &agentstream.SessionEnded{Status: agentstream.StatusFailed, Reason: reason, Error: end.Error}
		switch {
		case reason == agentstream.ReasonAborted:
			p.Status = agentstream.StatusCancelled
		case reason == agentstream.ReasonExit && end.ExitCode != nil && *end.ExitCode == 0:
			p.Status = agentstream.StatusSucceeded
		}
		if p.Error == "" && p.Status != agentstream.StatusSucceeded {
			if end.ExitCode != nil {
				p.Error = "exit status " + strconv.Itoa(*end.ExitCode)
			} else if reason == agentstream.ReasonExit {
				p.Error = "killed"
			}
		}
		in.envs = in.n.Add(in.envs[:0], agentstream.E(p), now)
		if err := in.handle(ctx); err != nil {
			return err
		}
	}
	return s.close(ctx, in)
}

// ingestFor returns the ingestion of a session, rebuilding it from the
// store when this server does not hold it (it restarted, or another one
// took the session before): the stored lines are read again by a fresh
// decoder, so the decoder's state is what it was, and the session goes on
// with the seq after its last stored event.
func (s *server) ingestFor(ctx context.Context, id string) (*ingest, error) {
	s.ingestMu.Lock()
	in := s.ingests[id]
	s.ingestMu.Unlock()
	if in != nil {
		return in, nil
	}
	sess, err := s.st.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sess.Running() && sess.Status != store.StatusInterrupted {
		return nil, &lineError{code: http.StatusConflict, msg: "session " + id + " has ended (" + sess.Status + ")", ended: true}
	}
	a, err := adapter.Lookup(sess.Protocol)
	if err != nil {
		return nil, &lineError{code: http.StatusConflict, msg: "session " + id + " has no protocol this server reads"}
	}
	// Hold the lock while rebuilding so that two requests do not both
	// resume the session.
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	if in := s.ingests[id]; in != nil {
		return in, nil
	}
	// A session still running is another process's, unless that process
	// is gone: Resume reaps it first (see store.Owner.Gone), so that a
	// server taking over from one that died goes on at once.
	wr, err := s.st.Resume(ctx, id)
	if errors.Is(err, store.ErrRunning) {
		return nil, &lineError{code: http.StatusConflict, msg: "session " + id + " is being written by another process", running: true}
	}
	if err != nil {
		return nil, &lineError{code: http.StatusConflict, msg: err.Error()}
	}
	var lines []store.Line
	if err := s.st.Lines(ctx, id, func(l store.Line) error {
		lines = append(lines, l)
		return nil
	}); err != nil {
		wr.Close(ctx)
		return nil, err
	}
	harness := sess.Harness
	cfg := agentstream.NormalizerConfig{Session: id, Harness: harness, ExplicitTurns: a.ExplicitTurns}
	var ended bool
	replay := func(cfg agentstream.NormalizerConfig) *agentstream.Normalizer {
		n := agentstream.NewNormalizer(a.New(), cfg)
		var envs []agentstream.Envelope
		for _, l := range lines {
			if l.Stream == store.Stdout {
				envs = n.Line(envs[:0], store.AgentLine(l), time.Time{})
			} else {
				envs = n.Stderr(envs[:0], store.AgentLine(l), time.Time{})
			}
			for i := range envs {
				switch envs[i].Type() {
				case agentstream.TypeSessionEnded:
					ended = true
				case agentstream.TypeTurnStarted:
					ended = false
				}
			}
		}
		return n
	}
	n := replay(cfg)
	if n.LastSeq() != wr.LastSeq() {
		// The adapter reads the lines differently today: start the replay
		// where it ends on the stored seq, so that seq stays dense (the
		// replayed envelopes are thrown away).
		cfg.LastSeq = wr.LastSeq() - n.LastSeq()
		n = replay(cfg)
	}
	in = &ingest{w: wr, n: n, ended: ended}
	s.watch(in)
	s.ingests[id] = in
	return in, nil
}

// Ingester takes the sessions of remote runners without HTTP, by the path
// POST /api/sessions and POST /api/sessions/{id}/lines take: the same
// checks, redaction, normalization and idempotent writes. A transport
// other than HTTP (package natsbus) feeds it. An Ingester is safe for
// concurrent use; it holds the sessions it ingests until their end, as the
// handler of New does, and the two do not share them: a session one of
// them is writing is refused by the other (409).
type Ingester struct{ s *server }

// NewIngester returns an Ingester writing to st; of opts, Now, Redact and
// HeartbeatTimeout apply.
func NewIngester(st store.Store, opts Options) *Ingester {
	return &Ingester{s: &server{st: st, opts: opts.withDefaults(), ingests: map[string]*ingest{}}}
}

// IngestError is an ingestion the Ingester refused: Status is the HTTP
// status POST would have answered (400 a bad request, 409 a conflict),
// Expected the line number expected next per stream for lines sent out of
// order, Exists whether the session to create exists, Ended whether the
// session has ended.
type IngestError struct {
	Status   int
	Message  string
	Expected map[string]int64
	Exists   bool
	Ended    bool
}

func (e *IngestError) Error() string { return "api: ingest: " + e.Message }

func ingestError(err error) error {
	var le *lineError
	if errors.As(err, &le) {
		return &IngestError{Status: le.code, Message: le.msg, Expected: le.expected, Exists: le.exists, Ended: le.ended}
	}
	return err
}

// Create creates the session a runner is about to send and starts its
// ingestion. An *IngestError with Exists says the session exists.
func (g *Ingester) Create(ctx context.Context, req CreateRequest) (store.Session, error) {
	sess, err := g.s.create(ctx, req)
	return sess, ingestError(err)
}

// Lines takes lines of a session, and its end when end is not nil, and
// returns where the session stands once they were committed. Lines it
// already has are ignored, so lines sent again (a redelivery) do no harm.
// A refusal is an *IngestError; any other error is the store's.
func (g *Ingester) Lines(ctx context.Context, id string, lines []LineIn, end *End) (LinesResponse, error) {
	if err := checkLines(lines); err != nil {
		return LinesResponse{}, &IngestError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	resp, err := g.s.lines(ctx, id, &LinesRequest{Lines: lines, End: end}, false)
	return resp, ingestError(err)
}

// Release closes the ingestions this Ingester holds of the sessions match
// accepts, without ending them: each is flushed and left interrupted in
// the store, for whoever is given its lines next (another process sharing
// the store) to resume it, as after a restart. Lines of a released
// session that come to this Ingester later resume it too. It returns the
// first error of the store; the sessions it could not close are left to
// the store's reaping.
func (g *Ingester) Release(ctx context.Context, match func(id string) bool) error {
	s := g.s
	s.ingestMu.Lock()
	var ins []*ingest
	for id, in := range s.ingests {
		if match(id) {
			ins = append(ins, in)
		}
	}
	s.ingestMu.Unlock()
	var first error
	for _, in := range ins {
		in.mu.Lock()
		if !in.gone {
			if err := s.close(ctx, in); err != nil && first == nil {
				first = err
			}
		}
		in.mu.Unlock()
	}
	return first
}

// Resume resumes at once the sessions match accepts that were left
// without an end: interrupted in the store because their writer was
// closed without ending them (Release, here or in another process sharing
// the store) or reaped (its process is gone; the store is asked to reap
// first when it can), and whose latest session.ended or turn.started is
// not a session.ended (a session that recorded its own end, its runner's
// or a heartbeat timeout, is left as it is). keep, when not nil, is asked
// last of each and may refuse it. Each session resumed is running again,
// held by this Ingester as if its next line had come. ctx bounds the
// search; a session once found is resumed whole (within 30 s).
//
// It returns how many it resumed, how many of those sessions (running or
// not) another process writes, which a later call may resume once the
// store counts their writer gone (store.Owner.Gone), and the first error
// of the store.
func (g *Ingester) Resume(ctx context.Context, match func(id string) bool, keep func(ctx context.Context, id string) bool) (resumed, waiting int, err error) {
	s := g.s
	if r, ok := s.st.(interface {
		Reap(ctx context.Context) (int, error)
	}); ok {
		if _, err := r.Reap(ctx); err != nil {
			return 0, 0, err
		}
	}
	// The running sessions too: those whose writer the store does not
	// count gone yet.
	var ids []string
	for _, status := range []string{store.StatusInterrupted, store.StatusRunning} {
		q := store.SessionQuery{Status: status, Limit: 500}
		for {
			page, err := s.st.Sessions(ctx, q)
			if err != nil {
				return 0, 0, err
			}
			for _, sess := range page.Sessions {
				if match(sess.ID) {
					ids = append(ids, sess.ID)
				}
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	var first error
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		s.ingestMu.Lock()
		held := s.ingests[id] != nil
		s.ingestMu.Unlock()
		if held {
			continue
		}
		last, err := s.st.Events(ctx, id, store.EventQuery{Tail: true, Limit: 1,
			Types: []string{agentstream.TypeSessionEnded, agentstream.TypeTurnStarted}})
		if err != nil {
			if first == nil && !errors.Is(err, store.ErrNotFound) {
				first = err
			}
			continue
		}
		if len(last) == 1 && last[0].Type == agentstream.TypeSessionEnded {
			continue
		}
		if keep != nil && !keep(ctx, id) {
			continue
		}
		// Not cut short once begun (a resume stopped half-way would leave
		// the session to the store's reaping), but bounded.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		_, err = s.ingestFor(rctx, id)
		cancel()
		var le *lineError
		switch {
		case err == nil:
			resumed++
		case errors.As(err, &le) && le.running:
			waiting++
		case errors.As(err, &le):
			// Ended meanwhile.
		case first == nil:
			first = err
		}
	}
	return resumed, waiting, first
}
