package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// APIKeyPrefix starts every key (SPEC §2.5).
const APIKeyPrefix = "svc_"

// lastUsedResolution bounds how often a key's last_used_at is written: a
// busy key would otherwise cost one write per request.
const lastUsedResolution = time.Minute

// APIKey is a row of sys_api_keys.
type APIKey struct {
	ID         int64      `json:"id" gorm:"primaryKey"`
	Label      string     `json:"label"`
	KeyHash    string     `json:"-"`
	Privilege  int        `json:"privilege"`
	CreatedBy  *int64     `json:"created_by"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// Active reports whether the key can still be used.
func (k *APIKey) Active() bool { return k.RevokedAt == nil }

var (
	ErrAPIKeyNotFound      = errs.New(errs.NotFound, "not_found", "no such API key")
	ErrAPIKeyPrivilege     = errs.New(errs.Invalid, "invalid_privilege", "an API key's privilege is one of 10, 20, 25, 30")
	ErrAPIKeyLabelRequired = errs.New(errs.Invalid, "parameter_missing", "label is required").With("parameter", "label")
)

// ValidAPIKeyPrivilege reports whether p may be given to a key.
func ValidAPIKeyPrivilege(p int) bool {
	return p == Admin || p == Writer || p == SelfWriter || p == Reader
}

// HashAPIKey returns the stored form of a plain key.
func HashAPIKey(plain string) string {
	sum := sha256.Sum256([]byte(plain))
	return hex.EncodeToString(sum[:])
}

// IsAPIKey reports whether a bearer credential has the API-key form.
func IsAPIKey(credential string) bool { return strings.HasPrefix(credential, APIKeyPrefix) }

func newAPIKeySecret() (string, error) {
	b := make([]byte, 32) // 43 url-safe characters
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate api key: %w", err)
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// CreateAPIKey stores a new key and returns it with its plain form, which
// is never stored and cannot be shown again.
func CreateAPIKey(ctx context.Context, db *store.DB, label string, privilege int, createdBy *int64, now time.Time) (*APIKey, string, error) {
	label = strings.TrimSpace(label)
	if label == "" {
		return nil, "", ErrAPIKeyLabelRequired
	}
	if !ValidAPIKeyPrivilege(privilege) {
		return nil, "", ErrAPIKeyPrivilege
	}
	plain, err := newAPIKeySecret()
	if err != nil {
		return nil, "", err
	}
	k := &APIKey{Label: label, KeyHash: HashAPIKey(plain), Privilege: privilege, CreatedBy: createdBy, CreatedAt: now}
	if err := db.Gorm.WithContext(ctx).Create(k).Error; err != nil {
		return nil, "", fmt.Errorf("create api key: %w", err)
	}
	return k, plain, nil
}

// FindAPIKey returns the key whose plain form is plain, revoked or not.
// It runs on every request made with a key, so it is one plain query.
func FindAPIKey(ctx context.Context, db *store.DB, plain string) (*APIKey, error) {
	var k APIKey
	err := db.QueryRow(ctx, `SELECT id, label, key_hash, privilege, created_by, created_at, last_used_at, revoked_at FROM `+
		db.Sys("api_keys")+` WHERE key_hash = ?`, HashAPIKey(plain)).
		Scan(&k.ID, &k.Label, &k.KeyHash, &k.Privilege, &k.CreatedBy, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrAPIKeyNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find api key: %w", err)
	}
	return &k, nil
}

// TouchAPIKey records a use of k, at most once per lastUsedResolution.
func TouchAPIKey(ctx context.Context, db *store.DB, k *APIKey, now time.Time) error {
	if k.LastUsedAt != nil && now.Sub(*k.LastUsedAt) < lastUsedResolution {
		return nil
	}
	k.LastUsedAt = &now
	return db.Gorm.WithContext(ctx).Model(k).Update("last_used_at", now).Error
}

// ListAPIKeys returns every key, newest first.
func ListAPIKeys(ctx context.Context, db *store.DB) ([]APIKey, error) {
	var keys []APIKey
	if err := db.Gorm.WithContext(ctx).Order("id DESC").Find(&keys).Error; err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey makes a key unusable at once; revoking twice is harmless.
func RevokeAPIKey(ctx context.Context, db *store.DB, id int64, now time.Time) (*APIKey, error) {
	var k APIKey
	err := db.Tx(ctx, func(tx *store.DB) error {
		if err := tx.Gorm.WithContext(ctx).Where("id = ?", id).Take(&k).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return ErrAPIKeyNotFound
			}
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		k.RevokedAt = &now
		if err := tx.Gorm.WithContext(ctx).Model(&k).Update("revoked_at", now).Error; err != nil {
			return err
		}
		return keyChanged(ctx, tx, k.ID)
	})
	return &k, err
}

// DeleteAPIKey removes a key.
func DeleteAPIKey(ctx context.Context, db *store.DB, id int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		res := tx.Gorm.WithContext(ctx).Where("id = ?", id).Delete(&APIKey{})
		if res.Error != nil {
			return fmt.Errorf("delete api key: %w", res.Error)
		}
		if res.RowsAffected == 0 {
			return ErrAPIKeyNotFound
		}
		return keyChanged(ctx, tx, id)
	})
}
