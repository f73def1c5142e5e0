package natsbus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Ingester writes the sessions a Consumer receives to the store
// (api.Ingester is one). Its methods are called from one goroutine by
// Consume, and from one goroutine per partition held by ConsumeShared; an
// *api.IngestError says a request was refused, any other error that the
// store failed. Lines must ignore lines it already has, so that a message
// delivered again does no harm.
type Ingester interface {
	Create(ctx context.Context, req api.CreateRequest) (store.Session, error)
	Lines(ctx context.Context, id string, lines []api.LineIn, end *api.End) (api.LinesResponse, error)
}

// ConsumerOptions tune a Consumer. The zero value gives the defaults.
type ConsumerOptions struct {
	// Durable names the durable consumer; zero means "agentstream-ingest".
	// Nodes that share it share the messages.
	Durable string
	// Batch is how many messages one fetch asks for; zero means 64.
	Batch int
	// AckWait is how long a message delivered and not acknowledged waits
	// before it is delivered again; zero means 5 s. A message lost in
	// flight when NATS went away holds back the session's later ones
	// (they are refused as a gap until it comes again) for this long, and
	// a fetched batch must be written within it.
	AckWait time.Duration
	// Replicas is how many servers of a cluster hold the stream and the
	// consumer; zero leaves an existing stream as it is (and makes a
	// missing one on one server).
	Replicas int
	// Logf, when set, is told of state changes and refused messages.
	Logf func(format string, args ...any)

	fetchWait time.Duration // how long a fetch waits for messages
}

// Status is whether a Consumer takes messages.
type Status struct {
	// Connected is true while the consumer fetches from the stream.
	Connected bool `json:"connected"`
	// Error says why it does not, when it does not.
	Error string `json:"error,omitempty"`
	// Taken counts the messages acknowledged since the start.
	Taken int64 `json:"taken"`
	// Partitions lists, in shared mode ([ConsumeShared]), the partitions
	// whose lease this node holds and whose messages it takes.
	Partitions []int `json:"partitions,omitempty"`
}

// Consumer takes the messages of the stream through a durable pull
// consumer and writes their records to an Ingester, acknowledging each
// message only after the Ingester committed it; a message it could not
// write is delivered again later. While NATS is away it is paused and
// says so in its Status; it goes on when NATS is back.
type Consumer struct {
	nc   *nats.Conn
	ing  Ingester
	opts ConsumerOptions

	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	status Status

	obsMu sync.Mutex
	obs   jetstream.ObjectStore // opened when a stub needs it
}

// Consume starts consuming every session's messages over nc into ing,
// until Stop.
func Consume(nc *nats.Conn, ing Ingester, opts ConsumerOptions) *Consumer {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{nc: nc, ing: ing, opts: opts, cancel: cancel, done: make(chan struct{})}
	c.status.Error = "starting"
	go c.loop(ctx)
	return c
}

