package sqlite

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
	var k []byte
	err := s.read.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, name).Scan(&k)
	if err == nil {
		return k, nil
	}
	fresh := make([]byte, store.KeySize)
	rand.Read(fresh)
	if _, err := s.write.ExecContext(ctx, `INSERT INTO keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, fmt.Errorf("sqlite: key %s: %w", name, err)
	}
	if err := s.write.QueryRowContext(ctx, `SELECT value FROM keys WHERE name = ?`, name).Scan(&k); err != nil {
		return nil, fmt.Errorf("sqlite: key %s: %w", name, err)
	}
	return k, nil
}
