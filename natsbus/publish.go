package natsbus

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentstream/agentstream/web/api"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublisherOptions tune a Publisher. The zero value gives the defaults.
type PublisherOptions struct {
	// Interval is how often the spool is looked at for new records when
	// nothing signalled them; zero means 100 ms.
	Interval time.Duration
	// BatchRecords bounds the records of one message; zero means 256.
	// A message is also bounded by the server's maximum payload.
	BatchRecords int
	// Backoff is the first wait after a failed publish, doubled each time
	// up to MaxBackoff; zero means 200 ms and 5 s.
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one publish; zero means 5 s.
	Timeout time.Duration
}

// ErrRefused is the error of a Publisher that the stream refused for good:
// the session's subject holds a message whose last record the spool does
// not (another runner publishes the session, or this one is stale).
var ErrRefused = errors.New("natsbus: the stream holds records of this session that the spool does not")

// errFinished is a publisher's state once the stream has the whole spool.
var errFinished = errors.New("natsbus: publish finished")

// Publisher publishes the records of a spool to its session's subject in
// the background, from the last record the stream holds, in messages of
// consecutive records read from the file (see the package doc). It
// advances the spool's cursor only after the stream acknowledged a
// message. While NATS is away it waits and tries again, with backoff, for
// as long as it runs; the runner goes on spooling meanwhile. Once the
// stream acknowledged the spool's end, it removes the spool's files and
// stops.
//
// The goroutine returns when the publish finished or was refused, or when
// Stop is called. The methods are safe for concurrent use.
type Publisher struct {
	js   jetstream.JetStream
	obs  jetstream.ObjectStore // opened when a record needs it; the loop's
	nc   *nats.Conn
	own  bool // nc is closed when the publisher stops
	sp   *api.Spool
	opts PublisherOptions

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	acked   int64
	err     error
	lastErr error
}

// NewPublisher starts publishing sp over nc, which the caller closes
// after the publisher stopped.
func NewPublisher(nc *nats.Conn, sp *api.Spool, opts PublisherOptions) (*Publisher, error) {
	return newPublisher(nc, false, sp, opts)
}

func newPublisher(nc *nats.Conn, own bool, sp *api.Spool, opts PublisherOptions) (*Publisher, error) {
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.BatchRecords <= 0 {
		opts.BatchRecords = 256
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{js: js, nc: nc, own: own, sp: sp, opts: opts, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p, nil
}

// Publish connects to the NATS servers urls (a comma-separated list, see
// Connect) and starts publishing sp; the connection is closed when the
// publisher stops.
func Publish(urls string, sp *api.Spool, opts PublisherOptions) (*Publisher, error) {
	nc, err := Connect(urls, "agentstream run "+sp.Session())
	if err != nil {
		return nil, err
	}
	p, err := newPublisher(nc, true, sp, opts)
	if err != nil {
		nc.Close()
	}
	return p, err
}

// Done is closed when the publisher stopped: finished, refused, or stopped.
func (p *Publisher) Done() <-chan struct{} { return p.done }

// Wait waits until the stream has the whole spool, the publisher was
// refused, or ctx ends. It returns nil once the publish finished, the
// error that stopped it, or ctx's error with the last failed attempt.
func (p *Publisher) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		if errors.Is(p.err, errFinished) {
			return nil
		}
		if p.err == nil {
			return errors.New("natsbus: publish stopped")
		}
		return p.err
	case <-ctx.Done():
		p.mu.Lock()
		last := p.lastErr
		p.mu.Unlock()
		if last != nil {
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), last)
		}
		return ctx.Err()
	}
}

// Acked returns the offset in the spool up to which the stream has the
// records.
func (p *Publisher) Acked() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked
}

// Stop stops the publisher and waits for its goroutine; what the stream
// does not have stays in the spool.
func (p *Publisher) Stop() {
	p.cancel()
	<-p.done
}

func (p *Publisher) stopWith(err error) {
	p.mu.Lock()
	p.err = err
	p.mu.Unlock()
}

func (p *Publisher) failed(err error) {
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}

