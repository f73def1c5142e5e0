package postgres

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/agentstream/agentstream/store"
)

// Key returns the store's key of that name (store.KeySize random bytes),
// made on first use and the same for every process that opens the store
// (see store.Keys).
func (s *Store) Key(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, store.KeySize)
	rand.Read(fresh)
	if _, err := s.pool.Exec(ctx, `INSERT INTO keys (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, fmt.Errorf("postgres: key %s: %w", name, err)
	}
	var k []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM keys WHERE name = $1`, name).Scan(&k); err != nil {
		return nil, fmt.Errorf("postgres: key %s: %w", name, err)
	}
	return k, nil
}
