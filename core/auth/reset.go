package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// ResetTokenTTL is how long a password reset token is valid (SPEC §3.4).
const ResetTokenTTL = time.Hour

// resetTokenBytes is the entropy of a reset token (SPEC §3.4).
const resetTokenBytes = 32

// ErrResetTokenInvalid answers every unusable reset: unknown email, wrong,
// used or expired token. One code for all, so the answer does not tell
// which accounts exist or which tokens were once issued.
var ErrResetTokenInvalid = errs.New(errs.Invalid, "invalid_or_expired_reset_token", "this reset link is invalid, already used or expired: ask for a new one")

// newResetToken returns a fresh token (base64url of 32 random bytes, for
// the link) and the hash that is stored in its place.
func newResetToken() (token, hash string, err error) {
	b := make([]byte, resetTokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("generate reset token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashResetToken(token), nil
}

// hashResetToken is the stored form of a token: hex SHA-256. A database
// leak therefore yields no usable token; the token's own 256 bits make a
// slow hash unnecessary.
func hashResetToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// StartPasswordReset issues a reset token for the account of email and
// returns the account (with its stored address, which is where the mail
// goes) and the token. When no account has the email it returns a nil user
// and no error, after the same statements: the caller answers both alike.
// A new token replaces any earlier one.
func StartPasswordReset(ctx context.Context, db *store.DB, email string, now time.Time) (*User, string, error) {
	email = NormalizeEmail(email)
	token, hash, err := newResetToken()
	if err != nil {
		return nil, "", err
	}
	expires := now.Add(ResetTokenTTL)
	// The update runs whether or not the account exists (it then changes no
	// row), so both cases cost the same round trips.
	err = db.Gorm.WithContext(ctx).Model(&User{}).Where("email = ?", email).
		Updates(map[string]any{"reset_token_hash": hash, "reset_token_expires": expires, "updated_at": now}).Error
	if err != nil {
		return nil, "", fmt.Errorf("store reset token: %w", err)
	}
	u, err := FindUserByEmail(ctx, db, email)
	if errors.Is(err, ErrUserNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return u, token, nil
}

// resetTokenMatches reports whether token is the live reset token of u.
// The hashes are compared in constant time.
func resetTokenMatches(u *User, token string, now time.Time) bool {
	if u == nil || token == "" || u.ResetTokenHash == nil || u.ResetTokenExpires == nil {
		return false
	}
	if !now.Before(*u.ResetTokenExpires) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashResetToken(token)), []byte(*u.ResetTokenHash)) == 1
}

// CheckResetToken returns the account of email when token is its live
// reset token, and ErrResetTokenInvalid otherwise. It changes nothing: it
// lets the caller refuse a bad token before spending a bcrypt hash.
func CheckResetToken(ctx context.Context, db *store.DB, email, token string, now time.Time) (*User, error) {
	u, err := FindUserByEmail(ctx, db, email)
	if err != nil && !errors.Is(err, ErrUserNotFound) {
		return nil, err
	}
	if !resetTokenMatches(u, token, now) {
		return nil, ErrResetTokenInvalid
	}
	return u, nil
}

// CompletePasswordReset sets the password of email's account to
// passwordHash if token is its live reset token, in one transaction that
// also consumes the token (single use), clears any login lock of the email
// (SPEC §3.1) and bumps the token version, so every session opened before
// the reset ends. A token used twice, even concurrently, succeeds once.
func CompletePasswordReset(ctx context.Context, db *store.DB, email, token, passwordHash string, now time.Time) (*User, error) {
	email = NormalizeEmail(email)
	var out *User
	err := db.Tx(ctx, func(tx *store.DB) error {
		u, err := lockUserByEmail(ctx, tx, email)
		if err != nil {
			return err
		}
		if !resetTokenMatches(u, token, now) {
			return ErrResetTokenInvalid
		}
		err = tx.Gorm.WithContext(ctx).Model(&User{}).Where("id = ?", u.ID).Updates(map[string]any{
			"password":            passwordHash,
			"reset_token_hash":    nil,
			"reset_token_expires": nil,
			"token_version":       gorm.Expr("token_version + 1"),
			"updated_at":          now,
		}).Error
		if err != nil {
			return fmt.Errorf("reset password of user %d: %w", u.ID, err)
		}
		if err := ClearLock(ctx, tx, u.Email); err != nil {
			return fmt.Errorf("clear login lock: %w", err)
		}
		out, err = FindUser(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lockUserByEmail reads the account of email inside tx, locked against
// concurrent changes on PostgreSQL (SQLite's immediate transaction already
// excludes other writers). No account is a nil user, not an error.
func lockUserByEmail(ctx context.Context, tx *store.DB, email string) (*User, error) {
	var ids []int64
	if err := tx.Gorm.WithContext(ctx).Model(&User{}).Where("email = ?", email).Pluck("id", &ids).Error; err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	u, err := lockUserRow(ctx, tx, ids[0])
	if errors.Is(err, ErrUserNotFound) {
		return nil, nil
	}
	return u, err
}
