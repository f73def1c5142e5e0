package agentstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentstream/agentstream"
)

// TestNormalizerBoundsAgentFields holds that what an agent reports about
// itself is clipped like the format's texts, and that counts no harness
// could mean are null.
func TestNormalizerBoundsAgentFields(t *testing.T) {
	long := strings.Repeat("é", 3*agentstream.MaxName)
	tools := make([]string, 3*agentstream.MaxItems)
	for i := range tools {
		tools[i] = long
	}
	neg, huge, ok := int64(-5), int64(1)<<60, int64(42)
	cost := -1.5
	dec := scripted{
		"start": {agentstream.E(&agentstream.SessionStarted{Model: long, Cwd: long, Tools: tools, ContextWindow: &neg})},
		"upd":   {agentstream.E(&agentstream.SessionUpdated{Model: long, Cwd: long, Commands: tools})},
		"title": {agentstream.E(&agentstream.SessionTitle{Title: long})},
		"usage": {agentstream.E(&agentstream.Usage{Scope: agentstream.ScopeCall, InputTokens: &neg, OutputTokens: &huge, CacheReadTokens: &ok, CostUSD: &cost})},
	}
	n := agentstream.NewNormalizer(dec, agentstream.NormalizerConfig{Session: "s"})
	var envs []agentstream.Envelope
	for _, l := range []string{"start", "upd", "title", "usage"} {
		envs = n.Line(envs, agentstream.Line{N: int64(len(envs) + 1), Bytes: []byte(l), Size: int64(len(l))}, time.Time{})
	}
	short := func(field, s string) {
		t.Helper()
		if c := agentstream.CountChars(s); c != agentstream.MaxName || !strings.HasPrefix(long, s) {
			t.Errorf("%s: %d code points, want the first %d", field, c, agentstream.MaxName)
		}
	}
	seen := 0
	for _, e := range envs {
		switch p := e.Payload.(type) {
		case *agentstream.SessionStarted:
			seen++
			short("session.started model", p.Model)
			short("session.started cwd", p.Cwd)
			short("session.started tools[0]", p.Tools[0])
			if len(p.Tools) != agentstream.MaxItems {
				t.Errorf("session.started tools: %d, want %d", len(p.Tools), agentstream.MaxItems)
			}
			if p.ContextWindow != nil {
				t.Errorf("session.started contextWindow = %d, want null", *p.ContextWindow)
			}
		case *agentstream.SessionUpdated:
			seen++
			short("session.updated model", p.Model)
			short("session.updated cwd", p.Cwd)
			if len(p.Commands) != agentstream.MaxItems {
				t.Errorf("session.updated commands: %d, want %d", len(p.Commands), agentstream.MaxItems)
			}
		case *agentstream.SessionTitle:
			seen++
			short("session.title", p.Title)
		case *agentstream.Usage:
			seen++
			if p.InputTokens != nil || p.OutputTokens != nil || p.CostUSD != nil {
				t.Errorf("usage: negative or absurd figures kept: %s", p.AppendJSON(nil))
			}
			if p.CacheReadTokens == nil || *p.CacheReadTokens != ok {
				t.Errorf("usage: cacheReadTokens lost: %s", p.AppendJSON(nil))
			}
		}
	}
	if seen != 4 {
		t.Fatalf("saw %d of the 4 payloads", seen)
	}
}
