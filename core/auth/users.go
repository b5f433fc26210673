package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// ErrUserNotFound is returned for a user id or email with no account.
var ErrUserNotFound = errs.New(errs.NotFound, "user_not_found", "no such user")

// FindUserByEmail returns the account of a (normalised) email.
func FindUserByEmail(ctx context.Context, db *store.DB, email string) (*User, error) {
	var u User
	err := db.Gorm.WithContext(ctx).Where("email = ?", NormalizeEmail(email)).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return &u, nil
}

// FindUser returns the account with the given id.
//
// It runs on every authenticated request (the privilege is re-read each
// time), so it is one plain query rather than a gorm call: about half the
// cost of the authentication step.
func FindUser(ctx context.Context, db *store.DB, id int64) (*User, error) {
	var u User
	err := db.QueryRow(ctx, `SELECT id, name, email, password, privilege, oauth_provider, oauth_sub, token_version,
		reset_token_hash, reset_token_expires, created_at, updated_at FROM `+db.Sys("users")+` WHERE id = ?`, id).
		Scan(&u.ID, &u.Name, &u.Email, &u.Password, &u.Privilege, &u.OAuthProvider, &u.OAuthSub, &u.TokenVersion,
			&u.ResetTokenHash, &u.ResetTokenExpires, &u.CreatedAt, &u.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user %d: %w", id, err)
	}
	return &u, nil
}
