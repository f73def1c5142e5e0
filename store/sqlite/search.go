package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentstream/agentstream/store"
)

// indexStoredEvents is migration 4's step: it adds the events stored
// before to the full-text index.
func indexStoredEvents(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT key, body FROM events ORDER BY key`)
	if err != nil {
		return err
	}
	defer rows.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO events_fts (rowid, text) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	for rows.Next() {
		var key int64
		var body []byte
		if err := rows.Scan(&key, &body); err != nil {
			return err
		}
		if text := store.BodySearchText(body); text != "" {
			if _, err := ins.ExecContext(ctx, key, text); err != nil {
				return err
			}
		}
	}
	return rows.Err()
}

// ftsQuery returns the FTS5 query of parsed terms: each term a quoted
// phrase of its words (letters and digits only, so nothing needs
// escaping), a prefix marked with '*'; the terms are all required.
func ftsQuery(terms []store.SearchTerm) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.Join(t.Words, " "))
		b.WriteByte('"')
		if t.Prefix {
			b.WriteByte('*')
		}
	}
	return b.String()
}

// Search returns the stored events whose store.SearchText matches q,
// latest first (see store.SearchQuery), with a snippet of each. It returns
// an error wrapping store.ErrBadQuery for a query that cannot be read. The
// full-text index is SQLite's FTS5, keyed by event key; it yields its
// matches in that order, so that a search stops at its Limit however many
// events match. The index is filled by the Store's indexer shortly after
// the events are committed (see Options.IndexDelay); a search first
// indexes what it lacks (see IndexPending), so that it finds every event
// committed before it began, by any process.
func (s *Store) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error) {
	terms, limit, err := q.Prepare()
	if err != nil {
		return nil, err
	}
	if behind, err := s.behind(ctx); err != nil {
		return nil, err
	} else if behind {
		if err := s.IndexPending(ctx); err != nil {
			return nil, fmt.Errorf("sqlite: search: %w", err)
		}
	}
	where := []string{"f.events_fts MATCH ?"}
	args := []any{ftsQuery(terms)}
	for _, f := range []struct{ col, v string }{{"s.harness", q.Harness}, {"s.model", q.Model}, {"s.status", q.Status}} {
		if f.v != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.v)
		}
	}
	if p := q.ProjectDir(); p != "" {
		under := p + "/"
		if p == "/" {
			under = p
		}
		where = append(where, "(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)")
		args = append(args, p, len(under), under)
	}
	if !q.Since.IsZero() {
		where = append(where, "coalesce(e.ts, s.started_at) >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where = append(where, "coalesce(e.ts, s.started_at) < ?")
		args = append(args, q.Until.UnixMilli())
	}
	args = append(args, limit)
	rows, err := s.read.QueryContext(ctx, `SELECT e.key, e.ts, e.type, e.body, s.id, s.title, s.harness
		FROM events_fts f JOIN events e ON e.key = f.rowid JOIN sessions s ON s.sid = f.rowid >> 40
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY f.rowid DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: search: %w", err)
	}
	defer rows.Close()
	hits := []store.SearchHit{}
	for rows.Next() {
		var (
			key            int64
			ts             sql.NullInt64
			typ, id        string
			body           []byte
			title, harness sql.NullString
		)
		err := rows.Scan(&key, &ts, &typ, &body, &id, &title, &harness)
		if err == nil {
			body, err = decodeBody(body)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: search: %w", err)
		}
		snip, hl := store.Snippet(store.BodySearchText(body), terms)
		hits = append(hits, store.SearchHit{Session: id, Seq: key & maxSeq, Type: typ, TS: fromMs(ts),
			Title: title.String, Harness: harness.String, Snippet: snip, Highlights: hl})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: search: %w", err)
	}
	return hits, nil
}
