package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
)

// Scopes of an access token. Each route needs exactly one of them (see
// RouteScope); the server's own token (Options.Token) has them all.
const (
	// ScopeRead reads sessions, their events, streams and usage; not their
	// native lines.
	ScopeRead = "read"
	// ScopeLines reads native lines, which hold what the harness printed
	// before any normalization: the only scope that does.
	ScopeLines = "lines"
	// ScopeIngest records sessions a remote runner sends (POST
	// /api/sessions without a profile, POST /api/sessions/{id}/lines).
	ScopeIngest = "ingest"
	// ScopeControl starts and drives live sessions and makes and revokes
	// share links.
	ScopeControl = "control"
)

// AllScopes lists every scope, in the order they are written.
var AllScopes = []string{ScopeRead, ScopeLines, ScopeIngest, ScopeControl}

// Prefixes of the secrets the API hands out: an access token's, and a
// share link's. Both are followed by 43 characters of unpadded base64url
// (32 random bytes).
const (
	TokenPrefix = "agst_"
	SharePrefix = "agsl_"
)

// secretBytes is how many random bytes a secret holds.
const secretBytes = 32

// ParseScopes reads a comma-separated list of scopes, each one of
// AllScopes; the result is in the order of AllScopes, without repeats.
func ParseScopes(s string) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(AllScopes, p) {
			return nil, fmt.Errorf("bad scope %q: want %s", p, strings.Join(AllScopes, ", "))
		}
		seen[p] = true
	}
	var out []string
	for _, sc := range AllScopes {
		if seen[sc] {
			out = append(out, sc)
		}
	}
	return out, nil
}

// HashSecret returns what the store keeps of a secret: its SHA-256. The
// secrets are 32 random bytes, so a fast hash is enough: there is no
// dictionary to try, and 2^256 guesses are out of reach with any hash.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// newSecret returns a new secret with a prefix, and the id of its record.
func newSecret(prefix, idPrefix string, now time.Time) (secret, id string) {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b), idPrefix + strings.TrimPrefix(store.NewID(now), "s_")
}

// NewToken makes an access token with scopes (see ParseScopes), stores its
// hash in ts and returns its secret, which is shown once and never kept,
// and its record. An empty name is the token's id; ttl zero means it
// never expires.
func NewToken(ctx context.Context, ts store.Tokens, name string, scopes []string, ttl time.Duration, now time.Time) (string, store.Token, error) {
	if len(scopes) == 0 {
		return "", store.Token{}, errors.New("a token needs at least one scope")
	}
	if ttl < 0 {
		return "", store.Token{}, errors.New("a negative lifetime")
	}
	secret, id := newSecret(TokenPrefix, "tok_", now)
	if strings.HasPrefix(name, "tok_") || strings.HasPrefix(name, "shr_") {
		return "", store.Token{}, fmt.Errorf("bad name %q: tok_ and shr_ begin the ids", name)
	}
	if name == "" {
		name = id
	}
	t := store.Token{ID: id, Kind: store.KindToken, Name: name, Scopes: scopes, Hash: HashSecret(secret), CreatedAt: ms(now)}
	if ttl > 0 {
		t.ExpiresAt = ms(now.Add(ttl))
	}
	if err := ts.CreateToken(ctx, t); err != nil {
		return "", store.Token{}, err
	}
	return secret, t, nil
}

// NewShare makes a share link of a session: a secret that reads that
// session's record, events and stream, nothing else (not its native
// lines, not another session). It stores its hash in ts and returns the
// secret, shown once, and the record. ttl must be positive: a share link
// always expires.
func NewShare(ctx context.Context, ts store.Tokens, session string, ttl time.Duration, now time.Time) (string, store.Token, error) {
	if ttl <= 0 {
		return "", store.Token{}, errors.New("a share link needs a positive lifetime")
	}
	secret, id := newSecret(SharePrefix, "shr_", now)
	t := store.Token{ID: id, Kind: store.KindShare, Scopes: []string{ScopeRead}, Session: session,
		Hash: HashSecret(secret), CreatedAt: ms(now), ExpiresAt: ms(now.Add(ttl))}
	if err := ts.CreateToken(ctx, t); err != nil {
		return "", store.Token{}, err
	}
	return secret, t, nil
}

