package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentstream/agentstream/store"
)

// searchText returns an event's search text as a text value, NULL for
// none (see text for what a PostgreSQL text cannot hold).
func searchText(s string) pgtype.Text {
	v, ok := text(s).(string)
	return pgtype.Text{String: v, Valid: ok}
}

// fillSearchText is migration 3's step: it sets the search text of the
// events stored before.
func fillSearchText(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT sid, seq, body FROM events`)
	if err != nil {
		return err
	}
	type row struct {
		sid, seq int64
		text     pgtype.Text
	}
	var todo []row
	for rows.Next() {
		var r row
		var body []byte
		if err := rows.Scan(&r.sid, &r.seq, &body); err != nil {
			rows.Close()
			return err
		}
		if r.text = searchText(store.BodySearchText(body)); r.text.Valid {
			todo = append(todo, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for len(todo) > 0 {
		n := min(len(todo), 1000)
		sids, seqs, texts := make([]int64, n), make([]int64, n), make([]pgtype.Text, n)
		for i, r := range todo[:n] {
			sids[i], seqs[i], texts[i] = r.sid, r.seq, r.text
		}
		if _, err := tx.Exec(ctx, `UPDATE events e SET text = t.text
			FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS t (sid, seq, text)
			WHERE e.sid = t.sid AND e.seq = t.seq`, sids, seqs, texts); err != nil {
			return err
		}
		todo = todo[n:]
	}
	return nil
}

// termPattern returns the regular expression of a term: its words (letters
// and digits only, so nothing needs escaping) as whole words one after
// the other, the last one a prefix when the term is.
func termPattern(t store.SearchTerm) string {
	const sep = `[^[:alnum:]]`
	p := `(^|` + sep + `)` + strings.Join(t.Words, sep+`+`)
	if !t.Prefix {
		p += `(` + sep + `|$)`
	}
	return p
}

// Search returns the stored events whose store.SearchText matches q,
// latest first (see store.SearchQuery), with a snippet of each. It returns an error wrapping store.ErrBadQuery for a query that
// cannot be read. Each term is a case-insensitive regular expression over
// the events' text column, read without an index.
func (s *Store) Search(ctx context.Context, q store.SearchQuery) ([]store.SearchHit, error) {
	terms, limit, err := q.Prepare()
	if err != nil {
		return nil, err
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	for _, t := range terms {
		where = append(where, "e.text ~* "+arg(termPattern(t)))
	}
	for _, f := range []struct{ col, v string }{{"s.harness", q.Harness}, {"s.model", q.Model}, {"s.status", q.Status}} {
		if f.v != "" {
			where = append(where, f.col+" = "+arg(f.v))
		}
	}
	if p := q.ProjectDir(); p != "" {
		under := p + "/"
		if p == "/" {
			under = p
		}
		where = append(where, "(s.cwd = "+arg(p)+" OR starts_with(s.cwd, "+arg(under)+"))")
	}
	if !q.Since.IsZero() {
		where = append(where, "coalesce(e.ts, s.started_at) >= "+arg(ms(q.Since)))
	}
	if !q.Until.IsZero() {
		where = append(where, "coalesce(e.ts, s.started_at) < "+arg(ms(q.Until)))
	}
	rows, err := s.pool.Query(ctx, `SELECT s.id, e.seq, e.ts, e.type, e.text, s.title, s.harness
		FROM events e JOIN sessions s ON s.sid = e.sid
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY e.sid DESC, e.seq DESC LIMIT `+arg(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: search: %w", err)
	}
	defer rows.Close()
	hits := []store.SearchHit{}
	for rows.Next() {
		var (
			h              store.SearchHit
			ts             pgtype.Timestamptz
			text           string
			title, harness pgtype.Text
		)
		if err := rows.Scan(&h.Session, &h.Seq, &ts, &h.Type, &text, &title, &harness); err != nil {
			return nil, fmt.Errorf("postgres: search: %w", err)
		}
		if ts.Valid {
			h.TS = ts.Time.UTC()
		}
		h.Title, h.Harness = title.String, harness.String
		h.Snippet, h.Highlights = store.Snippet(text, terms)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: search: %w", err)
	}
	return hits, nil
}
