package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
)

// Signed links (CONTRACT §10 "Browser links"): <img> tags and new tabs
// send no Authorization header, so a download or thumbnail URL carries a
// `t` parameter instead: the user, their token version and an expiry,
// with an HMAC over those, the app and the URL's path. A link works for
// that path of that app only, for LinkTTL, and as long as the account and
// its sessions are valid (a password change or revoke ends it, as for
// session tokens).

// LinkTTL is how long a signed link works.
const LinkTTL = 10 * time.Minute

// ErrInvalidLink: a `t` that does not verify, is expired or is for
// another path, app or user.
var ErrInvalidLink = errs.New(errs.Unauthenticated, "invalid_link_token", "the link is not valid (expired, or made for another address); reload the page for a fresh one")

// LinkClaims are what a verified link names.
type LinkClaims struct {
	UserID       int64
	TokenVersion int
	Expires      time.Time
}

// linkKey derives the links' key from the app's session-token secret, so
// rotating that secret ends every link too, and no new secret is stored.
func linkKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("strata-link-v1"))
	return m.Sum(nil)
}

func linkMAC(secret []byte, app, path string, uid int64, tkv int, exp int64) string {
	m := hmac.New(sha256.New, linkKey(secret))
	for _, part := range []string{app, strconv.FormatInt(uid, 10), strconv.Itoa(tkv), strconv.FormatInt(exp, 10), path} {
		m.Write([]byte(part))
		m.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// SignLink returns the `t` value for path (the URL's path, without its
// query) of app, for user, valid until now+LinkTTL.
func SignLink(secret []byte, app, path string, user int64, tokenVersion int, now time.Time) string {
	exp := now.Add(LinkTTL).Unix()
	return strconv.FormatInt(user, 10) + "." + strconv.Itoa(tokenVersion) + "." + strconv.FormatInt(exp, 10) + "." +
		linkMAC(secret, app, path, user, tokenVersion, exp)
}

// VerifyLink checks t for path of app at now.
func VerifyLink(secret []byte, app, path, t string, now time.Time) (LinkClaims, error) {
	parts := strings.Split(t, ".")
	if len(parts) != 4 {
		return LinkClaims{}, ErrInvalidLink.With("reason", "invalid")
	}
	uid, err1 := strconv.ParseInt(parts[0], 10, 64)
	tkv, err2 := strconv.Atoi(parts[1])
	exp, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || uid <= 0 {
		return LinkClaims{}, ErrInvalidLink.With("reason", "invalid")
	}
	want := linkMAC(secret, app, path, uid, tkv, exp)
	if !hmac.Equal([]byte(want), []byte(parts[3])) {
		return LinkClaims{}, ErrInvalidLink.With("reason", "invalid")
	}
	expires := time.Unix(exp, 0)
	if !now.Before(expires) {
		return LinkClaims{}, ErrInvalidLink.With("reason", "expired")
	}
	return LinkClaims{UserID: uid, TokenVersion: tkv, Expires: expires}, nil
}

// LinkSigner signs paths for the caller of a request; the HTTP layer puts
// one in the request's context (WithLinkSigner) and file entries use it.
type LinkSigner func(path string) string

type linkSignerKey struct{}

// WithLinkSigner returns ctx carrying sign.
func WithLinkSigner(ctx context.Context, sign LinkSigner) context.Context {
	return context.WithValue(ctx, linkSignerKey{}, sign)
}

// LinkToken is the `t` for path signed for the caller of ctx, or "" when
// ctx carries no signer (an API key's request).
func LinkToken(ctx context.Context, path string) string {
	sign, _ := ctx.Value(linkSignerKey{}).(LinkSigner)
	if sign == nil {
		return ""
	}
	return sign(path)
}

// SignedURL is path with a `t` for the caller of ctx, or path unchanged
// when ctx carries no signer (an API key's request: a script, which sends
// its key anyway).
func SignedURL(ctx context.Context, path string) string {
	sign, _ := ctx.Value(linkSignerKey{}).(LinkSigner)
	if sign == nil {
		return path
	}
	return path + "?t=" + sign(path)
}
