package store

import "context"

// KeySize is the size of a store's keys in bytes.
const KeySize = 32

// Keys is a store that keeps secret keys of its own: a key is made of
// random bytes on first use, kept in the store, and the same for every
// process that opens it, so that what it keys (the tags of masked secrets,
// named "redact") compares across processes and sessions. A key never
// leaves the store but to the processes that open it.
type Keys interface {
	Key(ctx context.Context, name string) ([]byte, error)
}

// RedactKey is the name of the key of the tags of masked secrets.
const RedactKey = "redact"
