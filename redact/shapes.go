package redact

import "bytes"

// tokenByte holds the bytes a key or token is made of.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	t['_'], t['-'] = true, true
	return t
}()

// minRun is the length of the shortest token part looked at: every run of
// token bytes at least this long holds one of the probed bytes.
const minRun = 16

// scanRuns finds the known shapes among the runs of token bytes. With cut,
// a run that reaches the end of b is open: a known prefix starting it is
// enough.
func (r *Redactor) scanRuns(b []byte, cut bool, out []span) []span {
	n := len(b)
	last := -1 // the end of the last run looked at
	for i := minRun - 1; i < n; {
		if !tokenByte[b[i]] {
			i += minRun
			continue
		}
		e := i + 1
		for e < n && tokenByte[b[e]] {
			e++
		}
		last = e
		// Only a run of minRun bytes or more is looked at (but one at the
		// end of a cut line): go left only as far as that needs.
		s := i
		for s > 0 && e-s < minRun && tokenByte[b[s-1]] {
			s--
		}
		if e-s < minRun && !(cut && e == n) {
			i = e + minRun
			continue
		}
		for s > 0 && tokenByte[b[s-1]] {
			s--
		}
		out, e = runAt(b, s, e, cut, out)
		i = e + minRun
	}
	if cut && last < n && n > 0 && tokenByte[b[n-1]] {
		s := n - 1
		for s > 0 && tokenByte[b[s-1]] {
			s--
		}
		out, _ = runAt(b, s, n, true, out)
	}
	return out
}

// runAt looks at the run b[s:e] and returns where scanning goes on.
func runAt(b []byte, s, e int, cut bool, out []span) ([]span, int) {
	// The letter of an escape (\n, \u00e9) is not part of a token.
	if s > 0 && b[s-1] == '\\' && escaped(b, s) {
		if b[s] == 'u' {
			s += 5
		} else {
			s++
		}
	}
	open := cut && e == len(b)
	if s < e && (e-s >= 10 || open) {
		if sp, ok := shapeAt(b, s, e, open); ok {
			out = append(out, sp)
			e = max(e, sp.end)
		}
	}
	return out, e
}

// prefix is a known shape's public prefix.
type prefix struct {
	p    string
	kind string
	// min and max bound the length of the whole token (0: none).
	min, max int
	// body checks the bytes after the prefix.
	body func([]byte) bool
}

var prefixes = [256][]prefix{
	'a': {
		// agentstream's own access tokens and share links (web/api).
		{"agst_", KindAgentstream, 48, 48, nil},
		{"agsl_", KindAgentstream, 48, 48, nil},
	},
	'A': {
		{"AKIA", KindAWS, 20, 20, upperDigits},
		{"ASIA", KindAWS, 20, 20, upperDigits},
		{"ABIA", KindAWS, 20, 20, upperDigits},
		{"ACCA", KindAWS, 20, 20, upperDigits},
		{"AIza", KindGoogle, 39, 39, nil},
	},
	'g': {
		{"github_pat_", KindGitHub, 60, 0, nil},
		{"ghp_", KindGitHub, 40, 0, alnum},
		{"gho_", KindGitHub, 40, 0, alnum},
		{"ghu_", KindGitHub, 40, 0, alnum},
		{"ghs_", KindGitHub, 40, 0, alnum},
		{"ghr_", KindGitHub, 40, 0, alnum},
		{"glpat-", KindGitLab, 26, 0, nil},
		{"gldt-", KindGitLab, 25, 0, nil},
		{"glrt-", KindGitLab, 25, 0, nil},
		{"glptt-", KindGitLab, 26, 0, nil},
		{"glcbt-", KindGitLab, 26, 0, nil},
		{"glft-", KindGitLab, 25, 0, nil},
		{"glsoat-", KindGitLab, 27, 0, nil},
	},
	'x': {
		{"xoxb-", KindSlack, 20, 0, digitDash},
		{"xoxp-", KindSlack, 20, 0, digitDash},
		{"xoxa-", KindSlack, 20, 0, digitDash},
		{"xoxr-", KindSlack, 20, 0, digitDash},
		{"xoxs-", KindSlack, 20, 0, digitDash},
		{"xoxe-", KindSlack, 20, 0, digitDash},
		{"xapp-", KindSlack, 20, 0, digitDash},
	},
	's': {
		{"sk-ant-", KindAnthropic, 40, 0, nil},
		{"sk-proj-", KindOpenAI, 40, 0, nil},
		{"sk-svcacct-", KindOpenAI, 40, 0, nil},
		{"sk-admin-", KindOpenAI, 40, 0, nil},
		{"sk-", KindOpenAI, 32, 0, mixed},
		{"sk_live_", KindStripe, 20, 0, alnum},
		{"sk_test_", KindStripe, 20, 0, alnum},
		{"shpat_", KindShopify, 38, 38, hexLower},
		{"shpss_", KindShopify, 38, 38, hexLower},
	},
	'r': {
		{"rk_live_", KindStripe, 20, 0, alnum},
		{"rk_test_", KindStripe, 20, 0, alnum},
	},
	'w': {
		{"whsec_", KindStripe, 30, 0, alnum},
	},
	'h': {
		{"hf_", KindHuggingFace, 37, 37, letters},
	},
	'n': {
		{"npm_", KindNPM, 40, 40, alnum},
	},
	'p': {
		{"pypi-AgEIcHlwaS5vcmc", KindPyPI, 60, 0, nil},
	},
	'd': {
		{"dop_v1_", KindDigitalOcean, 71, 71, hexLower},
		{"doo_v1_", KindDigitalOcean, 71, 71, hexLower},
	},
}

