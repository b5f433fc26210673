package apps

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
)

// IsSecretSetting reports whether a setting holds a credential: the token
// signing key, OAuth client secrets, provider API keys, plugin secrets —
// anything named like a credential. These are sealed at rest with the
// instance key and never shown to plugins.
func IsSecretSetting(key string) bool {
	k := strings.ToLower(key)
	return key == SettingJWTSecret || strings.Contains(k, "secret") || strings.Contains(k, "password") ||
		strings.Contains(k, "token") || strings.Contains(k, "private") || strings.HasSuffix(k, "_key") ||
		strings.HasSuffix(k, ".key") || strings.Contains(k, "api_key") || strings.Contains(k, "apikey")
}

// place binds a sealed value to the app and setting it is stored under.
func place(app, key string) string { return "strata/app/" + app + "/setting/" + key }

func sealSetting(keys *secrets.Keyring, app, key, value string) (string, error) {
	if keys == nil || value == "" || !IsSecretSetting(key) {
		return value, nil
	}
	v, err := keys.Seal(value, place(app, key))
	if err != nil {
		return "", fmt.Errorf("app %s: seal setting %s: %w", app, key, err)
	}
	return v, nil
}

func openSetting(keys *secrets.Keyring, app, key, stored string) (string, error) {
	if !secrets.IsSealed(stored) {
		return stored, nil // written in clear before encryption existed
	}
	if keys == nil {
		return "", fmt.Errorf("app %s: setting %s is encrypted and no instance key is loaded", app, key)
	}
	v, err := keys.Open(stored, place(app, key))
	if err != nil {
		return "", fmt.Errorf("app %s: open setting %s (set %s or restore the key file): %w", app, key, secrets.EnvKey, err)
	}
	return v, nil
}

// ResealSecrets seals every secret setting of the app with the current
// instance key: values in clear (written before encryption) and values
// sealed with an older key. It returns how many it rewrote. It is what
// `strata secrets rotate` runs on every app.
func (a *App) ResealSecrets(ctx context.Context) (int, error) {
	if a.keys == nil {
		return 0, fmt.Errorf("app %s: no instance key loaded", a.Name)
	}
	n := 0
	err := a.DB.Tx(ctx, func(tx *store.DB) error {
		var rows []Setting
		if err := tx.Gorm.WithContext(ctx).Find(&rows).Error; err != nil {
			return fmt.Errorf("read settings of %s: %w", a.Name, err)
		}
		redo := map[string]string{}
		for _, r := range rows {
			if !IsSecretSetting(r.Key) || r.Value == "" || secrets.SealedWith(r.Value) == a.keys.CurrentID() {
				continue
			}
			v, err := openSetting(a.keys, a.Name, r.Key, r.Value)
			if err != nil {
				return err
			}
			redo[r.Key] = v
		}
		n = len(redo)
		return setSettings(ctx, tx, a.keys, a.Name, redo)
	})
	return n, err
}
