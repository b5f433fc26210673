package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
)

// loadConfig reads the environment, then the flags registered by bind.
// name is the command's ("app create"); -h or --help among the flags is a
// helpRequest, even when the environment is invalid.
func loadConfig(name string, args []string, e env, bind func(*config.Config, *flag.FlagSet)) (config.Config, []string, error) {
	cfg, envErr := config.FromEnv(e.getenv)
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Errors are reported by run (with a pointer to the help), the help by
	// writeHelp on stdout: the flag package prints nothing itself.
	fs.SetOutput(io.Discard)
	bind(&cfg, fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, nil, helpRequest{name}
		}
		return cfg, nil, usageError{err.Error(), name}
	}
	if envErr != nil {
		return cfg, nil, envErr
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, err
	}
	return cfg, fs.Args(), nil
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openRegistry opens the configured engine: PostgreSQL when DATABASE_URL
// is set, else SQLite files under the data folder; secret settings are
// sealed with the instance key (loadKeyring).
func openRegistry(ctx context.Context, cfg config.Config, e env, log *slog.Logger) (*apps.Registry, error) {
	keys, err := loadKeyring(cfg, e, log)
	if err != nil {
		return nil, err
	}
	return openRegistryWith(ctx, cfg, keys, log)
}

func openRegistryWith(ctx context.Context, cfg config.Config, keys *secrets.Keyring, log *slog.Logger) (*apps.Registry, error) {
	var backend store.Backend
	var err error
	if cfg.DatabaseURL != "" {
		backend, err = store.OpenPostgres(ctx, cfg.DatabaseURL, store.PostgresOptions{Namespace: cfg.PGNamespace, MaxConns: cfg.PGMaxConns})
	} else {
		backend, err = store.OpenSQLite(cfg.DataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	return apps.NewRegistry(backend, apps.Options{PasswordCost: cfg.PasswordCost, Logger: log, Secrets: keys}), nil
}

// loadKeyring reads the instance key: STRATA_SECRET_KEY, else the key file
// of the data folder, made at first start.
func loadKeyring(cfg config.Config, e env, log *slog.Logger) (*secrets.Keyring, error) {
	keys, src, err := secrets.Load(cfg.DataDir, e.getenv)
	if err != nil {
		return nil, fmt.Errorf("instance secret key: %w", err)
	}
	if src.Made {
		log.Warn("created the instance secret key; back it up: the applications' secrets cannot be read without it",
			"file", src.File, "key_id", keys.CurrentID())
		if cfg.DatabaseURL != "" {
			log.Warn("with PostgreSQL, every node must use the same key: set " + secrets.EnvKey + " on each (see README, Security)")
		}
	}
	return keys, nil
}
