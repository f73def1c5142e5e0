// Package gitleaks is the deep secret scan of agentstream: the detection
// rules of gitleaks (its default configuration: some two hundred rules of
// key and token shapes, each with its keywords, entropy floor and
// allow-lists), run on text where a session leaves agentstream.
package gitleaks

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"

	"github.com/agentstream/agentstream/redact"
)

// harnessID matches the identifiers the model APIs give messages, tool
// calls, requests and responses (msg_011CeYoB6Q6Mg8r8GgoEmSUw), which
// harnesses print in every session and gitleaks' generic rule takes for
// keys: they are not secrets.
var harnessID = regexp.MustCompile(`^(msg|toolu|srvtoolu|req|call|resp|run|item|fc|rs|chatcmpl)[_-][A-Za-z0-9]{8,}$`)

// Scanner runs gitleaks' default rules, less their generic rule's
// findings that are identifiers of the model APIs. It is safe for concurrent use.
type Scanner struct {
	mu sync.Mutex
	d  *detect.Detector
}

var _ redact.Scanner = (*Scanner)(nil)

// New returns a Scanner with gitleaks' default rules.
func New() (*Scanner, error) {
	// gitleaks logs to stderr; a library of agentstream says nothing.
	logging.Logger = logging.Logger.Level(7) // zerolog.Disabled
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		return nil, fmt.Errorf("gitleaks: %w", err)
	}
	d.MaxDecodeDepth = 2
	return &Scanner{d: d}, nil
}

// Scan returns the secrets of one line of text (a native line, an event's
// JSON), where each is.
func (s *Scanner) Scan(b []byte) []redact.Finding {
	s.mu.Lock()
	fs := s.d.DetectBytes(b)
	s.mu.Unlock()
	out := make([]redact.Finding, 0, len(fs))
	for _, f := range fs {
		if f.RuleID == "generic-api-key" && harnessID.MatchString(f.Secret) {
			continue
		}
		start, end := f.StartColumn-1, f.EndColumn
		if f.StartLine != f.EndLine || start < 0 || end > len(b) || start > end {
			start, end = 0, len(b)
		}
		out = append(out, redact.Finding{Rule: f.RuleID, Start: start, End: end})
	}
	return out
}
