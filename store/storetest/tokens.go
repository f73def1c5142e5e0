package storetest

import (
	"crypto/sha256"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentstream/agentstream/store"
)

// tokens checks store.Tokens.
func tokens(c *check) {
	st := c.h.Open(c.t)
	ts, ok := st.(store.Tokens)
	if !ok {
		c.t.Skip("the store keeps no tokens")
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	hash := func(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }
	ci := store.Token{ID: "tok_1", Kind: store.KindToken, Name: "ci", Scopes: []string{"read", "ingest"},
		Hash: hash("secret-ci"), CreatedAt: at, ExpiresAt: at.Add(720 * time.Hour)}
	share := store.Token{ID: "shr_1", Kind: store.KindShare, Scopes: []string{"read"}, Session: "s_1",
		Hash: hash("secret-share"), CreatedAt: at.Add(time.Millisecond)}
	c.must(ts.CreateToken(c.ctx, ci), "CreateToken")
	c.must(ts.CreateToken(c.ctx, share), "CreateToken of a share link")

	got, err := ts.TokenByHash(c.ctx, hash("secret-ci"))
	c.must(err, "TokenByHash")
	if d := cmp.Diff(ci, got); d != "" {
		c.errorf("TokenByHash (-want +got):\n%s", d)
	}
	if _, err := ts.TokenByHash(c.ctx, hash("other")); !is(err, store.ErrNotFound) {
		c.errorf("TokenByHash of an unknown hash: %v, want ErrNotFound", err)
	}
	other := c.h.Reopen(c.t, st).(store.Tokens)
	list, err := other.ListTokens(c.ctx)
	c.must(err, "ListTokens of another process")
	if d := cmp.Diff([]store.Token{ci, share}, list); d != "" {
		c.errorf("ListTokens (-want +got):\n%s", d)
	}

	for _, dup := range []store.Token{
		{ID: "tok_1", Kind: store.KindToken, Name: "x", Scopes: []string{"read"}, Hash: hash("x"), CreatedAt: at},
		{ID: "tok_2", Kind: store.KindToken, Name: "ci", Scopes: []string{"read"}, Hash: hash("y"), CreatedAt: at},
		{ID: "tok_3", Kind: store.KindToken, Name: "z", Scopes: []string{"read"}, Hash: hash("secret-ci"), CreatedAt: at},
	} {
		if err := ts.CreateToken(c.ctx, dup); !is(err, store.ErrConflict) {
			c.errorf("CreateToken %s (name %q): %v, want ErrConflict", dup.ID, dup.Name, err)
		}
	}

	used := at.Add(time.Hour + 123*time.Millisecond)
	c.must(ts.TouchToken(c.ctx, "tok_1", used), "TouchToken")
	c.must(ts.TouchToken(c.ctx, "tok_unknown", used), "TouchToken of an unknown id")
	revoked, err := ts.RevokeToken(c.ctx, "ci", at.Add(2*time.Hour))
	c.must(err, "RevokeToken by name")
	want := ci
	want.LastUsed, want.RevokedAt = used, at.Add(2*time.Hour)
	if d := cmp.Diff(want, revoked); d != "" {
		c.errorf("RevokeToken by name (-want +got):\n%s", d)
	}
	if _, err := ts.RevokeToken(c.ctx, "ci", at); !is(err, store.ErrNotFound) {
		c.errorf("RevokeToken by the name of a revoked token: %v, want ErrNotFound", err)
	}
	again, err := ts.RevokeToken(c.ctx, "tok_1", at.Add(3*time.Hour))
	c.must(err, "RevokeToken by id of a revoked token")
	if !again.RevokedAt.Equal(want.RevokedAt) {
		c.errorf("revoking again moved the revocation time to %v, want %v", again.RevokedAt, want.RevokedAt)
	}
	if _, err := ts.RevokeToken(c.ctx, "nobody", at); !is(err, store.ErrNotFound) {
		c.errorf("RevokeToken of an unknown token: %v, want ErrNotFound", err)
	}
	got, err = ts.TokenByHash(c.ctx, hash("secret-ci"))
	c.must(err, "TokenByHash of a revoked token")
	if d := cmp.Diff(want, got); d != "" {
		c.errorf("TokenByHash of a revoked token (-want +got):\n%s", d)
	}
	// The name of a revoked token is free again.
	c.must(ts.CreateToken(c.ctx, store.Token{ID: "tok_2", Kind: store.KindToken, Name: "ci", Scopes: []string{"control"},
		Hash: hash("secret-ci-2"), CreatedAt: at.Add(4 * time.Hour)}), "CreateToken with the name of a revoked token")
	s, err := ts.RevokeToken(c.ctx, "shr_1", at.Add(5*time.Hour))
	c.must(err, "RevokeToken of a share link")
	if s.Session != "s_1" || s.Kind != store.KindShare {
		c.errorf("revoked share link %+v, want session s_1 and kind share", s)
	}
}
