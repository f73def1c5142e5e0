package redact

import "bytes"

// maxName is the longest name looked at, maxValue the longest value
// masked whole (a longer one is masked up to there).
const (
	maxName  = 64
	maxValue = 8 << 10
)

// nameByte holds the bytes of a name written bare (NAME=, name:, --name=).
var nameByte = func() (t [256]bool) {
	t = tokenByte
	t['.'] = true
	return t
}()

// scanAssignments finds the values of sensitive names: NAME=value and
// NAME: value, the name bare or quoted, the value bare or quoted.
func (r *Redactor) scanAssignments(b []byte, js, cut bool, out []span) []span {
	quick := len(r.names) == 0
	for _, sep := range [...]byte{'=', ':'} {
		for off := 0; off < len(b); {
			j := bytes.IndexByte(b[off:], sep)
			if j < 0 {
				break
			}
			i := off + j
			off = i + 1
			// Most separators follow a name that cannot be sensitive
			// (every key of a JSON line): pass over them here.
			if quick && i > 0 {
				ne := i
				if c := b[i-1]; c == '"' || c == '\'' {
					ne = i - 1
					if ne > 0 && b[ne-1] == '\\' {
						ne--
					}
				} else if c == ' ' || c == '\t' || c == ':' {
					ne = -1
				}
				if ne >= 0 && !plausibleEnd(b, ne) {
					continue
				}
			}
			if sp, ok := r.assignmentAt(b, i, js, cut); ok {
				out = append(out, sp)
				off = max(off, sp.end)
			}
		}
	}
	return out
}

// assignmentAt looks at the separator b[i].
func (r *Redactor) assignmentAt(b []byte, i int, js, cut bool) (span, bool) {
	sep := b[i]
	next := byte(0)
	if i+1 < len(b) {
		next = b[i+1]
	}
	if sep == '=' {
		// Not ==, =>, !=, <=, >=, +=, and the like.
		if next == '=' || next == '>' || next == '~' {
			return span{}, false
		}
		if i > 0 {
			switch b[i-1] {
			case '=', '!', '<', '>', '+', '-', '*', '/', '%', '&', '|', '^':
				return span{}, false
			}
		}
	} else if next == ':' || next == '/' || i > 0 && b[i-1] == ':' {
		return span{}, false // ::, ://
	}
	// The name, back from the separator.
	k := i
	if sep == '=' && k > 0 && b[k-1] == ':' {
		k-- // :=
	}
	for k > 0 && k > i-3 && (b[k-1] == ' ' || b[k-1] == '\t') {
		k--
	}
	if k == 0 {
		return span{}, false
	}
	var ns, ne int
	quoted, jsonKey := false, false
	switch q := b[k-1]; {
	case q == '"' || q == '\'':
		// A quoted name: "name", 'name' or \"name\".
		quoted = true
		ne = k - 1
		esc := q == '"' && escaped(b, ne)
		if esc {
			ne--
		}
		if len(r.names) == 0 && !plausibleEnd(b, ne) {
			return span{}, false
		}
		ns = ne
		for ns > 0 && ne-ns < maxName && b[ns-1] != q && b[ns-1] != '\\' {
			ns--
		}
		if ns == 0 || b[ns-1] != q || ns == ne {
			return span{}, false
		}
		if esc != (ns >= 2 && b[ns-2] == '\\') {
			return span{}, false
		}
		jsonKey = js && q == '"' && !esc
	case nameByte[q]:
		ne = k
		if len(r.names) == 0 && !plausibleEnd(b, ne) {
			return span{}, false
		}
		ns = ne
		for ns > 0 && ne-ns < maxName && nameByte[b[ns-1]] {
			ns--
		}
		if ns > 0 && b[ns-1] == '\\' && escaped(b, ns) {
			if b[ns] == 'u' {
				ns += 5
			} else {
				ns++
			}
		}
		if ns >= ne {
			return span{}, false
		}
	default:
		return span{}, false
	}
	name := b[ns:ne]
	var buf [maxName + 8]byte
	norm := normName(buf[:0], name)
	auth, ok := r.sensitive(norm)
	if !ok {
		return span{}, false
	}
	screaming := !quoted && isScreaming(name)
	return r.valueAt(b, i+1, ns, cut, sep == '=' && screaming, auth, jsonKey)
}