// RevokeShare revokes the share link of that id (never a token), and
// returns it; store.ErrNotFound when there is none.
func RevokeShare(ctx context.Context, ts store.Tokens, id string, now time.Time) (store.Token, error) {
	all, err := ts.ListTokens(ctx)
	if err != nil {
		return store.Token{}, err
	}
	for _, t := range all {
		if t.ID == id && t.Kind == store.KindShare {
			return ts.RevokeToken(ctx, id, now)
		}
	}
	return store.Token{}, store.ErrNotFound
}

// ms returns t to the millisecond, as stores keep it.
func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }

// A route is what a request needs: a scope, and whether a share link of
// the session in the path may take it.
type route struct {
	scope string
	share bool
}

// scopeByBody marks POST /api/sessions, whose body decides: a profile
// needs control, a runner's session ingest (see createSession).
const scopeByBody = "ingest or control"

// routes are the scopes of the API's routes, by the pattern they are
// registered with. A pattern with a method missing here needs every
// scope: a new route is closed until it is listed. Patterns without a
// method only answer 405 or 404 and need any valid credential.
var routes = map[string]route{
	"GET /api/sessions":                            {ScopeRead, false},
	"POST /api/sessions":                           {scopeByBody, false},
	"GET /api/sessions/{id}":                       {ScopeRead, true},
	"DELETE /api/sessions/{id}":                    {ScopeControl, false},
	"GET /api/sessions/{id}/events":                {ScopeRead, true},
	"GET /api/sessions/{id}/stream":                {ScopeRead, true},
	"GET /api/sessions/{id}/lines/{n}":             {ScopeLines, false},
	"POST /api/sessions/{id}/lines":                {ScopeIngest, false},
	"GET /api/usage":                               {ScopeRead, false},
	"GET /api/events/stream":                       {ScopeRead, false},
	"GET /api/health":                              {ScopeRead, false},
	"GET /api/search":                              {ScopeRead, false},
	"POST /api/sessions/{id}/messages":             {ScopeControl, false},
	"POST /api/sessions/{id}/interrupt":            {ScopeControl, false},
	"POST /api/sessions/{id}/requests/{requestId}": {ScopeControl, false},
	"GET /api/profiles":                            {ScopeControl, false},
	"POST /api/sessions/{id}/share":                {ScopeControl, false},
	"DELETE /api/shares/{id}":                      {ScopeControl, false},
}

// RouteScope returns the scope a route needs, by the pattern it is
// registered with ("GET /api/sessions/{id}/lines/{n}"), and whether a
// share link of the session in its path may take it; "" for a pattern
// that is not a route of the API.
func RouteScope(pattern string) (scope string, share bool) {
	r := routes[pattern]
	return r.scope, r.share
}

// grant is what a request's credential allows.
type grant struct {
	all     bool // the server's own token, or a server that needs none
	scopes  []string
	session string // a share link's session
	id      string // the stored token's id
}

func (g grant) has(scope string) bool { return g.all || slices.Contains(g.scopes, scope) }

type grantKey struct{}

// grantOf returns the grant of a request the authentication let through
// (none when it did not pass there).
func grantOf(r *http.Request) grant {
	g, _ := r.Context().Value(grantKey{}).(grant)
	return g
}

// bearer returns the token of an Authorization header value: the scheme
// "Bearer" in any case, spaces, then the token, which must be one or more
// printable ASCII characters without spaces.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.Trim(tok, " \t")
	if tok == "" || len(tok) > 4096 {
		return "", false
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c >= 0x7f {
			return "", false
		}
	}
	return tok, true
}

// tokenAuth is the server's state of stored tokens: when each was last
// recorded as used.
type tokenAuth struct {
	mu      sync.Mutex
	touched map[string]time.Time
}

// touchEvery is how often a token's last use is written to the store.
const touchEvery = time.Minute

