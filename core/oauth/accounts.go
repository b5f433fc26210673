package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// Errors of linking an identity to an account (SPEC §3.3, §7).
var (
	// ErrIdentityLinked: the (provider, sub) pair is already on a row,
	// whichever account that is (the caller's own included).
	ErrIdentityLinked = errs.New(errs.Conflict, "oauth_identity_already_linked", "this external identity is already linked to an account")
	// ErrAccountHasIdentity: the account already carries another external
	// identity. An account holds one (provider, sub) pair, and linking never
	// replaces it: that would silently cut off the sign-in its owner set up.
	// An administrator can clear it in user administration.
	ErrAccountHasIdentity = errs.New(errs.Conflict, "oauth_identity_already_linked",
		"this account is already linked to another external identity").With("reason", "account_has_identity")
)

// FindByIdentity returns the account carrying (provider, sub), or
// auth.ErrUserNotFound.
func FindByIdentity(ctx context.Context, db *store.DB, provider, sub string) (*auth.User, error) {
	var u auth.User
	err := db.Gorm.WithContext(ctx).Where("oauth_provider = ? AND oauth_sub = ?", provider, sub).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, auth.ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find user by identity: %w", err)
	}
	return &u, nil
}

// IdentityFree returns ErrIdentityLinked when (provider, sub) is on a row.
func IdentityFree(ctx context.Context, db *store.DB, provider, sub string) error {
	_, err := FindByIdentity(ctx, db, provider, sub)
	switch {
	case err == nil:
		return ErrIdentityLinked
	case errors.Is(err, auth.ErrUserNotFound):
		return nil
	}
	return err
}

// Resolve finds the account of an identity the provider just proved, or
// returns nil when there is none (the caller answers no_account).
//
// The (provider, sub) pair is looked up first. Only idp_a, and only when it
// says the email is verified, may then match by email: the account must be
// past approval (a pending account is never taken over this way, since
// anyone can create one by self-registration with someone else's address)
// and carry no external identity yet. Such a match links the identity, so
// later sign-ins match by sub even if the email changes on either side.
// The returned account may be pending (matched by sub); the caller decides
// what a pending account gets.
func Resolve(ctx context.Context, db *store.DB, id Identity, now time.Time) (*auth.User, error) {
	u, err := FindByIdentity(ctx, db, id.Provider, id.Sub)
	if err == nil {
		return u, nil
	}
	if !errors.Is(err, auth.ErrUserNotFound) {
		return nil, err
	}
	if id.Provider != ProviderA || !id.EmailVerified || id.Email == "" {
		return nil, nil
	}
	byEmail, err := auth.FindUserByEmail(ctx, db, id.Email)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if byEmail.Privilege >= auth.Pending || byEmail.OAuthSub != nil || byEmail.OAuthProvider != nil {
		return nil, nil
	}
	// One conditional statement: the account is linked only if it is, at
	// this moment, still approved and without an identity, so a concurrent
	// link or privilege change cannot be overwritten.
	res := db.Gorm.WithContext(ctx).Model(&auth.User{}).
		Where("id = ? AND oauth_provider IS NULL AND oauth_sub IS NULL AND privilege < ?", byEmail.ID, auth.Pending).
		Updates(map[string]any{"oauth_provider": id.Provider, "oauth_sub": id.Sub, "updated_at": now})
	if errors.Is(res.Error, gorm.ErrDuplicatedKey) {
		// The same identity was linked meanwhile by a concurrent callback:
		// whatever row has it now is the answer.
		return findOrNil(ctx, db, id)
	}
	if res.Error != nil {
		return nil, fmt.Errorf("link identity by email: %w", res.Error)
	}
	if res.RowsAffected == 0 {
		return findOrNil(ctx, db, id)
	}
	return auth.FindUser(ctx, db, byEmail.ID)
}

func findOrNil(ctx context.Context, db *store.DB, id Identity) (*auth.User, error) {
	u, err := FindByIdentity(ctx, db, id.Provider, id.Sub)
	if errors.Is(err, auth.ErrUserNotFound) {
		return nil, nil
	}
	return u, err
}

// Link writes (provider, sub) on the account userID, whose owner has just
// proved its password. It refuses with ErrIdentityLinked when the pair is on
// any row (this account included) and with ErrAccountHasIdentity when the
// account carries another identity.
func Link(ctx context.Context, db *store.DB, userID int64, provider, sub string, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		if err := IdentityFree(ctx, tx, provider, sub); err != nil {
			return err
		}
		q := tx.Gorm.WithContext(ctx)
		if tx.Engine == store.Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"}) // SQLite's immediate tx already excludes others
		}
		var u auth.User
		if err := q.Where("id = ?", userID).Take(&u).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return auth.ErrUserNotFound
			}
			return fmt.Errorf("read user %d: %w", userID, err)
		}
		if u.OAuthProvider != nil || u.OAuthSub != nil {
			return ErrAccountHasIdentity
		}
		err := tx.Gorm.WithContext(ctx).Model(&auth.User{}).Where("id = ?", userID).
			Updates(map[string]any{"oauth_provider": provider, "oauth_sub": sub, "updated_at": now}).Error
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			// A concurrent link or register wrote the pair after the check.
			return ErrIdentityLinked.Wrap(err)
		}
		if err != nil {
			return fmt.Errorf("link identity: %w", err)
		}
		return nil
	})
}
