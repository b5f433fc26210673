package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/store"
)

// loadConfig reads the environment, then the flags registered by bind.
func loadConfig(name string, args []string, e env, bind func(*config.Config, *flag.FlagSet)) (config.Config, []string, error) {
	cfg, err := config.FromEnv(e.getenv)
	if err != nil {
		return cfg, nil, err
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	bind(&cfg, fs)
	if err := fs.Parse(args); err != nil {
		return cfg, nil, usageError{err.Error()}
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
// is set, else SQLite files under the data folder.
func openRegistry(ctx context.Context, cfg config.Config, log *slog.Logger) (*apps.Registry, error) {
	var backend store.Backend
	var err error
	if cfg.DatabaseURL != "" {
		backend, err = store.OpenPostgres(ctx, cfg.DatabaseURL, store.PostgresOptions{Namespace: cfg.PGNamespace})
	} else {
		backend, err = store.OpenSQLite(cfg.DataDir)
	}
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	return apps.NewRegistry(backend, apps.Options{PasswordCost: cfg.PasswordCost, Logger: log}), nil
}
