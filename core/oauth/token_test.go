package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

var (
	keyA = []byte("0123456789abcdef0123456789abcdef")
	keyB = []byte("fedcba9876543210fedcba9876543210")
	t0   = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// forge signs an arbitrary payload the way sign does, to build tokens the
// service would never issue (wrong kind, missing fields).
func forge(t *testing.T, key []byte, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := base64.RawURLEncoding.EncodeToString(raw)
	h := hmac.New(sha256.New, key)
	h.Write([]byte(p))
	return p + "." + hex.EncodeToString(h.Sum(nil))
}

func TestStateRoundTripAndFormat(t *testing.T) {
	tok, err := NewState(keyA, "dig", "https://app.example.org", ProviderA, t0)
	if err != nil {
		t.Fatal(err)
	}
	payload, sig, ok := strings.Cut(tok, ".")
	if !ok || len(sig) != 64 || strings.Trim(sig, "0123456789abcdef") != "" {
		t.Fatalf("want base64url(JSON).hex(HMAC-SHA256), got %q", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("payload is not base64url: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("payload is not JSON: %v", err)
	}
	if m["app"] != "dig" || m["origin"] != "https://app.example.org" || m["provider"] != ProviderA || len(m["nonce"].(string)) != 32 {
		t.Fatalf("payload %v", m)
	}
	if int64(m["exp"].(float64)) != t0.Add(10*time.Minute).Unix() {
		t.Fatalf("exp %v, want now + 10 min", m["exp"])
	}
	st, err := VerifyState(keyA, tok, "dig", t0.Add(9*time.Minute))
	if err != nil || st.Origin != "https://app.example.org" || st.Provider != ProviderA {
		t.Fatalf("VerifyState = %+v, %v", st, err)
	}
	other, _ := NewState(keyA, "dig", "https://app.example.org", ProviderA, t0)
	if other == tok {
		t.Fatal("two states of the same flow parameters must differ (nonce)")
	}
}

func TestStateRejections(t *testing.T) {
	tok, _ := NewState(keyA, "dig", "https://app.example.org", ProviderA, t0)
	payload, sig, _ := strings.Cut(tok, ".")
	flipped := []byte(sig)
	if flipped[0] == 'a' {
		flipped[0] = 'b'
	} else {
		flipped[0] = 'a'
	}
	evil := base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"oauth_state","app":"dig","origin":"https://evil.example","provider":"idp_a","nonce":"x","exp":9999999999}`))
	pending, _ := NewPending(keyA, "dig", Identity{Provider: ProviderA, Sub: "s1"}, t0)
	for name, bad := range map[string]string{
		"empty":                 "",
		"garbage":               "not-a-token",
		"no signature":          payload,
		"empty signature":       payload + ".",
		"flipped signature":     payload + "." + string(flipped),
		"payload swapped":       evil + "." + sig,
		"three parts":           tok + ".00",
		"non-hex signature":     payload + "." + strings.Repeat("zz", 32),
		"other app's key":       mustState(t, keyB, "dig"),
		"other app's name":      mustState(t, keyA, "other"),
		"pending as state":      pending,
		"signed wrong kind":     forge(t, keyA, map[string]any{"typ": "x", "app": "dig", "origin": "https://a.org", "provider": "idp_a", "exp": 9999999999}),
		"signed without origin": forge(t, keyA, map[string]any{"typ": "oauth_state", "app": "dig", "provider": "idp_a", "exp": 9999999999}),
		"huge":                  strings.Repeat("a", 5000) + "." + sig,
	} {
		st, err := VerifyState(keyA, bad, "dig", t0)
		if st != nil || !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: got %+v, %v; want ErrInvalidToken and no state", name, st, err)
		}
	}
}

func mustState(t *testing.T, key []byte, app string) string {
	t.Helper()
	tok, err := NewState(key, app, "https://app.example.org", ProviderA, t0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestExpiredStateKeepsItsOrigin(t *testing.T) {
	tok, _ := NewState(keyA, "dig", "https://app.example.org", ProviderB, t0)
	st, err := VerifyState(keyA, tok, "dig", t0.Add(10*time.Minute))
	if !errors.Is(err, ErrExpired) || st == nil || st.Origin != "https://app.example.org" {
		t.Fatalf("at exactly 10 minutes: %+v, %v; want the state with ErrExpired", st, err)
	}
	if _, err := VerifyState(keyA, tok, "dig", t0.Add(10*time.Minute-time.Second)); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
}

func TestPending(t *testing.T) {
	id := Identity{Provider: ProviderA, Sub: "s-42", Email: "ann@example.org", EmailVerified: true, Name: "Ann"}
	tok, err := NewPending(keyA, "dig", id, t0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := VerifyPending(keyA, tok, "dig", t0.Add(5*time.Minute))
	if err != nil || p.Sub != "s-42" || p.Provider != ProviderA || p.Email != "ann@example.org" || !p.EmailVerified || p.Name != "Ann" {
		t.Fatalf("VerifyPending = %+v, %v", p, err)
	}
	if p, err := VerifyPending(keyA, tok, "dig", t0.Add(10*time.Minute)); p != nil || !errors.Is(err, ErrExpired) {
		t.Fatalf("expired pending: %+v, %v", p, err)
	}
	state, _ := NewState(keyA, "dig", "https://app.example.org", ProviderA, t0)
	for name, bad := range map[string]string{
		"other app's key":  mustPending(t, keyB, "dig"),
		"other app's name": mustPending(t, keyA, "other"),
		"state as pending": state,
		"tampered":         flipLast(tok),
		"unknown provider": forge(t, keyA, map[string]any{"typ": "oauth_pending", "app": "dig", "provider": "idp_z", "sub": "x", "exp": 9999999999}),
		"no sub":           forge(t, keyA, map[string]any{"typ": "oauth_pending", "app": "dig", "provider": "idp_a", "exp": 9999999999}),
	} {
		if p, err := VerifyPending(keyA, bad, "dig", t0); p != nil || !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: %+v, %v; want ErrInvalidToken", name, p, err)
		}
	}
	b, _ := NewPending(keyA, "dig", Identity{Provider: ProviderB, Sub: "0000-0002-1825-0097"}, t0)
	raw, _ := base64.RawURLEncoding.DecodeString(strings.Split(b, ".")[0])
	if strings.Contains(string(raw), "email") {
		t.Errorf("an idp_b pending token carries no email fields: %s", raw)
	}
}

// flipLast changes the last hex digit of a token's signature.
func flipLast(tok string) string {
	last := tok[len(tok)-1]
	if last == '0' {
		return tok[:len(tok)-1] + "1"
	}
	return tok[:len(tok)-1] + "0"
}

func mustPending(t *testing.T, key []byte, app string) string {
	t.Helper()
	tok, err := NewPending(key, app, Identity{Provider: ProviderA, Sub: "s-42"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSignRefusesEmptyKey(t *testing.T) {
	if _, err := NewState(nil, "dig", "https://a.org", ProviderA, t0); err == nil {
		t.Fatal("signing with an empty key must fail")
	}
	tok := forge(t, []byte{}, map[string]any{"typ": "oauth_state"})
	if _, err := VerifyState(nil, tok, "dig", t0); !errors.Is(err, ErrInvalidToken) {
		t.Fatal("verifying with an empty key must fail")
	}
}
