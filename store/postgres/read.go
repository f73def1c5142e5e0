package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

const sessionCols = `sid, id, harness, protocol, version, model, title, cwd, command, status, reason, error,
	started_at, ended_at, last_seq, usage, parent, labels`

func scanSession(r pgx.Row) (int64, store.Session, error) {
	var (
		sid                                                    int64
		s                                                      store.Session
		harness, protocol, version, model, title, cwd, command pgtype.Text
		reason, errMsg, usage, parent, labels                  pgtype.Text
		started                                                time.Time
		ended                                                  pgtype.Timestamptz
	)
	err := r.Scan(&sid, &s.ID, &harness, &protocol, &version, &model, &title, &cwd, &command, &s.Status,
		&reason, &errMsg, &started, &ended, &s.LastSeq, &usage, &parent, &labels)
	if err != nil {
		return 0, s, err
	}
	s.Harness, s.Protocol, s.Version, s.Model = harness.String, protocol.String, version.String, model.String
	s.Title, s.Cwd, s.Reason, s.Error, s.Parent = title.String, cwd.String, reason.String, errMsg.String, parent.String
	s.StartedAt = started.UTC()
	if ended.Valid {
		s.EndedAt = ended.Time.UTC()
	}
	if command.Valid {
		_ = json.Unmarshal([]byte(command.String), &s.Command)
	}
	if labels.Valid {
		_ = json.Unmarshal([]byte(labels.String), &s.Labels)
	}
	if usage.Valid {
		_ = json.Unmarshal([]byte(usage.String), &s.Usage)
	} else {
		s.Usage = (&agentstream.UsageFolder{}).Recap()
	}
	if s.Usage.Missing == nil {
		s.Usage.Missing = []string{}
	}
	return sid, s, nil
}

// Session returns one session, or store.ErrNotFound.
func (s *Store) Session(ctx context.Context, id string) (store.Session, error) {
	_, sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, store.ErrNotFound
	}
	if err != nil {
		return sess, fmt.Errorf("postgres: session %s: %w", id, err)
	}
	return sess, nil
}

// sid returns the internal number of a session, or store.ErrNotFound.
func (s *Store) sid(ctx context.Context, q querier, id string) (int64, error) {
	var sid int64
	err := q.QueryRow(ctx, `SELECT sid FROM sessions WHERE id = $1`, id).Scan(&sid)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, store.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: session %s: %w", id, err)
	}
	return sid, nil
}

// DefaultSessionLimit is the page size of Sessions when the query has none.
const DefaultSessionLimit = 50

// Sessions returns a page of sessions, newest first (by start time, then by
// creation order).
func (s *Store) Sessions(ctx context.Context, q store.SessionQuery) (store.SessionPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultSessionLimit
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(q.Status))
	}
	if q.Harness != "" {
		where = append(where, "harness = "+arg(q.Harness))
	}
	if q.Q != "" {
		// ASCII letters compared without case, as the contract says:
		// translate rather than ILIKE, which folds by the locale.
		r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
		where = append(where, `translate(title, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') LIKE `+
			arg("%"+r.Replace(asciiLower(q.Q))+"%")+` ESCAPE '\'`)
	}
	if !q.Since.IsZero() {
		where = append(where, "started_at >= "+arg(q.Since))
	}
	if q.IDPrefix != "" {
		// Byte for byte, whatever the collation.
		where = append(where, "starts_with(id, "+arg(q.IDPrefix)+")")
	}
	if q.Cursor != "" {
		msec, sid, ok := parseCursor(q.Cursor)
		if !ok {
			return store.SessionPage{}, store.ErrBadCursor
		}
		t := arg(time.UnixMilli(msec).UTC())
		where = append(where, "(started_at < "+t+" OR (started_at = "+t+" AND sid < "+arg(sid)+"))")
	}
	query := `SELECT ` + sessionCols + ` FROM sessions`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY started_at DESC, sid DESC LIMIT " + arg(limit+1)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("postgres: sessions: %w", err)
	}
	defer rows.Close()
	page := store.SessionPage{Sessions: []store.Session{}}
	var lastSid int64
	for rows.Next() {
		sid, sess, err := scanSession(rows)
		if err != nil {
			return store.SessionPage{}, fmt.Errorf("postgres: sessions: %w", err)
		}
		if len(page.Sessions) == limit {
			last := page.Sessions[limit-1]
			page.Next = strconv.FormatInt(last.StartedAt.UnixMilli(), 10) + "." + strconv.FormatInt(lastSid, 10)
			break
		}
		page.Sessions = append(page.Sessions, sess)
		lastSid = sid
	}
	if err := rows.Err(); err != nil {
		return store.SessionPage{}, fmt.Errorf("postgres: sessions: %w", err)
	}
	return page, nil
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func parseCursor(c string) (ms, sid int64, ok bool) {
	a, b, found := strings.Cut(c, ".")
	if !found {
		return 0, 0, false
	}
	ms, err1 := strconv.ParseInt(a, 10, 64)
	sid, err2 := strconv.ParseInt(b, 10, 64)
	return ms, sid, err1 == nil && err2 == nil && sid > 0
}

