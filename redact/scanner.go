package redact

// A Scanner is a deep scan of text for secrets, slower and broader than a
// Redactor's, run where a session leaves agentstream (an export, a share
// link), which refuses what it finds. Package redact/gitleaks provides
// one. A Scanner is safe for concurrent use.
type Scanner interface {
	// Scan returns the secrets b holds.
	Scan(b []byte) []Finding
}

// Finding is a secret a Scanner found: the rule that found it and where it
// is, b[Start:End]. It does not hold the secret.
type Finding struct {
	Rule       string
	Start, End int
}
