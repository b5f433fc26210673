package auth

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
)

func TestSignedLinks(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	secret := []byte("0123456789abcdef0123456789abcdef")
	path := "/dig/api/file/3/download"
	tok := SignLink(secret, "dig", path, 7, 2, now)
	cases := []struct {
		name             string
		secret           []byte
		app, path, token string
		at               time.Time
		reason           string
	}{
		{"valid", secret, "dig", path, tok, now.Add(time.Minute), ""},
		{"valid until the last second", secret, "dig", path, tok, now.Add(LinkTTL - time.Second), ""},
		{"expired", secret, "dig", path, tok, now.Add(LinkTTL), "expired"},
		{"another path", secret, "dig", "/dig/api/file/4/download", tok, now, "invalid"},
		{"the thumbnail of the same file", secret, "dig", "/dig/api/file/3/thumb", tok, now, "invalid"},
		{"another app", secret, "other", path, tok, now, "invalid"},
		{"another secret", []byte("fedcba9876543210fedcba9876543210"), "dig", path, tok, now, "invalid"},
		{"another user", secret, "dig", path, "8" + tok[1:], now, "invalid"},
		{"a later expiry", secret, "dig", path, strings.Replace(tok, ".2.", ".2.9", 1), now, "invalid"},
		{"garbage", secret, "dig", path, "x.y", now, "invalid"},
		{"empty", secret, "dig", path, "", now, "invalid"},
	}
	for _, tc := range cases {
		c, err := VerifyLink(tc.secret, tc.app, tc.path, tc.token, tc.at)
		if tc.reason == "" {
			if err != nil || c.UserID != 7 || c.TokenVersion != 2 {
				t.Errorf("%s: %+v %v", tc.name, c, err)
			}
			continue
		}
		e, ok := errs.As(err)
		if !ok || e.Code != "invalid_link_token" || e.Extra["reason"] != tc.reason {
			t.Errorf("%s: %v, want invalid_link_token (%s)", tc.name, err, tc.reason)
		}
	}
	ctx := WithLinkSigner(context.Background(), func(p string) string { return SignLink(secret, "dig", p, 7, 2, now) })
	if u := SignedURL(ctx, path); !strings.HasPrefix(u, path+"?t=7.2.") {
		t.Errorf("SignedURL: %s", u)
	}
	if u := SignedURL(context.Background(), path); u != path {
		t.Errorf("no signer: %s", u)
	}
}
