package store

import (
	"context"

	"github.com/agentstream/agentstream"
)

// Record folds a session's stored events, in order, into the parts of its
// Session record that the events decide: what session.started,
// session.updated and session.title say, how session.ended says it ended,
// and the usage recap. These rules hold for every store; a store's writer
// keeps one Record per session and writes its Fields with each commit.
//
// The zero value is ready to use. A Record is not safe for concurrent use.
type Record struct {
	// Harness, Version, Model, Title and Cwd are the latest non-empty
	// values the events gave (Harness and Cwd may start as the NewSession's).
	Harness, Version, Model, Title, Cwd string
	// EndStatus, Reason and Error come from the latest session.ended; an
	// EndStatus that is not a final status counts as StatusFailed.
	EndStatus, Reason, Error string
	// TitleFromPrompt says that Title was taken from the first prompt
	// (a session.title with source prompt), which never replaces a title of
	// the harness's own.
	TitleFromPrompt bool

	usage agentstream.UsageFolder
}

// RecordOf returns the Record a writer continues from for a stored session:
// the session's own fields and endStatus, the status of the latest
// session.ended it stored ("" for none), with the usage recap still to be
// folded again from its events (see FoldStoredUsage).
func RecordOf(s Session, endStatus string) Record {
	return Record{Harness: s.Harness, Version: s.Version, Model: s.Model, Title: s.Title, Cwd: s.Cwd,
		EndStatus: endStatus, Reason: s.Reason, Error: s.Error}
}

// Observe folds one stored event in. A session.started's harness, or else
// the envelope's, names the harness when none is known yet.
func (r *Record) Observe(e *agentstream.Envelope) {
	switch p := e.Payload.(type) {
	case *agentstream.SessionStarted:
		set(&r.Harness, p.Harness)
		set(&r.Model, p.Model)
		set(&r.Version, p.Version)
		set(&r.Cwd, p.Cwd)
	case *agentstream.SessionUpdated:
		set(&r.Model, p.Model)
		set(&r.Cwd, p.Cwd)
	case *agentstream.SessionTitle:
		if p.Source != agentstream.TitlePrompt || r.Title == "" || r.TitleFromPrompt {
			set(&r.Title, p.Title)
			r.TitleFromPrompt = p.Source == agentstream.TitlePrompt && p.Title != ""
		}
	case *agentstream.SessionEnded:
		r.EndStatus, r.Reason, r.Error = p.Status, p.Reason, p.Error
		if !ValidStatus(r.EndStatus) || r.EndStatus == StatusRunning {
			r.EndStatus = StatusFailed
		}
	case *agentstream.TurnStarted:
		// The stream went on after it ended (another prompt): it has not
		// ended until another session.ended says so.
		r.EndStatus, r.Reason, r.Error = "", "", ""
	}
	if r.Harness == "" {
		r.Harness = e.Harness
	}
	r.usage.AddEnvelope(e)
}

// FoldUsage folds an event into the usage recap only, as a writer that
// resumes a session does with the session's stored events of UsageTypes.
func (r *Record) FoldUsage(e *agentstream.Envelope) { r.usage.AddEnvelope(e) }

// UsageTypes are the event types the usage recap is folded from.
var UsageTypes = agentstream.UsageEventTypes

// FoldStoredUsage folds the usage recap of a stored session's events into
// r, reading them from st.
func FoldStoredUsage(ctx context.Context, st Store, id string, r *Record) error {
	var after int64
	for {
		evs, err := st.Events(ctx, id, EventQuery{After: after, Limit: 5000, Types: UsageTypes})
		if err != nil {
			return err
		}
		for i := range evs {
			if env, err := evs[i].Envelope(); err == nil {
				r.FoldUsage(&env)
			}
			after = evs[i].Seq
		}
		if len(evs) < 5000 {
			return nil
		}
	}
}

// FinalStatus is the status a writer's Close sets: that of the latest
// session.ended, or StatusInterrupted when the stream never ended (or a
// turn started after its latest session.ended).
func (r *Record) FinalStatus() string {
	if r.EndStatus == "" {
		return StatusInterrupted
	}
	return r.EndStatus
}

func set(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// Fields is a Record at one moment, as a commit writes it into the session
// record. It shares nothing with the Record it was taken from.
type Fields struct {
	Harness, Version, Model, Title, Cwd string
	EndStatus, Reason, Error            string
	// Usage is the usage recap; Missing is never nil.
	Usage agentstream.Recap
}

// Fields returns the record as it stands. Model is the latest model the
// session events named, else the usage recap's.
func (r *Record) Fields() Fields {
	u := cloneRecap(r.usage.Recap())
	f := Fields{Harness: r.Harness, Version: r.Version, Model: r.Model, Title: r.Title, Cwd: r.Cwd,
		EndStatus: r.EndStatus, Reason: r.Reason, Error: r.Error, Usage: u}
	if f.Model == "" {
		f.Model = u.Model
	}
	return f
}

func cloneRecap(r agentstream.Recap) agentstream.Recap {
	i := func(p *int64) *int64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	f := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	r.InputTokens, r.OutputTokens = i(r.InputTokens), i(r.OutputTokens)
	r.CacheReadTokens, r.CacheCreationTokens = i(r.CacheReadTokens), i(r.CacheCreationTokens)
	r.ReasoningTokens, r.Turns, r.DurationMs = i(r.ReasoningTokens), i(r.Turns), i(r.DurationMs)
	r.ModelCalls = i(r.ModelCalls)
	r.ContextTokens, r.ContextWindow = i(r.ContextTokens), i(r.ContextWindow)
	r.CostUSD, r.PremiumRequests = f(r.CostUSD), f(r.PremiumRequests)
	r.Missing = append([]string{}, r.Missing...)
	r.Measured = append([]string{}, r.Measured...)
	r.Estimated = append([]string{}, r.Estimated...)
	models := make([]agentstream.ModelRecap, len(r.Models))
	for k, m := range r.Models {
		m.Names = append([]string{}, m.Names...)
		m.Estimated = append([]string{}, m.Estimated...)
		m.InputTokens, m.OutputTokens = i(m.InputTokens), i(m.OutputTokens)
		m.CacheReadTokens, m.CacheCreationTokens = i(m.CacheReadTokens), i(m.CacheCreationTokens)
		m.CostUSD = f(m.CostUSD)
		models[k] = m
	}
	r.Models = models
	return r
}
