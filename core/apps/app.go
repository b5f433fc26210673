package apps

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
)

// App is one open application (tenant).
type App struct {
	Name string
	DB   *store.DB

	secretMu sync.Mutex
	secret   []byte // cached JWT secret; it never changes after creation

	configFile atomic.Value // string: path of the optional config file (SetConfigDir)

	keys *secrets.Keyring // seals secret settings at rest (nil: stored in clear)
}

// Setting keys stored in sys_settings.
const (
	SettingName        = "name"
	SettingDefinition  = "definition"
	SettingJWTSecret   = "jwt_secret"
	SettingCreatedAt   = "created_at"
	SettingCreatedWith = "created_with_version"
	SettingSchema      = "schema_version"
)

// Setting is a row of sys_settings.
type Setting struct {
	Key   string `gorm:"primaryKey"`
	Value string
}

// Settings returns all settings of the app, secret ones opened. Secrets
// are included: callers decide what leaves the process.
func (a *App) Settings(ctx context.Context) (map[string]string, error) {
	var rows []Setting
	if err := a.DB.Gorm.WithContext(ctx).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("read settings of %s: %w", a.Name, err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		v, err := openSetting(a.keys, a.Name, r.Key, r.Value)
		if err != nil {
			return nil, err
		}
		out[r.Key] = v
	}
	return out, nil
}

// Setting returns one setting (opened when secret) and whether it is set.
func (a *App) Setting(ctx context.Context, key string) (string, bool, error) {
	var row Setting
	err := a.DB.Gorm.WithContext(ctx).Where("key = ?", key).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s of %s: %w", key, a.Name, err)
	}
	v, err := openSetting(a.keys, a.Name, key, row.Value)
	return v, true, err
}

// SetSettings writes the given settings in one transaction, secret ones
// sealed.
func (a *App) SetSettings(ctx context.Context, kv map[string]string) error {
	return a.DB.Tx(ctx, func(tx *store.DB) error { return setSettings(ctx, tx, a.keys, a.Name, kv) })
}

func setSettings(ctx context.Context, db *store.DB, keys *secrets.Keyring, app string, kv map[string]string) error {
	for k, v := range kv {
		stored, err := sealSetting(keys, app, k, v)
		if err != nil {
			return err
		}
		err = db.Gorm.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "key"}},
			DoUpdates: clause.AssignmentColumns([]string{"value"}),
		}).Create(&Setting{Key: k, Value: stored}).Error
		if err != nil {
			return fmt.Errorf("write setting %s: %w", k, err)
		}
	}
	return nil
}

// JWTSecret returns the app's signing key for tokens and signed OAuth state.
func (a *App) JWTSecret(ctx context.Context) ([]byte, error) {
	a.secretMu.Lock()
	defer a.secretMu.Unlock()
	if a.secret != nil {
		return a.secret, nil
	}
	v, ok, err := a.Setting(ctx, SettingJWTSecret)
	if err != nil {
		return nil, err
	}
	if !ok || v == "" {
		return nil, fmt.Errorf("app %s has no JWT secret", a.Name)
	}
	secret, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return nil, fmt.Errorf("app %s: malformed JWT secret: %w", a.Name, err)
	}
	a.secret = secret
	return secret, nil
}
