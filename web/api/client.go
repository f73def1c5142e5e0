package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentstream/agentstream/store"
)

// Client sends a session to a remote agentstream server: it creates the
// session, then posts its native lines. Posting lines is idempotent on the
// server (lines it already has are ignored), so a request whose answer was
// lost is simply sent again. A Client is safe for concurrent use.
type Client struct {
	// URL is the server's base URL, such as "http://127.0.0.1:8377".
	URL string
	// Token is sent as a bearer token when set.
	Token string
	// HTTP is the client used; nil means one with a 30 s timeout.
	HTTP *http.Client
	// Retries is how many times a failed request is sent again (network
	// errors, 5xx, 429); zero means 8, negative none.
	Retries int
	// Backoff is the first wait before a retry, doubled each time up to
	// 5 s; zero means 200 ms.
	Backoff time.Duration
}

// APIError is an error answer of the server.
type APIError struct {
	Status  int
	Message string
	// Expected is the line number the server expects next, per stream, on
	// a 409 for lines sent out of order.
	Expected map[string]int64
}

func (e *APIError) Error() string {
	return fmt.Sprintf("api: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

var defaultHTTP = &http.Client{Timeout: 30 * time.Second}

// do sends a JSON request, retrying what can be retried, and decodes the
// answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	retries := c.Retries
	if retries == 0 {
		retries = 8
	}
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	url := strings.TrimRight(c.URL, "/") + path
	var last error
	for attempt := 0; ; attempt++ {
		retry, err := c.once(ctx, method, url, b, out)
		if err == nil || !retry || attempt >= retries {
			return err
		}
		last = err
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), last)
		case <-t.C:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (c *Client) once(ctx context.Context, method, url string, body []byte, out any) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("api: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("api: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("api: %s %s: %w", method, url, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error    string           `json:"error"`
			Expected map[string]int64 `json:"expected"`
		}
		_ = json.Unmarshal(data, &e)
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return retry, &APIError{Status: resp.StatusCode, Message: e.Error, Expected: e.Expected}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return false, fmt.Errorf("api: %s %s: %w", method, url, err)
		}
	}
	return false, nil
}

// CreateSession creates a session on the server and returns its record.
func (c *Client) CreateSession(ctx context.Context, req CreateRequest) (store.Session, error) {
	var s store.Session
	err := c.do(ctx, http.MethodPost, "/api/sessions", req, &s)
	return s, err
}

// PostLines sends lines of a session, and its end when end is not nil.
func (c *Client) PostLines(ctx context.Context, id string, lines []LineIn, end *End) (LinesResponse, error) {
	var resp LinesResponse
	if lines == nil {
		lines = []LineIn{}
	}
	err := c.do(ctx, http.MethodPost, "/api/sessions/"+id+"/lines", LinesRequest{Lines: lines, End: end}, &resp)
	return resp, err
}

// UploaderOptions tune an Uploader. The zero value gives the defaults.
type UploaderOptions struct {
	// Interval is how long a line may wait before it is sent; zero means
	// 100 ms.
	Interval time.Duration
	// BatchLines and BatchBytes make a batch go at once; zero means 512
	// lines and 4 MiB.
	BatchLines int
	BatchBytes int
	// Heartbeat is how long the uploader may send nothing before it sends
	// an empty request, so that the server knows the runner is alive
	// (the server ends a session silent for its heartbeat timeout, 2
	// minutes by default); zero means 30 s.
	Heartbeat time.Duration
}

// Uploader sends a session's native lines in the background, in batches,
// keeping each line until the server acknowledged it. Line never waits for
// the network; Close sends what is left and the end. The runner calls Line
// for each native line it reads (stdout and stderr, each numbered from 1),
// in order, from one goroutine.
type Uploader struct {
	c    *Client
	id   string
	opts UploaderOptions

	mu      sync.Mutex
	pending []LineIn
	bytes   int
	err     error
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	sendMu  sync.Mutex
	sent    time.Time // when a request last succeeded; under sendMu
}

// NewUploader starts an Uploader for session id (created with
// CreateSession).
func (c *Client) NewUploader(id string, opts UploaderOptions) *Uploader {
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.BatchLines <= 0 {
		opts.BatchLines = 512
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 4 << 20
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 30 * time.Second
	}
	u := &Uploader{c: c, id: id, opts: opts, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), sent: time.Now()}
	go u.loop()
	return u
}

// Line queues one native line (its Data is copied). It returns the error
// that stopped the uploader, if any.
func (u *Uploader) Line(l store.Line) error {
	in := NewLineIn(l)
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return u.err
	}
	u.pending = append(u.pending, in)
	u.bytes += len(in.Text) + len(in.Data)
	if len(u.pending) >= u.opts.BatchLines || u.bytes >= u.opts.BatchBytes {
		select {
		case u.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

// Spool returns an io.WriteCloser that cuts a native stream's bytes into
// lines (as store.LineSplitter does) and queues them: what a runner can
// give as its spool.
func (u *Uploader) Spool(stream string) io.WriteCloser {
	return &store.LineSplitter{Stream: stream, Fn: u.Line}
}

func (u *Uploader) loop() {
	defer close(u.done)
	t := time.NewTicker(u.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-u.stop:
			return
		case <-u.kick:
		case <-t.C:
		}
		_ = u.send(context.Background(), nil)
		u.heartbeat()
	}
}

// heartbeat sends an empty request when nothing was sent for
// UploaderOptions.Heartbeat.
func (u *Uploader) heartbeat() {
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	if time.Since(u.sent) < u.opts.Heartbeat {
		return
	}
	u.mu.Lock()
	stopped := u.err != nil
	u.mu.Unlock()
	if stopped {
		return
	}
	if _, err := u.c.PostLines(context.Background(), u.id, nil, nil); err != nil {
		u.mu.Lock()
		u.err = err
		u.mu.Unlock()
		return
	}
	u.sent = time.Now()
}

// send posts what is pending (and end, when not nil), keeping lines until
// the server took them.
func (u *Uploader) send(ctx context.Context, end *End) error {
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	for {
		u.mu.Lock()
		if u.err != nil {
			err := u.err
			u.mu.Unlock()
			return err
		}
		n := min(len(u.pending), u.opts.BatchLines)
		batch := u.pending[:n:n]
		u.mu.Unlock()
		if n == 0 && end == nil {
			return nil
		}
		var e *End
		if n == len(batch) && n == u.pendingLen() {
			e = end
		}
		_, err := u.c.PostLines(ctx, u.id, batch, e)
		if err != nil {
			u.mu.Lock()
			u.err = err
			u.mu.Unlock()
			return err
		}
		u.sent = time.Now()
		u.mu.Lock()
		for _, l := range u.pending[:n] {
			u.bytes -= len(l.Text) + len(l.Data)
		}
		u.pending = u.pending[n:]
		left := len(u.pending)
		u.mu.Unlock()
		if e != nil || (left == 0 && end == nil) {
			return nil
		}
	}
}

func (u *Uploader) pendingLen() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.pending)
}

// Flush sends what is queued and returns once the server has it.
func (u *Uploader) Flush(ctx context.Context) error { return u.send(ctx, nil) }

// Close sends what is queued and the end of the session, and stops the
// uploader.
func (u *Uploader) Close(ctx context.Context, end End) error {
	select {
	case <-u.stop:
		return errors.New("api: uploader closed")
	default:
	}
	close(u.stop)
	<-u.done
	return u.send(ctx, &end)
}
