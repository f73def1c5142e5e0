package natsbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LeaseBucket is the JetStream key-value bucket of the partitions'
// leases and of the live ingest nodes (docs/cluster.md).
const LeaseBucket = "agentstream-leases"

// DefaultLeaseTTL is the TTL of the lease bucket a node makes: how long a
// lease, or a node's presence, outlives its last renewal.
const DefaultLeaseTTL = 6 * time.Second

// SharedIngester is an Ingester that several nodes share: it can take up
// the sessions of a partition a node starts taking, and let go of those
// of a partition it stops taking (api.Ingester is one). Resume resumes at
// once the sessions match accepts that were left without an end (their
// writer released or reaped, not ended), those keep accepts, and returns
// how many, and how many another process writes (their writer not yet
// counted gone); it is called when a partition is taken, as its messages
// are fetched, and again while some wait. Release closes the sessions
// match accepts without ending them, leaving them for another process to
// resume; it is called once no goroutine writes them.
type SharedIngester interface {
	Ingester
	Resume(ctx context.Context, match func(id string) bool, keep func(ctx context.Context, id string) bool) (resumed, waiting int, err error)
	Release(ctx context.Context, match func(id string) bool) error
}

// LeaseOptions tune the leases of ConsumeShared. The zero value gives the
// defaults.
type LeaseOptions struct {
	// TTL is the TTL of the lease bucket when this node makes it; zero
	// means DefaultLeaseTTL. A bucket that exists keeps its own, which
	// every node reads: a lease is renewed every sixth of it, and a node
	// whose renewal is half of it late stops taking the partition.
	TTL time.Duration
	// Node names this node in the bucket; zero means the host name, the
	// process id and a random suffix. Two live nodes must not share it.
	Node string
}

// lease is one key of the lease bucket held by compare-and-swap: taken
// by Create when the key is absent, renewed by Update with the revision
// last written, released by Delete with that revision. The bucket's TTL
// removes a key its holder stopped renewing.
type lease struct {
	kv   jetstream.KeyValue
	key  string
	node string
	rev  uint64
}

// takeLease takes the lease key for node, or fails (jetstream.ErrKeyExists
// when another holds it).
func takeLease(ctx context.Context, kv jetstream.KeyValue, key, node string) (*lease, error) {
	rev, err := kv.Create(ctx, key, []byte(node))
	if err != nil {
		return nil, err
	}
	return &lease{kv: kv, key: key, node: node, rev: rev}, nil
}

// renew renews the lease; an error says it may be lost (another holds it,
// it expired, or NATS did not answer).
func (l *lease) renew(ctx context.Context) error {
	rev, err := l.kv.Update(ctx, l.key, []byte(l.node), l.rev)
	if err != nil {
		return err
	}
	l.rev = rev
	return nil
}

// release gives the lease up, unless it is no longer this holder's.
func (l *lease) release(ctx context.Context) error {
	return l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
}

// openLeases opens the lease bucket, making it with ttl on replicas
// servers when it does not exist, and returns it with its TTL.
func openLeases(ctx context.Context, js jetstream.JetStream, ttl time.Duration, replicas int) (jetstream.KeyValue, time.Duration, error) {
	kv, err := js.KeyValue(ctx, LeaseBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: LeaseBucket, Description: "agentstream: leases of the ingest partitions",
			History: 1, TTL: ttl, Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, LeaseBucket)
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("natsbus: lease bucket %s: %w", LeaseBucket, err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("natsbus: lease bucket %s: %w", LeaseBucket, err)
	}
	if st.TTL() <= 0 {
		return nil, 0, fmt.Errorf("natsbus: lease bucket %s has no TTL", LeaseBucket)
	}
	return kv, st.TTL(), nil
}

func partitionKey(p int) string { return fmt.Sprintf("partitions.%02d", p) }

const nodePrefix = "nodes."

// nodeName returns a name for this node that a key can hold.
func nodeName() string {
	host, _ := os.Hostname()
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, name)
}