func (p *Publisher) loop(ctx context.Context) {
	defer close(p.done)
	if p.own {
		defer p.nc.Close()
	}
	defer p.cancel()
	r, err := os.Open(p.sp.Path())
	if err != nil {
		p.stopWith(fmt.Errorf("natsbus: spool: %w", err))
		return
	}
	defer r.Close()
	subject := Subject(p.sp.Session())
	backoff := p.opts.Backoff
	wait := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, p.opts.MaxBackoff)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	tick := time.NewTicker(p.opts.Interval)
	defer tick.Stop()
	var (
		synced bool
		off    int64  // the spool's offset after the last record the stream has
		last   uint64 // the stream sequence of the session's last message
		buf    []byte
		msg    []byte

		// The cursor is written at most every cursorEvery, and when the
		// loop ends: it says how far the stream acknowledged the spool,
		// but nothing relies on it being exact, since sync looks the
		// stream up.
		dirty   bool
		savedAt time.Time
	)
	defer func() {
		if dirty {
			_ = p.sp.SaveCursor(off)
		}
	}()
	for {
		if !synced {
			off, last, err = p.sync(ctx, r, subject, &buf)
			if errors.Is(err, ErrRefused) {
				p.stopWith(err)
				return
			}
			if err != nil {
				p.failed(err)
				if !wait() {
					return
				}
				continue
			}
			synced = true
			p.mu.Lock()
			p.acked = off
			p.mu.Unlock()
		}
		recs, _, err := p.sp.RawRecords(r, off, p.opts.BatchRecords, 64<<10, &buf)
		if err != nil {
			p.stopWith(err)
			return
		}
		if len(recs) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-p.sp.Notify():
			case <-tick.C:
			}
			continue
		}
		limit := int(p.nc.MaxPayload()) - 1024
		if limit < 4096 {
			limit = 4096
		}
		var (
			id    string
			taken int
			ended bool
			objs  []object
		)
		msg, id, taken, ended, objs, err = pack(msg[:0], p.sp.Session(), recs, off, limit)
		if err != nil {
			p.stopWith(err)
			return
		}
		if err := p.putObjects(ctx, objs); err != nil {
			if ctx.Err() != nil {
				return
			}
			p.failed(err)
			if !wait() {
				return
			}
			continue
		}
		next := off
		for _, rec := range recs[:taken] {
			next += int64(len(rec) + 1)
		}
		m := &nats.Msg{Subject: subject, Data: msg, Header: nats.Header{}}
		m.Header.Set(jetstream.MsgIDHeader, id)
		pctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
		ack, err := p.js.PublishMsg(pctx, m, jetstream.WithExpectLastSequencePerSubject(last))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var apiErr *jetstream.APIError
			if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
				apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
				// The subject moved on without us (an ack lost past the
				// duplicate window, another runner): look where it stands.
				synced = false
				continue
			}
			p.failed(fmt.Errorf("natsbus: publish %s: %w", id, err))
			if !wait() {
				return
			}
			continue
		}
		backoff = p.opts.Backoff
		last, off = ack.Sequence, next
		dirty = true
		if !ended && time.Since(savedAt) >= cursorEvery {
			if err := p.sp.SaveCursor(off); err != nil {
				p.stopWith(fmt.Errorf("natsbus: spool cursor: %w", err))
				return
			}
			dirty, savedAt = false, time.Now()
		}
		p.mu.Lock()
		p.acked, p.lastErr = off, nil
		p.mu.Unlock()
		if ended {
			dirty = false // the spool and its cursor go
			if err := p.sp.Remove(); err != nil {
				p.stopWith(fmt.Errorf("natsbus: spool: %w", err))
				return
			}
			p.stopWith(errFinished)
			return
		}
	}
}

// cursorEvery is how often a publisher writes its spool's cursor at most:
// a write per message would cost a session that sends a message for every
// few lines more than the publish.
const cursorEvery = time.Second

