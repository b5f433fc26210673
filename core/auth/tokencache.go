package auth

import (
	"bytes"
	"sync"
	"time"
)

// TokenCache remembers tokens whose signature it has verified, with the
// secret that verified them: a client sends the same token on every
// request for hours, and checking an HMAC and decoding its claims each
// time was a twentieth of a record read. A cached token is still checked
// for expiry on every use, and a rotated secret (which differs from the
// remembered one) sends it through ParseToken again. The claims returned
// are shared: callers must not change them.
type TokenCache struct {
	mu sync.Mutex
	m  map[string]tokenEntry
}

type tokenEntry struct {
	secret []byte
	claims *Claims
}

// maxCachedTokens bounds the cache; past it, it starts again empty.
const maxCachedTokens = 10000

// NewTokenCache returns an empty cache.
func NewTokenCache() *TokenCache { return &TokenCache{m: map[string]tokenEntry{}} }

// Parse is ParseToken, from the cache when token was verified with secret
// before and is within its validity at now.
func (c *TokenCache) Parse(secret []byte, token string, now time.Time) (*Claims, error) {
	c.mu.Lock()
	e, ok := c.m[token]
	c.mu.Unlock()
	if ok && bytes.Equal(e.secret, secret) && e.claims.validAt(now) {
		return e.claims, nil
	}
	claims, err := ParseToken(secret, token, now)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedTokens {
		clear(c.m)
	}
	c.m[token] = tokenEntry{secret: bytes.Clone(secret), claims: claims}
	c.mu.Unlock()
	return claims, nil
}

// App is the app a token names, as PeekTokenApp reads it, from the cache
// when the token was verified before (the same text, so the same claims):
// decoding it on every request was a fortieth of a record read.
func (c *TokenCache) App(token string) (string, bool) {
	c.mu.Lock()
	e, ok := c.m[token]
	c.mu.Unlock()
	if ok && e.claims.App != "" {
		return e.claims.App, true
	}
	return PeekTokenApp(token)
}

// validAt repeats ParseToken's time checks: issued, not expired.
func (c *Claims) validAt(now time.Time) bool {
	if c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Time) {
		return false
	}
	return c.IssuedAt == nil || !c.IssuedAt.After(now)
}
