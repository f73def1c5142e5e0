package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentstream/agentstream"
	"github.com/agentstream/agentstream/store"
	"github.com/agentstream/agentstream/web/api"
)

const tokenDoc = `Manages the access tokens of the HTTP API (agentstream serve), kept in the
session database as the SHA-256 of their secrets, never the secrets.

  token create --scope read,lines,ingest,control [--name N] [--expires 720h]
      makes a token and prints its secret once, on stdout ("agst_" and 43
      characters); it cannot be shown again.
  token list [--json]
      lists the tokens and share links: id, name, kind, scopes, session,
      created, expires, last used and state. Never a secret.
  token revoke NAME|ID
      revokes a token (or a share link, by its id) at once.

Scopes: read (sessions, events, streams, usage), lines (native lines, what
the harness printed, which read does not give), ingest (a remote runner:
agentstream run --server), control (live sessions and share links). The
server's own --token has every scope. Tokens are checked only by a server
that requires one: serve --token T or serve --require-token.`

func cmdToken(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w, code := e.stdout, exitOK
		if len(args) == 0 {
			w, code = e.stderr, exitUsage
		}
		fmt.Fprintf(w, "Usage: agentstream token create|list|revoke [flags]\n\n%s\n\n"+
			"Each takes --db PATH|URL, the session database (default $AGENTSTREAM_DB);\n"+
			"agentstream token SUBCOMMAND -h gives its flags.\n", tokenDoc)
		return code
	}
	switch args[0] {
	case "create":
		return tokenCreate(ctx, e, args[1:])
	case "list":
		return tokenList(ctx, e, args[1:])
	case "revoke":
		return tokenRevoke(ctx, e, args[1:])
	}
	fmt.Fprintf(e.stderr, "agentstream token: unknown subcommand %q: want create, list or revoke\n", args[0])
	return exitUsage
}

// openTokens opens the store named by --db for a token command.
func openTokens(ctx context.Context, e *env, name, db string) (sessionStore, bool) {
	st, _, err := openStore(ctx, e, db)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentstream %s: %v\n", name, err)
		return nil, false
	}
	return st, true
}

// parseTTL reads a lifetime: a Go duration (720h, 90m) or a number of
// days (30d); zero is allowed when zeroOK.
func parseTTL(s string, zeroOK bool) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil && strings.HasSuffix(s, "d") {
		var n int
		if n, err = strconv.Atoi(strings.TrimSuffix(s, "d")); err == nil {
			d = time.Duration(n) * 24 * time.Hour
		}
	}
	if err != nil || d < 0 || d == 0 && !zeroOK {
		return 0, fmt.Errorf("bad --expires %q: want a positive duration (720h, 90m, 30d)", s)
	}
	return d, nil
}

func tokenCreate(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "token create", "--scope S[,S…] [--name N] [--expires 720h] [--db PATH]", tokenDoc)
	db := dbFlag(fs)
	scope := fs.String("scope", "", "the scopes, comma-separated: read, lines, ingest, control")
	name := fs.String("name", "", "the token's name, unique among the tokens not revoked (default its id)")
	expires := fs.String("expires", "0", "the token's lifetime (720h, 30d); 0 means it never expires")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream token create: no arguments expected")
		return exitUsage
	}
	if *scope == "" {
		fmt.Fprintln(e.stderr, "agentstream token create: --scope is required (read, lines, ingest, control)")
		return exitUsage
	}
	scopes, err := api.ParseScopes(*scope)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream token create:", err)
		return exitUsage
	}
	ttl, err := parseTTL(*expires, true)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream token create:", err)
		return exitUsage
	}
	st, ok := openTokens(ctx, e, "token create", *db)
	if !ok {
		return exitError
	}
	defer st.Close()
	secret, t, err := api.NewToken(ctx, st, *name, scopes, ttl, time.Now())
	if errors.Is(err, store.ErrConflict) {
		fmt.Fprintf(e.stderr, "agentstream token create: a token named %q exists: revoke it or choose another name\n", *name)
		return exitError
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream token create:", err)
		return exitError
	}
	fmt.Fprintln(e.stdout, secret)
	exp := "never expires"
	if !t.ExpiresAt.IsZero() {
		exp = "expires " + t.ExpiresAt.Format(agentstream.TimeFormat)
	}
	fmt.Fprintf(e.stderr, "agentstream token create: token %s (%s), scopes %s, %s; its secret is shown only now\n",
		t.Name, t.ID, strings.Join(t.Scopes, ","), exp)
	return exitOK
}

// tokenView is a token as token list shows it: never its hash.
type tokenView struct {
	ID        string   `json:"id"`
	Name      *string  `json:"name"`
	Kind      string   `json:"kind"`
	Scopes    []string `json:"scopes"`
	Session   *string  `json:"session"`
	CreatedAt string   `json:"createdAt"`
	ExpiresAt *string  `json:"expiresAt"`
	LastUsed  *string  `json:"lastUsed"`
	RevokedAt *string  `json:"revokedAt"`
	State     string   `json:"state"`
}

func timeOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(agentstream.TimeFormat)
	return &s
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func viewToken(t store.Token, now time.Time) tokenView {
	state := "active"
	switch {
	case !t.RevokedAt.IsZero():
		state = "revoked"
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		state = "expired"
	}
	return tokenView{ID: t.ID, Name: strOrNil(t.Name), Kind: t.Kind, Scopes: t.Scopes, Session: strOrNil(t.Session),
		CreatedAt: t.CreatedAt.UTC().Format(agentstream.TimeFormat), ExpiresAt: timeOrNil(t.ExpiresAt),
		LastUsed: timeOrNil(t.LastUsed), RevokedAt: timeOrNil(t.RevokedAt), State: state}
}

func tokenList(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "token list", "[--json] [--db PATH]", tokenDoc)
	db := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintln(e.stderr, "agentstream token list: no arguments expected")
		return exitUsage
	}
	st, ok := openTokens(ctx, e, "token list", *db)
	if !ok {
		return exitError
	}
	defer st.Close()
	list, err := st.ListTokens(ctx)
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream token list:", err)
		return exitError
	}
	now := time.Now()
	views := []tokenView{}
	for _, t := range list {
		views = append(views, viewToken(t, now))
	}
	if *asJSON {
		b, _ := json.MarshalIndent(views, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKIND\tSCOPES\tSESSION\tCREATED\tEXPIRES\tLAST USED\tSTATE")
	dash := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", v.ID, dash(v.Name), v.Kind, strings.Join(v.Scopes, ","),
			dash(v.Session), v.CreatedAt, dash(v.ExpiresAt), dash(v.LastUsed), v.State)
	}
	tw.Flush()
	return exitOK
}

func tokenRevoke(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "token revoke", "NAME|ID [--db PATH]", tokenDoc)
	db := dbFlag(fs)
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream token revoke: want one token name or id")
		return exitUsage
	}
	st, ok := openTokens(ctx, e, "token revoke", *db)
	if !ok {
		return exitError
	}
	defer st.Close()
	t, err := st.RevokeToken(ctx, pos[0], time.Now())
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(e.stderr, "agentstream token revoke: no token %q\n", pos[0])
		return exitError
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream token revoke:", err)
		return exitError
	}
	fmt.Fprintf(e.stderr, "agentstream token revoke: %s %s revoked at %s\n", t.Kind, t.ID, t.RevokedAt.Format(agentstream.TimeFormat))
	return exitOK
}

const shareDoc = `Makes a read-only share link of a stored session, or revokes one. The
link reads that session's record, events and live stream, and its page in
the web timeline; never its native lines, never another session. It always
expires (--expires, at most 90 days). The secret ("agsl_" and 43
characters) is printed once on stdout, as the session page's URL when
--url gives the server's address (the secret is in the URL's fragment,
which browsers do not send to a server); only its SHA-256 is kept. A share
link works only on a server that requires a token (serve --token T or serve
--require-token). token list shows the links; share --revoke ID ends one.`

func cmdShare(ctx context.Context, e *env, args []string) int {
	fs := newFlags(e, "share", "SESSION [--expires 24h] [--url http://HOST:PORT] | --revoke ID", shareDoc)
	db := dbFlag(fs)
	expires := fs.String("expires", "24h", "the link's lifetime (24h, 90m, 7d)")
	base := fs.String("url", "", "the server's address, to print the link as the session page's URL")
	revoke := fs.String("revoke", "", "revoke the share link of `ID` instead")
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if *revoke != "" {
		if len(pos) > 0 {
			fmt.Fprintln(e.stderr, "agentstream share: --revoke takes no session")
			return exitUsage
		}
		st, ok := openTokens(ctx, e, "share", *db)
		if !ok {
			return exitError
		}
		defer st.Close()
		t, err := api.RevokeShare(ctx, st, *revoke, time.Now())
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(e.stderr, "agentstream share: no share link %q\n", *revoke)
			return exitError
		}
		if err != nil {
			fmt.Fprintln(e.stderr, "agentstream share:", err)
			return exitError
		}
		fmt.Fprintf(e.stderr, "agentstream share: %s of session %s revoked at %s\n", t.ID, t.Session, t.RevokedAt.Format(agentstream.TimeFormat))
		return exitOK
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "agentstream share: want one session id")
		return exitUsage
	}
	ttl, err := parseTTL(*expires, false)
	if err == nil && ttl > api.MaxShareTTL {
		err = fmt.Errorf("bad --expires %q: at most %s", *expires, api.MaxShareTTL)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream share:", err)
		return exitUsage
	}
	st, ok := openTokens(ctx, e, "share", *db)
	if !ok {
		return exitError
	}
	defer st.Close()
	if _, err := st.Session(ctx, pos[0]); err != nil {
		fmt.Fprintf(e.stderr, "agentstream share: session %s: %v\n", pos[0], err)
		return exitError
	}
	secret, t, err := api.NewShare(ctx, st, pos[0], ttl, time.Now())
	if err != nil {
		fmt.Fprintln(e.stderr, "agentstream share:", err)
		return exitError
	}
	if *base != "" {
		fmt.Fprintln(e.stdout, strings.TrimRight(*base, "/")+api.SharePath(pos[0], secret))
	} else {
		fmt.Fprintln(e.stdout, secret)
	}
	fmt.Fprintf(e.stderr, "agentstream share: share link %s of session %s, expires %s; revoke with: agentstream share --revoke %s\n",
		t.ID, pos[0], t.ExpiresAt.Format(agentstream.TimeFormat), t.ID)
	return exitOK
}
