package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/natsbus"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// recording is where `run` keeps the session beside rendering it: the local
// store, or a server. It is a Handler for the envelopes, and takes the native
// stdout through spool; stderr lines are kept as their stderr events hold
// them.
type recording interface {
	agentstream.Handler
	session() string
	spool() io.Writer
	finish(ctx context.Context, res runner.Result) error
}

// stderrLine returns the native stderr line an envelope stands for, if any.
func stderrLine(e agentstream.Envelope) (store.Line, bool) {
	p, ok := e.Payload.(*agentstream.Stderr)
	if !ok || e.Source == nil || e.Source.Stream != store.Stderr {
		return store.Line{}, false
	}
	return store.Line{Stream: store.Stderr, N: e.Source.Line, Data: []byte(p.Text), Size: int64(len(p.Text)), TS: e.TS}, true
}

func harnessOf(protocol string) string {
	if p, ok := agentstream.LookupProtocol(protocol); ok {
		return p.Harness
	}
	return ""
}

// localRecording writes the session into the local store as it runs.
type localRecording struct {
	st       sessionStore
	w        store.Writer
	out      *store.LineSplitter
	protocol string
}

func newLocalRecording(ctx context.Context, e *env, db, id, protocol string, command []string) (*localRecording, error) {
	st, _, err := openStore(ctx, e, db)
	if err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	w, err := st.Create(ctx, store.NewSession{ID: id, Protocol: protocol, Harness: harnessOf(protocol), Cwd: cwd, Command: command})
	if err != nil {
		st.Close()
		return nil, err
	}
	l := &localRecording{st: st, w: w, protocol: protocol}
	l.out = &store.LineSplitter{Stream: store.Stdout, Fn: func(line store.Line) error { return w.Line(ctx, line) }}
	return l, nil
}

func (l *localRecording) session() string  { return l.w.Session() }
func (l *localRecording) spool() io.Writer { return l.out }

func (l *localRecording) Handle(ctx context.Context, e agentstream.Envelope) error {
	if line, ok := stderrLine(e); ok {
		if err := l.w.Line(ctx, line); err != nil {
			return err
		}
	}
	return l.w.Handle(ctx, e)
}

func (l *localRecording) finish(ctx context.Context, res runner.Result) error {
	err := l.out.Close()
	if l.protocol == "auto" && res.Protocol != "" {
		if perr := l.st.SetProtocol(ctx, l.w.Session(), res.Protocol); err == nil {
			err = perr
		}
	}
	if cerr := l.w.Close(ctx); err == nil {
		err = cerr
	}
	if cerr := l.st.Close(); err == nil {
		err = cerr
	}
	return err
}

// spoolDir is where run keeps the spools of the sessions it sends to a
// server: $AGENTSTREAM_SPOOL_DIR, else agentstream/spool in the user's
// cache directory ($XDG_CACHE_HOME or ~/.cache on Linux).
func spoolDir(e *env) (string, error) {
	if d := e.getenv("AGENTSTREAM_SPOOL_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("spool directory: %w (set AGENTSTREAM_SPOOL_DIR)", err)
	}
	return filepath.Join(d, "agentstream", "spool"), nil
}

// remoteRecording spools the native lines to a local file, from which an
// uploader sends them to a server, which normalizes and stores them.
type remoteRecording struct {
	sp     *api.Spool
	up     sender
	out    *store.LineSplitter
	offOut int64 // line numbers taken by an earlier run of the session
	offErr int64
	wait   time.Duration
	stderr io.Writer
}

// sender sends a spool: api.Uploader over HTTP, natsbus.Publisher over
// NATS.
type sender interface {
	Wait(ctx context.Context) error
	Stop()
}

// newSender starts sending sp: published to the NATS servers of its
// header, else uploaded to its server (or url, when set).
func newSender(sp *api.Spool, url, token string) (sender, error) {
	if h := sp.Header(); h.NATS != "" {
		return natsbus.Publish(h.NATS, sp, natsbus.PublisherOptions{})
	}
	if url == "" {
		url = sp.Header().Server
	}
	return (&api.Client{URL: url, Token: token}).NewUploader(sp, api.UploaderOptions{}), nil
}

