package session

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/agentstream/agentstream"
)

// A Candidate is one way to run a session's harness: a command, its
// protocol, and the account it runs on. A session with several runs on the
// first; when that one's account is exhausted (its quota hit, its credit
// gone), the session goes on with the next, and records a fallback.
type Candidate struct {
	// Account names the account in the events.
	Account string `json:"account"`
	// Command is the harness and its arguments (the protocol's flags are
	// added to it).
	Command []string `json:"command"`
	// Protocol is the harness's protocol, one of agentstream.Protocols.
	Protocol string `json:"protocol"`
	// Model names the model the command runs, for the events (the command
	// itself chooses it).
	Model string `json:"model,omitempty"`
	// Credentials map each environment variable the harness reads its
	// credentials from to the variable of this process (or of
	// Config.Env) that holds this account's: {"ANTHROPIC_API_KEY":
	// "WORK_ANTHROPIC_KEY"}. Only the names ever appear in events.
	Credentials map[string]string `json:"credentials,omitempty"`
	// Env are more variables of the harness, KEY=VALUE.
	Env []string `json:"env,omitempty"`
}

// ErrCredential is returned when a candidate's credential variable is not
// set.
var ErrCredential = errors.New("session: credential variable not set")

// environ is the harness's environment on candidate c: base, then the
// candidate's own variables, then its credentials read from base.
func (c *Candidate) environ(base []string) ([]string, error) {
	if base == nil {
		base = os.Environ()
	}
	out := append([]string(nil), base...)
	out = append(out, c.Env...)
	keys := make([]string, 0, len(c.Credentials))
	for k := range c.Credentials {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		from := c.Credentials[k]
		v, ok := lookup(base, from)
		if !ok {
			return nil, fmt.Errorf("%w: %s (for %s of account %q)", ErrCredential, from, k, c.Account)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// envNames lists the names of the variables holding the candidate's
// credentials.
func (c *Candidate) envNames() []string {
	names := []string{}
	for _, v := range c.Credentials {
		names = append(names, v)
	}
	sort.Strings(names)
	return names
}

func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// exhaustedText matches what harnesses say when an account hit its quota
// or ran out of credit: HTTP 429, rate limits, quotas, credit and usage
// limits.
var exhaustedText = regexp.MustCompile(`(?i)\b429\b|rate.?limit|quota|exhausted|insufficient.?(credit|balance|funds)|credit balance|usage limit|out of credits`)

// exhaustion watches a turn for the signs that its account is exhausted:
// a rejected quota, or an error that says so. A sign alone is not enough
// (a harness retries); the turn must also fail.
type exhaustion struct {
	seen    bool
	message string
	resetAt string
}

func (x *exhaustion) observe(p agentstream.Payload) {
	switch p := p.(type) {
	case *agentstream.Quota:
		if p.Status == "rejected" {
			x.seen = true
			if p.ResetAt != "" {
				x.resetAt = p.ResetAt
			}
			if x.message == "" {
				x.message = "quota rejected: " + p.LimitType
			}
		}
	case *agentstream.Error:
		if exhaustedText.MatchString(p.Message) || exhaustedText.MatchString(p.ErrorType) {
			x.seen = true
			x.message = p.Message
		}
	case *agentstream.SessionEnded:
		if p.Status == agentstream.StatusFailed && exhaustedText.MatchString(p.Error) {
			x.seen = true
			if x.message == "" {
				x.message = p.Error
			}
		}
	}
}

// failed records the message of a failed turn, which may be the only sign.
func (x *exhaustion) failed(msg string) {
	if exhaustedText.MatchString(msg) {
		x.seen = true
		if x.message == "" {
			x.message = msg
		}
	}
}