// ConsumeShared starts consuming over nc into ing as one of several nodes
// sharing the ingest into one store: the sessions are spread over
// Partitions partitions by their subject, each with its durable consumer
// (opts.Durable, "-p" and the partition in two digits), and this node
// takes the messages of the partitions whose lease it holds in
// LeaseBucket. It aims at its share of the partitions (Partitions over the
// live nodes, rounded up), takes partitions no node holds and resumes at
// once their sessions left without an end (ing.Resume), gives back those
// past its share, and stops taking a partition, and releases its sessions
// (ing.Release), before its lease could expire: a session is normalized by
// one node at a time. Stop stops consuming and gives the leases back.
func ConsumeShared(nc *nats.Conn, ing SharedIngester, opts ConsumerOptions, lo LeaseOptions) *Consumer {
	if opts.fetchWait <= 0 {
		opts.fetchWait = 500 * time.Millisecond
	}
	if opts.Parallel <= 0 {
		// Each partition held writes at once already.
		opts.Parallel = 4
	}
	opts = opts.withDefaults()
	if lo.TTL <= 0 {
		lo.TTL = DefaultLeaseTTL
	}
	if lo.Node == "" {
		lo.Node = nodeName()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{nc: nc, ing: ing, opts: opts, cancel: cancel, done: make(chan struct{})}
	c.status.Error = "starting"
	s := &shared{c: c, ing: ing, node: lo.Node, ttl: lo.TTL, parts: map[int]*held{}, stopping: map[int]chan struct{}{}}
	go s.run(ctx)
	return c
}

// shared is the state of a ConsumeShared node, owned by its run goroutine.
type shared struct {
	c    *Consumer
	ing  SharedIngester
	node string
	ttl  time.Duration // the bucket's, once open
	js   jetstream.JetStream
	kv   jetstream.KeyValue

	parts    map[int]*held         // the partitions whose lease this node holds
	stopping map[int]chan struct{} // partitions lost, until their goroutine ended
}

// held is a partition whose lease this node holds, and the goroutine that
// takes its messages: it ends when cancel is called (by the watchdog when
// a renewal is late, or to give the partition back), after releasing the
// partition's sessions, and closes done.
type held struct {
	l       *lease
	cancel  context.CancelFunc
	done    chan struct{}
	watch   *time.Timer
	leaving bool // given back once done
}

func (s *shared) run(ctx context.Context) {
	defer close(s.c.done)
	defer s.stop()
	js, err := jetstream.New(s.c.nc)
	if err != nil {
		s.c.setStatus(err)
		return
	}
	s.js = js
	backoff := 200 * time.Millisecond
	for {
		var wait time.Duration
		if s.kv == nil {
			octx, cancel := context.WithTimeout(ctx, 5*time.Second)
			s.kv, s.ttl, err = openLeases(octx, js, s.ttl, s.c.opts.Replicas)
			cancel()
			if err != nil {
				s.kv = nil
				s.c.setStatus(err)
				wait, backoff = backoff, min(2*backoff, 5*time.Second)
			}
		}
		if s.kv != nil {
			backoff = 200 * time.Millisecond
			s.balance(ctx)
			wait = s.ttl / 6
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// balance renews this node's presence and leases, and takes or gives back
// partitions towards its share.
func (s *shared) balance(ctx context.Context) {
	period, grace := s.ttl/6, s.ttl/2
	for p, done := range s.stopping {
		select {
		case <-done:
			delete(s.stopping, p)
		default:
		}
	}
	op := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, period) }
	for p, h := range s.parts {
		select {
		case <-h.done:
			// Given back, or stopped by its watchdog: its sessions are
			// released; the lease, if still this node's, goes too.
			h.watch.Stop()
			delete(s.parts, p)
			octx, cancel := op()
			_ = h.l.release(octx)
			cancel()
		default:
		}
	}
	// The renewals go at once, so that a round takes one round trip
	// whatever the partitions held.
	type renewal struct {
		p    int
		sent time.Time
		err  error
	}
	results := make(chan renewal, len(s.parts))
	for p, h := range s.parts {
		go func() {
			sent := time.Now()
			octx, cancel := op()
			defer cancel()
			results <- renewal{p, sent, h.l.renew(octx)}
		}()
	}
	for range len(s.parts) {
		r := <-results
		h := s.parts[r.p]
		if r.err != nil {
			h.cancel()
			delete(s.parts, r.p)
			s.stopping[r.p] = h.done
			s.c.opts.Logf("ingest from NATS: lease of partition %02d lost: %v", r.p, r.err)
			continue
		}
		h.watch.Reset(grace - time.Since(r.sent))
	}
	octx, cancel := op()
	_, err := s.kv.Put(octx, nodePrefix+s.node, []byte(s.node))
	cancel()
	if err != nil {
		s.c.setStatus(fmt.Errorf("natsbus: lease bucket: %w", err))
		s.setHeld()
		return
	}
	live, taken, err := s.survey(ctx, period)
	if err != nil {
		s.c.setStatus(err)
		s.setHeld()
		return
	}
	share := (Partitions + live - 1) / live
	active := 0
	for _, h := range s.parts {
		if !h.leaving {
			active++
		}
	}
	for p := Partitions - 1; p >= 0 && active > share; p-- {
		if h := s.parts[p]; h != nil && !h.leaving {
			h.leaving = true
			h.cancel()
			active--
		}
	}
	first := Partition(s.node)
	for i := 0; i < Partitions && active < share; i++ {
		p := (first + i) % Partitions
		if taken[p] || s.parts[p] != nil || s.stopping[p] != nil {
			continue
		}
		sent := time.Now()
		octx, cancel := op()
		l, err := takeLease(octx, s.kv, partitionKey(p), s.node)
		cancel()
		if err != nil {
			continue
		}
		s.start(ctx, p, l, grace-time.Since(sent))
		active++
	}
	s.c.setStatus(nil)
	s.setHeld()
}

// survey lists the bucket's keys: it returns how many nodes are live (have
// their presence key), this one included, and which partitions some node
// holds.
func (s *shared) survey(ctx context.Context, timeout time.Duration) (int, [Partitions]bool, error) {
	var taken [Partitions]bool
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	kl, err := s.kv.ListKeys(lctx)
	if err != nil {
		return 0, taken, fmt.Errorf("natsbus: lease bucket: %w", err)
	}
	defer kl.Stop()
	n, self := 0, false
	for k := range kl.Keys() {
		if name, ok := strings.CutPrefix(k, nodePrefix); ok {
			n++
			self = self || name == s.node
			continue
		}
		for p := range Partitions {
			if k == partitionKey(p) {
				taken[p] = true
			}
		}
	}
	if lctx.Err() != nil {
		return 0, taken, fmt.Errorf("natsbus: lease bucket: %w", lctx.Err())
	}
	if !self {
		n++
	}
	return n, taken, nil
}

// start starts taking partition p's messages under lease l, stopping
// when the lease is not renewed within left.
func (s *shared) start(ctx context.Context, p int, l *lease, left time.Duration) {
	pctx, cancel := context.WithCancel(ctx)
	h := &held{l: l, cancel: cancel, done: make(chan struct{})}
	h.watch = time.AfterFunc(left, func() {
		if pctx.Err() == nil {
			s.c.opts.Logf("ingest from NATS: lease of partition %02d not renewed in time: partition stopped", p)
		}
		cancel()
	})
	s.parts[p] = h
	var last string
	report := func(err error) {
		if err == nil {
			last = ""
			return
		}
		if err.Error() != last {
			last = err.Error()
			s.c.opts.Logf("ingest from NATS: partition %02d: %v", p, err)
		}
	}
	go func() {
		defer close(h.done)
		// The partition's sessions left without an end are running again
		// at once, not at their runner's next line; the messages are
		// fetched meanwhile (a session both want is resumed once).
		resumed := make(chan struct{})
		go func() {
			defer close(resumed)
			s.resume(pctx, p)
		}()
		s.c.fetchLoop(pctx, s.js, jetstream.ConsumerConfig{
			Durable: fmt.Sprintf("%s-p%02d", s.c.opts.Durable, p), FilterSubject: PartitionSubjects(p),
		}, report)
		<-resumed
		rctx, rcancel := context.WithTimeout(context.Background(), s.ttl)
		defer rcancel()
		if err := s.ing.Release(rctx, func(id string) bool { return Partition(id) == p }); err != nil {
			s.c.opts.Logf("ingest from NATS: partition %02d: releasing its sessions: %v", p, err)
		}
	}()
}

// resume resumes the sessions of partition p left without an end whose
// runner publishes over NATS: the stream holds their subject (a session
// of a runner that posts over HTTP is left to it). It tries again while
// the store or the stream fails, or some session is still another
// process's (its writer died, and the store does not count it gone yet),
// a second apart doubling to 10 s, until ctx is done.
func (s *shared) resume(ctx context.Context, p int) {
	match := func(id string) bool { return Partition(id) == p }
	for wait := time.Second; ; wait = min(2*wait, 10*time.Second) {
		var failed error
		var stream jetstream.Stream
		keep := func(ctx context.Context, id string) bool {
			kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var err error
			if stream == nil {
				if stream, err = s.js.Stream(kctx, StreamName); err != nil {
					stream = nil
					if failed == nil {
						failed = err
					}
					return false
				}
			}
			_, err = stream.GetLastMsgForSubject(kctx, Subject(id))
			if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) && failed == nil {
				failed = err
			}
			return err == nil
		}
		n, waiting, err := s.ing.Resume(ctx, match, keep)
		if n > 0 {
			s.c.opts.Logf("ingest from NATS: partition %02d: %d sessions left without an end resumed", p, n)
		}
		if err == nil {
			err = failed
		}
		if err == nil && waiting == 0 || ctx.Err() != nil {
			return
		}
		if err != nil {
			s.c.opts.Logf("ingest from NATS: partition %02d: resuming its sessions: %v", p, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// setHeld publishes the partitions held in the status.
func (s *shared) setHeld() {
	var ps []int
	for p, h := range s.parts {
		if !h.leaving {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	s.c.mu.Lock()
	s.c.status.Partitions = ps
	s.c.mu.Unlock()
}

// stop stops taking every partition, then gives the leases back and
// removes this node's presence.
func (s *shared) stop() {
	for _, h := range s.parts {
		h.cancel()
	}
	for _, done := range s.stopping {
		<-done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for p, h := range s.parts {
		<-h.done
		h.watch.Stop()
		_ = h.l.release(ctx)
		delete(s.parts, p)
	}
	if s.kv != nil {
		_ = s.kv.Delete(ctx, nodePrefix+s.node)
	}
	s.setHeld()
}
