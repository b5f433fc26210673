package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenTTL is the lifetime of a session token (CONTRACT §3).
const TokenTTL = 8 * time.Hour

// Claims of a session token: HS256 with the application's own secret.
type Claims struct {
	Name         string `json:"name"`
	Email        string `json:"eml"`
	App          string `json:"app"`
	Privilege    int    `json:"prv"`
	TokenVersion int    `json:"tkv"`
	jwt.RegisteredClaims
}

// UserID returns the subject as a user id.
func (c *Claims) UserID() (int64, error) {
	return strconv.ParseInt(c.Subject, 10, 64)
}

// IssueToken signs a token for u in app, valid from now for TokenTTL.
// Each token carries a random id (jti): two sign-ins of one user in the
// same second would otherwise be the same text, and what the server keeps
// per session (free SQL's unlock, keyed by the token) must tell them apart.
func IssueToken(secret []byte, app string, u *User, now time.Time) (string, time.Time, error) {
	exp := now.Add(TokenTTL)
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", time.Time{}, fmt.Errorf("token id: %w", err)
	}
	claims := Claims{
		Name: u.Name, Email: u.Email, App: app, Privilege: u.Privilege, TokenVersion: u.TokenVersion,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   strconv.FormatInt(u.ID, 10),
			ID:        base64.RawURLEncoding.EncodeToString(id[:]),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return s, exp, nil
}

// ParseToken verifies a token's signature (HS256 only: "none" and every
// other algorithm are refused), its expiry against now, and its claims.
func ParseToken(secret []byte, token string, now time.Time) (*Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if err != nil {
		reason := "invalid"
		if errors.Is(err, jwt.ErrTokenExpired) {
			reason = "expired"
		}
		return nil, ErrUnauthenticated.With("reason", reason).Wrap(err)
	}
	if _, err := c.UserID(); err != nil || c.App == "" {
		return nil, ErrUnauthenticated.With("reason", "invalid")
	}
	return &c, nil
}

// PeekTokenApp reads the app claim without verifying anything, to find
// which application's secret can verify the token.
func PeekTokenApp(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		App string `json:"app"`
	}
	if json.Unmarshal(raw, &c) != nil || c.App == "" {
		return "", false
	}
	return c.App, true
}
