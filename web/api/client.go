package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
	return c.doBytes(ctx, method, path, b, out)
}

// doBytes sends a request of JSON body b, as do does.
func (c *Client) doBytes(ctx context.Context, method, path string, b []byte, out any) error {
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

// postRaw sends lines given as their JSON (LineIn objects) and the end.
func (c *Client) postRaw(ctx context.Context, id string, lines []json.RawMessage, end *End, body []byte) ([]byte, error) {
	body = append(body[:0], `{"lines":[`...)
	for i, l := range lines {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, l...)
	}
	body = append(body, `],"end":`...)
	e, err := json.Marshal(end)
	if err != nil {
		return body, fmt.Errorf("api: %w", err)
	}
	body = append(append(body, e...), '}')
	var resp LinesResponse
	return body, c.doBytes(ctx, http.MethodPost, "/api/sessions/"+id+"/lines", body, &resp)
}

// UploaderOptions tune an Uploader. The zero value gives the defaults.
type UploaderOptions struct {
	// Interval is how often the spool is looked at for new records when
	// nothing signalled them; zero means 100 ms.
	Interval time.Duration
	// BatchLines and BatchBytes bound a request, and BatchBytes the window
	// of the spool held in memory; zero means 512 lines and 4 MiB.
	BatchLines int
	BatchBytes int
	// Backoff is the first wait after a failed request, doubled each time
	// up to MaxBackoff; zero means 200 ms and 5 s.
	Backoff, MaxBackoff time.Duration
	// Heartbeat is how long the uploader may send nothing before it sends
	// an empty request, so that the server knows the runner is alive
	// (the server ends a session silent for its heartbeat timeout, 2
	// minutes by default); zero means 30 s.
	Heartbeat time.Duration
}

// Uploader sends the records of a Spool to the server in the background,
// from the byte offset the server last acknowledged (the spool's cursor),
// in batches read from the file, so that it holds at most one window of
// lines in memory however far behind it is. While the server is away
// (network errors, 5xx, 429, a session the server is not ready to take) it
// waits and tries again, with backoff, for as long as it runs; lines the
// server already has are ignored there, so a batch whose answer was lost is
// simply sent again. It creates the session first (a 409 for an id that
// exists means an earlier run or attempt did). Once the server
// acknowledged the spool's end, the uploader removes the spool's files and
// stops. A permanent refusal (a bad token, a bad request) stops it with
// that error.
//
// The uploader's goroutine returns when the upload finished or failed, or
// when Stop is called. The methods are safe for concurrent use.
type Uploader struct {
	c    Client
	sp   *Spool
	opts UploaderOptions

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	acked   int64
	err     error // why the upload stopped for good, nil once it finished
	lastErr error // the last failed attempt
}

// NewUploader starts uploading sp, whose session it creates when the
// server does not have it.
func (c *Client) NewUploader(sp *Spool, opts UploaderOptions) *Uploader {
	if opts.Interval <= 0 {
		opts.Interval = 100 * time.Millisecond
	}
	if opts.BatchLines <= 0 {
		opts.BatchLines = 512
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = 4 << 20
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	u := &Uploader{c: *c, sp: sp, opts: opts, cancel: cancel, done: make(chan struct{})}
	u.c.Retries = -1 // the uploader retries on its own, without end
	go u.loop(ctx)
	return u
}

// errFinished is the uploader's state once the server has the whole spool.
var errFinished = errors.New("api: upload finished")

// Done is closed when the uploader stopped: finished, failed, or stopped.
func (u *Uploader) Done() <-chan struct{} { return u.done }

// Wait waits until the server has the whole spool, the upload failed for
// good, or ctx ends. It returns nil once the upload finished, the error
// that stopped it, or ctx's error with the last failed attempt; the
// uploader goes on after ctx ends.
func (u *Uploader) Wait(ctx context.Context) error {
	select {
	case <-u.done:
		return u.result()
	case <-ctx.Done():
		u.mu.Lock()
		last := u.lastErr
		u.mu.Unlock()
		if last != nil {
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), last)
		}
		return ctx.Err()
	}
}

func (u *Uploader) result() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if errors.Is(u.err, errFinished) {
		return nil
	}
	if u.err == nil {
		return errors.New("api: upload stopped")
	}
	return u.err
}

// Acked returns the offset in the spool up to which the server has the
// records.
func (u *Uploader) Acked() int64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.acked
}

