package natsbus

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentstream/agentstream/internal/jsonscan"
	"github.com/agentstream/agentstream/store"
)

// EventStreamName is the JetStream stream of the events the nodes commit,
// which every node follows to feed its live subscribers (docs/cluster.md).
const EventStreamName = "AGENTSTREAM_EVENTS"

// EventSubjectPrefix begins the subject of each node's events: the node's
// name follows it.
const EventSubjectPrefix = "agentstream.events."

// EventStreamConfig is the configuration of the stream of events: in
// memory, on replicas servers (zero means 1), each message kept two
// minutes at most and the oldest dropped past 256 MiB. It is for live
// subscribers only: the store keeps the events.
func EventStreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:      EventStreamName,
		Subjects:  []string{EventSubjectPrefix + ">"},
		Storage:   jetstream.MemoryStorage,
		Retention: jetstream.LimitsPolicy,
		Discard:   jetstream.DiscardOld,
		MaxAge:    2 * time.Minute,
		MaxBytes:  256 << 20,
		Replicas:  max(replicas, 1),
	}
}

// EnsureEventStream creates the stream of events when it does not exist.
func EnsureEventStream(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.Stream, error) {
	s, _, err := ensureStream(ctx, js, EventStreamConfig(replicas))
	return s, err
}

// NodeName returns a name for a node's events: 16 random hex digits.
func NodeName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// EventOptions tune a Relay or a Feed. The zero value gives the defaults.
type EventOptions struct {
	// Node names this node: the Relay publishes to EventSubjectPrefix+Node
	// and the Feed skips what that subject carries (the node's hub has
	// it). Empty means NodeName().
	Node string
	// Replicas is the stream's replicas, should it be created; zero means 1.
	Replicas int
	// Buffer is the number of events a Relay holds while it publishes;
	// zero means 16384. What comes when it is full is not relayed.
	Buffer int
	// Logf is told of the stream coming and going; nil for nowhere.
	Logf func(format string, args ...any)
}

