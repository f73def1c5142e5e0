package redact

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Rules are what a rules file adds to the built-in detection.
type Rules struct {
	// Names are more sensitive names: a name matches when it is one of
	// them, or ends with one as its last words (VAULT_TOKEN matches
	// MY_VAULT_TOKEN), compared the way the built-in names are (case and
	// the separators '_', '-', '.' and camelCase do not matter).
	Names []string
	// Patterns are regular expressions whose matches are masked (their
	// first group, when they have one).
	Patterns []Pattern
	// Allow are values never masked, compared byte for byte.
	Allow []string
	// AllowPatterns are regular expressions of values never masked.
	AllowPatterns []*regexp.Regexp
}

// Pattern is a rule's regular expression and the label its matches carry
// (their kind is "rule:LABEL").
type Pattern struct {
	Label  string
	Re     *regexp.Regexp
	prefix []byte
}

// NewPattern returns a Pattern of a regular expression (Go's syntax).
func NewPattern(label, expr string) (Pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return Pattern{}, fmt.Errorf("redact: pattern %s: %w", label, err)
	}
	p, _ := re.LiteralPrefix()
	return Pattern{Label: label, Re: re, prefix: []byte(p)}, nil
}

// ParseRules reads a rules file: one rule a line, blank lines and lines
// starting with '#' aside.
//
//	name NAME                  a sensitive name (see Rules.Names)
//	pattern LABEL REGEXP       a regular expression to mask
//	allow VALUE                a value never masked
//	allow-pattern REGEXP       a regular expression of values never masked
func ParseRules(r io.Reader) (Rules, error) {
	var rules Rules
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return rules, fmt.Errorf("redact: rules line %d: %s without a value", n, word)
		}
		switch word {
		case "name":
			rules.Names = append(rules.Names, rest)
		case "pattern":
			label, expr, ok := strings.Cut(rest, " ")
			expr = strings.TrimSpace(expr)
			if !ok || expr == "" {
				return rules, fmt.Errorf("redact: rules line %d: pattern needs a label and a regular expression", n)
			}
			p, err := NewPattern(label, expr)
			if err != nil {
				return rules, fmt.Errorf("redact: rules line %d: %w", n, err)
			}
			rules.Patterns = append(rules.Patterns, p)
		case "allow":
			rules.Allow = append(rules.Allow, rest)
		case "allow-pattern":
			re, err := regexp.Compile(rest)
			if err != nil {
				return rules, fmt.Errorf("redact: rules line %d: %w", n, err)
			}
			rules.AllowPatterns = append(rules.AllowPatterns, re)
		default:
			return rules, fmt.Errorf("redact: rules line %d: unknown rule %q (want name, pattern, allow or allow-pattern)", n, word)
		}
	}
	if err := sc.Err(); err != nil {
		return rules, fmt.Errorf("redact: rules: %w", err)
	}
	return rules, nil
}
