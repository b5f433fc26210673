package auth

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// MaxNameLength bounds the display name a person registering gives: it is
// copied into mails, which must not become a vehicle for long texts.
const MaxNameLength = 100

// Errors of self-registration (CONTRACT §3).
var (
	ErrAllFieldsRequired = errs.New(errs.Invalid, "all_fields_required", "name, email and password are all required")
	ErrNameTooLong       = errs.New(errs.Invalid, "name_too_long", fmt.Sprintf("the name must have at most %d characters", MaxNameLength))
)

// RegisterInput is a self-registration: with a password (PasswordHash is its
// bcrypt hash) or OAuth-only (PasswordHash is an InertHash, and the
// provider and subject are set).
type RegisterInput struct {
	Name          string
	Email         string
	PasswordHash  string
	OAuthProvider string
	OAuthSub      string
}

// CleanName trims a display name and turns control characters (line breaks
// included) into spaces, so a name stays one line in every mail.
func CleanName(name string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, name))
}

// RegisterPending creates the account of a self-registration at the
// pending level (SPEC §3.2): it cannot enter the app until an admin gives
// it a privilege. The email is normalised and must be free
// (email_present otherwise, compared in normalised form); an OAuth identity
// must be whole and not linked yet (oauth_identity_already_linked). Whether
// registration is open is the caller's to check.
func RegisterPending(ctx context.Context, db *store.DB, in RegisterInput, now time.Time) (*User, error) {
	name := CleanName(in.Name)
	if len([]rune(name)) > MaxNameLength {
		return nil, ErrNameTooLong
	}
	email := NormalizeEmail(in.Email)
	if err := ValidateEmail(email); err != nil {
		return nil, err
	}
	if in.PasswordHash == "" {
		// Never store an empty hash: every account carries a real bcrypt
		// hash, inert for OAuth-only accounts.
		return nil, fmt.Errorf("register %s: no password hash", email)
	}
	pending := Pending
	provider, sub := strings.TrimSpace(in.OAuthProvider), strings.TrimSpace(in.OAuthSub)
	if provider != "" && !adminOAuthProviders[provider] {
		return nil, ErrOAuthProviderInvalid
	}
	ui := UserInput{Name: &name, Email: &email, Privilege: &pending, OAuthProvider: &provider, OAuthSub: &sub}
	id, err := createUser(ctx, db, ui, in.PasswordHash, now)
	if err != nil {
		return nil, err
	}
	return FindUser(ctx, db, id)
}

// DiscardPending removes an account made by RegisterPending when the
// registration could not be completed (its mails could not be sent), so the
// person can simply try again. Only a still pending account is removed: one
// an admin approved meanwhile stays.
func DiscardPending(ctx context.Context, db *store.DB, id int64) error {
	err := db.Gorm.WithContext(ctx).Where("id = ? AND privilege = ?", id, Pending).Delete(&User{}).Error
	if err != nil {
		return fmt.Errorf("discard pending user %d: %w", id, err)
	}
	return nil
}

// Admins returns the accounts that are told about new registrations:
// every admin and super_admin (privilege ≤ 10), by id.
func Admins(ctx context.Context, db *store.DB) ([]User, error) {
	var out []User
	err := db.Gorm.WithContext(ctx).Where("privilege <= ?", Admin).Order("id").Find(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list admins: %w", err)
	}
	return out, nil
}
