package agentstream

import (
	"fmt"
	"strconv"
	"strings"
)

// Recap is what a session consumed, as SummarizeUsage folds it from usage
// events. A nil figure is unknown; Missing names the figures that are, so a
// reader can say "not reported" instead of printing zero.
type Recap struct {
	Model               string   `json:"model"`
	InputTokens         *int64   `json:"inputTokens"`
	OutputTokens        *int64   `json:"outputTokens"`
	CacheReadTokens     *int64   `json:"cacheReadTokens"`
	CacheCreationTokens *int64   `json:"cacheCreationTokens"`
	ReasoningTokens     *int64   `json:"reasoningTokens"`
	CostUSD             *float64 `json:"costUsd"`
	Turns               *int64   `json:"turns"`
	DurationMs          *int64   `json:"durationMs"`
	ContextTokens       *int64   `json:"contextTokens"`
	ContextWindow       *int64   `json:"contextWindow"`
	PremiumRequests     *float64 `json:"premiumRequests"`
	// TokensFrom is "calls" when the tokens are the sum of call usage,
	// "session" when they are the harness's latest session total, or "" when
	// no usage was seen.
	TokensFrom string `json:"tokensFrom"`
	// Calls is the number of call usage events summed.
	Calls int64 `json:"calls"`
	// Missing lists the keys of the figures nobody reported.
	Missing []string `json:"missing"`
}

// UsageFolder folds events into a Recap one at a time, for readers that see
// a session as it runs. The zero value is ready to use; it is not safe for
// concurrent use.
type UsageFolder struct {
	calls       Recap
	session     *Usage
	callCost    *float64
	model       string
	window      *int64
	lastContext *int64
	lastWindow  *int64
}

// Add folds one event's payload in. Payloads other than usage,
// session.started and session.updated are ignored; a jsonl harness's
// passthrough payloads count as their typed selves.
func (f *UsageFolder) Add(p Payload) {
	switch p := Typed(p).(type) {
	case *SessionStarted:
		if p.Model != "" {
			f.model = p.Model
		}
		if p.ContextWindow != nil {
			f.window = p.ContextWindow
		}
	case *SessionUpdated:
		if p.Model != "" {
			f.model = p.Model
		}
	case *Usage:
		switch p.Scope {
		case ScopeCall:
			f.addCall(p)
		case ScopeSession:
			f.session = p
			if p.ContextTokens != nil {
				f.lastContext = p.ContextTokens
			}
			if p.ContextWindow != nil {
				f.lastWindow = p.ContextWindow
			}
		}
	}
}

func addTo(dst **int64, v *int64) {
	if v == nil {
		return
	}
	if *dst == nil {
		*dst = new(int64)
	}
	**dst += *v
}

func (f *UsageFolder) addCall(p *Usage) {
	if p.IsZero() {
		return
	}
	r := &f.calls
	r.Calls++
	addTo(&r.InputTokens, p.InputTokens)
	addTo(&r.OutputTokens, p.OutputTokens)
	addTo(&r.CacheReadTokens, p.CacheReadTokens)
	addTo(&r.CacheCreationTokens, p.CacheCreationTokens)
	addTo(&r.ReasoningTokens, p.ReasoningTokens)
	if p.CostUSD != nil {
		if f.callCost == nil {
			f.callCost = new(float64)
		}
		*f.callCost += *p.CostUSD
	}
	if ctx := p.ContextTokens; ctx != nil {
		f.lastContext = ctx
	} else if ctx := p.CallContext(); ctx != nil {
		f.lastContext = ctx
	}
	if p.Model != "" {
		f.model = p.Model
	}
}

// Recap returns the recap of what was added so far.
func (f *UsageFolder) Recap() Recap {
	var r Recap
	switch {
	case f.calls.Calls > 0:
		r = f.calls
		r.TokensFrom = "calls"
	case f.session != nil:
		s := f.session
		r.InputTokens, r.OutputTokens = s.InputTokens, s.OutputTokens
		r.CacheReadTokens, r.CacheCreationTokens = s.CacheReadTokens, s.CacheCreationTokens
		r.ReasoningTokens = s.ReasoningTokens
		r.TokensFrom = "session"
	}
	if s := f.session; s != nil {
		r.CostUSD, r.Turns, r.DurationMs, r.PremiumRequests = s.CostUSD, s.Turns, s.DurationMs, s.PremiumRequests
	}
	if r.CostUSD == nil {
		r.CostUSD = f.callCost
	}
	r.Model = f.model
	r.ContextTokens = f.lastContext
	r.ContextWindow = f.window
	if r.ContextWindow == nil {
		r.ContextWindow = f.lastWindow
	}
	if r.ContextWindow == nil {
		if w, ok := ContextWindow(f.model); ok {
			r.ContextWindow = &w
		}
	}
	r.Missing = missing(&r)
	return r
}

