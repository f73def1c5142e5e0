package store

import (
	"context"
	"time"

	"github.com/agentstream/agentstream"
)

// SessionLister is the part of a Store a usage report reads.
type SessionLister interface {
	Sessions(ctx context.Context, q SessionQuery) (SessionPage, error)
}

// UsageReport reports the usage of the stored sessions started in
// [opt.Since, opt.Until), grouped as opt says (agentstream.NewUsageReport).
// When a session in the window continues a harness thread (a resumed Codex
// thread), the sessions before the window are read too, so that it counts
// only what it added.
func UsageReport(ctx context.Context, st SessionLister, opt agentstream.UsageReportOptions) (agentstream.UsageReport, error) {
	sessions, threads, err := usageSessions(ctx, st, opt.Since)
	if err != nil {
		return agentstream.UsageReport{}, err
	}
	if threads && !opt.Since.IsZero() {
		if sessions, _, err = usageSessions(ctx, st, time.Time{}); err != nil {
			return agentstream.UsageReport{}, err
		}
	}
	return agentstream.NewUsageReport(sessions, opt)
}

func usageSessions(ctx context.Context, st SessionLister, since time.Time) ([]agentstream.UsageSession, bool, error) {
	var out []agentstream.UsageSession
	threads := false
	q := SessionQuery{Since: since, Limit: 500}
	for {
		page, err := st.Sessions(ctx, q)
		if err != nil {
			return nil, false, err
		}
		for _, s := range page.Sessions {
			u := s.Usage
			if u.Model == "" {
				u.Model = s.Model
			}
			threads = threads || u.Thread != ""
			out = append(out, agentstream.UsageSession{ID: s.ID, Harness: s.Harness, Cwd: s.Cwd, Title: s.Title,
				StartedAt: s.StartedAt, Usage: u})
		}
		if page.Next == "" {
			return out, threads, nil
		}
		q.Cursor = page.Next
	}
}
