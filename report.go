package agentstream

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Usage report groupings (UsageReportOptions.By).
const (
	ByDay     = "day"
	ByWeek    = "week"
	ByMonth   = "month"
	ByModel   = "model"
	ByHarness = "harness"
	ByProject = "project"
	BySession = "session"
)

// UsageGroupings lists the groupings of a usage report, as --by and the
// API's by take them.
var UsageGroupings = []string{ByDay, ByWeek, ByMonth, ByModel, ByHarness, ByProject, BySession}

// Unknown is the key of a group whose value no session gave (a session
// with no model, no working directory).
const Unknown = "(unknown)"

// UsageSession is one session as a usage report reads it.
type UsageSession struct {
	ID, Harness, Cwd, Title string
	StartedAt               time.Time
	Usage                   Recap
}

// UsageReportOptions say how a report groups and which sessions it counts.
type UsageReportOptions struct {
	// By is one of UsageGroupings.
	By string
	// Since and Until, when set, keep the sessions started in
	// [Since, Until). Sessions outside still serve as the earlier sessions
	// of a resumed thread.
	Since, Until time.Time
	// Location is the time zone days, weeks and months are told in; nil
	// means UTC.
	Location *time.Location
}

// UsageRow is the usage of the sessions that share one key. A figure no
// session of the row reported is nil, never 0; CostUSD sums the costs the
// harnesses reported, and Unpriced counts the sessions (by model: the
// sessions' shares of the model) that spent tokens without reporting a
// cost, so a partial sum is never mistaken for a whole one.
type UsageRow struct {
	// Key is the group: a date (2026-11-29), the Monday a week starts on,
	// a month (2026-11), a model (ModelKey), a harness, a working
	// directory, or a session id; Unknown when the sessions gave none.
	Key string `json:"key"`
	// Label says more of the key where there is more: a session's title, a
	// model's native names.
	Label               string   `json:"label"`
	Sessions            int      `json:"sessions"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	CostUSD             *float64 `json:"costUsd"`
	Unpriced            int      `json:"unpriced"`
	Turns               *int64   `json:"turns"`
	ModelCalls          *int64   `json:"modelCalls"`
	// Estimated lists the figures that are lower bounds (see Recap).
	Estimated []string `json:"estimated"`
	// First and Last are the start times of the row's first and last
	// sessions.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
}

// TotalTokens returns the row's input + output + cache tokens, counting
// unreported ones as zero.
func (r *UsageRow) TotalTokens() int64 {
	var n int64
	for _, v := range []*int64{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens} {
		if v != nil {
			n += *v
		}
	}
	return n
}

// UsageReport is the usage of a set of sessions grouped one way, with the
// total of them all.
type UsageReport struct {
	By    string     `json:"by"`
	Rows  []UsageRow `json:"rows"`
	Total UsageRow   `json:"total"`
}

// share is what one session adds to one row.
type share struct {
	in, out, cacheRead, cacheWrite *int64
	cost                           *float64
	unpriced                       bool
	turns, modelCalls              *int64
	estimated                      []string
}

func recapShare(r *Recap) share {
	s := share{in: r.InputTokens, out: r.OutputTokens, cacheRead: r.CacheReadTokens, cacheWrite: r.CacheCreationTokens,
		cost: r.CostUSD, turns: r.Turns, modelCalls: r.ModelCalls, estimated: r.Estimated}
	s.unpriced = r.CostUSD == nil && r.TotalTokens() > 0
	return s
}

func (s *share) spent() bool {
	for _, v := range []*int64{s.in, s.out, s.cacheRead, s.cacheWrite} {
		if v != nil && *v != 0 {
			return true
		}
	}
	return false
}

// NewUsageReport groups the sessions' recaps. A session whose totals run
// on from an earlier session of the same harness thread (Recap.Thread: a
// resumed Codex thread) counts only what it added to them, when the earlier
// session is among sessions; so nothing is counted twice.
func NewUsageReport(sessions []UsageSession, opt UsageReportOptions) (UsageReport, error) {
	if !validGrouping(opt.By) {
		return UsageReport{}, fmt.Errorf("agentstream: usage report: bad grouping %q: want one of %v", opt.By, UsageGroupings)
	}
	loc := opt.Location
	if loc == nil {
		loc = time.UTC
	}
	ordered := append([]UsageSession(nil), sessions...)
	// In start order; a thread's totals only grow, so of two sessions that
	// started at once the smaller comes first.
	sort.SliceStable(ordered, func(i, j int) bool {
		a, b := &ordered[i], &ordered[j]
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		return a.Usage.TotalTokens() < b.Usage.TotalTokens()
	})
	rep := UsageReport{By: opt.By, Rows: []UsageRow{}}
	rows := map[string]*UsageRow{}
	total := &UsageRow{Key: "total"}
	threads := map[string]*Recap{}
	for i := range ordered {
		s := &ordered[i]
		recap := s.Usage
		if t := s.Usage.Thread; t != "" && s.Usage.Runs == 1 && s.Usage.TokensFrom == "session" {
			key := s.Harness + "\x00" + t
			if prev := threads[key]; prev != nil {
				recap = increment(&s.Usage, prev)
			}
			threads[key] = &s.Usage
		}
		if !opt.Since.IsZero() && s.StartedAt.Before(opt.Since) || !opt.Until.IsZero() && !s.StartedAt.Before(opt.Until) {
			continue
		}
		whole := recapShare(&recap)
		total.add(s, &whole)
		for _, g := range groups(s, &recap, opt.By, loc) {
			row := rows[g.key]
			if row == nil {
				row = &UsageRow{Key: g.key}
				rows[g.key] = row
			}
			row.addLabel(g.label)
			row.add(s, &g.share)
		}
	}
	for _, r := range rows {
		r.finish()
		rep.Rows = append(rep.Rows, *r)
	}
	sortRows(rep.Rows, opt.By)
	total.finish()
	rep.Total = *total
	return rep, nil
}

// finish marks a cost that part of the row's sessions did not report as
// the lower bound it is.
func (row *UsageRow) finish() {
	if row.Estimated == nil {
		row.Estimated = []string{}
	}
	if row.Unpriced > 0 && row.CostUSD != nil && !contains(row.Estimated, FigureCostUSD) {
		row.Estimated = append(row.Estimated, FigureCostUSD)
	}
}

// IsEstimated reports whether the figure key is a lower bound in the row.
func (row *UsageRow) IsEstimated(key string) bool { return contains(row.Estimated, key) }

func validGrouping(by string) bool {
	for _, g := range UsageGroupings {
		if g == by {
			return true
		}
	}
	return false
}

// increment is cur less the totals prev had reached: what a resumed
// thread's session added.
func increment(cur, prev *Recap) Recap {
	r := *cur
	sub := func(a, b *int64) *int64 {
		if a == nil {
			return nil
		}
		n := *a
		if b != nil {
			n = max(n-*b, 0)
		}
		return &n
	}
	r.InputTokens = sub(cur.InputTokens, prev.InputTokens)
	r.OutputTokens = sub(cur.OutputTokens, prev.OutputTokens)
	r.CacheReadTokens = sub(cur.CacheReadTokens, prev.CacheReadTokens)
	r.CacheCreationTokens = sub(cur.CacheCreationTokens, prev.CacheCreationTokens)
	r.ReasoningTokens = sub(cur.ReasoningTokens, prev.ReasoningTokens)
	if cur.CostUSD != nil && prev.CostUSD != nil {
		c := max(*cur.CostUSD-*prev.CostUSD, 0)
		r.CostUSD = &c
	}
	r.Models = nil
	return r
}

type group struct {
	key, label string
	share      share
}

func groups(s *UsageSession, r *Recap, by string, loc *time.Location) []group {
	whole := recapShare(r)
	one := func(key, label string) []group {
		if key == "" {
			key = Unknown
		}
		return []group{{key: key, label: label, share: whole}}
	}
	t := s.StartedAt.In(loc)
	switch by {
	case ByDay:
		return one(t.Format("2006-01-02"), "")
	case ByWeek:
		monday := t.AddDate(0, 0, -((int(t.Weekday()) + 6) % 7))
		return one(monday.Format("2006-01-02"), "")
	case ByMonth:
		return one(t.Format("2006-01"), "")
	case ByHarness:
		return one(s.Harness, "")
	case ByProject:
		return one(s.Cwd, "")
	case BySession:
		return one(s.ID, s.Title)
	}
	// By model: the recap's breakdown, else the session's model.
	if len(r.Models) == 0 {
		return one(ModelKey(r.Model), r.Model)
	}
	if len(r.Models) == 1 {
		m := r.Models[0]
		key := m.Model
		if key == "" {
			key = ModelKey(r.Model)
		}
		label := joinNames(m.Names)
		if label == "" {
			label = r.Model
		}
		return one(key, label)
	}
	var out []group
	for _, m := range r.Models {
		sh := share{in: m.InputTokens, out: m.OutputTokens, cacheRead: m.CacheReadTokens, cacheWrite: m.CacheCreationTokens,
			cost: m.CostUSD, estimated: m.Estimated}
		sh.unpriced = m.CostUSD == nil && sh.spent()
		key := m.Model
		if key == "" {
			key = Unknown
		}
		out = append(out, group{key: key, label: joinNames(m.Names), share: sh})
	}
	return out
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

func (row *UsageRow) addLabel(l string) {
	if l == "" || row.Label == l {
		return
	}
	if row.Label == "" {
		row.Label = l
		return
	}
	for _, n := range splitNames(l) {
		if !contains(splitNames(row.Label), n) {
			row.Label += ", " + n
		}
	}
}

func splitNames(s string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ',' && s[i+1] == ' ' {
			out = append(out, s[start:i])
			start = i + 2
		}
	}
	return append(out, s[start:])
}

func (row *UsageRow) add(s *UsageSession, sh *share) {
	row.Sessions++
	addTo(&row.InputTokens, sh.in)
	addTo(&row.OutputTokens, sh.out)
	addTo(&row.CacheReadTokens, sh.cacheRead)
	addTo(&row.CacheCreationTokens, sh.cacheWrite)
	addCost(&row.CostUSD, sh.cost)
	addTo(&row.Turns, sh.turns)
	addTo(&row.ModelCalls, sh.modelCalls)
	if sh.unpriced {
		row.Unpriced++
	}
	for _, e := range sh.estimated {
		if !contains(row.Estimated, e) {
			row.Estimated = append(row.Estimated, e)
		}
	}
	if row.First.IsZero() || s.StartedAt.Before(row.First) {
		row.First = s.StartedAt
	}
	if s.StartedAt.After(row.Last) {
		row.Last = s.StartedAt
	}
}

// sortRows orders rows by time for the time groupings, else by total
// tokens, largest first; Unknown goes last.
func sortRows(rows []UsageRow, by string) {
	byTime := by == ByDay || by == ByWeek || by == ByMonth
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := &rows[i], &rows[j]
		if (a.Key == Unknown) != (b.Key == Unknown) {
			return b.Key == Unknown
		}
		if byTime {
			return a.Key < b.Key
		}
		if by == BySession {
			return a.First.Before(b.First)
		}
		if x, y := a.TotalTokens(), b.TotalTokens(); x != y {
			return x > y
		}
		return a.Key < b.Key
	})
}

// FormatTokens formats a token count for people in a table: "—" when
// nobody reported it, else with thousands separators.
func FormatTokens(v *int64) string {
	if v == nil {
		return "—"
	}
	return Thousands(*v)
}

// FormatInt formats a count, "—" when nobody reported it.
func FormatInt(v *int64) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatInt(*v, 10)
}
