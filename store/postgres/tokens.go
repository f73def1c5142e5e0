package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentstream/agentstream/store"
)

var _ store.Tokens = (*Store)(nil)

const tokenColumns = `id, kind, name, scopes, session, hash, created_at, expires_at, last_used_at, revoked_at`

// CreateToken stores a credential of the HTTP API (see store.Tokens).
func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO tokens (`+tokenColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		t.ID, t.Kind, text(t.Name), strings.Join(t.Scopes, ","), text(t.Session), t.Hash,
		ms(t.CreatedAt), ms(t.ExpiresAt), ms(t.LastUsed), ms(t.RevokedAt))
	if err != nil {
		return fmt.Errorf("postgres: token %s: %w", t.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: a token has the id %s, the same secret, or the name %q", store.ErrConflict, t.ID, t.Name)
	}
	return nil
}

// TokenByHash returns the credential whose secret hashes to hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Token{}, store.ErrNotFound
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("postgres: token: %w", err)
	}
	return t, nil
}

// ListTokens returns every credential, oldest first.
func (s *Store) ListTokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: tokens: %w", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a credential by ID, or by the name of one not
// revoked.
func (s *Store) RevokeToken(ctx context.Context, ref string, at time.Time) (store.Token, error) {
	var t store.Token
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens
			WHERE id = $1 OR (name = $1 AND revoked_at IS NULL) ORDER BY id = $1 DESC LIMIT 1 FOR UPDATE`, ref))
		if err != nil {
			return err
		}
		if t.RevokedAt.IsZero() {
			t.RevokedAt = time.UnixMilli(at.UnixMilli()).UTC()
			_, err = tx.Exec(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2`, t.RevokedAt, t.ID)
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Token{}, store.ErrNotFound
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("postgres: revoke %s: %w", ref, err)
	}
	return t, nil
}

// TouchToken records when a credential was last accepted.
func (s *Store) TouchToken(ctx context.Context, id string, at time.Time) error {
	if _, err := s.pool.Exec(ctx, `UPDATE tokens SET last_used_at = $1 WHERE id = $2`, ms(at), id); err != nil {
		return fmt.Errorf("postgres: token %s: %w", id, err)
	}
	return nil
}

func scanToken(row pgx.Row) (store.Token, error) {
	var (
		t                      store.Token
		name, session          *string
		scopes                 string
		created                time.Time
		expires, used, revoked *time.Time
	)
	if err := row.Scan(&t.ID, &t.Kind, &name, &scopes, &session, &t.Hash, &created, &expires, &used, &revoked); err != nil {
		return store.Token{}, err
	}
	if name != nil {
		t.Name = *name
	}
	if session != nil {
		t.Session = *session
	}
	if scopes != "" {
		t.Scopes = strings.Split(scopes, ",")
	}
	t.CreatedAt = created.UTC()
	for _, p := range []struct {
		dst *time.Time
		src *time.Time
	}{{&t.ExpiresAt, expires}, {&t.LastUsed, used}, {&t.RevokedAt, revoked}} {
		if p.src != nil {
			*p.dst = p.src.UTC()
		}
	}
	return t, nil
}
