package auth

import (
	"testing"
	"time"
)

func TestTokenCache(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	secret, other := []byte("0123456789abcdef0123456789abcdef"), []byte("fedcba9876543210fedcba9876543210")
	u := &User{ID: 7, Name: "Ada", Email: "ada@example.org", Privilege: Admin}
	tok, _, err := IssueToken(secret, "dig", u, now)
	if err != nil {
		t.Fatal(err)
	}
	c := NewTokenCache()
	cases := []struct {
		name   string
		secret []byte
		token  string
		at     time.Time
		ok     bool
	}{
		{"first use verifies", secret, tok, now, true},
		{"second use from the cache", secret, tok, now.Add(time.Hour), true},
		{"a rotated secret refuses it though cached", other, tok, now, false},
		{"expired though cached", secret, tok, now.Add(9 * time.Hour), false},
		{"issued in the future though cached", secret, tok, now.Add(-time.Hour), false},
		{"tampered", secret, tok[:len(tok)-2] + "xx", now, false},
	}
	for _, tc := range cases {
		claims, err := c.Parse(tc.secret, tc.token, tc.at)
		if (err == nil) != tc.ok {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.ok && (claims.App != "dig" || claims.Subject != "7") {
			t.Fatalf("%s: claims %+v", tc.name, claims)
		}
	}
	// The app a token names, cached or not, is what PeekTokenApp reads.
	other2, _, err := IssueToken(secret, "other", u, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token, app string
		ok         bool
	}{{tok, "dig", true}, {other2, "other", true}, {"a.b", "", false}, {tok[:len(tok)-2] + "xx", "dig", true}} {
		app, ok := c.App(tc.token)
		peek, peekOK := PeekTokenApp(tc.token)
		if app != tc.app || ok != tc.ok || app != peek || ok != peekOK {
			t.Errorf("App(%.20s…) = %q %v, want %q %v (PeekTokenApp %q %v)", tc.token, app, ok, tc.app, tc.ok, peek, peekOK)
		}
	}
}

// TestTokenIDUnique: two tokens of one user signed in the same second are
// two sessions (free SQL's unlock is kept per token), so each carries its
// own jti.
func TestTokenIDUnique(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	secret := []byte("0123456789abcdef0123456789abcdef")
	u := &User{ID: 7, Name: "Ada", Email: "ada@example.org", Privilege: SuperAdmin, TokenVersion: 1}
	a, _, err := IssueToken(secret, "dig", u, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := IssueToken(secret, "dig", u, now)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two sign-ins in the same second got the same token")
	}
	ca, errA := ParseToken(secret, a, now)
	cb, errB := ParseToken(secret, b, now)
	if errA != nil || errB != nil || ca.ID == "" || ca.ID == cb.ID {
		t.Fatalf("jti: %v %v %+v %+v", errA, errB, ca, cb)
	}
}
