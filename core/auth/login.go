package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/strata-archaeo/strata/core/store"
)

// Lock rule of SPEC §3.1: five consecutive failures for one email lock it
// for fifteen minutes.
const (
	MaxFailedLogins = 5
	LockDuration    = 15 * time.Minute
)

// LoginAttempt is a row of sys_login_attempts.
type LoginAttempt struct {
	Email       string `gorm:"primaryKey"`
	Failures    int
	LockedUntil *time.Time
	UpdatedAt   time.Time
}

// Authenticator verifies passwords and keeps the lock state. Its clock is
// injectable so tests can move time instead of sleeping.
type Authenticator struct {
	now   func() time.Time
	cost  int
	dummy string // bcrypt hash at cost, compared when no account matches
}

// NewAuthenticator returns an authenticator hashing at cost.
func NewAuthenticator(cost int, now func() time.Time) (*Authenticator, error) {
	if now == nil {
		now = time.Now
	}
	dummy, err := InertHash(cost)
	if err != nil {
		return nil, err
	}
	return &Authenticator{now: now, cost: cost, dummy: dummy}, nil
}

// Cost is the bcrypt cost of new hashes.
func (a *Authenticator) Cost() int { return a.cost }

// Now is the authenticator's clock, in UTC.
func (a *Authenticator) Now() time.Time { return a.now().UTC() }

// Login checks an email and password following the lock state machine:
// a live lock answers account_locked before the password is looked at; an
// expired lock is cleared and the attempt evaluated; a failure counts
// towards the lock and a success resets the count. A legacy SHA-1 hash is
// accepted once and rewritten as bcrypt. The work done for an unknown email
// matches that for a known one, so timing does not reveal accounts.
//
// The attempted password is never logged or stored.
func (a *Authenticator) Login(ctx context.Context, db *store.DB, email, password string) (*User, error) {
	email = NormalizeEmail(email)
	if !loginEmailShape(email) || password == "" {
		// Decided by the request's shape alone: no account is looked up and
		// no attempt counted, so this reveals nothing and locks nothing.
		return nil, ErrEmailPasswordNeeded
	}
	now := a.Now()
	att, err := loadAttempt(ctx, db.Gorm, email)
	if err != nil {
		return nil, err
	}
	if att != nil && att.lockedAt(now) {
		return nil, lockedError(att, now)
	}
	user, err := FindUserByEmail(ctx, db, email)
	if err != nil && !errors.Is(err, ErrUserNotFound) {
		return nil, err
	}
	ok, legacy := false, false
	if user != nil {
		ok, legacy = verifyPassword(user.Password, password)
	}
	if user == nil || legacy {
		// Spend one bcrypt comparison where the real check spent none.
		verifyPassword(a.dummy, password)
	}
	if !ok {
		if err := a.recordFailure(ctx, db, email, now); err != nil {
			return nil, err
		}
		return nil, ErrLoginDataNotValid
	}
	var rehash string
	if legacy {
		if rehash, err = HashPassword(password, a.cost); err != nil {
			return nil, err
		}
	}
	if err := a.recordSuccess(ctx, db, user, rehash, now); err != nil {
		return nil, err
	}
	if rehash != "" {
		user.Password = rehash
	}
	return user, nil
}

// loginEmailShape reports whether email (normalised) can be an account's
// address: one '@' with something on each side, no spaces and no angle
// brackets. It is looser than ValidateEmail on purpose, so that accounts
// brought from older installations with unusual addresses still sign in.
func loginEmailShape(email string) bool {
	at := strings.IndexByte(email, '@')
	if at <= 0 || at == len(email)-1 || strings.Count(email, "@") != 1 {
		return false
	}
	return !strings.ContainsFunc(email, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '<' || r == '>'
	})
}

func (att *LoginAttempt) lockedAt(now time.Time) bool {
	return att.LockedUntil != nil && now.Before(*att.LockedUntil)
}

func lockedError(att *LoginAttempt, now time.Time) error {
	secs := int(att.LockedUntil.Sub(now).Seconds() + 0.999)
	return ErrAccountLocked.With("retry_after", secs)
}

func loadAttempt(ctx context.Context, g *gorm.DB, email string) (*LoginAttempt, error) {
	var att LoginAttempt
	err := g.WithContext(ctx).Where("email = ?", email).Take(&att).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read login attempts: %w", err)
	}
	return &att, nil
}

// lockRow reads the attempt row inside tx, creating it first so that
// concurrent failures for a new email serialise on one row.
func lockRow(ctx context.Context, tx *store.DB, email string, now time.Time) (*LoginAttempt, error) {
	err := tx.Gorm.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&LoginAttempt{Email: email, UpdatedAt: now}).Error
	if err != nil {
		return nil, fmt.Errorf("init login attempts: %w", err)
	}
	q := tx.Gorm.WithContext(ctx)
	if tx.Engine == store.Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"}) // SQLite's immediate tx already excludes others
	}
	var att LoginAttempt
	if err := q.Where("email = ?", email).Take(&att).Error; err != nil {
		return nil, fmt.Errorf("lock login attempts: %w", err)
	}
	return &att, nil
}

func (a *Authenticator) recordFailure(ctx context.Context, db *store.DB, email string, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		att, err := lockRow(ctx, tx, email, now)
		if err != nil {
			return err
		}
		switch {
		case att.lockedAt(now):
			return nil // locked meanwhile by a concurrent failure
		case att.LockedUntil != nil:
			// The lock expired: it is cleared, and this failure is the
			// first of a new run.
			att.Failures, att.LockedUntil = 1, nil
		default:
			att.Failures++
		}
		if att.Failures >= MaxFailedLogins {
			until := now.Add(LockDuration)
			att.LockedUntil = &until
		}
		att.UpdatedAt = now
		return tx.Gorm.WithContext(ctx).Model(att).Select("failures", "locked_until", "updated_at").Updates(att).Error
	})
}

func (a *Authenticator) recordSuccess(ctx context.Context, db *store.DB, user *User, rehash string, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		att, err := loadAttempt(ctx, tx.Gorm, user.Email)
		if err != nil {
			return err
		}
		if att != nil && att.lockedAt(now) {
			return lockedError(att, now) // concurrent failures locked it meanwhile
		}
		if att != nil {
			if err := tx.Gorm.WithContext(ctx).Delete(att).Error; err != nil {
				return fmt.Errorf("reset login attempts: %w", err)
			}
		}
		if rehash != "" {
			err := tx.Gorm.WithContext(ctx).Model(user).Updates(map[string]any{"password": rehash, "updated_at": now}).Error
			if err != nil {
				return fmt.Errorf("upgrade password hash: %w", err)
			}
		}
		return nil
	})
}

// ClearLock removes the failure count and lock of an email (after a
// successful password reset).
func ClearLock(ctx context.Context, db *store.DB, email string) error {
	return db.Gorm.WithContext(ctx).Where("email = ?", NormalizeEmail(email)).Delete(&LoginAttempt{}).Error
}
