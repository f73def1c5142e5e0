package natsbus

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentstream/agentstream/store"
)

// Lease is a lease of the lease bucket, for tests.
type Lease = lease

// OpenLeases opens (or makes with ttl) the lease bucket.
func OpenLeases(ctx context.Context, js jetstream.JetStream, ttl time.Duration) (jetstream.KeyValue, time.Duration, error) {
	return openLeases(ctx, js, ttl, 1)
}

// TakeLease takes the lease key for node.
func TakeLease(ctx context.Context, kv jetstream.KeyValue, key, node string) (*Lease, error) {
	return takeLease(ctx, kv, key, node)
}

// Renew renews the lease.
func (l *lease) Renew(ctx context.Context) error { return l.renew(ctx) }

// Release gives the lease up.
func (l *lease) Release(ctx context.Context) error { return l.release(ctx) }

// DecodeRecord decodes a record of session id's message.
func DecodeRecord(id string, rec []byte) error {
	_, err := decodeRecord(id, rec)
	return err
}

// DecodeEvents hands the records of a message of the stream of events to
// pub, and returns how many it handed on.
func DecodeEvents(data []byte, pub store.Publisher) int { return decodeEvents(data, pub) }

// AppendEventRecord appends the record of ev (of its end, when end is set)
// as a Relay writes it.
func AppendEventRecord(b []byte, ev store.Event, end bool) []byte {
	return appendRecord(b, relayed{ev: ev, end: end})
}
