package store

import (
	"context"
	"time"
)

// Credential kinds: an access token with scopes, or a share link that
// reads one session.
const (
	KindToken = "token"
	KindShare = "share"
)

// Token is a stored credential of the HTTP API: an access token or a
// share link. The store never holds its secret, only Hash, the SHA-256 of
// the secret, by which a presented secret is found.
type Token struct {
	// ID names the token in lists and revocations; it is not secret.
	ID string
	// Kind is KindToken or KindShare.
	Kind string
	// Name is a token's name, unique among the tokens not revoked; empty
	// for a share link.
	Name string
	// Scopes are what the token grants (see package web/api).
	Scopes []string
	// Session is the session a share link reads; empty for a token.
	Session string
	// Hash is the SHA-256 of the secret.
	Hash []byte
	// CreatedAt is when the token was made.
	CreatedAt time.Time
	// ExpiresAt is when it stops working; zero means never.
	ExpiresAt time.Time
	// LastUsed is when it was last accepted, as last recorded by
	// TouchToken; zero means never.
	LastUsed time.Time
	// RevokedAt is when it was revoked; zero while it is not.
	RevokedAt time.Time
}

// Tokens is a store that keeps the credentials of the HTTP API. Times are
// kept to the millisecond. Implementations are safe for concurrent use.
type Tokens interface {
	// CreateToken stores t. It returns ErrConflict when a token has the
	// same ID or Hash, or when t has the Name of a token not revoked.
	CreateToken(ctx context.Context, t Token) error
	// TokenByHash returns the token whose secret hashes to hash, revoked
	// or expired ones included, or ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns every token, revoked ones included, oldest first.
	ListTokens(ctx context.Context) ([]Token, error)
	// RevokeToken revokes, at the time given, the token of that ID, or the
	// one not revoked of that name, and returns it; ErrNotFound when there
	// is none. Revoking a revoked token keeps its first revocation time.
	RevokeToken(ctx context.Context, ref string, at time.Time) (Token, error)
	// TouchToken records that the token of that ID was accepted at that
	// time. It is not an error when the ID is unknown.
	TouchToken(ctx context.Context, id string, at time.Time) error
}
