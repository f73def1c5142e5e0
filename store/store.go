package store

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstream/agentstream"
)

// Session statuses. A session is StatusRunning exactly while a writer holds
// it open; closing the writer sets the status of the latest session.ended
// event, or StatusInterrupted when the stream never ended. A writer that
// disappears without closing (its process was killed) leaves a session that
// the store marks StatusInterrupted.
const (
	StatusRunning     = "running"
	StatusSucceeded   = agentstream.StatusSucceeded
	StatusFailed      = agentstream.StatusFailed
	StatusCancelled   = agentstream.StatusCancelled
	StatusInterrupted = "interrupted"
)

// ValidStatus reports whether s is one of the session statuses.
func ValidStatus(s string) bool {
	switch s {
	case StatusRunning, StatusSucceeded, StatusFailed, StatusCancelled, StatusInterrupted:
		return true
	}
	return false
}

// Native line streams.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// ErrNotFound is returned for a session (or a line) the store does not hold.
var ErrNotFound = errors.New("store: not found")

// ErrClosed is returned by a Writer used after Close, and by Resume for a
// session that ended normally.
var ErrClosed = errors.New("store: session writer closed")

// ErrSeq is returned by a Writer given a stored event whose seq would
// leave a gap after the last one: seq is dense and gap-free within a
// session.
var ErrSeq = errors.New("store: seq out of order")

// ErrConflict is returned by a Writer given a stored event whose seq the
// session already holds with another body (see AppendBody: everything in
// the envelope but its session, seq and time), or a native line whose
// number its stream already holds with other bytes (see SameLine). What
// the store holds stays; the writer stays usable when the conflict is
// found as the event or line is handed over, and the error is sticky when
// it is found at commit (another writer wrote the same session meanwhile).
var ErrConflict = errors.New("store: conflicting content for a stored key")

// ErrRunning is returned by Resume for a session whose writer is alive.
var ErrRunning = errors.New("store: session is running")

// Session is the record of one session: what it ran, how it ended, and the
// usage recap of its events. Optional strings are empty when unknown (null
// in JSON); EndedAt is zero while the session runs.
type Session struct {
	ID        string
	Harness   string
	Protocol  string
	Version   string
	Model     string
	Title     string
	Cwd       string
	Command   []string
	Status    string
	Reason    string
	Error     string
	StartedAt time.Time
	EndedAt   time.Time
	// LastSeq is the seq of the last stored event (0 for none yet).
	LastSeq int64
	Usage   agentstream.Recap
	// Parent is the id of the session that started this one, if any.
	Parent string
	// Labels are free key/value pairs the caller attached.
	Labels map[string]string
}

// Running reports whether a writer still holds the session open.
func (s *Session) Running() bool { return s.Status == StatusRunning }

