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
// (api.Ingester is one). Its methods are called for several sessions at
// once (ConsumerOptions.Parallel), and for one session from one goroutine
// at a time; an
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
	// Batch is how many messages one fetch asks for; zero means 512.
	// The messages of a session that one fetch brings are written
	// together: a consumer behind the stream writes a session's backlog
	// in a few commits.
	Batch int
	// AckWait is how long a message delivered and not acknowledged waits
	// before it is delivered again; zero means 5 s. A message lost in
	// flight when NATS went away holds back the session's later ones
	// (they are refused as a gap until it comes again) for this long, and
	// a fetched batch not yet written is told in progress every half of
	// it, so as not to be delivered again meanwhile.
	AckWait time.Duration
	// Parallel is how many sessions of a fetch are written at once; zero
	// means 32 for Consume and 4 (per partition held) for ConsumeShared. A
	// session's messages are written in order, one at a time. The writes
	// that wait for the store at once are committed together by a store
	// that groups commits (SQLite).
	Parallel int
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
		o.Batch = 512
	}
	if o.AckWait <= 0 {
		o.AckWait = 5 * time.Second
	}
	if o.Parallel <= 0 {
		o.Parallel = 32
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
		c.drain(ctx, batch.Messages(), time.Now())
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

// drain handles the messages of a batch fetched at fetched as they come:
// those that came while the last were written are written together
// (writeBatch). A message that comes once ctx is done is given back.
//
// The fetch is read as it arrives, so that no message waits unread, and
// every message received and not yet acknowledged (waiting its turn, or
// being written) is told in progress (its ack wait starts again) every
// third of the ack wait from fetched, so that a slow write or a long
// batch does not have them delivered again meanwhile (to another node
// sharing the consumer). One acknowledged meanwhile refuses it: harmless.
func (c *Consumer) drain(ctx context.Context, msgs <-chan jetstream.Msg, fetched time.Time) {
	var (
		mu      sync.Mutex
		queue   []jetstream.Msg // received, not yet taken to be written
		writing []jetstream.Msg // being written
		closed  bool
	)
	arrived := make(chan struct{}, 1)
	wake := func() {
		select {
		case arrived <- struct{}{}:
		default:
		}
	}
	go func() {
		for m := range msgs {
			mu.Lock()
			queue = append(queue, m)
			mu.Unlock()
			wake()
		}
		mu.Lock()
		closed = true
		mu.Unlock()
		wake()
	}()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		every := c.opts.AckWait / 3
		t := time.NewTimer(max(every-time.Since(fetched), 0))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			mu.Lock()
			pending := append(slices.Clip(queue), writing...)
			mu.Unlock()
			for _, m := range pending {
				_ = m.InProgress()
			}
			t.Reset(every)
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for {
		mu.Lock()
		n := min(len(queue), c.opts.Batch)
		ready := slices.Clone(queue[:n])
		queue = queue[n:]
		writing = ready
		done := closed && len(queue) == 0
		mu.Unlock()
		switch {
		case len(ready) > 0 && ctx.Err() != nil:
			for _, m := range ready {
				_ = m.Nak()
			}
		case len(ready) > 0:
			c.writeBatch(ctx, ready)
		case done:
			return
		default:
			<-arrived
		}
		mu.Lock()
		writing = nil
		mu.Unlock()
	}
}

// message is a message of a batch, decoded: the session its subject
// names and its records; err says it cannot be decoded (errBadMessage).
type message struct {
	m      jetstream.Msg
	id     string
	header *api.CreateRequest // the session's creation, in its first message
	lines  []api.LineIn
	end    *api.End
	// objects holds, when some lines are stubs, the object of each line
	// whose whole is in the object store (nil for the others).
	objects []*objectRef
	err     error
}

// Bounds of the records that writeBatch hands to one Ingester.Lines call.
const (
	maxGroupLines = 4096
	maxGroupBytes = 8 << 20
)

// writeBatch writes the records of msgs and acknowledges each message
// once its records are committed. The messages of one session among msgs
// are written together, in one Ingester.Lines call and so one commit of
// the store, and acknowledged after it; a session's records keep their
// order, and the sessions are independent of one another. Should that
// call fail, each of its messages is written alone, as handle does, so
// that a message refused is terminated (or asked for again) alone and the
// others are written and acknowledged. A message with the session's
// header starts a group, one with its end closes it, and one holding a
// stub is written alone (its object is fetched then). Up to Parallel
// sessions are written at once, each session's groups in order.
//
// drain tells the messages in progress while they wait.
func (c *Consumer) writeBatch(ctx context.Context, msgs []jetstream.Msg) {
	type group struct {
		msgs  []*message
		lines int
		bytes int
	}
	var order []string              // the sessions, in the order they came
	groups := map[string][]*group{} // each session's groups, in order
	open := map[string]*group{}     // the group a session's next message may join
	for _, m := range msgs {
		d := decodeMessage(m)
		g := open[d.id]
		if d.err != nil || d.objects != nil || d.header != nil || g == nil ||
			g.msgs[len(g.msgs)-1].end != nil ||
			g.lines+len(d.lines) > maxGroupLines || g.bytes+len(m.Data()) > maxGroupBytes {
			g = &group{}
			if groups[d.id] == nil {
				order = append(order, d.id)
			}
			groups[d.id] = append(groups[d.id], g)
			if d.err == nil && d.objects == nil {
				open[d.id] = g
			} else {
				delete(open, d.id)
			}
		}
		g.msgs = append(g.msgs, d)
		g.lines += len(d.lines)
		g.bytes += len(m.Data())
	}
	write := func(g *group) {
		if len(g.msgs) > 1 && ctx.Err() == nil && c.writeGroup(ctx, g.msgs) == nil {
			for _, d := range g.msgs {
				c.ack(d.m)
			}
			return
		}
		for _, d := range g.msgs {
			if ctx.Err() != nil {
				_ = d.m.Nak()
				continue
			}
			c.handle(ctx, d)
		}
	}
	work := make(chan []*group)
	var wg sync.WaitGroup
	for range min(c.opts.Parallel, len(order)) {
		wg.Go(func() {
			for gs := range work {
				for _, g := range gs {
					write(g)
				}
			}
		})
	}
	for _, id := range order {
		work <- groups[id]
	}
	close(work)
	wg.Wait()
}

// writeGroup writes the records of consecutive messages of one session
// in one Ingester.Lines call; only the first may hold the header, only
// the last the end, and none a stub.
func (c *Consumer) writeGroup(ctx context.Context, ms []*message) error {
	first, last := ms[0], ms[len(ms)-1]
	if err := c.create(ctx, first); err != nil {
		return err
	}
	n := 0
	for _, d := range ms {
		n += len(d.lines)
	}
	lines := make([]api.LineIn, 0, n)
	for _, d := range ms {
		lines = append(lines, d.lines...)
	}
	_, err := c.ing.Lines(ctx, first.id, lines, last.end)
	return err
}

func (c *Consumer) ack(m jetstream.Msg) {
	if err := m.Ack(); err == nil {
		c.mu.Lock()
		c.status.Taken++
		c.mu.Unlock()
	}
}

// handle writes the records of one message and acknowledges it, asks for
// it again later when the store failed or an earlier message is missing,
// or terminates it when it can never be taken.
func (c *Consumer) handle(ctx context.Context, d *message) {
	m := d.m
	err := c.write(ctx, d)
	var ie *api.IngestError
	switch {
	case err == nil:
		c.ack(m)
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

// write writes the records of one message.
func (c *Consumer) write(ctx context.Context, d *message) error {
	if d.err != nil {
		return d.err
	}
	if err := c.create(ctx, d); err != nil {
		return err
	}
	for i, o := range d.objects {
		if o != nil {
			l, err := c.fetchObject(ctx, &d.lines[i], o)
			if err != nil {
				return err
			}
			d.lines[i] = *l
		}
	}
	if len(d.lines) == 0 && d.end == nil {
		return nil
	}
	_, err := c.ing.Lines(ctx, d.id, d.lines, d.end)
	return err
}

// create creates the session of a message that holds its header; a
// session that exists is no failure.
func (c *Consumer) create(ctx context.Context, d *message) error {
	if d.header == nil {
		return nil
	}
	_, err := c.ing.Create(ctx, *d.header)
	var ie *api.IngestError
	if err != nil && !(errors.As(err, &ie) && ie.Exists) {
		return err
	}
	return nil
}

// decodeMessage decodes the records of a message: a header must be of
// the subject's session, and nothing may follow the end. It fetches no
// object.
func decodeMessage(m jetstream.Msg) *message {
	d := &message{m: m}
	id, ok := SessionOf(m.Subject())
	if !ok {
		d.err = fmt.Errorf("%w: subject %s", errBadMessage, m.Subject())
		return d
	}
	d.id = id
	d.err = d.decode(m.Data())
	return d
}

func (d *message) decode(data []byte) error {
	for rec := range bytes.SplitSeq(data, []byte("\n")) {
		if d.end != nil {
			return fmt.Errorf("%w: records after the end", errBadMessage)
		}
		if bytes.HasPrefix(rec, []byte(`{"spool":`)) {
			var h api.SpoolHeader
			if err := json.Unmarshal(rec, &h); err != nil || h.Session.ID != d.id {
				return fmt.Errorf("%w: a session header not of %s", errBadMessage, d.id)
			}
			d.header = &h.Session
			continue
		}
		r, err := decodeRecord(d.id, rec)
		if err != nil {
			return err
		}
		switch {
		case r.Line != nil:
			if r.Object != nil && d.objects == nil {
				d.objects = make([]*objectRef, len(d.lines), cap(d.lines))
			}
			d.lines = append(d.lines, *r.Line)
			if d.objects != nil {
				d.objects = append(d.objects, r.Object)
			}
		case r.End != nil:
			d.end = r.End
		}
	}
	return nil
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