// putObjects puts the records of objs in the object store, before the
// message naming them is published. A record put again (a retry, another
// runner resuming the spool) replaces the same bytes.
func (p *Publisher) putObjects(ctx context.Context, objs []object) error {
	if len(objs) == 0 {
		return nil
	}
	if p.obs == nil {
		octx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
		obs, err := EnsureObjectStore(octx, p.js, 0)
		cancel()
		if err != nil {
			return err
		}
		p.obs = obs
	}
	for _, o := range objs {
		// A put moves the whole record; its time grows with its size.
		octx, cancel := context.WithTimeout(ctx, p.opts.Timeout+time.Duration(len(o.data)>>20)*time.Second)
		_, err := p.obs.PutBytes(octx, o.name, o.data)
		cancel()
		if err != nil {
			return fmt.Errorf("natsbus: object %s: %w", o.name, err)
		}
	}
	return nil
}

// sync looks up the session's last message in the stream and returns the
// spool's offset after the record it names, and its stream sequence; with
// no message, the start of the spool and 0. A record the spool does not
// hold is ErrRefused.
func (p *Publisher) sync(ctx context.Context, r *os.File, subject string, buf *[]byte) (int64, uint64, error) {
	lctx, cancel := context.WithTimeout(ctx, p.opts.Timeout)
	defer cancel()
	s, err := EnsureStream(lctx, p.js, 0)
	if err != nil {
		return 0, 0, err
	}
	m, err := s.GetLastMsgForSubject(lctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("natsbus: last message of %s: %w", subject, err)
	}
	want := m.Header.Get(jetstream.MsgIDHeader)
	var off int64
	for {
		recs, next, err := p.sp.RawRecords(r, off, 4096, 1<<20, buf)
		if err != nil {
			return 0, 0, err
		}
		if len(recs) == 0 {
			return 0, 0, fmt.Errorf("%w (its last message is %s)", ErrRefused, want)
		}
		at := off
		for _, rec := range recs {
			at += int64(len(rec) + 1)
			id, err := recordID(p.sp.Session(), rec, at == int64(len(rec)+1))
			if err != nil {
				return 0, 0, err
			}
			if id == want {
				return at, m.Sequence, nil
			}
		}
		off = next
	}
}

var linePrefix = []byte(`{"line":{"stream":"`)

// recordID returns the message id of a spool record: SESSION/session for
// the header, SESSION/STREAM/N for a line, SESSION/end for the end.
func recordID(session string, rec []byte, header bool) (string, error) {
	if header {
		return session + "/session", nil
	}
	// A line record begins {"line":{"stream":"S","n":N as the spool writes
	// it; anything else is decoded.
	if rest, ok := bytes.CutPrefix(rec, linePrefix); ok {
		if stream, rest, ok := bytes.Cut(rest, []byte(`","n":`)); ok {
			i := 0
			for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
				i++
			}
			if i > 0 && i < len(rest) && (rest[i] == ',' || rest[i] == '}') {
				return session + "/" + string(stream) + "/" + string(rest[:i]), nil
			}
		}
	}
	var r struct {
		Line *struct {
			Stream string `json:"stream"`
			N      int64  `json:"n"`
		} `json:"line"`
		End json.RawMessage `json:"end"`
	}
	if err := json.Unmarshal(rec, &r); err != nil {
		return "", fmt.Errorf("natsbus: spool record: %w", err)
	}
	switch {
	case r.Line != nil:
		return session + "/" + r.Line.Stream + "/" + strconv.FormatInt(r.Line.N, 10), nil
	case r.End != nil:
		return session + "/end", nil
	}
	return "", fmt.Errorf("natsbus: spool record of no known kind: %.40q", rec)
}

// pack appends to msg the records of recs that fit in limit bytes (at
// least one), one per line, and returns the message, the id of its last
// record, how many records it took, whether the last is the end, and the
// records too large for a message: each is in the message as its stub (see
// stubRecord), to be put in the object store under its id before the
// message is published. off is the offset of recs[0].
func pack(msg []byte, session string, recs [][]byte, off int64, limit int) (_ []byte, id string, taken int, ended bool, objs []object, err error) {
	for i, rec := range recs {
		whole := rec
		if len(rec) > limit {
			if id, err = recordID(session, rec, off == 0 && i == 0); err != nil {
				return nil, "", 0, false, nil, err
			}
			if rec, err = stubRecord(rec, id, min(limit, stubLimit)); err != nil {
				return nil, "", 0, false, nil, err
			}
		}
		if i > 0 && len(msg)+1+len(rec) > limit {
			break
		}
		if i > 0 {
			msg = append(msg, '\n')
		}
		msg = append(msg, rec...)
		if id, err = recordID(session, rec, off == 0 && i == 0); err != nil {
			return nil, "", 0, false, nil, err
		}
		if len(whole) != len(rec) {
			objs = append(objs, object{name: id, data: whole})
		}
		taken = i + 1
		if bytes.HasPrefix(rec, []byte(`{"end":`)) {
			ended = true
			break
		}
	}
	return msg, id, taken, ended, objs, nil
}

