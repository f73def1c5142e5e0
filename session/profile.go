package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"
)

// A Profile is a harness that a session may run, as a configuration names
// it: the only way the HTTP API starts a harness, so that no request can
// name a command. In JSON:
//
//	{"command": ["claude", "-p"], "protocol": "claude-stream",
//	 "cwd": "/srv/work", "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9000"},
//	 "policy": {"default": "ask", "askTimeout": "10m",
//	            "rules": [{"tool": "Bash", "match": "git *", "decision": "allow"}]}}
type Profile struct {
	// Command and Protocol are the harness (see Config).
	Command  []string `json:"command"`
	Protocol string   `json:"protocol"`
	// Cwd is the harness's working directory.
	Cwd string `json:"cwd,omitempty"`
	// Env are variables set for the harness beside this process's.
	Env map[string]string `json:"env,omitempty"`
	// PermissionMode is the harness's permission mode at the start.
	PermissionMode string `json:"permissionMode,omitempty"`
	// Policy answers the permission requests.
	Policy Policy `json:"policy"`
	// Budget limits each session.
	Budget Budget `json:"budget"`
	// Candidates, when set, run instead of Command: the accounts to fall
	// back on, in order.
	Candidates []Candidate `json:"candidates,omitempty"`
	// IdleTimeout and Timeout supervise the harness ("10m"; empty: none).
	IdleTimeout Duration `json:"idleTimeout,omitempty"`
	Timeout     Duration `json:"timeout,omitempty"`
}

// Duration is a time.Duration written as text in JSON ("90s").
type Duration time.Duration

// UnmarshalJSON reads "90s", or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("session: duration %s: want text such as \"90s\"", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("session: duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Profiles are the profiles of a configuration file, by name.
type Profiles map[string]Profile

// ReadProfiles reads a file of profiles: {"profiles": {"NAME": {…}}}.
// Keys beyond those of Profile are refused, so that a misspelt one is
// noticed.
func ReadProfiles(name string) (Profiles, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("session: profiles: %w", err)
	}
	ps, err := ParseProfiles(b)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return ps, nil
}

// ParseProfiles reads profiles from JSON (see ReadProfiles).
func ParseProfiles(b []byte) (Profiles, error) {
	var f struct {
		Profiles map[string]json.RawMessage `json:"profiles"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("session: profiles: %w", err)
	}
	out := Profiles{}
	for name, raw := range f.Profiles {
		var p Profile
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("session: profile %q: %w", name, err)
		}
		if len(p.Command) == 0 && len(p.Candidates) == 0 {
			return nil, fmt.Errorf("session: profile %q: no command", name)
		}
		out[name] = p
	}
	return out, nil
}

// Names returns the profiles' names, sorted.
func (ps Profiles) Names() []string {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Config returns the session configuration of the profile. base is the
// environment the profile's variables are added to (nil: this process's).
func (p Profile) Config(base []string) Config {
	if base == nil {
		base = os.Environ()
	}
	env := append([]string(nil), base...)
	keys := make([]string, 0, len(p.Env))
	for k := range p.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+p.Env[k])
	}
	return Config{
		Command: p.Command, Protocol: p.Protocol, Env: env, Candidates: p.Candidates,
		Dir: p.Cwd, PermissionMode: p.PermissionMode, Policy: p.Policy, Budget: p.Budget,
		IdleTimeout: time.Duration(p.IdleTimeout), Timeout: time.Duration(p.Timeout),
	}
}
