package auth

import (
	"net/mail"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/errs"
)

// User is a row of sys_users.
type User struct {
	ID                int64 `gorm:"primaryKey"`
	Name              string
	Email             string
	Password          string `json:"-"`
	Privilege         int
	OAuthProvider     *string `gorm:"column:oauth_provider"`
	OAuthSub          *string `gorm:"column:oauth_sub"`
	TokenVersion      int
	ResetTokenHash    *string `json:"-"`
	ResetTokenExpires *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// ErrEmailNotValid is returned for an address that does not parse.
var ErrEmailNotValid = errs.New(errs.Invalid, "email_not_valid", "the email address is not valid")

// NormalizeEmail trims and lower-cases an address; stored emails are always
// in this form, which makes the unique index case-insensitive.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// ValidateEmail checks that email (already normalised) is a bare address.
func ValidateEmail(email string) error {
	if email == "" || len(email) > 254 {
		return ErrEmailNotValid
	}
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return ErrEmailNotValid
	}
	return nil
}
