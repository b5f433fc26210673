package auth

import (
	"context"
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
func FindUser(ctx context.Context, db *store.DB, id int64) (*User, error) {
	var u User
	err := db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user %d: %w", id, err)
	}
	return &u, nil
}
