package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Decisions of a Policy.
const (
	PolicyAllow = "allow"
	PolicyDeny  = "deny"
	PolicyAsk   = "ask"
)

// A Policy answers a session's permission requests: the first rule that
// matches a request decides; when none does, Default does. "ask" leaves the
// request to a person (Session.Answer); one nobody answers within
// AskTimeout is denied. The zero Policy asks and waits without end.
//
// In JSON: {"default": "ask", "askTimeout": "10m", "rules": [{"tool":
// "Bash", "match": "git *", "decision": "allow"}, {"category": "delete",
// "decision": "deny"}]}.
type Policy struct {
	// Default is PolicyAllow, PolicyDeny or PolicyAsk ("" means ask).
	Default string `json:"default"`
	// AskTimeout, when positive, denies a request nobody answered in that
	// time.
	AskTimeout time.Duration `json:"-"`
	// Rules are tried in order.
	Rules []Rule `json:"rules"`
}

// A Rule matches requests by the tool's name, its category (a
// tool.call category: read, edit, delete, execute, ...) and a pattern on
// its summary (the command's first line, a path, a URL). Every field that
// is set must match. A pattern is matched against the whole summary: "*"
// stands for any run of characters and "?" for one, so "git *" matches
// every git command.
type Rule struct {
	Tool     string `json:"tool,omitempty"`
	Category string `json:"category,omitempty"`
	Match    string `json:"match,omitempty"`
	// Decision is PolicyAllow, PolicyDeny or PolicyAsk.
	Decision string `json:"decision"`
	// Message is told to the agent when the rule denies.
	Message string `json:"message,omitempty"`
}

// UnmarshalJSON reads a policy, with askTimeout as a duration ("10m").
func (p *Policy) UnmarshalJSON(b []byte) error {
	type plain Policy
	var aux struct {
		plain
		AskTimeout string `json:"askTimeout"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return fmt.Errorf("session: policy: %w", err)
	}
	*p = Policy(aux.plain)
	if aux.AskTimeout != "" {
		d, err := time.ParseDuration(aux.AskTimeout)
		if err != nil {
			return fmt.Errorf("session: policy: askTimeout: %w", err)
		}
		p.AskTimeout = d
	}
	return p.Validate()
}

// MarshalJSON writes a policy as UnmarshalJSON reads it.
func (p Policy) MarshalJSON() ([]byte, error) {
	type plain Policy
	aux := struct {
		plain
		AskTimeout string `json:"askTimeout,omitempty"`
	}{plain: plain(p)}
	if p.AskTimeout > 0 {
		aux.AskTimeout = p.AskTimeout.String()
	}
	return json.Marshal(aux)
}

// Validate reports the first decision that is not one of the three.
func (p *Policy) Validate() error {
	if !validDecision(p.Default, true) {
		return fmt.Errorf("session: policy: default %q: want allow, deny or ask", p.Default)
	}
	for i, r := range p.Rules {
		if !validDecision(r.Decision, false) {
			return fmt.Errorf("session: policy: rule %d: decision %q: want allow, deny or ask", i+1, r.Decision)
		}
	}
	return nil
}

func validDecision(d string, empty bool) bool {
	switch d {
	case PolicyAllow, PolicyDeny, PolicyAsk:
		return true
	case "":
		return empty
	}
	return false
}

// decide returns the decision for a request about tool (of category, with
// summary), and the denial's message.
func (p *Policy) decide(tool, category, summary string) (decision, message string) {
	for _, r := range p.Rules {
		if r.Tool != "" && r.Tool != tool {
			continue
		}
		if r.Category != "" && r.Category != category {
			continue
		}
		if r.Match != "" && !glob(r.Match, summary) {
			continue
		}
		return r.Decision, r.Message
	}
	if p.Default == "" {
		return PolicyAsk, ""
	}
	return p.Default, ""
}

// glob reports whether s matches pattern, where "*" is any run of
// characters and "?" any one.
func glob(pattern, s string) bool {
	// The classic two-pointer match with backtracking to the last star.
	p, t := []rune(pattern), []rune(s)
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// describe names a request for a denial message.
func describe(tool, summary string) string {
	if summary == "" {
		return tool
	}
	return tool + " " + strings.TrimSpace(summary)
}
