package codex

import (
	"path"
	"strconv"
	"strings"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/adapter/internal/fields"
	"github.com/agentstream/agentstream/internal/jsonscan"
)

// commandLine returns the command a command value runs, with the shell
// wrapper Codex adds (`bash -lc '…'`, `/bin/zsh -lc "…"`) taken off. The
// value is a string or, in the legacy stream, an argv array.
func commandLine(v []byte) string {
	if arr, ok := jsonscan.Array(v); ok {
		var argv []string
		for arr.Next() {
			argv = append(argv, fields.Str(arr.Value()))
		}
		if len(argv) >= 3 && isShell(argv[0]) && isCommandFlag(argv[1]) {
			return argv[2]
		}
		for i, a := range argv {
			if a == "" || strings.ContainsAny(a, " \t\n'\"") {
				argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
		}
		return strings.Join(argv, " ")
	}
	return unwrapShell(fields.Str(v))
}

func isShell(prog string) bool {
	switch path.Base(prog) {
	case "bash", "zsh", "sh", "dash", "ksh", "fish", "pwsh", "powershell", "powershell.exe":
		return true
	}
	return false
}

func isCommandFlag(f string) bool {
	switch f {
	case "-c", "-lc", "-cl", "-ic", "-lic", "-Command", "-command":
		return true
	}
	return false
}

// unwrapShell takes the shell wrapper off a command string.
func unwrapShell(cmd string) string {
	s := strings.TrimSpace(cmd)
	prog, rest, ok := strings.Cut(s, " ")
	if !ok || !isShell(prog) {
		return s
	}
	rest = strings.TrimLeft(rest, " ")
	flag, body, ok := strings.Cut(rest, " ")
	if flag == "-l" || flag == "--login" {
		flag, body, ok = strings.Cut(strings.TrimLeft(body, " "), " ")
	}
	if !ok || !isCommandFlag(flag) {
		return s
	}
	return unquoteShell(strings.TrimSpace(body))
}

// unquoteShell removes one level of shell quoting around a whole word.
func unquoteShell(s string) string {
	if len(s) < 2 {
		return s
	}
	switch {
	case s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], `'\''`, "'")
	case s[0] == '"' && s[len(s)-1] == '"':
		inner := s[1 : len(s)-1]
		if !strings.Contains(inner, `\`) {
			return inner
		}
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			if c == '\\' && i+1 < len(inner) {
				switch inner[i+1] {
				case '"', '\\', '$', '`':
					i++
					c = inner[i]
				}
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	return s
}

// notice maps a stream-level error message: a retry notice ("Reconnecting...
// 2/5", "…; retrying 1/5 in 211ms…") becomes retry, anything else error.
func notice(msg string) agentstream.Payload {
	if r := parseRetry(msg); r != nil {
		return r
	}
	text, _ := agentstream.Clip(msg, agentstream.MaxText)
	return &agentstream.Error{Message: text}
}

// parseRetry reads a retry notice, or returns nil when msg is not one.
func parseRetry(msg string) *agentstream.Retry {
	lower := strings.ToLower(msg)
	i := -1
	for _, w := range []string{"reconnecting", "re-connecting", "retrying"} {
		if i = strings.Index(lower, w); i >= 0 {
			break
		}
	}
	if i < 0 {
		return nil
	}
	r := &agentstream.Retry{}
	r.Error, _ = agentstream.Clip(msg, agentstream.MaxText)
	rest := msg[i:]
	if a, m, after, ok := fraction(rest); ok {
		r.Attempt, r.MaxRetries = &a, &m
		rest = after
	}
	if j := strings.Index(rest, " in "); j >= 0 {
		if ms, ok := duration(rest[j+4:]); ok {
			r.DelayMs = &ms
		}
	}
	if s := httpStatus(msg); s > 0 {
		r.Status = &s
	}
	return r
}

// fraction finds the first "N/M" in s.
func fraction(s string) (n, m int64, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '/' || i == 0 || !isDigit(s[i-1]) || i+1 >= len(s) || !isDigit(s[i+1]) {
			continue
		}
		a := i - 1
		for a > 0 && isDigit(s[a-1]) {
			a--
		}
		b := i + 1
		for b < len(s) && isDigit(s[b]) {
			b++
		}
		n, err1 := strconv.ParseInt(s[a:i], 10, 64)
		m, err2 := strconv.ParseInt(s[i+1:b], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, s, false
		}
		return n, m, s[b:], true
	}
	return 0, 0, s, false
}

// duration reads a leading "211ms" or "1.5s" as milliseconds.
func duration(s string) (float64, bool) {
	j := 0
	for j < len(s) && (isDigit(s[j]) || s[j] == '.') {
		j++
	}
	if j == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:j], 64)
	if err != nil {
		return 0, false
	}
	switch unit := s[j:]; {
	case strings.HasPrefix(unit, "ms"):
		return f, true
	case strings.HasPrefix(unit, "s"):
		return f * 1000, true
	}
	return 0, false
}

// httpStatus finds an HTTP status code in a retry message ("status 429",
// "429 Too Many Requests").
func httpStatus(msg string) int64 {
	lower := strings.ToLower(msg)
	for _, marker := range []string{"status ", "status: ", "status code "} {
		if i := strings.Index(lower, marker); i >= 0 {
			s := lower[i+len(marker):]
			if len(s) >= 3 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2]) && (len(s) == 3 || !isDigit(s[3])) {
				n, _ := strconv.ParseInt(s[:3], 10, 64)
				return n
			}
		}
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
