package agentstream

import "math"

// Bounds of what an agent reports about itself. A harness's output is
// untrusted: a model name, a cwd or a tool list is kept within these, like
// the texts of the format, whatever the agent printed.
const (
	// MaxName is the number of code points a name, id or path an agent
	// reports keeps (session.started and session.updated fields, a
	// session.title, a model name in usage): the rest is cut.
	MaxName = 1000
	// MaxItems is how many entries a list an agent reports keeps (tools,
	// commands, skills, MCP servers, background tasks, models of a usage).
	MaxItems = 1000
	// MaxCount is the largest token count kept: a count above it, or below
	// zero, is no count the harness could have meant, and is written as
	// null (the native line still holds what the harness printed).
	MaxCount = 1 << 50
)

// Bound keeps the fields of p that an agent reported within MaxName,
// MaxItems and MaxCount, in place: strings are clipped, lists cut, and
// negative or absurd counts and costs set to nil. The Normalizer bounds
// every payload it stamps; Bound is for payloads made elsewhere.
func Bound(p Payload) {
	switch p := p.(type) {
	case *SessionStarted:
		clipNames(&p.Harness, &p.Model, &p.Cwd, &p.SessionID, &p.Version, &p.PermissionMode)
		p.Tools = boundList(p.Tools)
		p.ContextWindow = boundCount(p.ContextWindow)
	case *SessionUpdated:
		clipNames(&p.Model, &p.PermissionMode, &p.Mode, &p.Cwd, &p.SessionID)
		p.Tools = boundList(p.Tools)
		p.Commands = boundList(p.Commands)
		p.Skills = boundList(p.Skills)
		if len(p.MCPServers) > MaxItems {
			p.MCPServers = p.MCPServers[:MaxItems]
		}
		for i := range p.MCPServers {
			clipNames(&p.MCPServers[i].Name, &p.MCPServers[i].Status)
		}
		if len(p.BackgroundTasks) > MaxItems {
			p.BackgroundTasks = p.BackgroundTasks[:MaxItems]
		}
		for i := range p.BackgroundTasks {
			t := &p.BackgroundTasks[i]
			clipNames(&t.TaskID, &t.Kind)
			t.Description, _ = Clip(t.Description, MaxText)
		}
	case *SessionTitle:
		clipNames(&p.Title)
	case *Usage:
		clipNames(&p.Model, &p.MessageID, &p.Thread)
		for _, c := range []**int64{&p.InputTokens, &p.OutputTokens, &p.CacheReadTokens, &p.CacheCreationTokens,
			&p.ContextTokens, &p.ContextWindow, &p.ReasoningTokens, &p.Turns, &p.DurationMs} {
			*c = boundCount(*c)
		}
		p.CostUSD = boundCost(p.CostUSD)
		p.PremiumRequests = boundCost(p.PremiumRequests)
		if len(p.Models) > MaxItems {
			p.Models = p.Models[:MaxItems]
		}
		for i := range p.Models {
			m := &p.Models[i]
			clipNames(&m.Model)
			for _, c := range []**int64{&m.InputTokens, &m.OutputTokens, &m.CacheReadTokens, &m.CacheCreationTokens, &m.ContextWindow} {
				*c = boundCount(*c)
			}
			m.CostUSD = boundCost(m.CostUSD)
		}
	}
}

func clipNames(ss ...*string) {
	for _, s := range ss {
		*s, _ = Clip(*s, MaxName)
	}
}

func boundList(l []string) []string {
	if len(l) > MaxItems {
		l = l[:MaxItems]
	}
	for i := range l {
		l[i], _ = Clip(l[i], MaxName)
	}
	return l
}

func boundCount(v *int64) *int64 {
	if v != nil && (*v < 0 || *v > MaxCount) {
		return nil
	}
	return v
}

func boundCost(v *float64) *float64 {
	if v != nil && (*v < 0 || *v > MaxCount || math.IsNaN(*v) || math.IsInf(*v, 0)) {
		return nil
	}
	return v
}