func (o ConsumerOptions) withDefaults() ConsumerOptions {
	if o.Durable == "" {
		o.Durable = "agentstream-ingest"
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.AckWait <= 0 {
		o.AckWait = 5 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.fetchWait <= 0 {
		o.fetchWait = time.Second
	}
	return o
}

// Status returns where the consumer stands.
func (c *Consumer) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
	s.Partitions = slices.Clone(s.Partitions)
	if s.Connected && !c.nc.IsConnected() {
		s.Connected, s.Error = false, "NATS is away: "+c.nc.Status().String()
	}
	return s
}

// Stop stops the consumer and waits for its goroutine; a message being
// written is finished first.
func (c *Consumer) Stop() {
	c.cancel()
	<-c.done
}

func (c *Consumer) setStatus(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.status.Connected
	if err == nil {
		c.status.Connected, c.status.Error = true, ""
		if !was {
			c.opts.Logf("ingest from NATS: connected")
		}
		return
	}
	if was || c.status.Error != err.Error() {
		c.opts.Logf("ingest from NATS paused: %v", err)
	}
	c.status.Connected, c.status.Error = false, err.Error()
}

func (c *Consumer) loop(ctx context.Context) {
	defer close(c.done)
	js, err := jetstream.New(c.nc)
	if err != nil {
		c.setStatus(err)
		return
	}
	c.fetchLoop(ctx, js, jetstream.ConsumerConfig{Durable: c.opts.Durable}, c.setStatus)
}

// fetchLoop fetches the messages of the durable consumer cfg names (made
// or updated with the consumer's settings) and handles them until ctx is
// done; report is told of each failure (an error) and each success (nil).
// A message of a batch fetched when ctx ended is given back at once.
func (c *Consumer) fetchLoop(ctx context.Context, js jetstream.JetStream, cfg jetstream.ConsumerConfig, report func(error)) {
	backoff := 200 * time.Millisecond
	sleep := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, 5*time.Second)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	cfg.AckPolicy, cfg.DeliverPolicy = jetstream.AckExplicitPolicy, jetstream.DeliverAllPolicy
	cfg.AckWait, cfg.MaxDeliver, cfg.Replicas = c.opts.AckWait, -1, c.opts.Replicas
	var cons jetstream.Consumer
	for ctx.Err() == nil {
		if cons == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := EnsureStream(cctx, js, c.opts.Replicas)
			if err == nil {
				// Made here with the stream's replicas, before a runner
				// needs it.
				_, err = EnsureObjectStore(cctx, js, c.opts.Replicas)
			}
			if err == nil {
				cons, err = js.CreateOrUpdateConsumer(cctx, StreamName, cfg)
			}
			cancel()
			if err != nil {
				report(err)
				cons = nil
				if !sleep() {
					return
				}
				continue
			}
			report(nil)
		}
		batch, err := cons.Fetch(c.opts.Batch, jetstream.FetchMaxWait(c.opts.fetchWait))
		if err != nil {
			report(err)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				cons = nil
			}
			if !sleep() {
				return
			}
			continue
		}
		for m := range batch.Messages() {
			if ctx.Err() != nil {
				_ = m.Nak()
				continue
			}
			c.handle(ctx, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			report(err)
			if !sleep() {
				return
			}
			continue
		}
		backoff = 200 * time.Millisecond
		report(nil)
	}
}

// handle writes the records of one message and acknowledges it, asks for
// it again later when the store failed or an earlier message is missing,
// or terminates it when it can never be taken.
func (c *Consumer) handle(ctx context.Context, m jetstream.Msg) {
	err := c.write(ctx, m)
	var ie *api.IngestError
	switch {
	case err == nil:
		if aerr := m.Ack(); aerr == nil {
			c.mu.Lock()
			c.status.Taken++
			c.mu.Unlock()
		}
	case errors.As(err, &ie) && ie.Status == http.StatusBadRequest, errors.Is(err, errBadMessage),
		errors.As(err, &ie) && ie.Ended:
		c.opts.Logf("ingest from NATS: %s: message refused: %v", m.Subject(), err)
		_ = m.Term()
	case delivered(m) >= maxDeliveries:
		c.opts.Logf("ingest from NATS: %s: message dropped after %d deliveries: %v", m.Subject(), maxDeliveries, err)
		_ = m.Term()
	default:
		// A store failure, a gap (an earlier message not yet taken), a
		// session another process writes: later.
		_ = m.NakWithDelay(time.Second)
	}
}

var errBadMessage = errors.New("natsbus: bad message")

// maxDeliveries bounds how often a message that cannot be written is tried
// (a second apart): the lines of a session whose creation was refused
// would otherwise come back for ever.
const maxDeliveries = 300

func delivered(m jetstream.Msg) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 0
	}
	return md.NumDelivered
}

func (c *Consumer) write(ctx context.Context, m jetstream.Msg) error {
	id, ok := SessionOf(m.Subject())
	if !ok {
		return fmt.Errorf("%w: subject %s", errBadMessage, m.Subject())
	}
	var lines []api.LineIn
	var end *api.End
	for rec := range bytes.SplitSeq(m.Data(), []byte("\n")) {
		if end != nil {
			return fmt.Errorf("%w: records after the end", errBadMessage)
		}
		if bytes.HasPrefix(rec, []byte(`{"spool":`)) {
			var h api.SpoolHeader
			if err := json.Unmarshal(rec, &h); err != nil || h.Session.ID != id {
				return fmt.Errorf("%w: a session header not of %s", errBadMessage, id)
			}
			_, err := c.ing.Create(ctx, h.Session)
			var ie *api.IngestError
			if err != nil && !(errors.As(err, &ie) && ie.Exists) {
				return err
			}
			continue
		}
		r, err := decodeRecord(id, rec)
		if err != nil {
			return err
		}
		if r.Object != nil {
			if r.Line, err = c.fetchObject(ctx, r.Line, r.Object); err != nil {
				return err
			}
		}
		switch {
		case r.Line != nil:
			lines = append(lines, *r.Line)
		case r.End != nil:
			end = r.End
		}
	}
	if len(lines) == 0 && end == nil {
		return nil
	}
	_, err := c.ing.Lines(ctx, id, lines, end)
	return err
}

