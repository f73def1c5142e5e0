package redact

import "bytes"

// userinfoByte holds the bytes of a URL's user and password (RFC 3986's
// unreserved and sub-delims, '%' and ':'), less the quote that may end
// the string around the URL.
var userinfoByte = func() (t [256]bool) {
	t = tokenByte
	for _, c := range ".~!$&()*+,;=:%#" {
		t[c] = true
	}
	return t
}()

// scanURLs finds the passwords of URLs: scheme://user:password@host.
func (r *Redactor) scanURLs(b []byte, cut bool, out []span) []span {
	for off := 0; off < len(b); {
		j := bytes.IndexByte(b[off:], '@')
		if j < 0 {
			break
		}
		at := off + j
		off = at + 1
		k, colon := at, -1
		for k > 0 && at-k < 256 && userinfoByte[b[k-1]] {
			k--
			if b[k] == ':' {
				colon = k
			}
		}
		if k < 4 || b[k-1] != '/' || b[k-2] != '/' || b[k-3] != ':' || !isLetter(b[k-4]) || colon < 0 {
			continue
		}
		// A password with an unescaped '@' ends at the last '@' before
		// the host.
		for e := at + 1; e < len(b) && e-at < 256 && (userinfoByte[b[e]] || b[e] == '@'); e++ {
			if b[e] == '@' {
				at = e
			}
		}
		off = at + 1
		s := colon + 1
		if s >= at || masked(b, s, at) || placeholder(b[s:at]) || r.allowed(b[s:at]) {
			continue
		}
		scheme := k - 3
		for scheme > 0 && isLetter(b[scheme-1]) {
			scheme--
		}
		out = append(out, span{kind: KindURLPassword, start: s, end: at, ctx: scheme})
	}
	if cut {
		// scheme://user:pass running into the end of a cut line.
		if i := bytes.LastIndex(b, []byte("://")); i > 0 && len(b)-i < 256 {
			k := i + 3
			colon := -1
			for e := k; e < len(b); e++ {
				if !userinfoByte[b[e]] {
					return out
				}
				if b[e] == ':' && colon < 0 {
					colon = e
				}
			}
			if colon >= 0 {
				out = append(out, span{kind: KindURLPassword, start: colon + 1, end: len(b), ctx: i, open: true})
			}
		}
	}
	return out
}

// scanPEM finds the bodies of PEM private keys. In a JSON line the body
// ends, at the latest, with the string that holds it.
func (r *Redactor) scanPEM(b []byte, js, cut bool, out []span) []span {
	const begin = "-----BEGIN "
	for off := 0; off < len(b); {
		j := bytes.Index(b[off:], []byte(begin))
		if j < 0 {
			break
		}
		h := off + j
		off = h + len(begin)
		l := bytes.Index(b[off:min(len(b), off+48)], []byte("-----"))
		if l < 0 {
			if cut && len(b)-off < 48 {
				out = append(out, span{kind: KindPrivateKey, start: len(b), end: len(b), ctx: h, open: true})
			}
			continue
		}
		label := b[off : off+l]
		if !bytes.HasSuffix(label, []byte("PRIVATE KEY")) && !bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK")) {
			continue
		}
		s := off + l + 5
		e := s
		end := bytes.Index(b[s:], []byte("-----END "))
		limit := len(b)
		if end >= 0 {
			limit = s + end
		}
		for e < limit {
			if b[e] == '\\' {
				e += escapeLen(b, e)
				continue
			}
			if js && b[e] == '"' {
				break
			}
			e++
		}
		e = min(e, limit)
		off = e
		if e <= s || masked(b, s, e) {
			continue
		}
		open := cut && end < 0 && e == len(b)
		out = append(out, span{kind: KindPrivateKey, start: s, end: e, ctx: h, open: open})
	}
	return out
}

// scanRules finds the matches of the rules' patterns.
func (r *Redactor) scanRules(b []byte, cut bool, out []span) []span {
	for i := range r.rules.Patterns {
		p := &r.rules.Patterns[i]
		if len(p.prefix) > 0 && !bytes.Contains(b, p.prefix) {
			continue
		}
		for _, m := range p.Re.FindAllSubmatchIndex(b, -1) {
			s, e := m[0], m[1]
			if len(m) >= 4 && m[2] >= 0 {
				s, e = m[2], m[3]
			}
			if e <= s || masked(b, s, e) || r.allowed(b[s:e]) {
				continue
			}
			out = append(out, span{kind: KindRule + p.Label, start: s, end: e, ctx: m[0], open: cut && m[1] == len(b)})
		}
	}
	return out
}