type sessionJSON struct {
	ID         string            `json:"id"`
	Harness    *string           `json:"harness"`
	Protocol   *string           `json:"protocol"`
	Version    *string           `json:"version"`
	Model      *string           `json:"model"`
	Title      *string           `json:"title"`
	Cwd        *string           `json:"cwd"`
	Command    []string          `json:"command"`
	Status     string            `json:"status"`
	Reason     *string           `json:"reason"`
	Error      *string           `json:"error"`
	StartedAt  string            `json:"startedAt"`
	EndedAt    *string           `json:"endedAt"`
	DurationMs *int64            `json:"durationMs"`
	LastSeq    int64             `json:"lastSeq"`
	Usage      agentstream.Recap `json:"usage"`
	Parent     *string           `json:"parent"`
	Labels     map[string]string `json:"labels"`
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// MarshalJSON encodes the session as the API serves it: every key present,
// null where unknown, times in RFC 3339 UTC with milliseconds, and
// durationMs the wall-clock time from start to end once ended.
func (s Session) MarshalJSON() ([]byte, error) {
	j := sessionJSON{
		ID: s.ID, Harness: optStr(s.Harness), Protocol: optStr(s.Protocol),
		Version: optStr(s.Version), Model: optStr(s.Model), Title: optStr(s.Title),
		Cwd: optStr(s.Cwd), Command: s.Command, Status: s.Status,
		Reason: optStr(s.Reason), Error: optStr(s.Error),
		StartedAt: s.StartedAt.UTC().Format(agentstream.TimeFormat),
		LastSeq:   s.LastSeq, Usage: s.Usage, Parent: optStr(s.Parent), Labels: s.Labels,
	}
	if j.Usage.Missing == nil {
		j.Usage.Missing = []string{}
	}
	if !s.EndedAt.IsZero() {
		e := s.EndedAt.UTC().Format(agentstream.TimeFormat)
		j.EndedAt = &e
		d := s.EndedAt.Sub(s.StartedAt).Milliseconds()
		j.DurationMs = &d
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (s *Session) UnmarshalJSON(data []byte) error {
	var j sessionJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*s = Session{
		ID: j.ID, Harness: derefStr(j.Harness), Protocol: derefStr(j.Protocol),
		Version: derefStr(j.Version), Model: derefStr(j.Model), Title: derefStr(j.Title),
		Cwd: derefStr(j.Cwd), Command: j.Command, Status: j.Status,
		Reason: derefStr(j.Reason), Error: derefStr(j.Error),
		LastSeq: j.LastSeq, Usage: j.Usage, Parent: derefStr(j.Parent), Labels: j.Labels,
	}
	var err error
	if j.StartedAt != "" {
		if s.StartedAt, err = time.Parse(time.RFC3339Nano, j.StartedAt); err != nil {
			return err
		}
	}
	if j.EndedAt != nil {
		if s.EndedAt, err = time.Parse(time.RFC3339Nano, *j.EndedAt); err != nil {
			return err
		}
	}
	return nil
}

// NewSession describes a session to create.
type NewSession struct {
	// ID is the session id; empty means a new one from NewID.
	ID       string
	Protocol string
	Harness  string
	Cwd      string
	Command  []string
	Parent   string
	Labels   map[string]string
	// StartedAt is when the session started; zero means now.
	StartedAt time.Time
}

// SessionQuery selects sessions, newest first.
type SessionQuery struct {
	// Status and Harness, when set, must match exactly.
	Status  string
	Harness string
	// Q, when set, must be a substring of the title (ASCII letters compared
	// without case).
	Q string
	// Since, when set, keeps sessions started at or after it.
	Since time.Time
	// IDPrefix, when set, keeps the sessions whose id starts with it,
	// compared byte for byte (see ResolveID).
	IDPrefix string
	// Limit is the page size; zero means 50.
	Limit int
	// Cursor is the Next of the previous page, or empty for the first page.
	Cursor string
}

// SessionPage is one page of sessions and the cursor of the next page ("" at
// the end).
type SessionPage struct {
	Sessions []Session
	Next     string
}

// ErrBadCursor is returned for a SessionQuery.Cursor the store did not make.
var ErrBadCursor = errors.New("store: bad cursor")

// EventQuery selects a window of a session's stored events, always returned
// in ascending seq order.
type EventQuery struct {
	// After selects the first Limit events with seq > After (the default,
	// with After 0: from the start).
	After int64
	// Before, when positive, selects instead the last Limit events with
	// seq < Before.
	Before int64
	// Tail selects instead the last Limit events of the session.
	Tail bool
	// Limit is the number of events; zero means 500.
	Limit int
	// Types, when not empty, keeps only events of these types (the window
	// then counts only them).
	Types []string
}

// Event is one event as the store and the live hub hand it out: its envelope
// already encoded as JSON, which is what every reader sends on.
type Event struct {
	// Session is the session id.
	Session string
	// Seq is the event's seq, or 0 for a live delta, which is not stored.
	Seq int64
	// Prev, for a live delta, is the seq of the last stored event published
	// before it; a reader that has already sent a later stored event skips
	// the delta as stale.
	Prev int64
	// Type is the event type.
	Type string
	// Data is the envelope JSON (no trailing newline). It must not be
	// modified.
	Data []byte
}

// Envelope decodes the event's envelope.
func (e *Event) Envelope() (agentstream.Envelope, error) {
	return agentstream.ParseEnvelope(e.Data)
}

// Line is one native line of a session's output, as the harness wrote it.
type Line struct {
	// Stream is Stdout or Stderr.
	Stream string
	// N is the 1-based line number within its stream.
	N int64
	// Data is the line without its terminator, or only its first bytes
	// when the line was longer than the soft limit (Size > len(Data)).
	Data []byte
	// Size is the size of the whole line in bytes.
	Size int64
	// SHA256 is the SHA-256 of the whole line when only its head is kept
	// and the writer knew it; nil otherwise (a whole line is its own proof).
	SHA256 []byte
	// TS is when the line was read, if known.
	TS time.Time
}

// Truncated reports whether only the head of the line is kept.
func (l *Line) Truncated() bool { return l.Size > int64(len(l.Data)) }

// A Publisher receives what is committed to a store, in commit order, for
// live subscribers. Its methods must not block: they are called by writers,
// which must never wait for a reader.
type Publisher interface {
	// Publish hands over one event: a stored event once it is committed, or
	// a live delta in its place among them.
	Publish(Event)
	// End says that the session's writer closed: no event will follow.
	End(session string)
}

// Tee returns a Publisher that hands everything to a, then to b.
func Tee(a, b Publisher) Publisher { return tee{a, b} }

type tee struct{ a, b Publisher }

func (t tee) Publish(ev Event) {
	t.a.Publish(ev)
	t.b.Publish(ev)
}

func (t tee) End(session string) {
	t.a.End(session)
	t.b.End(session)
}

// A Writer records one session as it runs. Handle takes the session's
// envelopes in order (the store keeps the stored ones, whose seq must
// follow the last one, and publishes live deltas without keeping them);
// Line keeps a native line.
//
// Writes are idempotent, keyed on (session, seq) for events and (session,
// stream, line number) for native lines, so that a writer resumed after
// any crash may be handed again what was already stored (a replay): an
// event with a seq at or below LastSeq is a no-op when the session holds
// that seq with the same body (the stored time stays), and ErrConflict
// otherwise; it is neither stored twice nor published again. A resumed
// writer drops the live deltas it is handed before its first new stored
// event, since they may be a replay's. A seq beyond
// LastSeq()+1 is ErrSeq. Likewise a line at or below the stream's
// LastLine is a no-op when the store holds it with the same bytes or does
// not hold it, and ErrConflict when it holds other bytes. Both buffer: the writer commits in batches, when
// a batch is full or shortly after its first entry. An event is
// acknowledged once the transaction that holds it has committed: Acked
// returns the highest such seq, and Flush returns once everything handed
// over so far is acknowledged. Acknowledged events survive a crash of the
// writing process.
//
// Handle and Line are called from one goroutine at a time; Acked is safe
// for concurrent use. An error is sticky: once a commit failed, every later
// call returns it.
type Writer interface {
	agentstream.Handler
	// Session is the session id.
	Session() string
	// Line keeps one native line. A line at or below the stream's last
	// line number is never kept twice (see the replay rule above).
	Line(ctx context.Context, l Line) error
	// LastLine returns the number of the last line kept (or handed over)
	// for a stream.
	LastLine(stream string) int64
	// LastSeq returns the seq of the last stored event handed over.
	LastSeq() int64
	// Acked returns the seq of the last committed event.
	Acked() int64
	// Flush commits what is buffered.
	Flush(ctx context.Context) error
	// Close commits what is buffered, sets the final status and releases
	// the session. Using the writer after Close returns ErrClosed.
	Close(ctx context.Context) error
}

// Store is what the HTTP API needs of a store: read sessions, their events
// and native lines, and record sessions a remote runner sends.
// Implementations are safe for concurrent use.
type Store interface {
	// Sessions returns a page of sessions, newest first.
	Sessions(ctx context.Context, q SessionQuery) (SessionPage, error)
	// Session returns one session, or ErrNotFound.
	Session(ctx context.Context, id string) (Session, error)
	// Events returns a window of a session's stored events in ascending
	// seq order, or ErrNotFound for an unknown session.
	Events(ctx context.Context, id string, q EventQuery) ([]Event, error)
	// Line returns one native line, or ErrNotFound.
	Line(ctx context.Context, id, stream string, n int64) (Line, error)
	// Lines calls fn with every native line of a session in the order they
	// were kept.
	Lines(ctx context.Context, id string, fn func(Line) error) error
	// Create creates a session and returns its writer.
	Create(ctx context.Context, s NewSession) (Writer, error)
	// Resume returns a writer continuing a session that is not running,
	// such as one interrupted by a crash, with LastSeq and LastLine where
	// the store stands; it returns ErrClosed for one that ended normally,
	// ErrRunning for one whose writer is alive and ErrNotFound for an
	// unknown one.
	Resume(ctx context.Context, id string) (Writer, error)
}

// ErrAmbiguous is returned, wrapped, by ResolveID for a prefix that more
// than one session id starts with.
var ErrAmbiguous = errors.New("store: ambiguous session id prefix")

// ResolveID returns the id of the session that id names, as git takes a
// commit's: id itself when a session has it, else that of the one session
// whose id starts with it, else (for a prefix without the "s_" that ids
// NewID makes start with) starts with "s_" and it. It returns ErrNotFound
// when no session matches, and an error wrapping ErrAmbiguous, naming
// some of the ids, when several do.
func ResolveID(ctx context.Context, st Store, id string) (string, error) {
	if _, err := st.Session(ctx, id); err == nil {
		return id, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if id == "" {
		return "", ErrNotFound
	}
	prefixes := []string{id}
	if !strings.HasPrefix(id, "s_") {
		prefixes = append(prefixes, "s_"+id)
	}
	const shown = 5
	for _, p := range prefixes {
		page, err := st.Sessions(ctx, SessionQuery{IDPrefix: p, Limit: shown})
		if err != nil {
			return "", err
		}
		switch len(page.Sessions) {
		case 0:
			continue
		case 1:
			return page.Sessions[0].ID, nil
		}
		var ids []string
		for _, s := range page.Sessions {
			ids = append(ids, s.ID)
		}
		more := ""
		if page.Next != "" {
			more = " and more"
		}
		return "", fmt.Errorf("%w: %s starts %s%s", ErrAmbiguous, id, strings.Join(ids, ", "), more)
	}
	return "", ErrNotFound
}

// NewID returns a new session id: "s_" and a ULID (26 characters of
// Crockford base32, the first ten of them t in milliseconds), so ids sort by
// creation time.
func NewID(t time.Time) string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:])
	// 128 bits as 26 base32 digits, the first digit holding 3 bits.
	var out [28]byte
	out[0], out[1] = 's', '_'
	hi := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	lo := uint64(b[8])<<56 | uint64(b[9])<<48 | uint64(b[10])<<40 | uint64(b[11])<<32 |
		uint64(b[12])<<24 | uint64(b[13])<<16 | uint64(b[14])<<8 | uint64(b[15])
	for i := 27; i >= 2; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// ValidID reports whether id can name a session: 1 to 128 characters of
// letters, digits, '-', '_', '.' and ':'.
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