// object is a record that goes through the object store.
type object struct {
	name string
	data []byte
}

// stubLimit bounds the stub of a record carried by the object store.
const stubLimit = 32 << 10

// ObjectBucket is the JetStream object store of the records too large for
// a message, each named by its message id (docs/cluster.md).
const ObjectBucket = "agentstream-lines"

// ObjectStoreConfig is the configuration of the object store
// EnsureObjectStore makes: file storage, objects kept until deleted, as the
// stream keeps its messages, on replicas servers of a cluster (0 or 1:
// one).
func ObjectStoreConfig(replicas int) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{Bucket: ObjectBucket, Description: "agentstream: native lines over the payload limit",
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1)}
}

// EnsureObjectStore opens the object store, making it with replicas when
// it does not exist. serve makes it, as it makes the stream, with the
// cluster's replicas; a runner that finds it missing makes it with one.
func EnsureObjectStore(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, ObjectBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = js.CreateObjectStore(ctx, ObjectStoreConfig(replicas))
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = js.ObjectStore(ctx, ObjectBucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("natsbus: object store %s: %w", ObjectBucket, err)
	}
	return obs, nil
}

// stubRecord returns the record that stands in a message for rec, a line
// record larger than the payload limit, whose whole is in the object store
// under name: the line clipped to a head that fits in limit (see
// clipRecord), which a consumer that cannot fetch the object keeps as a
// truncated line, and "object" naming it with the record's size and
// SHA-256.
func stubRecord(rec []byte, name string, limit int) ([]byte, error) {
	var r struct {
		Line *api.LineIn `json:"line"`
	}
	if err := json.Unmarshal(rec, &r); err != nil || r.Line == nil {
		return nil, fmt.Errorf("natsbus: a spool record of %d bytes, over the payload limit, is not a line", len(rec))
	}
	head, err := clipLine(r.Line, limit-512-len(name))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(rec)
	return json.Marshal(stub{Line: head, Object: &objectRef{Name: name, Size: int64(len(rec)), SHA256: hex.EncodeToString(sum[:])}})
}

// stub is a record carried by the object store, as a message holds it.
type stub struct {
	Line   *api.LineIn `json:"line"`
	Object *objectRef  `json:"object"`
}

// objectRef names the object holding a whole record: its name (the
// record's message id), size and SHA-256 (hex).
type objectRef struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// clipLine returns l shortened to a head whose record fits in limit
// bytes, marked as the spool marks a line past the runner's soft limit:
// the whole line's Size and SHA256 beside its head.
func clipLine(l *api.LineIn, limit int) (*api.LineIn, error) {
	c := *l
	data := l.Data
	text := l.Data == nil
	if text {
		data = []byte(l.Text)
	}
	if c.Size <= int64(len(data)) {
		sum := sha256.Sum256(data)
		c.Size, c.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
	}
	for head := limit / 8; head > 0; head /= 2 {
		h := data[:min(head, len(data))]
		if text {
			for len(h) > 0 && !utf8.Valid(h) {
				h = h[:len(h)-1]
			}
			c.Text, c.Data = string(h), nil
		} else {
			c.Data = h
		}
		b, err := json.Marshal(struct {
			Line *api.LineIn `json:"line"`
		}{&c})
		if err != nil {
			return nil, fmt.Errorf("natsbus: %w", err)
		}
		if len(b) <= limit {
			return &c, nil
		}
	}
	return nil, fmt.Errorf("natsbus: line %s/%d cannot be clipped to %d bytes", l.Stream, l.N, limit)
}
