package testenv

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/store"
)

// Password is the password of every user testenv creates.
const Password = "correct-horse-battery"

// Logger discards output unless STRATA_TEST_LOG is set.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// NewRegistry returns a registry on a fresh backend of the engine, with a
// fast bcrypt cost, closed at cleanup.
func NewRegistry(t testing.TB, e store.Engine) *apps.Registry {
	t.Helper()
	r := apps.NewRegistry(NewBackend(t, e), apps.Options{PasswordCost: bcrypt.MinCost, Logger: Logger()})
	// Registered after the backend's cleanup, so it runs first.
	t.Cleanup(func() { _ = closeApps(r) })
	return r
}

// closeApps closes the open handles but leaves the backend to its own
// cleanup (which drops the PostgreSQL namespace).
func closeApps(r *apps.Registry) error {
	names, err := r.List(context.Background())
	if err != nil {
		return err
	}
	for _, n := range names {
		if a, err := r.Get(context.Background(), n); err == nil {
			_ = a.DB.Close()
		}
	}
	return nil
}

// NewApp creates an application named name with a super_admin
// admin@example.org whose password is Password.
func NewApp(t testing.TB, r *apps.Registry, name string) *apps.App {
	t.Helper()
	a, err := r.Create(context.Background(), apps.CreateParams{
		Name: name, Email: "admin@example.org", Password: Password, AdminName: "Admin",
	})
	if err != nil {
		t.Fatalf("create app %s: %v", name, err)
	}
	return a
}