func (o EventOptions) withDefaults() EventOptions {
	if o.Node == "" {
		o.Node = NodeName()
	}
	if o.Buffer <= 0 {
		o.Buffer = 16384
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	return o
}

// EventStats counts what a Relay or a Feed carried since it started.
type EventStats struct {
	// Events counts the events and ends relayed, or handed on by a Feed.
	Events int64 `json:"events"`
	// Dropped counts, for a Relay, the events and ends not relayed: its
	// buffer was full, NATS was away, or one was too large for a message.
	// The store has them; other nodes find them there.
	Dropped int64 `json:"dropped"`
	// Connected is whether NATS is connected and, for a Relay, the stream
	// was there when it last looked (every ten seconds while it relays),
	// or, for a Feed, it follows the stream now.
	Connected bool `json:"connected"`
}

// A message of the stream of events is one or more records, one per
// line: {"session":ID,"seq":N,"prev":P,"type":T,"data":ENVELOPE} for an
// event (seq 0: a live delta, after the stored event prev) or
// {"session":ID,"end":true} for the end of a session's writer.

// Relay publishes to the stream of events what this node's writers commit
// (a store.Publisher for the store's Relay): each event once, in order,
// without waiting for NATS. It keeps up to Buffer of them while it
// publishes, and drops the rest (counted in its Stats): the stream is for
// live subscribers, which find in the store what they missed.
type Relay struct {
	nc      *nats.Conn
	opts    EventOptions
	subject string
	ch      chan relayed
	events  atomic.Int64
	dropped atomic.Int64
	found   atomic.Bool // the stream was there when last looked for
	cancel  context.CancelFunc
	done    chan struct{}
}

type relayed struct {
	ev  store.Event
	end bool
}

var _ store.Publisher = (*Relay)(nil)

// NewRelay starts relaying over nc, until Stop.
func NewRelay(nc *nats.Conn, opts EventOptions) *Relay {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Relay{nc: nc, opts: opts, subject: EventSubjectPrefix + opts.Node,
		ch: make(chan relayed, opts.Buffer), cancel: cancel, done: make(chan struct{})}
	go r.loop(ctx)
	return r
}

// Node returns the node's name.
func (r *Relay) Node() string { return r.opts.Node }

// Publish relays ev, unless the buffer is full. It never blocks.
func (r *Relay) Publish(ev store.Event) {
	select {
	case r.ch <- relayed{ev: ev}:
	default:
		r.dropped.Add(1)
	}
}

// End relays the end of session, unless the buffer is full.
func (r *Relay) End(session string) {
	select {
	case r.ch <- relayed{ev: store.Event{Session: session}, end: true}:
	default:
		r.dropped.Add(1)
	}
}

// Stats returns what the Relay carried.
func (r *Relay) Stats() EventStats {
	return EventStats{Events: r.events.Load(), Dropped: r.dropped.Load(), Connected: r.found.Load() && r.nc.IsConnected()}
}

// Stop stops the Relay; what it holds is not published.
func (r *Relay) Stop() {
	r.cancel()
	<-r.done
}

// maxEventMessage is the size past which the records a Relay holds go
// in more than one message.
const maxEventMessage = 256 << 10

func (r *Relay) loop(ctx context.Context) {
	defer close(r.done)
	js, err := jetstream.New(r.nc)
	if err != nil {
		r.opts.Logf("events to NATS: %v", err)
		return
	}
	var (
		buf     []byte
		n       int
		checked time.Time // when the stream was last found to exist
		ok      bool
	)
	flush := func() {
		if n == 0 {
			return
		}
		if err := r.nc.Publish(r.subject, buf); err != nil {
			r.dropped.Add(int64(n))
		} else {
			r.events.Add(int64(n))
		}
		buf, n = buf[:0], 0
	}
	// A message published to a subject no stream takes is lost: the
	// stream is made, and looked for again every ten seconds while events
	// come (every second while it is missing).
	check := func() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := EnsureEventStream(cctx, js, r.opts.Replicas)
		cancel()
		checked = time.Now()
		r.found.Store(err == nil)
		if (err == nil) != ok {
			ok = err == nil
			if ok {
				r.opts.Logf("events to NATS: stream %s", EventStreamName)
			} else {
				r.opts.Logf("events to NATS paused: %v", err)
			}
		}
		if !ok {
			checked = checked.Add(-9 * time.Second) // again in a second
		}
	}
	check()
	for {
		var it relayed
		select {
		case <-ctx.Done():
			return
		case it = <-r.ch:
		}
		if time.Since(checked) > 10*time.Second {
			check()
		}
		limit := int(r.nc.MaxPayload())
		for {
			if !ok {
				r.dropped.Add(1)
			} else {
				mark := len(buf)
				buf = appendRecord(buf, it)
				switch {
				case len(buf)-mark > limit:
					// Too large for a message.
					buf = buf[:mark]
					r.dropped.Add(1)
				case len(buf) > maxEventMessage && mark > 0:
					rec := append([]byte(nil), buf[mark:]...)
					buf = buf[:mark]
					flush()
					buf = append(buf, rec...)
					n = 1
				default:
					n++
				}
			}
			select {
			case it = <-r.ch:
				continue
			default:
			}
			break
		}
		flush()
	}
}

func appendRecord(b []byte, it relayed) []byte {
	b = append(b, `{"session":`...)
	b = jsonscan.AppendQuote(b, it.ev.Session)
	if it.end {
		return append(b, `,"end":true}`+"\n"...)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, it.ev.Seq, 10)
	if it.ev.Prev != 0 {
		b = append(b, `,"prev":`...)
		b = strconv.AppendInt(b, it.ev.Prev, 10)
	}
	b = append(b, `,"type":`...)
	b = jsonscan.AppendQuote(b, it.ev.Type)
	b = append(b, `,"data":`...)
	if len(it.ev.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, it.ev.Data...)
	}
	return append(b, "}\n"...)
}