// Stop stops the uploader and waits for its goroutine; what the server does
// not have stays in the spool, from the cursor.
func (u *Uploader) Stop() {
	u.cancel()
	<-u.done
}

func (u *Uploader) stopWith(err error) {
	u.mu.Lock()
	u.err = err
	u.mu.Unlock()
}

// cursorEvery is how often an uploader writes its spool's cursor at most:
// a write (and a rename) per batch would cost a session that sends a few
// lines at a time more than the request.
const cursorEvery = time.Second

func (u *Uploader) loop(ctx context.Context) {
	defer close(u.done)
	defer u.cancel()
	r, err := os.Open(u.sp.Path())
	if err != nil {
		u.stopWith(fmt.Errorf("api: spool: %w", err))
		return
	}
	defer r.Close()
	off := u.sp.cursor()
	u.mu.Lock()
	u.acked = off
	u.mu.Unlock()
	// The cursor is written at most every cursorEvery, and when the loop
	// ends: it may lag, since the server ignores the lines it has.
	dirty, savedAt := false, time.Now()
	defer func() {
		if dirty {
			_ = u.sp.saveCursor(off)
		}
	}()
	created := false
	sent := time.Now() // when a request last succeeded
	backoff := u.opts.Backoff
	var buf, body []byte
	tick := time.NewTicker(u.opts.Interval)
	defer tick.Stop()
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	// The window read at the cursor follows the size of the batches, so
	// that a batch of short lines does not read megabytes.
	window := min(64<<10, u.opts.BatchBytes)
	for {
		lines, end, next, err := u.sp.records(r, off, u.opts.BatchLines, window, &buf)
		if err != nil {
			u.stopWith(err)
			return
		}
		if len(lines) == 0 && end == nil {
			if next > off {
				off = next // the header
				continue
			}
			select {
			case <-ctx.Done():
				return
			case <-u.sp.notify:
			case <-tick.C:
			}
			if created && time.Since(sent) >= u.opts.Heartbeat {
				// Nothing to send for a while: an empty request says the
				// runner is alive. A failure is retried at the next tick.
				if body, err = u.c.postRaw(ctx, u.sp.Session(), nil, nil, body); err == nil {
					sent = time.Now()
				}
			}
			continue
		}
		if !created {
			_, err = u.c.CreateSession(ctx, u.sp.header.Session)
			var ae *APIError
			if err == nil || errors.As(err, &ae) && ae.Status == http.StatusConflict {
				created, err = true, nil
			}
		}
		if err == nil {
			body, err = u.c.postRaw(ctx, u.sp.Session(), lines, end, body)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var ae *APIError
			if errors.As(err, &ae) {
				switch {
				case ae.Status == http.StatusConflict && len(ae.Expected) > 0:
					// The server lacks lines before these (it lost some):
					// send again from the start; it ignores those it has.
					off = 0
				case ae.Status == http.StatusConflict && strings.Contains(ae.Message, "has ended"):
					u.stopWith(err)
					return
				case ae.Status == http.StatusNotFound:
					created = false
				case ae.Status == http.StatusConflict || ae.Status >= 500 || ae.Status == http.StatusTooManyRequests:
				default:
					u.stopWith(err)
					return
				}
			}
			u.mu.Lock()
			u.lastErr = err
			u.mu.Unlock()
			if !wait(backoff) {
				return
			}
			backoff = min(2*backoff, u.opts.MaxBackoff)
			continue
		}
		backoff, sent = u.opts.Backoff, time.Now()
		if len(lines) == u.opts.BatchLines {
			window = min(max(window, 2*int(next-off)), u.opts.BatchBytes)
		} else if int(next-off) >= window/2 {
			window = min(2*window, u.opts.BatchBytes)
		}
		off, dirty = next, true
		if end == nil && time.Since(savedAt) >= cursorEvery {
			if err := u.sp.saveCursor(off); err != nil {
				u.stopWith(fmt.Errorf("api: spool cursor: %w", err))
				return
			}
			dirty, savedAt = false, time.Now()
		}
		u.mu.Lock()
		u.acked, u.lastErr = off, nil
		u.mu.Unlock()
		if end != nil {
			dirty = false // the spool and its cursor go
			if err := u.sp.remove(); err != nil {
				u.stopWith(fmt.Errorf("api: spool: %w", err))
				return
			}
			u.stopWith(errFinished)
			return
		}
	}
}
