package api

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Guard wraps next with the checks that keep a browser from reaching the
// server on behalf of a page of another site:
//
//   - the Host header must name the server: a loopback name or address
//     (localhost, 127.0.0.1, [::1], any port), or one of hosts, each a
//     name (any port) or name:port; "*" allows every host. Anything else
//     gets 403, which defeats DNS rebinding.
//   - a request that changes state (POST, PUT, PATCH, DELETE) must say
//     Content-Type: application/json, else 415: a page can send
//     text/plain or a form across origins without asking, never JSON.
//   - such a request with an Origin header must come from the host it
//     is sent to, else 403.
//
// New applies Guard with Options.Hosts; Guard is for the handlers served
// beside the API (the web timeline).
func Guard(next http.Handler, hosts []string) http.Handler {
	g := newHostSet(hosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allows(r.Host) {
			writeError(w, http.StatusForbidden, "host "+strconv.Quote(r.Host)+
				" is not served here (a server off loopback names its hosts: serve --allow-host NAME)")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, "a "+r.Method+
					" request needs Content-Type: application/json (got "+strconv.Quote(r.Header.Get("Content-Type"))+")")
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				writeError(w, http.StatusForbidden, "origin "+strconv.Quote(o)+" may not change anything on "+strconv.Quote(r.Host))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether the Origin header o names host (host[:port]
// as the Host header gives it).
func sameOrigin(o, host string) bool {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// hostSet is the set of names a server answers to.
type hostSet struct {
	any   bool
	names map[string]bool // lower-case names, any port
	exact map[string]bool // lower-case host:port
}

func newHostSet(hosts []string) hostSet {
	g := hostSet{names: map[string]bool{}, exact: map[string]bool{}}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		switch {
		case h == "":
		case h == "*":
			g.any = true
		default:
			if name, port, err := net.SplitHostPort(h); err == nil && port != "" {
				if name == "" || name == "0.0.0.0" || name == "::" {
					// A wildcard listen address: the port alone says nothing.
					continue
				}
				g.exact[net.JoinHostPort(name, port)] = true
				continue
			}
			g.names[strings.Trim(h, "[]")] = true
		}
	}
	return g
}

// allows reports whether a Host header names the server.
func (g hostSet) allows(host string) bool {
	if g.any {
		return true
	}
	host = strings.ToLower(host)
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	} else if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		return false
	}
	name = strings.Trim(name, "[]")
	if name == "" {
		return false
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return true
	}
	return g.names[name] || g.exact[host]
}

// streamLimit counts the open event streams, per client address and in
// all.
type streamLimit struct {
	total, perClient int

	mu  sync.Mutex
	n   int
	per map[string]int
}

// acquire takes a stream for the client at remoteAddr, or reports why not.
func (l *streamLimit) acquire(remoteAddr string) (release func(), why string) {
	client := remoteAddr
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		client = h
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n >= l.total {
		return nil, "too many event streams are open (" + strconv.Itoa(l.total) + ")"
	}
	if l.per[client] >= l.perClient {
		return nil, "too many event streams are open from " + client + " (" + strconv.Itoa(l.perClient) + ")"
	}
	l.n++
	l.per[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.n--
			if l.per[client]--; l.per[client] <= 0 {
				delete(l.per, client)
			}
			l.mu.Unlock()
		})
	}, ""
}
