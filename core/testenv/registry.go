package testenv

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/secrets"
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
	r := apps.NewRegistry(NewBackend(t, e), apps.Options{PasswordCost: bcrypt.MinCost, Logger: Logger(), Secrets: Keyring(t)})
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

// Keyring returns an instance keyring with one fresh key.
func Keyring(t testing.TB) *secrets.Keyring {
	t.Helper()
	k, err := secrets.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
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

// AssertNoTrace fails t unless storage holds no application at all: none
// listed, no folder in the SQLite apps dir, no app schema in PostgreSQL.
func AssertNoTrace(t testing.TB, r *apps.Registry) {
	t.Helper()
	ctx := context.Background()
	names, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Fatalf("applications exist: %v", names)
	}
	switch b := r.Backend().(type) {
	case *store.SQLiteBackend:
		dir := filepath.Dir(b.AppDir("x"))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("left in %s: %s", dir, e.Name())
		}
	case *store.PostgresBackend:
		var schemas []string
		rows, err := b.Pool().QueryContext(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, b.Namespace()+"_")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			_ = rows.Scan(&s)
			schemas = append(schemas, s)
		}
		if len(schemas) > 0 {
			t.Errorf("schemas left in PostgreSQL: %v", schemas)
		}
	}
}
