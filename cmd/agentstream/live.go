package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentstream/agentstream/redact"
	"sync"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/runner"
	"github.com/agentstream/agentstream/session"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

// liveSessions are the sessions serve starts from its profiles: each is
// written into the store as it runs (which publishes it to the event
// streams), and acted on through the API.
type liveSessions struct {
	ctx      context.Context // the server's: the sessions live as long as it
	m        *session.Manager
	profiles session.Profiles
	st       store.Store
	redact   *redact.Redactor // masks the sessions' output and messages; nil for none
	wg       sync.WaitGroup
}

var _ api.Live = (*liveSessions)(nil)

func newLiveSessions(ctx context.Context, st store.Store, profiles session.Profiles, red *redact.Redactor, onError func(error)) *liveSessions {
	return &liveSessions{ctx: ctx, m: session.NewManager(session.Options{OnError: onError}), profiles: profiles, st: st, redact: red}
}

func (l *liveSessions) Profiles() []string { return l.profiles.Names() }

func (l *liveSessions) Open(ctx context.Context, req api.OpenRequest) (string, error) {
	p, ok := l.profiles[req.Profile]
	if !ok {
		return "", fmt.Errorf("%w: no profile %q (there are: %v)", api.ErrInvalid, req.Profile, l.profiles.Names())
	}
	cfg := p.Config(nil)
	if len(req.Policy) > 0 && string(req.Policy) != "null" {
		var pol session.Policy
		if err := json.Unmarshal(req.Policy, &pol); err != nil {
			return "", fmt.Errorf("%w: policy: %v", api.ErrInvalid, err)
		}
		cfg.Policy = pol
	}
	cfg.Prompt = req.Prompt
	if l.redact != nil {
		cfg.Redact = l.redact
	}
	w, err := l.st.Create(ctx, store.NewSession{Protocol: cfg.Protocol, Harness: harnessOf(cfg.Protocol), Cwd: cfg.Dir, Command: cfg.Command})
	if err != nil {
		return "", err
	}
	out := &store.LineSplitter{Stream: store.Stdout, Fn: func(line store.Line) error { return w.Line(l.ctx, line) }}
	cfg.ID = w.Session()
	cfg.Spool = out
	cfg.Handler = agentstream.HandlerFunc(func(ctx context.Context, e agentstream.Envelope) error {
		if line, ok := stderrLine(e); ok {
			if err := w.Line(ctx, line); err != nil {
				return err
			}
		}
		return w.Handle(ctx, e)
	})
	s, err := l.m.Open(l.ctx, cfg)
	if err != nil {
		out.Close()
		w.Close(context.WithoutCancel(ctx))
		var se *runner.StartError
		if errors.As(err, &se) {
			return "", fmt.Errorf("profile %q: %w", req.Profile, err)
		}
		return "", fmt.Errorf("%w: %v", api.ErrInvalid, err)
	}
	// The closer returns once the session ended and its writer closed.
	l.wg.Go(func() {
		<-s.Done()
		out.Close()
		w.Close(context.WithoutCancel(l.ctx))
	})
	return s.ID(), nil
}

func (l *liveSessions) get(id string) (*session.Session, error) {
	s, ok := l.m.Session(id)
	if !ok {
		return nil, fmt.Errorf("%w: no live session %q", api.ErrNotFound, id)
	}
	return s, nil
}

// apiError says which status a session's error gets.
func apiError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrUnknownRequest):
		return fmt.Errorf("%w: %v", api.ErrNotFound, err)
	case errors.Is(err, session.ErrAnswered), errors.Is(err, session.ErrClosed), errors.Is(err, session.ErrNotRunning),
		errors.Is(err, session.ErrOneMessage), errors.Is(err, session.ErrUnsupported):
		return fmt.Errorf("%w: %v", api.ErrConflict, err)
	case errors.Is(err, session.ErrDecision), errors.Is(err, session.ErrMode):
		return fmt.Errorf("%w: %v", api.ErrInvalid, err)
	}
	return err
}

func (l *liveSessions) Send(ctx context.Context, id string, req api.MessageRequest) (string, error) {
	s, err := l.get(id)
	if err != nil {
		return "", err
	}
	mid, err := s.Send(ctx, req.Text, req.Mode)
	return mid, apiError(err)
}

func (l *liveSessions) Interrupt(ctx context.Context, id string) error {
	s, err := l.get(id)
	if err != nil {
		return err
	}
	return apiError(s.Interrupt(ctx))
}

func (l *liveSessions) Answer(ctx context.Context, id, requestID string, req api.AnswerRequest) error {
	s, err := l.get(id)
	if err != nil {
		return err
	}
	return apiError(s.Answer(ctx, requestID, session.Answer{Decision: req.Decision, Message: req.Message, Answers: req.Answers, Option: req.Option}))
}

func (l *liveSessions) Close(ctx context.Context, id string) error {
	s, err := l.get(id)
	if err != nil {
		return err
	}
	return apiError(s.Close(ctx))
}

func (l *liveSessions) Info(id string) (json.RawMessage, bool) {
	s, ok := l.m.Session(id)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(s.Info())
	if err != nil {
		return nil, false
	}
	return b, true
}

// shutdown closes every session and waits for them and their writers.
func (l *liveSessions) shutdown(ctx context.Context) error {
	err := l.m.Shutdown(ctx)
	l.wg.Wait()
	return err
}