func missing(r *Recap) []string {
	m := []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"inputTokens", r.InputTokens != nil},
		{"outputTokens", r.OutputTokens != nil},
		{"cacheReadTokens", r.CacheReadTokens != nil},
		{"cacheCreationTokens", r.CacheCreationTokens != nil},
		{"costUsd", r.CostUSD != nil},
		{"turns", r.Turns != nil},
		{"durationMs", r.DurationMs != nil},
		{"contextTokens", r.ContextTokens != nil},
		{"contextWindow", r.ContextWindow != nil},
	} {
		if !f.set {
			m = append(m, f.name)
		}
	}
	return m
}

// SummarizeUsage folds the usage of a session's events into its recap:
// tokens are the sum of call usage, or the latest session total when there
// is no call usage; cost, turns and duration come only from the harness; the
// context is the latest call's; the context window comes from
// session.started, else from the model name.
func SummarizeUsage(events []Event) Recap {
	var f UsageFolder
	for _, e := range events {
		f.Add(e.Payload)
	}
	return f.Recap()
}

// TotalTokens returns input + output + cache tokens, counting unknown ones as
// zero.
func (r *Recap) TotalTokens() int64 {
	var n int64
	for _, v := range []*int64{r.InputTokens, r.OutputTokens, r.CacheReadTokens, r.CacheCreationTokens} {
		if v != nil {
			n += *v
		}
	}
	return n
}

// String renders the recap on one line for people, saying "not reported"
// for what is missing rather than printing zero.
func (r *Recap) String() string {
	var parts []string
	tok := func(label string, v *int64) string {
		if v == nil {
			return label + " —"
		}
		return label + " " + Thousands(*v)
	}
	if r.TokensFrom == "" {
		parts = append(parts, "tokens: not reported")
	} else {
		parts = append(parts, "tokens: "+strings.Join([]string{
			tok("in", r.InputTokens), tok("out", r.OutputTokens),
			tok("cache read", r.CacheReadTokens), tok("cache write", r.CacheCreationTokens),
		}, ", "))
	}
	if r.CostUSD != nil {
		parts = append(parts, "cost: "+FormatCost(*r.CostUSD))
	} else {
		parts = append(parts, "cost: not reported")
	}
	if r.PremiumRequests != nil {
		parts = append(parts, "premium requests: "+strconv.FormatFloat(*r.PremiumRequests, 'f', -1, 64))
	}
	if r.Turns != nil {
		parts = append(parts, "turns: "+strconv.FormatInt(*r.Turns, 10))
	}
	if r.DurationMs != nil {
		parts = append(parts, "duration: "+FormatDurationMs(*r.DurationMs))
	}
	if r.ContextTokens != nil {
		c := "context: " + Thousands(*r.ContextTokens)
		if r.ContextWindow != nil && *r.ContextWindow > 0 {
			c += fmt.Sprintf(" of %s (%.0f%%)", Thousands(*r.ContextWindow), 100*float64(*r.ContextTokens)/float64(*r.ContextWindow))
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, " · ")
}

// FormatCost formats a reported cost in dollars, with enough digits that a
// small cost does not read as zero.
func FormatCost(usd float64) string {
	if usd != 0 && usd < 0.01 && usd > -0.01 {
		return "$" + strconv.FormatFloat(usd, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(usd, 'f', 2, 64)
}

// FormatDurationMs formats milliseconds as 850ms, 8.8s, 3m05s or 1h02m.
func FormatDurationMs(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	case ms < 3_600_000:
		return fmt.Sprintf("%dm%02ds", ms/60_000, ms/1000%60)
	default:
		return fmt.Sprintf("%dh%02dm", ms/3_600_000, ms/60_000%60)
	}
}

// Thousands formats n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// contextWindows is the one table of known context windows, matched against
// a model id with any provider prefix and "[…]" suffix removed. The first
// matching row wins.
var contextWindows = []struct {
	match  func(m string) bool
	tokens int64
}{
	{func(m string) bool { return strings.HasSuffix(m, "[1m]") }, 1_000_000},
	{func(m string) bool { return claudeGeneration(m) >= 5 }, 1_000_000},
	{func(m string) bool { g := claudeGeneration(m); return g == 3 || g == 4 }, 200_000},
	{func(m string) bool { return strings.Contains(m, "gemini-2.5") }, 1_048_576},
}

// claudeGeneration returns the major version of a Claude model id in either
// naming scheme (claude-3-5-sonnet, claude-sonnet-4-5, claude-opus-5), or 0.
func claudeGeneration(m string) int {
	i := strings.Index(m, "claude-")
	if i < 0 {
		return 0
	}
	rest := m[i+len("claude-"):]
	for _, fam := range []string{"opus-", "sonnet-", "haiku-"} {
		if strings.HasPrefix(rest, fam) {
			rest = rest[len(fam):]
			break
		}
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == 0 || j > 2 {
		return 0
	}
	g, _ := strconv.Atoi(rest[:j])
	return g
}

// ContextWindow returns the context window of a model id, when it is known.
func ContextWindow(model string) (int64, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if m == "" {
		return 0, false
	}
	for _, row := range contextWindows {
		if row.match(m) {
			return row.tokens, true
		}
	}
	return 0, false
}
