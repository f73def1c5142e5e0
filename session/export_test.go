package session

// Decide exposes a policy's decision to the tests.
func Decide(p *Policy, tool, category, summary string) string {
	d, _ := p.decide(tool, category, summary)
	return d
}