// newRemoteRecording opens the spool of the session (continuing it when a
// run of the same session left it unfinished), tries once to create the
// session on the server (a refusal ends the run before it starts; a server
// that does not answer does not), and starts the uploader.
//
// With natsURL set (and url empty), the lines are published to those NATS
// servers instead, from the same spool; nothing is asked of a server
// before the run.
func newRemoteRecording(ctx context.Context, e *env, url, natsURL, token, protocol string, command []string, id string, wait time.Duration) (*remoteRecording, error) {
	dir, err := spoolDir(e)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	r := &remoteRecording{wait: wait, stderr: e.stderr}
	if id != "" {
		path := filepath.Join(dir, id+".spool")
		if _, err := os.Stat(path); err == nil {
			sp, err := api.OpenSpool(path)
			if err != nil {
				return nil, fmt.Errorf("session %s: %w", id, err)
			}
			switch h := sp.Header(); {
			case h.Server != url || h.NATS != natsURL:
				sp.Close()
				return nil, fmt.Errorf("session %s: its unfinished spool %s goes to %s, not %s", id, path, h.Server+h.NATS, url+natsURL)
			case sp.Ended():
				sp.Close()
				return nil, fmt.Errorf("session %s has ended; the rest of its upload waits in %s (agentstream run --resume %s)", id, path, path)
			}
			r.sp = sp
			r.offOut, r.offErr = sp.LastLine(store.Stdout), sp.LastLine(store.Stderr)
			fmt.Fprintf(e.stderr, "agentstream run: session %s goes on from its unfinished spool %s (%d stdout and %d stderr lines)\n", id, path, r.offOut, r.offErr)
		}
	}
	c := &api.Client{URL: url, Token: token, Retries: -1}
	if r.sp == nil {
		if id == "" {
			var b [13]byte
			rand.Read(b[:])
			id = "s_" + hex.EncodeToString(b[:])
		}
		cwd, _ := os.Getwd()
		req := api.CreateRequest{ID: id, Protocol: protocol, Harness: harnessOf(protocol), Command: command, Cwd: cwd}
		path := filepath.Join(dir, id+".spool")
		sp, err := api.CreateSpool(path, api.SpoolHeader{Server: url, NATS: natsURL, Session: req})
		if err != nil {
			return nil, err
		}
		// Over NATS, the header's message creates the session.
		if natsURL == "" {
			if _, err := c.CreateSession(ctx, req); err != nil {
				var ae *api.APIError
				if errors.As(err, &ae) && ae.Status < 500 && ae.Status != http.StatusTooManyRequests {
					sp.Close()
					os.Remove(path)
					return nil, fmt.Errorf("server %s: %w", url, err)
				}
				fmt.Fprintf(e.stderr, "agentstream run: server %s: %v; the session is spooled to %s and sent when the server answers\n", url, err, path)
			}
		}
		r.sp = sp
	}
	if idle, _ := api.IdleSpools(dir); len(idle) > 0 {
		for _, p := range idle {
			if p != r.sp.Path() {
				fmt.Fprintf(e.stderr, "agentstream run: an unfinished upload waits in %s (agentstream run --resume %s)\n", p, p)
			}
		}
	}
	r.out = &store.LineSplitter{Stream: store.Stdout, Fn: func(l store.Line) error {
		l.N += r.offOut
		return r.sp.Line(l)
	}}
	if r.up, err = newSender(r.sp, url, token); err != nil {
		r.sp.Close()
		return nil, err
	}
	return r, nil
}

func (r *remoteRecording) session() string  { return r.sp.Session() }
func (r *remoteRecording) spool() io.Writer { return spoolWriter{r} }

// spoolWriter writes the harness's stdout into the spool, a write of the
// file for each read of the harness's output.
type spoolWriter struct{ r *remoteRecording }

func (w spoolWriter) Write(p []byte) (int, error) {
	n, err := w.r.out.Write(p)
	if err == nil {
		err = w.r.sp.Flush()
	}
	return n, err
}

func (r *remoteRecording) Handle(ctx context.Context, e agentstream.Envelope) error {
	if line, ok := stderrLine(e); ok {
		line.N += r.offErr
		if err := r.sp.Line(line); err != nil {
			return err
		}
		return r.sp.Flush()
	}
	return nil
}

// finish writes the end into the spool and waits up to r.wait for the
// server to take the rest. A server still away is no error: the spool
// keeps the session for `run --resume`, and run says so.
func (r *remoteRecording) finish(ctx context.Context, res runner.Result) error {
	err := r.out.Close()
	end := api.End{Reason: res.Ended.Reason, Error: res.Ended.Error}
	if res.Ended.Reason == agentstream.ReasonCompletion {
		end.Reason = ""
	}
	if res.Exited && res.Signal == 0 {
		code := res.ExitCode
		end.ExitCode = &code
	}
	if err == nil {
		err = r.sp.End(end)
	}
	if err != nil {
		// The spool cannot be trusted to hold the rest: send what it has.
		r.wait = max(r.wait, time.Second)
	}
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	uerr := r.up.Wait(wctx)
	r.up.Stop()
	if errors.Is(uerr, context.DeadlineExceeded) {
		fmt.Fprintf(r.stderr, "agentstream run: the server (or NATS) did not take the whole session in %v (%v); the rest waits in %s: agentstream run --resume %s\n", r.wait, uerr, r.sp.Path(), r.sp.Path())
		uerr = nil
	}
	if cerr := r.sp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = uerr
	}
	return err
}
