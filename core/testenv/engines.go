package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/core/store"
)

// DefaultPostgresURL is tried when TEST_DATABASE_URL is not set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
)

// PostgresURL returns the server tests use, probing it once per process.
func PostgresURL() (string, error) {
	pgOnce.Do(func() {
		pgURL = os.Getenv("TEST_DATABASE_URL")
		if pgURL == "" {
			pgURL = DefaultPostgresURL
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			pgErr = err
			return
		}
		pgErr = conn.Close(ctx)
	})
	return pgURL, pgErr
}

// PostgresRequired reports whether a missing PostgreSQL must fail tests.
func PostgresRequired() bool {
	return os.Getenv("STRATA_REQUIRE_POSTGRES") == "1" || os.Getenv("CI") == "true"
}

// Each runs fn as a subtest per engine ("sqlite", "postgres"). The
// PostgreSQL subtest fails when the server is required but absent, and is
// skipped with the reason otherwise.
func Each(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	for _, e := range store.Engines {
		t.Run(string(e), func(t *testing.T) {
			RequireEngine(t, e)
			fn(t, e)
		})
	}
}

// EnginesEnv limits the engines tests run on: "sqlite" skips PostgreSQL
// even where it is required (make test's second pass over the records
// suites with SQLite's group commit forced on and off, which concerns
// SQLite alone).
const EnginesEnv = "STRATA_TEST_ENGINES"

// RequireEngine fails or skips t when engine is not available.
func RequireEngine(t testing.TB, e store.Engine) {
	t.Helper()
	if only := os.Getenv(EnginesEnv); only != "" && only != string(e) {
		t.Skipf("%s=%s", EnginesEnv, only)
	}
	if e != store.Postgres {
		return
	}
	if _, err := PostgresURL(); err != nil {
		if PostgresRequired() {
			t.Fatalf("PostgreSQL is required (STRATA_REQUIRE_POSTGRES/CI) but not reachable: %v", err)
		}
		t.Skipf("PostgreSQL not reachable, set TEST_DATABASE_URL to run this engine: %v", err)
	}
}

// NewBackend returns an empty backend of the engine, removed at cleanup.
// Under a "postgres-owner" subtest (EachWithOwner) a PostgreSQL backend
// connects as a fresh non-superuser owner (NewOwnerBackend).
func NewBackend(t testing.TB, e store.Engine) store.Backend {
	t.Helper()
	RequireEngine(t, e)
	switch e {
	case store.SQLite:
		b, err := store.OpenSQLite(t.TempDir())
		if err != nil {
			t.Fatalf("open sqlite backend: %v", err)
		}
		return b
	case store.Postgres:
		if ownerTest(t) {
			return NewOwnerBackend(t)
		}
		url, _ := PostgresURL()
		b, err := store.OpenPostgres(context.Background(), url, store.PostgresOptions{
			Namespace: "t" + randomHex(5), MaxConns: 8,
		})
		if err != nil {
			t.Fatalf("open postgres backend: %v", err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := b.DestroyNamespace(ctx); err != nil {
				t.Errorf("destroy test namespace %s: %v", b.Namespace(), err)
			}
			b.Close()
		})
		return b
	}
	t.Fatalf("unknown engine %q", e)
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
