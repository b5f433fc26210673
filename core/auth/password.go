package auth

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/errs"
)

// DefaultBcryptCost is the production work factor. Tests use bcrypt.MinCost.
const DefaultBcryptCost = 12

// Password length rules. bcrypt reads at most 72 bytes; longer passwords
// are refused rather than silently truncated.
const (
	MinPasswordLength = 8
	MaxPasswordBytes  = 72
)

var (
	ErrPasswordTooShort = errs.New(errs.Invalid, "password_too_short", fmt.Sprintf("the password must have at least %d characters", MinPasswordLength))
	ErrPasswordTooLong  = errs.New(errs.Invalid, "password_too_long", fmt.Sprintf("the password must have at most %d bytes", MaxPasswordBytes))
)

// legacyHash matches hashes of the previous scheme: hex SHA-1 of the password.
var legacyHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// CheckPasswordRules validates a new password's length.
func CheckPasswordRules(password string) error {
	if len([]rune(password)) < MinPasswordLength {
		return ErrPasswordTooShort
	}
	if len(password) > MaxPasswordBytes {
		return ErrPasswordTooLong
	}
	return nil
}

// HashPassword returns the bcrypt hash of password at the given cost.
func HashPassword(password string, cost int) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		if errors.Is(err, bcrypt.ErrPasswordTooLong) {
			return "", ErrPasswordTooLong
		}
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// InertHash returns a bcrypt hash of 32 random bytes: no password matches
// it, so an OAuth-only account cannot be entered with a password.
func InertHash(cost int) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return HashPassword(hex.EncodeToString(b), cost) // 64 bytes, within bcrypt's 72
}

// verifyPassword checks password against a stored hash. It returns whether
// it matches and whether the hash is of the legacy scheme (so the caller
// rewrites it as bcrypt after a successful login).
func verifyPassword(stored, password string) (ok, legacy bool) {
	if legacyHash.MatchString(stored) {
		sum := sha1.Sum([]byte(password))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(stored)) == 1, true
	}
	bcryptComparisons.Add(1)
	return bcrypt.CompareHashAndPassword([]byte(stored), []byte(password)) == nil, false
}

// bcryptComparisons counts the expensive comparisons, so a test can show
// that a login for an unknown email does the same work as for a known one
// (timing itself belongs in benchmarks, not in unit tests).
var bcryptComparisons atomic.Int64

// VerifyPassword reports whether password matches a stored hash, bcrypt or
// BraDypUS's older SHA-1 scheme (the major upgrade checks a BraDypUS
// super-admin's credentials before the accounts are converted).
func VerifyPassword(stored, password string) bool {
	ok, _ := verifyPassword(stored, password)
	return ok
}
