package oauth_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/oauth"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func identityOf(t *testing.T, db *store.DB, id int64) (string, string) {
	t.Helper()
	u, err := auth.FindUser(context.Background(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	deref := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	return deref(u.OAuthProvider), deref(u.OAuthSub)
}

func TestResolveAndLink(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		now := time.Now().UTC()
		reg := testenv.NewRegistry(t, e)
		a := testenv.NewApp(t, reg, "dig")
		ann := testenv.NewUser(t, a, "Ann", "ann@example.org", auth.Reader)
		pat := testenv.NewUser(t, a, "Pat", "pat@example.org", auth.Pending)
		bob := testenv.NewUser(t, a, "Bob", "bob@example.org", auth.Writer)

		resolve := func(id oauth.Identity) *auth.User {
			t.Helper()
			u, err := oauth.Resolve(ctx, a.DB, id, now)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}

		// Unverified email, idp_b, or a pending account: no match, nothing written.
		for name, id := range map[string]oauth.Identity{
			"unverified":      {Provider: oauth.ProviderA, Sub: "a-ann", Email: "ann@example.org"},
			"idp_b":           {Provider: oauth.ProviderB, Sub: "0000-0001", Email: "ann@example.org", EmailVerified: true},
			"pending account": {Provider: oauth.ProviderA, Sub: "a-pat", Email: "pat@example.org", EmailVerified: true},
			"unknown email":   {Provider: oauth.ProviderA, Sub: "a-zed", Email: "zed@example.org", EmailVerified: true},
		} {
			if u := resolve(id); u != nil {
				t.Errorf("%s: matched %s", name, u.Email)
			}
		}
		for _, u := range []*auth.User{ann, pat} {
			if p, s := identityOf(t, a.DB, u.ID); p != "<nil>" || s != "<nil>" {
				t.Errorf("%s got an identity without a match: %s/%s", u.Email, p, s)
			}
		}

		// Verified email: matched and linked; then found by sub even if the
		// email the provider reports changes.
		if u := resolve(oauth.Identity{Provider: oauth.ProviderA, Sub: "a-ann", Email: "ann@example.org", EmailVerified: true}); u == nil || u.ID != ann.ID {
			t.Fatalf("verified email should match Ann: %+v", u)
		}
		if p, s := identityOf(t, a.DB, ann.ID); p != "idp_a" || s != "a-ann" {
			t.Fatalf("identity not stored: %s/%s", p, s)
		}
		if u := resolve(oauth.Identity{Provider: oauth.ProviderA, Sub: "a-ann", Email: "ann.new@example.org"}); u == nil || u.ID != ann.ID {
			t.Fatalf("a linked identity matches by sub: %+v", u)
		}
		// A second idp_a identity with Ann's verified email: Ann already has
		// an identity, so no match and nothing replaced.
		if u := resolve(oauth.Identity{Provider: oauth.ProviderA, Sub: "a-ann-2", Email: "ann@example.org", EmailVerified: true}); u != nil {
			t.Fatalf("an account with an identity must not be re-linked by email: %+v", u)
		}
		if _, s := identityOf(t, a.DB, ann.ID); s != "a-ann" {
			t.Fatalf("identity replaced: %s", s)
		}
		// A pending account matched by sub is returned (the caller refuses it).
		if err := oauth.Link(ctx, a.DB, pat.ID, oauth.ProviderB, "0000-0002", now); err != nil {
			t.Fatal(err)
		}
		if u := resolve(oauth.Identity{Provider: oauth.ProviderB, Sub: "0000-0002"}); u == nil || u.ID != pat.ID || u.Privilege != auth.Pending {
			t.Fatalf("match by sub: %+v", u)
		}

		// Link refusals.
		for name, tc := range map[string]struct {
			user     int64
			provider string
			sub      string
			want     error
		}{
			"pair on another row":     {bob.ID, oauth.ProviderA, "a-ann", oauth.ErrIdentityLinked},
			"pair on the same row":    {ann.ID, oauth.ProviderA, "a-ann", oauth.ErrIdentityLinked},
			"account has an identity": {ann.ID, oauth.ProviderB, "0000-0003", oauth.ErrAccountHasIdentity},
			"no such account":         {999999, oauth.ProviderB, "0000-0004", auth.ErrUserNotFound},
		} {
			err := oauth.Link(ctx, a.DB, tc.user, tc.provider, tc.sub, now)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", name, err, tc.want)
			}
		}
		if err := oauth.Link(ctx, a.DB, bob.ID, oauth.ProviderB, "0000-0005", now); err != nil {
			t.Fatal(err)
		}
		if p, s := identityOf(t, a.DB, bob.ID); p != "idp_b" || s != "0000-0005" {
			t.Fatalf("link not stored: %s/%s", p, s)
		}
		if err := oauth.IdentityFree(ctx, a.DB, oauth.ProviderB, "0000-0005"); !errors.Is(err, oauth.ErrIdentityLinked) {
			t.Fatalf("IdentityFree after link: %v", err)
		}
		// The same sub at another provider is another identity.
		if err := oauth.IdentityFree(ctx, a.DB, oauth.ProviderA, "0000-0005"); err != nil {
			t.Fatalf("IdentityFree across providers: %v", err)
		}
	})
}