// authenticate decides a request: it returns what the request may do, or
// answers 401 (no valid credential) or 403 (not the scope the route
// needs) and returns false. mux finds the route.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) (grant, bool) {
	if s.opts.Token == "" && !s.opts.RequireToken {
		return grant{all: true}, true
	}
	g, msg := s.credential(r)
	if msg != "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentstream"`)
		writeError(w, http.StatusUnauthorized, msg)
		return grant{}, false
	}
	if g.all {
		return g, true
	}
	_, pattern := mux.Handler(r)
	if msg := g.refuse(r, pattern); msg != "" {
		writeError(w, http.StatusForbidden, msg)
		return grant{}, false
	}
	return g, true
}

// credential finds the request's credential: the server's own token (as
// authorized checks it), else a stored token or share link given as
// "Authorization: Bearer SECRET". It returns the 401 message when there
// is no valid one.
func (s *server) credential(r *http.Request) (grant, string) {
	if s.opts.Token != "" && s.authorized(r) {
		return grant{all: true}, ""
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return grant{}, "missing token: send Authorization: Bearer TOKEN"
	}
	secret, ok := bearer(h)
	if !ok {
		return grant{}, "malformed Authorization header: want Bearer TOKEN"
	}
	if s.opts.Tokens == nil || !(strings.HasPrefix(secret, TokenPrefix) || strings.HasPrefix(secret, SharePrefix)) {
		return grant{}, "missing or wrong token"
	}
	// The lookup is by the hash of the secret: its timing tells nothing
	// of the secret's bytes.
	t, err := s.opts.Tokens.TokenByHash(r.Context(), HashSecret(secret))
	if errors.Is(err, store.ErrNotFound) {
		return grant{}, "missing or wrong token"
	}
	if err != nil {
		return grant{}, "the token could not be checked: " + err.Error()
	}
	// The hash found must be the secret's: compared in constant time in
	// case a store matched it loosely.
	if subtle.ConstantTimeCompare(t.Hash, HashSecret(secret)) != 1 {
		return grant{}, "missing or wrong token"
	}
	what := "token " + t.Name
	if t.Kind == store.KindShare {
		what = "share link " + t.ID
	}
	now := s.opts.Now()
	if !t.RevokedAt.IsZero() {
		return grant{}, what + " was revoked at " + t.RevokedAt.UTC().Format(agentstream.TimeFormat)
	}
	if !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt) {
		return grant{}, what + " expired at " + t.ExpiresAt.UTC().Format(agentstream.TimeFormat)
	}
	s.touchToken(r.Context(), t.ID, now)
	g := grant{scopes: t.Scopes, id: t.ID}
	if t.Kind == store.KindShare {
		g.scopes, g.session = []string{ScopeRead}, t.Session
	}
	return g, ""
}

// touchToken records a token's use, at most every touchEvery.
func (s *server) touchToken(ctx context.Context, id string, now time.Time) {
	s.tok.mu.Lock()
	last, ok := s.tok.touched[id]
	if ok && now.Sub(last) < touchEvery {
		s.tok.mu.Unlock()
		return
	}
	if s.tok.touched == nil {
		s.tok.touched = map[string]time.Time{}
	}
	s.tok.touched[id] = now
	s.tok.mu.Unlock()
	_ = s.opts.Tokens.TouchToken(ctx, id, now)
}

// refuse returns the 403 message for a request on the route of pattern
// that g does not allow, "" when it does.
func (g grant) refuse(r *http.Request, pattern string) string {
	method, _, hasMethod := strings.Cut(pattern, " ")
	if !hasMethod || method == "" {
		return "" // 404 and 405 answers
	}
	rt, known := routes[pattern]
	if !known {
		return "this route needs the server's own token"
	}
	if g.session != "" {
		if !rt.share {
			return "a share link reads only its session's record, events and stream"
		}
		if id, ok := pathSession(r); !ok || id != g.session {
			return "this share link reads only session " + g.session
		}
		return ""
	}
	if rt.scope == scopeByBody {
		if g.has(ScopeIngest) || g.has(ScopeControl) {
			return "" // createSession decides
		}
		return "this token lacks the scope ingest, or the scope control for a live session, that " + pattern + " needs"
	}
	if !g.has(rt.scope) {
		return "this token lacks the scope " + rt.scope + " that " + pattern + " needs"
	}
	return ""
}

// pathSession returns the session id of a path /api/sessions/{id}/…, as
// the mux reads it: the segment unescaped.
func pathSession(r *http.Request) (string, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/sessions/")
	if !ok {
		return "", false
	}
	seg, _, _ := strings.Cut(rest, "/")
	id, err := url.PathUnescape(seg)
	return id, err == nil && id != ""
}

// requireScope answers 403 and returns false when the request's grant
// lacks scope; for the routes whose scope their body decides.
func requireScope(w http.ResponseWriter, r *http.Request, scope, what string) bool {
	if grantOf(r).has(scope) {
		return true
	}
	writeError(w, http.StatusForbidden, "this token lacks the scope "+scope+" that "+what+" needs")
	return false
}

// routeAuth adds the routes of share links.
func (s *server) routeAuth(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/sessions/{id}/share", s.postShare)
	mux.HandleFunc("/api/sessions/{id}/share", methodNotAllowed("POST"))
	mux.HandleFunc("DELETE /api/shares/{id}", s.deleteShare)
	mux.HandleFunc("/api/shares/{id}", methodNotAllowed("DELETE"))
}

// ShareRequest is the body of POST /api/sessions/{id}/share; an empty body
// is the defaults.
type ShareRequest struct {
	// Expires is the link's lifetime as a Go duration ("24h"); empty
	// means DefaultShareTTL.
	Expires string `json:"expires,omitempty"`
}

// ShareResponse answers POST /api/sessions/{id}/share: the secret, shown
// once, and where the session page reads with it.
type ShareResponse struct {
	ID        string `json:"id"`
	Session   string `json:"session"`
	Secret    string `json:"secret"`
	ExpiresAt string `json:"expiresAt"`
	// Path is the session page's path with the secret in its fragment,
	// which browsers never send to a server.
	Path string `json:"path"`
}

// DefaultShareTTL is a share link's lifetime when none is asked for.
const DefaultShareTTL = 24 * time.Hour

// MaxShareTTL is the longest lifetime of a share link.
const MaxShareTTL = 90 * 24 * time.Hour

// SharePath returns the session page's path that reads session with a
// share link's secret.
func SharePath(session, secret string) string {
	return "/sessions/" + url.PathEscape(session) + "#token=" + secret
}

func (s *server) postShare(w http.ResponseWriter, r *http.Request) {
	if s.opts.Tokens == nil {
		writeError(w, http.StatusNotFound, "this server keeps no tokens")
		return
	}
	b, ok := readBody(w, r, maxSmallBody)
	if !ok {
		return
	}
	var req ShareRequest
	if len(strings.TrimSpace(string(b))) > 0 && !decodeBytes(w, b, &req) {
		return
	}
	ttl := DefaultShareTTL
	if req.Expires != "" {
		d, err := time.ParseDuration(req.Expires)
		if err != nil || d <= 0 || d > MaxShareTTL {
			writeError(w, http.StatusBadRequest, "bad expires "+strconv.Quote(req.Expires)+": want a duration from 1s to "+MaxShareTTL.String())
			return
		}
		ttl = d
	}
	id := r.PathValue("id")
	if _, err := s.st.Session(r.Context(), id); err != nil {
		storeError(w, err)
		return
	}
	secret, t, err := NewShare(r.Context(), s.opts.Tokens, id, ttl, s.opts.Now())
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, ShareResponse{ID: t.ID, Session: id, Secret: secret,
		ExpiresAt: t.ExpiresAt.Format(agentstream.TimeFormat), Path: SharePath(id, secret)})
}

func (s *server) deleteShare(w http.ResponseWriter, r *http.Request) {
	if s.opts.Tokens == nil {
		writeError(w, http.StatusNotFound, "this server keeps no tokens")
		return
	}
	t, err := RevokeShare(r.Context(), s.opts.Tokens, r.PathValue("id"), s.opts.Now())
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no share link "+strconv.Quote(r.PathValue("id")))
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": t.ID, "revokedAt": t.RevokedAt.Format(agentstream.TimeFormat)})
}
