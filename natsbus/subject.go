package natsbus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StreamName is the JetStream stream of the native lines.
const StreamName = "AGENTSTREAM_LINES"

// SubjectPrefix begins the subject of every session.
const SubjectPrefix = "agentstream.lines."

// Partitions is the number of partitions the sessions are spread over:
// a session's subject names its partition ([Partition]), so that nodes
// sharing the ingest each take whole partitions (docs/cluster.md).
const Partitions = 16

// Partition returns the partition of session id, 0 to Partitions-1: the
// 32-bit FNV-1a hash of the id modulo Partitions. It never changes for an
// id.
func Partition(id string) int {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return int(h % Partitions)
}

// Subject returns the subject of session id: SubjectPrefix, its
// partition in two digits, a ".", and the id with each "." of it written
// "~" (a "." separates the tokens of a subject; no session id holds a
// "~"): s.a.b is agentstream.lines.PP.s~a~b.
func Subject(id string) string {
	return fmt.Sprintf("%s%02d.%s", SubjectPrefix, Partition(id), strings.ReplaceAll(id, ".", "~"))
}

// PartitionSubjects returns the subject filter of partition p's sessions.
func PartitionSubjects(p int) string {
	return fmt.Sprintf("%s%02d.>", SubjectPrefix, p)
}

// SessionOf returns the session id of a subject Subject made, refusing one
// whose partition is not the id's.
func SessionOf(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, SubjectPrefix)
	if !ok {
		return "", false
	}
	part, tok, ok := strings.Cut(rest, ".")
	if !ok || len(part) != 2 || tok == "" || strings.Contains(tok, ".") {
		return "", false
	}
	id := strings.ReplaceAll(tok, "~", ".")
	if fmt.Sprintf("%02d", Partition(id)) != part {
		return "", false
	}
	return id, true
}

// Connect connects to the NATS servers urls (a comma-separated list), and
// goes on reconnecting for ever: a server that is away is a state, not a
// failure. A server that stops answering (frozen, cut off) is left for
// another after three pings 3 s apart go unanswered. name names the
// connection in the server's monitoring.
func Connect(urls, name string) (*nats.Conn, error) {
	nc, err := nats.Connect(urls, nats.Name(name), nats.MaxReconnects(-1),
		nats.PingInterval(3*time.Second), nats.MaxPingsOutstanding(3),
		nats.RetryOnFailedConnect(true), nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectBufSize(-1))
	if err != nil {
		return nil, fmt.Errorf("natsbus: connect %s: %w", urls, err)
	}
	return nc, nil
}

// StreamConfig is the configuration of the stream EnsureStream makes:
// file storage, every session's subject, messages kept until deleted, on
// replicas servers of a cluster (zero means 1).
func StreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:       StreamName,
		Subjects:   []string{SubjectPrefix + ">"},
		Storage:    jetstream.FileStorage,
		Retention:  jetstream.LimitsPolicy,
		Duplicates: 2 * time.Minute,
		Replicas:   max(replicas, 1),
	}
}

// EnsureStream creates the stream when it does not exist, on replicas
// servers (zero means 1), and raises the replicas of one that has fewer
// (a runner that found it missing made it with one). Zero leaves an
// existing stream as it is.
func EnsureStream(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.Stream, error) {
	s, existed, err := ensureStream(ctx, js, StreamConfig(replicas))
	if err != nil || !existed {
		return s, err
	}
	return raiseReplicas(ctx, js, s, replicas)
}

// ensureStream returns the stream cfg names, created with cfg when it
// does not exist; existed says it was there (or another made it meanwhile).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (s jetstream.Stream, existed bool, err error) {
	s, err = js.Stream(ctx, cfg.Name)
	if err == nil {
		return s, true, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, false, fmt.Errorf("natsbus: stream %s: %w", cfg.Name, err)
	}
	s, err = js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		existed = true
		s, err = js.Stream(ctx, cfg.Name)
	}
	if err != nil {
		return nil, false, fmt.Errorf("natsbus: create stream %s: %w", cfg.Name, err)
	}
	return s, existed, nil
}

func raiseReplicas(ctx context.Context, js jetstream.JetStream, s jetstream.Stream, replicas int) (jetstream.Stream, error) {
	cfg := s.CachedInfo().Config
	if cfg.Replicas >= replicas {
		return s, nil
	}
	cfg.Replicas = replicas
	s, err := js.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("natsbus: stream %s: raise its replicas to %d: %w", StreamName, replicas, err)
	}
	return s, nil
}
