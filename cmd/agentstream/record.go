package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/agentstream/agentstream"
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

// remoteRecording sends the native lines to a server, which normalizes and
// stores them.
type remoteRecording struct {
	id  string
	up  *api.Uploader
	out io.WriteCloser
}

func newRemoteRecording(ctx context.Context, url, token, id, protocol string, command []string) (*remoteRecording, error) {
	c := &api.Client{URL: url, Token: token}
	cwd, _ := os.Getwd()
	sess, err := c.CreateSession(ctx, api.CreateRequest{ID: id, Protocol: protocol, Harness: harnessOf(protocol), Command: command, Cwd: cwd})
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", url, err)
	}
	up := c.NewUploader(sess.ID, api.UploaderOptions{})
	return &remoteRecording{id: sess.ID, up: up, out: up.Spool(store.Stdout)}, nil
}

func (r *remoteRecording) session() string  { return r.id }
func (r *remoteRecording) spool() io.Writer { return r.out }

func (r *remoteRecording) Handle(ctx context.Context, e agentstream.Envelope) error {
	if line, ok := stderrLine(e); ok {
		return r.up.Line(line)
	}
	return nil
}

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
	if cerr := r.up.Close(ctx, end); err == nil {
		err = cerr
	}
	return err
}