// record is a record of a message other than the header: a line, possibly
// the stub of one whose whole is in the object store, or the end.
type record struct {
	Line   *api.LineIn `json:"line"`
	End    *api.End    `json:"end"`
	Object *objectRef  `json:"object"`
}

// decodeRecord decodes a record of session id's message that is not its
// header. A stub must name the object of its line, id/STREAM/N, with a
// size and a SHA-256.
func decodeRecord(id string, rec []byte) (record, error) {
	var r record
	if err := json.Unmarshal(rec, &r); err != nil {
		return record{}, fmt.Errorf("%w: %v", errBadMessage, err)
	}
	switch {
	case r.Line != nil && r.End != nil, r.Line == nil && r.End == nil:
		return record{}, fmt.Errorf("%w: a record of no known kind", errBadMessage)
	case r.Object != nil && r.Line == nil:
		return record{}, fmt.Errorf("%w: an object that is not a line's", errBadMessage)
	case r.Object != nil:
		o := r.Object
		want := id + "/" + r.Line.Stream + "/" + strconv.FormatInt(r.Line.N, 10)
		if sum, err := hex.DecodeString(o.SHA256); o.Name != want || o.Size <= 0 || o.Size > maxObject || err != nil || len(sum) != sha256.Size {
			return record{}, fmt.Errorf("%w: a bad object of line %s", errBadMessage, want)
		}
	}
	return r, nil
}

// maxObject bounds the record an object may hold: the consumer holds it
// whole.
const maxObject = 1 << 30

// fetchObject returns the whole line of a stub: the record in the object
// store that o names, checked against its size and hash and the line's
// stream and number. When the object is gone (an operator removed it),
// the stub's head is kept, a truncated line; any other failure is
// returned, for the message to come again.
func (c *Consumer) fetchObject(ctx context.Context, head *api.LineIn, o *objectRef) (*api.LineIn, error) {
	obs, err := c.objects(ctx)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		c.opts.Logf("ingest from NATS: object %s: no object store %s: its line is kept truncated", o.Name, ObjectBucket)
		return head, nil
	}
	if err != nil {
		return nil, fmt.Errorf("natsbus: object store %s: %w", ObjectBucket, err)
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second+time.Duration(o.Size>>20)*time.Second)
	defer cancel()
	info, err := obs.GetInfo(octx, o.Name)
	if err == nil && info.Size != uint64(o.Size) {
		err = fmt.Errorf("%w: object of %d bytes, want %d", errBadObject, info.Size, o.Size)
	}
	var b []byte
	if err == nil {
		b, err = obs.GetBytes(octx, o.Name)
	}
	if err == nil {
		if sum := sha256.Sum256(b); int64(len(b)) != o.Size || hex.EncodeToString(sum[:]) != o.SHA256 {
			err = fmt.Errorf("%w: its size or hash differs from its stub's", errBadObject)
		}
	}
	var whole struct {
		Line *api.LineIn `json:"line"`
	}
	if err == nil {
		if jerr := json.Unmarshal(b, &whole); jerr != nil || whole.Line == nil || whole.Line.Stream != head.Stream || whole.Line.N != head.N {
			err = fmt.Errorf("%w: not the record of line %s/%d", errBadObject, head.Stream, head.N)
		}
	}
	switch {
	case err == nil:
		return whole.Line, nil
	case errors.Is(err, jetstream.ErrObjectNotFound), errors.Is(err, errBadObject):
		c.opts.Logf("ingest from NATS: object %s: %v: its line is kept truncated", o.Name, err)
		return head, nil
	}
	return nil, fmt.Errorf("natsbus: object %s: %w", o.Name, err)
}

var errBadObject = errors.New("natsbus: bad object")

// objects returns the object store, opened once.
func (c *Consumer) objects(ctx context.Context) (jetstream.ObjectStore, error) {
	c.obsMu.Lock()
	defer c.obsMu.Unlock()
	if c.obs != nil {
		return c.obs, nil
	}
	js, err := jetstream.New(c.nc)
	if err != nil {
		return nil, err
	}
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	obs, err := js.ObjectStore(octx, ObjectBucket)
	if err != nil {
		return nil, err
	}
	c.obs = obs
	return obs, nil
}