// valueAt returns the span of the value that starts at or after b[v]
// (spaces skipped), for a name starting at ns. env says that the name is
// an environment variable's (NAME=value): any value but a placeholder is
// masked. auth says that the value is an Authorization header's: a scheme
// word before it is kept. jsonKey says that the name is a key of the JSON
// line itself: only a string value is masked, never a literal.
func (r *Redactor) valueAt(b []byte, v, ns int, cut, env, auth, jsonKey bool) (span, bool) {
	n := len(b)
	for v < n && v < ns+maxName+16 && (b[v] == ' ' || b[v] == '\t') {
		v++
	}
	if v >= n {
		if cut {
			return span{kind: KindAssignment, start: n, end: n, ctx: ns, open: true}, true
		}
		return span{}, false
	}
	var s, e int
	quoted := false
	open := false
	if jsonKey && b[v] != '"' {
		return span{}, false
	}
	switch c := b[v]; {
	case c == '"' && !escaped(b, v):
		// A JSON string, or a quoted value in a plain line.
		quoted = true
		s = v + 1
		e = s
		for e < n && e-s < maxValue && b[e] != '"' {
			if b[e] == '\\' {
				e += escapeLen(b, e)
				continue
			}
			e++
		}
		e = min(e, n)
		open = e == n
	case c == '\\' && v+1 < n && b[v+1] == '"':
		// \"value\" inside a JSON string.
		quoted = true
		s = v + 2
		e = s
		for e < n && e-s < maxValue && b[e] != '"' && !(b[e] == '\\' && e+1 < n && (b[e+1] == '"' || b[e+1] == 'n')) {
			if b[e] == '\\' {
				e += escapeLen(b, e)
				continue
			}
			e++
		}
		e = min(e, n)
		open = e == n
	case c == '\'':
		quoted = true
		s = v + 1
		e = s
		for e < n && e-s < maxValue && b[e] != '\'' && b[e] != '"' && b[e] != '\\' && b[e] != '\n' {
			e++
		}
		open = e == n
	case c == '{' || c == '[' || c == '(':
		return span{}, false
	default:
		s = v
		if auth {
			// Authorization: Bearer TOKEN keeps its scheme.
			w := s
			for w < n && (b[w] >= 'a' && b[w] <= 'z' || b[w] >= 'A' && b[w] <= 'Z') {
				w++
			}
			if w < n && w > s && b[w] == ' ' {
				s = w + 1
			}
		}
		e = s
		for e < n && e-s < maxValue && !valueEnd[b[e]] {
			e++
		}
		open = e == n
		if !env && e < n && (b[e] == '(' || b[e] == '[') {
			return span{}, false // a call or an index: code
		}
	}
	if auth && quoted {
		// "Authorization": "Bearer TOKEN" keeps its scheme too.
		w := s
		for w < e && isLetter(b[w]) {
			w++
		}
		if w < e && w > s && b[w] == ' ' {
			s = w + 1
		}
	}
	if open && !cut {
		open = false
	}
	if e <= s {
		return span{}, false
	}
	val := b[s:e]
	if masked(b, s, e) || placeholder(val) || r.allowed(val) {
		return span{}, false
	}
	if !quoted && !env && !secretLooking(val) {
		return span{}, false
	}
	if quoted && !env && (len(val) < 4 || bytes.ContainsAny(val, " \t")) {
		return span{}, false
	}
	if env && len(val) < 3 {
		return span{}, false
	}
	return span{kind: KindAssignment, start: s, end: e, ctx: ns, open: open}, true
}

// valueEnd holds the bytes that end a bare value.
var valueEnd = func() (t [256]bool) {
	for _, c := range " \t\r\n\"'\\,;&)]}<>|`" {
		t[c] = true
	}
	return t
}()

