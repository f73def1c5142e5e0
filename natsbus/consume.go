package natsbus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Ingester writes the sessions a Consumer receives to the store
// (api.Ingester is one). Its methods are called from one goroutine; an
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
}

// Status is whether a Consumer takes messages.
type Status struct {
	// Connected is true while the consumer fetches from the stream.
	Connected bool `json:"connected"`
	// Error says why it does not, when it does not.
	Error string `json:"error,omitempty"`
	// Taken counts the messages acknowledged since the start.
	Taken int64 `json:"taken"`
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
}

// Consume starts consuming over nc into ing, until Stop.
func Consume(nc *nats.Conn, ing Ingester, opts ConsumerOptions) *Consumer {
	if opts.Durable == "" {
		opts.Durable = "agentstream-ingest"
	}
	if opts.Batch <= 0 {
		opts.Batch = 64
	}
	if opts.AckWait <= 0 {
		opts.AckWait = 5 * time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{nc: nc, ing: ing, opts: opts, cancel: cancel, done: make(chan struct{})}
	c.status.Error = "starting"
	go c.loop(ctx)
	return c
}

// Status returns where the consumer stands.
func (c *Consumer) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.status
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
	js, err := jetstream.New(c.nc)
	if err != nil {
		c.setStatus(err)
		return
	}
	var cons jetstream.Consumer
	for ctx.Err() == nil {
		if cons == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := EnsureStream(cctx, js, c.opts.Replicas)
			if err == nil {
				cons, err = js.CreateOrUpdateConsumer(cctx, StreamName, jetstream.ConsumerConfig{
					Durable: c.opts.Durable, AckPolicy: jetstream.AckExplicitPolicy,
					DeliverPolicy: jetstream.DeliverAllPolicy, AckWait: c.opts.AckWait, MaxDeliver: -1,
					Replicas: c.opts.Replicas,
				})
			}
			cancel()
			if err != nil {
				c.setStatus(err)
				cons = nil
				if !sleep() {
					return
				}
				continue
			}
			c.setStatus(nil)
		}
		batch, err := cons.Fetch(c.opts.Batch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			c.setStatus(err)
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				cons = nil
			}
			if !sleep() {
				return
			}
			continue
		}
		n := 0
		for m := range batch.Messages() {
			n++
			c.handle(ctx, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			c.setStatus(err)
			if !sleep() {
				return
			}
			continue
		}
		backoff = 200 * time.Millisecond
		c.setStatus(nil)
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
		var r struct {
			Line *api.LineIn `json:"line"`
			End  *api.End    `json:"end"`
		}
		if err := json.Unmarshal(rec, &r); err != nil {
			return fmt.Errorf("%w: %v", errBadMessage, err)
		}
		switch {
		case r.Line != nil:
			lines = append(lines, *r.Line)
		case r.End != nil:
			end = r.End
		default:
			return fmt.Errorf("%w: a record of no known kind", errBadMessage)
		}
	}
	if len(lines) == 0 && end == nil {
		return nil
	}
	_, err := c.ing.Lines(ctx, id, lines, end)
	return err
}
