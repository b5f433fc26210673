package store

import (
	"context"

	"github.com/strata-archaeo/strata/core/errs"
)

// Errors every backend returns for the app lifecycle.
var (
	ErrAppExists   = errs.New(errs.Conflict, "app_exists", "an application with this name already exists")
	ErrAppNotFound = errs.New(errs.NotFound, "app_not_found", "no application with this name")
)

// Backend creates, opens, lists and drops application databases on one
// engine. Names reaching a Backend are already validated (apps.ValidateName).
type Backend interface {
	Engine() Engine
	// Create makes the app's database, runs init against it and publishes
	// the app only if init succeeds: a failure leaves nothing behind.
	Create(ctx context.Context, name string, init func(ctx context.Context, db *DB) error) error
	// Open returns a handle on an existing app (ErrAppNotFound otherwise).
	Open(ctx context.Context, name string) (*DB, error)
	// Exists reports whether the app exists.
	Exists(ctx context.Context, name string) (bool, error)
	// List returns the names of all apps, sorted.
	List(ctx context.Context) ([]string, error)
	// Drop deletes the app and all its data.
	Drop(ctx context.Context, name string) error
	// Close releases the backend's resources.
	Close() error
}