// DefaultEventLimit is the window size of Events when the query has none.
const DefaultEventLimit = 500

// querier is a pool, a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Events returns a window of a session's stored events in ascending seq
// order, or store.ErrNotFound for an unknown session.
func (s *Store) Events(ctx context.Context, id string, q store.EventQuery) ([]store.Event, error) {
	sid, err := s.sid(ctx, s.pool, id)
	if err != nil {
		return nil, err
	}
	return events(ctx, s.pool, sid, id, q)
}

func events(ctx context.Context, db querier, sid int64, id string, q store.EventQuery) ([]store.Event, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	query := `SELECT seq, ts, type, body FROM events WHERE sid = $1`
	args := []any{sid}
	desc := false
	switch {
	case q.Tail:
		desc = true
	case q.Before > 0:
		desc = true
		args = append(args, q.Before)
		query += " AND seq < $2"
	default:
		args = append(args, q.After)
		query += " AND seq > $2"
	}
	if len(q.Types) > 0 {
		args = append(args, q.Types)
		query += " AND type = ANY($" + strconv.Itoa(len(args)) + ")"
	}
	if desc {
		query += " ORDER BY seq DESC"
	} else {
		query += " ORDER BY seq"
	}
	args = append(args, limit)
	query += " LIMIT $" + strconv.Itoa(len(args))
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: events of %s: %w", id, err)
	}
	defer rows.Close()
	out := make([]store.Event, 0, min(limit, 1024))
	var (
		seq  int64
		ts   pgtype.Timestamptz
		typ  string
		body []byte
	)
	for rows.Next() {
		if err := rows.Scan(&seq, &ts, &typ, &body); err != nil {
			return nil, fmt.Errorf("postgres: events of %s: %w", id, err)
		}
		var t time.Time
		if ts.Valid {
			t = ts.Time
		}
		data := store.AppendEnvelope(make([]byte, 0, len(body)+len(id)+64), id, seq, t, body)
		out = append(out, store.Event{Session: id, Seq: seq, Type: typ, Data: data})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: events of %s: %w", id, err)
	}
	if desc {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// Line returns one native line, or store.ErrNotFound.
func (s *Store) Line(ctx context.Context, id, stream string, n int64) (store.Line, error) {
	sid, err := s.sid(ctx, s.pool, id)
	if err != nil {
		return store.Line{}, err
	}
	return line(ctx, s.pool, sid, id, stream, n)
}

func line(ctx context.Context, db querier, sid int64, id, stream string, n int64) (store.Line, error) {
	l := store.Line{Stream: stream, N: n}
	var ts pgtype.Timestamptz
	err := db.QueryRow(ctx, `SELECT size, sha256, ts, data FROM lines WHERE sid = $1 AND stream = $2 AND n = $3`,
		sid, stream, n).Scan(&l.Size, &l.SHA256, &ts, &l.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, store.ErrNotFound
	}
	if err != nil {
		return l, fmt.Errorf("postgres: line %s:%d of %s: %w", stream, n, id, err)
	}
	if ts.Valid {
		l.TS = ts.Time.UTC()
	}
	if l.Data == nil {
		l.Data = []byte{}
	}
	return l, nil
}

// Lines calls fn with every native line of a session in the order they were
// kept (which interleaves stdout and stderr as they were read), stopping at
// the first error fn returns.
func (s *Store) Lines(ctx context.Context, id string, fn func(store.Line) error) error {
	sid, err := s.sid(ctx, s.pool, id)
	if err != nil {
		return err
	}
	var after int64
	for {
		rows, err := s.pool.Query(ctx, `SELECT id, stream, n, size, sha256, ts, data FROM lines
			WHERE sid = $1 AND id > $2 ORDER BY id LIMIT 1000`, sid, after)
		if err != nil {
			return fmt.Errorf("postgres: lines of %s: %w", id, err)
		}
		var page []store.Line
		for rows.Next() {
			var l store.Line
			var ts pgtype.Timestamptz
			if err := rows.Scan(&after, &l.Stream, &l.N, &l.Size, &l.SHA256, &ts, &l.Data); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: lines of %s: %w", id, err)
			}
			if ts.Valid {
				l.TS = ts.Time.UTC()
			}
			page = append(page, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: lines of %s: %w", id, err)
		}
		for _, l := range page {
			if err := fn(l); err != nil {
				return err
			}
		}
		if len(page) < 1000 {
			return nil
		}
	}
}