// normName appends the name in lower case, its words joined by '_' (words
// are split at '_', '-', '.', and where lower case meets upper case, as
// in apiKey and APIKey).
func normName(dst, name []byte) []byte {
	start := len(dst)
	for i, c := range name {
		switch {
		case c == '_' || c == '-' || c == '.':
			if len(dst) > start && dst[len(dst)-1] != '_' {
				dst = append(dst, '_')
			}
			continue
		case c >= 'A' && c <= 'Z':
			if i > 0 && len(dst) > start && dst[len(dst)-1] != '_' {
				p := name[i-1]
				lowerBefore := p >= 'a' && p <= 'z' || p >= '0' && p <= '9'
				upperRun := p >= 'A' && p <= 'Z' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z'
				if lowerBefore || upperRun {
					dst = append(dst, '_')
				}
			}
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	for len(dst) > start && dst[len(dst)-1] == '_' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// plausibleEnd reports whether a name ending before b[ne] may be
// sensitive, by its last three bytes: the quick test that passes over
// most names without reading them whole. It must hold for every name
// sensitive says yes to.
func plausibleEnd(b []byte, ne int) bool {
	// A number after the words (PASSWORD_2, key2, b64) is passed over.
	d := ne
	for d > 0 && b[d-1] >= '0' && b[d-1] <= '9' {
		d--
	}
	if d < ne {
		if d > 0 && (b[d-1] == '_' || b[d-1] == '-') {
			d--
		}
		if d > 0 && (b[d-1] == 'b' || b[d-1] == 'B') {
			return true // b64, base64
		}
		ne = d
	}
	if ne < 3 {
		return false
	}
	k := letterCode[b[ne-3]]<<10 | letterCode[b[ne-2]]<<5 | letterCode[b[ne-1]]
	return sensitiveEnds[k]
}

// letterCode numbers the letters from 1, either case; other bytes are
// 0, which no sensitive ending holds.
var letterCode = func() (t [256]uint16) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = uint16(c-'a') + 1
		t[c-'a'+'A'] = uint16(c-'a') + 1
	}
	return t
}()

// sensitiveEnds holds the last three letters of the sensitive last words,
// and of the words lastWords passes over.
var sensitiveEnds = func() (t [1 << 15]bool) {
	for _, w := range []string{"ord", "swd", "ass", "ase", "ret", "ken", "key", "ial", "als", "ion",
		"kie", "pwd", "lue", "raw", "str"} {
		t[letterCode[w[0]]<<10|letterCode[w[1]]<<5|letterCode[w[2]]] = true
	}
	return t
}()

// lastWords returns the last word of a normalized name and the one before
// it ("" when none), passing over a last word that is a number or a
// suffix that does not change what the value is (value, base64, b64).
func lastWords(norm []byte) (prev, last []byte) {
	for {
		i := bytes.LastIndexByte(norm, '_')
		last = norm[i+1:]
		if i < 0 || !skippable(last) {
			if i < 0 {
				return nil, last
			}
			rest := norm[:i]
			j := bytes.LastIndexByte(rest, '_')
			return rest[j+1:], last
		}
		norm = norm[:i]
	}
}

func skippable(w []byte) bool {
	switch string(w) {
	case "value", "base64", "b64", "raw", "str":
		return true
	}
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(w) > 0
}

// sensitive reports whether a normalized name is one whose value is a
// secret, and whether it is an Authorization header's.
func (r *Redactor) sensitive(norm []byte) (auth, ok bool) {
	if len(norm) == 0 {
		return false, false
	}
	prev, last := lastWords(norm)
	switch string(last) {
	case "password", "passwd", "pass", "passphrase", "secret", "token", "apikey",
		"credential", "credentials", "privatekey", "accesskey", "secretkey", "cookie":
		return false, true
	case "pwd":
		// DB_PWD, but not PWD, the shell's working directory.
		return false, prev != nil
	case "authorization":
		return true, true
	case "key":
		switch string(prev) {
		case "api", "access", "secret", "private", "client", "signing", "encryption", "master",
			"auth", "account", "subscription", "license", "service", "app", "session":
			return false, true
		}
	}
	for _, w := range [...]string{"password", "passwd", "secret", "token"} {
		if bytes.HasSuffix(last, []byte(w)) {
			return false, true
		}
	}
	if len(r.names) > 0 {
		if r.names[string(norm)] {
			return false, true
		}
		for i := range norm {
			if norm[i] == '_' && r.names[string(norm[i+1:])] {
				return false, true
			}
		}
	}
	return false, false
}

// isScreaming reports whether a name is written in upper case, as
// environment variables are.
func isScreaming(name []byte) bool {
	letter := false
	for _, c := range name {
		if c >= 'a' && c <= 'z' {
			return false
		}
		if c >= 'A' && c <= 'Z' {
			letter = true
		}
	}
	return letter
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// placeholder reports whether a value only stands for a secret: empty,
// a variable or template, one repeated character, a keyword, an example.
func placeholder(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '$', '%', '<', '{', '[', '(', '@':
		return true
	}
	same := true
	for _, c := range v[1:] {
		if c != v[0] {
			same = false
			break
		}
	}
	if same {
		return true
	}
	if len(v) <= 12 {
		var buf [12]byte
		low := append(buf[:0], v...)
		for i, c := range low {
			if c >= 'A' && c <= 'Z' {
				low[i] = c + 'a' - 'A'
			}
		}
		switch string(low) {
		case "null", "none", "nil", "true", "false", "undefined", "empty", "redacted", "hidden",
			"required", "optional", "string", "str", "bool", "boolean", "int", "number", "object",
			"secret", "password", "token", "changeme", "env", "off", "on", "yes", "no",
			"include", "omit", "same-origin":
			return true
		}
	}
	if hasFold(v, "example") || hasFold(v, "placeholder") || len(v) >= 4 && hasFold(v[:4], "your") {
		return true
	}
	digits := true
	for _, c := range v {
		if c < '0' || c > '9' {
			digits = false
			break
		}
	}
	return digits
}

// hasFold reports whether v holds w (lower case ASCII) in any case.
func hasFold(v []byte, w string) bool {
	for i := 0; i+len(w) <= len(v); i++ {
		j := 0
		for j < len(w) && v[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// secretLooking reports whether a bare value in code looks like a secret
// rather than an identifier: eight bytes or more, letters and digits.
func secretLooking(v []byte) bool {
	if len(v) < 8 {
		return false
	}
	var letter, digit bool
	for _, c := range v {
		switch {
		case isLetter(c):
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		}
	}
	return letter && digit
}

// allowed reports whether the rules allow a value.
func (r *Redactor) allowed(v []byte) bool {
	if r.allow[string(v)] {
		return true
	}
	for _, re := range r.rules.AllowPatterns {
		if re.Match(v) {
			return true
		}
	}
	return false
}
