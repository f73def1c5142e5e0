package natsbus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentstream/agentstream/natsbus"
	"github.com/nats-io/nats.go/jetstream"
)

// TestLease takes a lease by compare-and-swap: a second taker is refused,
// the holder renews, a stale revision neither renews nor releases, and
// once the holder stops renewing the entry expires and another takes it.
func TestLease(t *testing.T) {
	ns := startNATS(t, t.TempDir(), -1)
	js, err := jetstream.New(connect(t, ns.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const ttl = time.Second
	kv, got, err := natsbus.OpenLeases(ctx, js, ttl)
	if err != nil {
		t.Fatal(err)
	}
	if got != ttl {
		t.Errorf("bucket TTL %v, want %v", got, ttl)
	}
	if _, got, err := natsbus.OpenLeases(ctx, js, time.Hour); err != nil || got != ttl {
		t.Errorf("reopened bucket: TTL %v, %v; want the bucket's %v", got, err, ttl)
	}
	a, err := natsbus.TakeLease(ctx, kv, "partitions.03", "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := natsbus.TakeLease(ctx, kv, "partitions.03", "b"); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("second taker: %v, want ErrKeyExists", err)
	}
	// Renewed well within the TTL, the lease outlives it.
	for range 6 {
		time.Sleep(ttl / 4)
		if err := a.Renew(ctx); err != nil {
			t.Fatalf("renew: %v", err)
		}
	}
	if _, err := natsbus.TakeLease(ctx, kv, "partitions.03", "b"); !errors.Is(err, jetstream.ErrKeyExists) {
		t.Fatalf("taker of a renewed lease: %v, want ErrKeyExists", err)
	}
	e, err := kv.Get(ctx, "partitions.03")
	if err != nil || string(e.Value()) != "a" {
		t.Fatalf("lease entry %v, %v; want held by a", e, err)
	}
	// The holder stops renewing: the entry expires, b takes it, and a can
	// neither renew nor release it.
	deadline := time.Now().Add(10 * ttl)
	var b *natsbus.Lease
	for b == nil {
		if time.Now().After(deadline) {
			t.Fatal("the lease never expired")
		}
		time.Sleep(ttl / 10)
		b, err = natsbus.TakeLease(ctx, kv, "partitions.03", "b")
		if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			t.Fatal(err)
		}
	}
	if err := a.Renew(ctx); err == nil {
		t.Error("the old holder renewed a lease taken over")
	}
	if err := a.Release(ctx); err == nil {
		t.Error("the old holder released a lease taken over")
	}
	if e, err := kv.Get(ctx, "partitions.03"); err != nil || string(e.Value()) != "b" {
		t.Fatalf("lease entry after the takeover: %v, %v; want held by b", e, err)
	}
	// Released, it is free at once.
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := natsbus.TakeLease(ctx, kv, "partitions.03", "c"); err != nil {
		t.Errorf("take a released lease: %v", err)
	}
}

// FuzzDecodeRecord feeds records of any shape, stubs among them, to the
// consumer's decoder: it never panics.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"line":{"stream":"stdout","n":1,"text":"x"}}`,
		`{"end":{"exitCode":0}}`,
		`{"line":{"stream":"stdout","n":3,"text":"he","size":9,"sha256":"` + zeros + `"},"object":{"name":"s/stdout/3","size":120,"sha256":"` + zeros + `"}}`,
		`{"line":{"stream":"stderr","n":2,"data":"AAE="},"object":{"name":"t/stderr/2","size":1,"sha256":"00"}}`,
		`{"object":{"name":"s/stdout/1"}}`,
		`{"line":null,"end":null}`,
		`[]`, ``,
	} {
		f.Add("s", []byte(s))
	}
	f.Fuzz(func(t *testing.T, id string, rec []byte) {
		_ = natsbus.DecodeRecord(id, rec)
	})
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
