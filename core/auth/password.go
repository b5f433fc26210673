package auth

import (
	"errors"
	"fmt"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/errs"
)

// DefaultBcryptCost is the production work factor. Tests use bcrypt.MinCost.
const DefaultBcryptCost = 12

// Password length rules. bcrypt reads at most 72 bytes; longer passwords
// are refused rather than silently truncated.
const (
	MinPasswordLength   = 8
	MaxPasswordBytes    = 72
	legacySHA1HexLength = 40
)

var (
	ErrPasswordTooShort = errs.New(errs.Invalid, "password_too_short", fmt.Sprintf("the password must have at least %d characters", MinPasswordLength))
	ErrPasswordTooLong  = errs.New(errs.Invalid, "password_too_long", fmt.Sprintf("the password must have at most %d bytes", MaxPasswordBytes))
)

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
