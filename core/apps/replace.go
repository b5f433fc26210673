package apps

import (
	"context"
	"errors"
	"time"

	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
)

// replacedHandleGrace is how long a replaced app's handle stays open for
// the requests that hold it.
const replacedHandleGrace = 30 * time.Second

// ErrReplaceUnsupported is returned by Replace on a backend that cannot
// swap an app's database.
var ErrReplaceUnsupported = errors.New("apps: this storage backend cannot replace an application")

// Replace rebuilds the application name with init (a new database beside
// the live one) and swaps it in atomically (store.Replacer). While the
// swap happens the registry hands out no handle on the app, and the one it
// had is closed, so the next request opens the new database.
func (r *Registry) Replace(ctx context.Context, name string, init func(ctx context.Context, db *store.DB) error) error {
	rep, ok := r.backend.(store.Replacer)
	if !ok {
		return ErrReplaceUnsupported
	}
	locked := false
	defer func() {
		if locked {
			r.mu.Unlock()
		}
	}()
	return rep.Replace(ctx, name, init, func() {
		r.mu.Lock()
		locked = true
		if a, ok := r.open[name]; ok {
			delete(r.open, name)
			// Requests already under way keep their handle a moment (they
			// see the app as it was, as if they had come just before the
			// restore); the next ones open the new database.
			time.AfterFunc(replacedHandleGrace, func() { _ = a.DB.Close() })
		}
	})
}

// Keyring is the instance key that seals secret settings (nil: none).
func (r *Registry) Keyring() *secrets.Keyring { return r.opts.Secrets }

// MoveSecretSetting turns a secret setting as stored for app from into the
// value to store for app to (sealed values are bound to their app): it
// opens it with the instance key and seals it again. A value that cannot
// be opened here (sealed by another instance's key) is an error; values
// stored in clear and settings that are not secrets pass unchanged.
func (r *Registry) MoveSecretSetting(from, to, key, stored string) (string, error) {
	if !IsSecretSetting(key) || !secrets.IsSealed(stored) {
		return stored, nil
	}
	v, err := openSetting(r.opts.Secrets, from, key, stored)
	if err != nil {
		return "", err
	}
	return sealSetting(r.opts.Secrets, to, key, v)
}

// NewJWTSecret returns a fresh token-signing secret sealed for app, for a
// restore whose archive's secret cannot be opened here.
func (r *Registry) NewJWTSecret(app string) (string, error) {
	s, err := newSecret()
	if err != nil {
		return "", err
	}
	return sealSetting(r.opts.Secrets, app, SettingJWTSecret, s)
}
