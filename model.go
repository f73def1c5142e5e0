package agentstream

import "strings"

// ModelKey returns the name a model is grouped under: the native name in
// lower case without what names the same model twice: a provider prefix
// ("anthropic/", "models/", Bedrock's "us.anthropic."), a bracketed variant
// ("[1m]", the context window a harness chose), a snapshot date
// ("-20250929", "@20240620") and a Bedrock version ("-v1:0"). So
// "claude-opus-5[1m]" and "claude-opus-5" are one model, and
// "claude-haiku-4-5-20251001" is "claude-haiku-4-5". Readers keep the
// native name beside it.
func ModelKey(name string) string {
	m := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.IndexByte(m, '['); i > 0 {
		m = m[:i]
	}
	if i := strings.IndexByte(m, '@'); i > 0 {
		m = m[:i]
	}
	if i := strings.Index(m, "anthropic."); i >= 0 && strings.HasPrefix(m[i+len("anthropic."):], "claude") {
		m = m[i+len("anthropic."):]
		if j := strings.LastIndex(m, "-v"); j > 0 && isVersionSuffix(m[j+2:]) {
			m = m[:j]
		}
	}
	if n := len(m); n > 9 && m[n-9] == '-' && allDigits(m[n-8:]) && (m[n-8:n-6] == "20" || m[n-8:n-6] == "19") {
		m = m[:n-9]
	}
	return strings.TrimSpace(m)
}

// isVersionSuffix reports whether s is a Bedrock model version: "1:0", "2".
func isVersionSuffix(s string) bool {
	major, minor, _ := strings.Cut(s, ":")
	return allDigits(major) && (minor == "" || allDigits(minor))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
