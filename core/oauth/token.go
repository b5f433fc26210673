package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TokenTTL is the lifetime of a state and of a pending token (SPEC §8).
const TokenTTL = 10 * time.Minute

// maxTokenLength bounds what is decoded at all: a real token is a few
// hundred bytes, and anything far larger is garbage not worth hashing.
const maxTokenLength = 4096

// Kinds of signed token. Both are signed with the same key (the app's JWT
// secret), so each carries its kind and is accepted only as that kind: a
// state can never be replayed as a pending token, nor the reverse.
const (
	kindState   = "oauth_state"
	kindPending = "oauth_pending"
)

// Errors of token verification. ErrExpired is returned together with the
// decoded token, because an authentic but expired state still names an
// origin the service itself vouched for (CONTRACT §8).
var (
	ErrInvalidToken = errors.New("oauth: token malformed, tampered or of another application")
	ErrExpired      = errors.New("oauth: token expired")
)

// State travels through the provider as the `state` parameter. It binds the
// flow to the application, the client origin the result goes to, the
// provider, and a random nonce that makes every state unique.
type State struct {
	Kind     string `json:"typ"`
	App      string `json:"app"`
	Origin   string `json:"origin"`
	Provider string `json:"provider"`
	Nonce    string `json:"nonce"`
	Expires  int64  `json:"exp"`
}

// Pending is the proof, handed to the client on no_account, that the
// provider authenticated an identity; link and register turn it into an
// account. Email and EmailVerified are what idp_a said (idp_b has no email);
// Name is the provider's display name, used when register creates the
// account.
type Pending struct {
	Kind          string `json:"typ"`
	App           string `json:"app"`
	Provider      string `json:"provider"`
	Sub           string `json:"sub"`
	Email         string `json:"email,omitempty"`
	EmailVerified bool   `json:"email_verified,omitempty"`
	Name          string `json:"name,omitempty"`
	Expires       int64  `json:"exp"`
}

// NewState returns the signed state of a flow started now.
func NewState(secret []byte, app, origin, provider string, now time.Time) (string, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("oauth state nonce: %w", err)
	}
	return sign(secret, State{Kind: kindState, App: app, Origin: origin, Provider: provider,
		Nonce: hex.EncodeToString(nonce), Expires: now.Add(TokenTTL).Unix()})
}

// NewPending returns the signed pending token of an identity.
func NewPending(secret []byte, app string, id Identity, now time.Time) (string, error) {
	return sign(secret, Pending{Kind: kindPending, App: app, Provider: id.Provider, Sub: id.Sub,
		Email: id.Email, EmailVerified: id.EmailVerified, Name: id.Name, Expires: now.Add(TokenTTL).Unix()})
}

// VerifyState checks a state for app. An authentic but expired state is
// returned with ErrExpired; anything else that fails is ErrInvalidToken
// and returns no state.
func VerifyState(secret []byte, token, app string, now time.Time) (*State, error) {
	var st State
	if err := verify(secret, token, &st); err != nil {
		return nil, err
	}
	if st.Kind != kindState || st.App != app || st.Origin == "" || st.Provider == "" {
		return nil, ErrInvalidToken
	}
	if expired(st.Expires, now) {
		return &st, ErrExpired
	}
	return &st, nil
}

// VerifyPending checks a pending token for app. Unlike a state, an expired
// pending token is of no further use, so it is returned only on success.
func VerifyPending(secret []byte, token, app string, now time.Time) (*Pending, error) {
	var p Pending
	if err := verify(secret, token, &p); err != nil {
		return nil, err
	}
	if p.Kind != kindPending || p.App != app || p.Sub == "" || !KnownProvider(p.Provider) {
		return nil, ErrInvalidToken
	}
	if expired(p.Expires, now) {
		return nil, ErrExpired
	}
	return &p, nil
}

// expired counts the expiry second itself as expired, so a token lives at
// most TokenTTL.
func expired(exp int64, now time.Time) bool { return now.Unix() >= exp }

// sign encodes v as base64url(JSON) "." hex(HMAC-SHA256(secret, first part))
// (CONTRACT §3). The MAC covers the encoded payload exactly as sent, so no
// re-encoding question arises when verifying. The payload part never holds
// a ".", while every JWT signing input does, so a session token's signature
// can never pass for one of these.
func sign(secret []byte, v any) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("oauth: empty signing key")
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("oauth: encode token: %w", err)
	}
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + hex.EncodeToString(mac(secret, payload)), nil
}

func mac(secret []byte, payload string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(payload))
	return h.Sum(nil)
}

// verify checks the signature in constant time before anything of the
// payload is decoded, then decodes it into dst.
func verify(secret []byte, token string, dst any) error {
	if len(secret) == 0 || token == "" || len(token) > maxTokenLength {
		return ErrInvalidToken
	}
	payload, sigHex, ok := strings.Cut(token, ".")
	if !ok || payload == "" || strings.Contains(sigHex, ".") {
		return ErrInvalidToken
	}
	sig, err := hex.DecodeString(sigHex)
	if err != nil || !hmac.Equal(sig, mac(secret, payload)) {
		return ErrInvalidToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return ErrInvalidToken
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return ErrInvalidToken
	}
	return nil
}