// shapeAt returns the known shape of the run b[s:e], a JSON Web Token
// starting with it, or (open) a prefix of a shape running into the end
// of a cut line.
func shapeAt(b []byte, s, e int, open bool) (span, bool) {
	tok := b[s:e]
	if bytes.HasPrefix(tok, []byte("eyJ")) {
		return jwtAt(b, s, e, open)
	}
	if s > 0 && b[s-1] == '.' {
		// Maybe the signature of a JSON Web Token with a short header
		// and payload.
		p := s - 1
		for p > 0 && tokenByte[b[p-1]] {
			p--
		}
		if bytes.HasPrefix(b[p:], []byte("eyJ")) && p > 0 && b[p-1] == '.' {
			h := p - 1
			for h > 0 && tokenByte[b[h-1]] {
				h--
			}
			if bytes.HasPrefix(b[h:], []byte("eyJ")) {
				return jwtAt(b, h, p-1, open)
			}
		}
	}
	for _, p := range prefixes[tok[0]] {
		if !bytes.HasPrefix(tok, []byte(p.p)) {
			continue
		}
		if open {
			return span{kind: p.kind, start: s, end: e, keep: len(p.p), ctx: s, open: true}, true
		}
		if len(tok) < p.min || p.max > 0 && len(tok) > p.max {
			continue
		}
		rest := tok[len(p.p):]
		if p.body != nil && !p.body(rest) {
			continue
		}
		if bytes.Contains(tok, []byte("EXAMPLE")) {
			continue
		}
		return span{kind: p.kind, start: s, end: e, keep: len(p.p), ctx: s}, true
	}
	return span{}, false
}

// jwtAt matches a JSON Web Token: header, payload and signature, the first
// two base64url JSON objects ("eyJ").
func jwtAt(b []byte, s, e int, open bool) (span, bool) {
	// The run may be the payload: look back for the header.
	if s >= 2 && b[s-1] == '.' {
		h := s - 1
		for h > 0 && tokenByte[b[h-1]] {
			h--
		}
		if s-1-h >= 10 && bytes.HasPrefix(b[h:], []byte("eyJ")) {
			s, e = h, s-1
		}
	}
	if e-s < 10 {
		return span{}, false
	}
	end := e
	for part := 1; part < 3; part++ {
		if end == len(b) {
			if open {
				return span{kind: KindJWT, start: s, end: end, keep: 3, ctx: s, open: true}, true
			}
			return span{}, false
		}
		if b[end] != '.' {
			return span{}, false
		}
		j := end + 1
		for j < len(b) && tokenByte[b[j]] {
			j++
		}
		if part == 1 && (j-end-1 < 10 || !bytes.HasPrefix(b[end+1:], []byte("eyJ"))) {
			return span{}, false
		}
		if part == 2 && j-end-1 < 8 {
			if open && j == len(b) {
				return span{kind: KindJWT, start: s, end: j, keep: 3, ctx: s, open: true}, true
			}
			return span{}, false
		}
		end = j
	}
	return span{kind: KindJWT, start: s, end: end, keep: 3, ctx: s, open: open && end == len(b)}, true
}

func upperDigits(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func alnum(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func letters(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func hexLower(b []byte) bool {
	for _, c := range b {
		if !(c >= 'a' && c <= 'f' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// digitDash is a Slack token's body: it starts with digits.
func digitDash(b []byte) bool { return len(b) > 0 && b[0] >= '0' && b[0] <= '9' }

// mixed says that an OpenAI key's body mixes upper case, lower case and
// digits, as a random key does and a hyphenated word does not.
func mixed(b []byte) bool {
	var up, low, dig bool
	for _, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			low = true
		case c >= '0' && c <= '9':
			dig = true
		}
	}
	return up && low && dig
}
