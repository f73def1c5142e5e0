package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentstream/agentstream/store"
)

var _ store.Tokens = (*Store)(nil)

const tokenColumns = `id, kind, name, scopes, session, hash, created_at, expires_at, last_used_at, revoked_at`

// CreateToken stores a credential of the HTTP API (see store.Tokens).
func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	res, err := s.write.ExecContext(ctx, `INSERT INTO tokens (`+tokenColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		t.ID, t.Kind, nullStr(t.Name), strings.Join(t.Scopes, ","), nullStr(t.Session), t.Hash,
		t.CreatedAt.UnixMilli(), msOrNull(t.ExpiresAt), msOrNull(t.LastUsed), msOrNull(t.RevokedAt))
	if err != nil {
		return fmt.Errorf("sqlite: token %s: %w", t.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("%w: a token has the id %s, the same secret, or the name %q", store.ErrConflict, t.ID, t.Name)
	}
	return nil
}

// TokenByHash returns the credential whose secret hashes to hash.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (store.Token, error) {
	t, err := scanToken(s.read.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Token{}, store.ErrNotFound
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("sqlite: token: %w", err)
	}
	return t, nil
}

// ListTokens returns every credential, oldest first.
func (s *Store) ListTokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a credential by ID, or by the name of one not
// revoked.
func (s *Store) RevokeToken(ctx context.Context, ref string, at time.Time) (store.Token, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return store.Token{}, fmt.Errorf("sqlite: revoke %s: %w", ref, err)
	}
	defer tx.Rollback()
	t, err := scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens
		WHERE id = ? OR (name = ? AND revoked_at IS NULL) ORDER BY id = ? DESC LIMIT 1`, ref, ref, ref))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Token{}, store.ErrNotFound
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("sqlite: revoke %s: %w", ref, err)
	}
	if t.RevokedAt.IsZero() {
		t.RevokedAt = time.UnixMilli(at.UnixMilli()).UTC()
		if _, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = ? WHERE id = ?`, t.RevokedAt.UnixMilli(), t.ID); err != nil {
			return store.Token{}, fmt.Errorf("sqlite: revoke %s: %w", ref, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return store.Token{}, fmt.Errorf("sqlite: revoke %s: %w", ref, err)
	}
	return t, nil
}

// TouchToken records when a credential was last accepted.
func (s *Store) TouchToken(ctx context.Context, id string, at time.Time) error {
	if _, err := s.write.ExecContext(ctx, `UPDATE tokens SET last_used_at = ? WHERE id = ?`, at.UnixMilli(), id); err != nil {
		return fmt.Errorf("sqlite: token %s: %w", id, err)
	}
	return nil
}

func scanToken(row interface{ Scan(...any) error }) (store.Token, error) {
	var (
		t                      store.Token
		name, session          sql.NullString
		scopes                 string
		created                int64
		expires, used, revoked sql.NullInt64
	)
	if err := row.Scan(&t.ID, &t.Kind, &name, &scopes, &session, &t.Hash, &created, &expires, &used, &revoked); err != nil {
		return store.Token{}, err
	}
	t.Name, t.Session = name.String, session.String
	if scopes != "" {
		t.Scopes = strings.Split(scopes, ",")
	}
	t.CreatedAt = time.UnixMilli(created).UTC()
	t.ExpiresAt, t.LastUsed, t.RevokedAt = fromMs(expires), fromMs(used), fromMs(revoked)
	return t, nil
}