type eventRecord struct {
	Session string          `json:"session"`
	Seq     int64           `json:"seq"`
	Prev    int64           `json:"prev"`
	Type    string          `json:"type"`
	Data    json.RawMessage `json:"data"`
	End     bool            `json:"end"`
}

// decodeEvents hands the records of one message to pub, skipping those
// that are not well-formed; it returns how many it handed on.
func decodeEvents(data []byte, pub store.Publisher) int {
	n := 0
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		var rec eventRecord
		if len(line) == 0 || json.Unmarshal(line, &rec) != nil || !store.ValidID(rec.Session) {
			continue
		}
		switch {
		case rec.End:
			pub.End(rec.Session)
		case rec.Seq < 0 || rec.Type == "" || len(rec.Data) == 0 || rec.Data[0] != '{':
			continue
		default:
			pub.Publish(store.Event{Session: rec.Session, Seq: rec.Seq, Prev: rec.Prev, Type: rec.Type, Data: rec.Data})
		}
		n++
	}
	return n
}

// Feed follows the stream of events with one ordered consumer, from the
// messages published after it started, and hands what other nodes
// committed to a publisher (a hub's). After NATS or the stream was away
// it resumes after the last message it had, when the stream still holds
// it; what it missed meanwhile the store has.
type Feed struct {
	nc        *nats.Conn
	pub       store.Publisher
	opts      EventOptions
	own       string
	events    atomic.Int64
	connected atomic.Bool
	cancel    context.CancelFunc
	done      chan struct{}
}

// FollowEvents starts a Feed over nc into pub, until Stop.
func FollowEvents(nc *nats.Conn, pub store.Publisher, opts EventOptions) *Feed {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	f := &Feed{nc: nc, pub: pub, opts: opts, own: EventSubjectPrefix + opts.Node, cancel: cancel, done: make(chan struct{})}
	go f.loop(ctx)
	return f
}

// Stats returns what the Feed carried.
func (f *Feed) Stats() EventStats {
	return EventStats{Events: f.events.Load(), Connected: f.connected.Load() && f.nc.IsConnected()}
}

// Stop stops the Feed and waits for it.
func (f *Feed) Stop() {
	f.cancel()
	<-f.done
}

func (f *Feed) loop(ctx context.Context) {
	defer close(f.done)
	js, err := jetstream.New(f.nc)
	if err != nil {
		f.opts.Logf("events from NATS: %v", err)
		return
	}
	var last uint64 // the stream sequence of the last message had
	var said string
	for ctx.Err() == nil {
		err := f.follow(ctx, js, &last)
		f.connected.Store(false)
		if ctx.Err() != nil {
			return
		}
		if err != nil && err.Error() != said {
			said = err.Error()
			f.opts.Logf("events from NATS paused: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// follow consumes until ctx is done or the consumer fails.
func (f *Feed) follow(ctx context.Context, js jetstream.JetStream, last *uint64) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := EnsureEventStream(cctx, js, f.opts.Replicas)
	if err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy}
	if info, err := s.Info(cctx); err == nil && *last > 0 && info.State.LastSeq >= *last && info.State.FirstSeq <= *last+1 {
		cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: *last + 1}
	}
	c, err := s.OrderedConsumer(cctx, cfg)
	if err != nil {
		return fmt.Errorf("natsbus: follow %s: %w", EventStreamName, err)
	}
	it, err := c.Messages()
	if err != nil {
		return fmt.Errorf("natsbus: follow %s: %w", EventStreamName, err)
	}
	defer it.Stop()
	f.connected.Store(true)
	f.opts.Logf("events from NATS: following %s", EventStreamName)
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, nats.ErrTimeout) {
				if ctx.Err() != nil {
					return nil
				}
				continue
			}
			return fmt.Errorf("natsbus: follow %s: %w", EventStreamName, err)
		}
		if md, err := m.Metadata(); err == nil {
			*last = md.Sequence.Stream
		}
		if m.Subject() == f.own || !strings.HasPrefix(m.Subject(), EventSubjectPrefix) {
			continue
		}
		f.events.Add(int64(decodeEvents(m.Data(), f.pub)))
	}
}
