package apps

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/version"
)

// ErrNotFound is returned for an application that does not exist.
var ErrNotFound = store.ErrAppNotFound

// Options configures a Registry.
type Options struct {
	// PasswordCost is the bcrypt cost for the first super_admin.
	PasswordCost int
	// Now is the clock (UTC is applied by the registry).
	Now    func() time.Time
	Logger *slog.Logger
	// Secrets seals the secret settings at rest (IsSecretSetting); nil
	// stores them in clear, as before encryption existed.
	Secrets *secrets.Keyring
}

// Registry opens applications on demand and keeps them open.
type Registry struct {
	backend store.Backend
	opts    Options

	mu        sync.Mutex
	open      map[string]*App
	configDir string // data folder of the apps' config files ("" : none)
}

// NewRegistry returns a registry over backend.
func NewRegistry(backend store.Backend, opts Options) *Registry {
	if opts.PasswordCost == 0 {
		opts.PasswordCost = auth.DefaultBcryptCost
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Registry{backend: backend, opts: opts, open: map[string]*App{}}
}

// Engine returns the storage engine of the registry's backend.
func (r *Registry) Engine() store.Engine { return r.backend.Engine() }

// Backend returns the storage backend.
func (r *Registry) Backend() store.Backend { return r.backend }

func (r *Registry) now() time.Time { return r.opts.Now().UTC() }

// Get returns the open application name, opening it on first use. Names
// that cannot be application names are answered without touching storage.
func (r *Registry) Get(ctx context.Context, name string) (*App, error) {
	if ValidateName(name) != nil {
		return nil, ErrNotFound
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.open[name]; ok {
		return a, nil
	}
	db, err := r.backend.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	a := &App{Name: name, DB: db, keys: r.opts.Secrets}
	if r.configDir != "" {
		a.configFile.Store(ConfigFilePath(r.configDir, name))
	}
	r.open[name] = a
	return a, nil
}

// List returns the names of all applications.
func (r *Registry) List(ctx context.Context) ([]string, error) { return r.backend.List(ctx) }

// CreateParams are the inputs of Create.
type CreateParams struct {
	Name       string
	Definition string
	Email      string
	Password   string
	AdminName  string
}

// Errors of Create beyond name validation.
var (
	ErrParameterMissing  = errs.New(errs.Invalid, "parameter_missing", "a required parameter is missing")
	ErrDefinitionTooLong = errs.New(errs.Invalid, "definition_too_long", "the definition must have at most 500 characters")
)

// Validate reports what Create would refuse in p before touching storage,
// so that a command can refuse before it opens (and so makes) anything.
func (p CreateParams) Validate() error {
	_, err := p.checked()
	return err
}

// checked is p validated, normalized and with its defaults.
func (p CreateParams) checked() (CreateParams, error) {
	if err := ValidateName(p.Name); err != nil {
		return p, err
	}
	p.Email = auth.NormalizeEmail(p.Email)
	p.AdminName = strings.TrimSpace(p.AdminName)
	p.Definition = strings.TrimSpace(p.Definition)
	switch {
	case p.Email == "":
		return p, ErrParameterMissing.With("parameter", "email")
	case p.Password == "":
		return p, ErrParameterMissing.With("parameter", "password")
	}
	if err := auth.ValidateEmail(p.Email); err != nil {
		return p, err
	}
	if err := auth.CheckPasswordRules(p.Password); err != nil {
		return p, err
	}
	if len([]rune(p.Definition)) > 500 {
		return p, ErrDefinitionTooLong
	}
	if p.AdminName == "" {
		p.AdminName = "Administrator"
	}
	if p.Definition == "" {
		p.Definition = p.Name
	}
	return p, nil
}

// Create makes a new application: its database or schema, the system
// tables, the settings (including a fresh JWT secret) and the first user at
// super_admin level. Everything is validated before anything is written, and
// a failure at any step leaves nothing behind.
func (r *Registry) Create(ctx context.Context, p CreateParams) (*App, error) {
	p, err := p.checked()
	if err != nil {
		return nil, err
	}
	if ok, err := r.backend.Exists(ctx, p.Name); err != nil {
		return nil, err
	} else if ok {
		return nil, store.ErrAppExists
	}
	// Hash before the backend starts: the slow step stays outside any lock
	// or transaction.
	hash, err := auth.HashPassword(p.Password, r.opts.PasswordCost)
	if err != nil {
		return nil, err
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	now := r.now()
	err = r.backend.Create(ctx, p.Name, func(ctx context.Context, db *store.DB) error {
		if _, err := db.Migrate(ctx, r.opts.Now); err != nil {
			return err
		}
		return db.Tx(ctx, func(tx *store.DB) error {
			settings := map[string]string{
				SettingName:        p.Name,
				SettingDefinition:  p.Definition,
				SettingJWTSecret:   secret,
				SettingCreatedAt:   now.Format(time.RFC3339),
				SettingCreatedWith: version.Version,
			}
			if err := setSettings(ctx, tx, r.opts.Secrets, p.Name, settings); err != nil {
				return err
			}
			admin := auth.User{
				Name: p.AdminName, Email: p.Email, Password: hash, Privilege: auth.SuperAdmin,
				TokenVersion: 1, CreatedAt: now, UpdatedAt: now,
			}
			if err := tx.Gorm.WithContext(ctx).Create(&admin).Error; err != nil {
				return fmt.Errorf("create first user: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	r.opts.Logger.Info("application created", "app", p.Name, "engine", r.backend.Engine())
	return r.Get(ctx, p.Name)
}

// MigrateAll brings every application's system tables up to date, and its
// search indexes in step with its catalog (schema.SyncSearchIndexes). It goes
// on past an application that fails and reports all failures together.
func (r *Registry) MigrateAll(ctx context.Context) error {
	names, err := r.List(ctx)
	if err != nil {
		return err
	}
	var failures []error
	for _, name := range names {
		a, err := r.Get(ctx, name)
		if err != nil {
			failures = append(failures, fmt.Errorf("%s: %w", name, err))
			continue
		}
		applied, err := a.DB.Migrate(ctx, r.opts.Now)
		for _, m := range applied {
			r.opts.Logger.Info("migration applied", "app", name, "id", m.ID, "name", m.Name)
		}
		if err != nil {
			r.opts.Logger.Error("migration failed", "app", name, "err", err)
			failures = append(failures, fmt.Errorf("%s: %w", name, err))
			continue
		}
		// Search indexes the catalog asks for but the database lacks (an
		// application older than them): built once, here.
		if err := schema.SyncSearchIndexes(ctx, a.DB); err != nil {
			r.opts.Logger.Error("search indexes", "app", name, "err", err)
			failures = append(failures, fmt.Errorf("%s: search indexes: %w", name, err))
		}
	}
	return errors.Join(failures...)
}

// Drop deletes an application and all its data.
func (r *Registry) Drop(ctx context.Context, name string) error {
	r.mu.Lock()
	if a, ok := r.open[name]; ok {
		_ = a.DB.Close()
		delete(r.open, name)
	}
	r.mu.Unlock()
	return r.backend.Drop(ctx, name)
}

// Close closes every open application and the backend.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errList []error
	for name, a := range r.open {
		if err := a.DB.Close(); err != nil {
			errList = append(errList, fmt.Errorf("close %s: %w", name, err))
		}
		delete(r.open, name)
	}
	if err := r.backend.Close(); err != nil {
		errList = append(errList, err)
	}
	return errors.Join(errList...)
}

// newSecret returns 32 random bytes, base64url-encoded.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
