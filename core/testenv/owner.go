package testenv

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/store"
)

// Connection is one way a test reaches a database: SQLite, PostgreSQL
// connected as the test server's superuser (as deploy/compose.yaml does),
// or PostgreSQL as a non-superuser owner (as operators should run it).
type Connection struct {
	Name   string
	Engine store.Engine
	// Owner: PostgreSQL as a role that is not a superuser.
	Owner bool
}

// Connections are every way a hardening test runs.
var Connections = []Connection{
	{Name: "sqlite", Engine: store.SQLite},
	{Name: "postgres", Engine: store.Postgres},
	{Name: "postgres-owner", Engine: store.Postgres, Owner: true},
}

// EachConnection runs fn as a subtest per Connection.
func EachConnection(t *testing.T, fn func(t *testing.T, c Connection)) {
	t.Helper()
	for _, c := range Connections {
		t.Run(c.Name, func(t *testing.T) {
			RequireEngine(t, c.Engine)
			fn(t, c)
		})
	}
}

// EachWithOwner is Each with a third subtest, "postgres-owner": what the
// test builds there (NewBackend, NewRegistry, NewInstance...) connects to
// PostgreSQL as a non-superuser owner, as operators should run Strata.
func EachWithOwner(t *testing.T, fn func(t *testing.T, engine store.Engine)) {
	t.Helper()
	EachConnection(t, func(t *testing.T, c Connection) { fn(t, c.Engine) })
}

// ownerTest reports whether t runs under a "postgres-owner" subtest.
func ownerTest(t testing.TB) bool { return strings.Contains(t.Name()+"/", "/postgres-owner/") }

// NewRegistryOn is NewRegistry on the connection's backend.
func NewRegistryOn(t testing.TB, c Connection) *apps.Registry {
	t.Helper()
	if !c.Owner || ownerTest(t) {
		return NewRegistry(t, c.Engine)
	}
	r := apps.NewRegistry(NewOwnerBackend(t), apps.Options{PasswordCost: bcrypt.MinCost, Logger: Logger(), Secrets: Keyring(t)})
	t.Cleanup(func() { _ = closeApps(r) })
	return r
}

// NewOwnerBackend returns an empty PostgreSQL backend connected as a
// fresh role that is no superuser: it may log in, create roles (free
// SQL's per-app roles) and create schemas in the database, nothing more.
// The role and all it owns are dropped at cleanup.
func NewOwnerBackend(t testing.TB) *store.PostgresBackend {
	t.Helper()
	RequireEngine(t, store.Postgres)
	super, _ := PostgresURL()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, super)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	role, password := "strata_owner_"+randomHex(5), randomHex(16)
	var database string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&database); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE ROLE ` + role + ` LOGIN CREATEROLE NOSUPERUSER NOCREATEDB PASSWORD '` + password + `'`,
		`GRANT CREATE, CONNECT ON DATABASE ` + pgx.Identifier{database}.Sanitize() + ` TO ` + role,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("make the owner role: %v", err)
		}
	}
	u, err := url.Parse(super)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)
	b, err := store.OpenPostgres(ctx, u.String(), store.PostgresOptions{Namespace: "o" + randomHex(5), MaxConns: 8})
	if err != nil {
		t.Fatalf("open postgres as %s: %v", role, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.DestroyNamespace(ctx); err != nil {
			t.Errorf("destroy test namespace %s: %v", b.Namespace(), err)
		}
		b.Close()
		conn, err := pgx.Connect(ctx, super)
		if err != nil {
			t.Errorf("drop owner role: %v", err)
			return
		}
		defer conn.Close(ctx)
		// The roles the owner made (free SQL's) go with it.
		rows, err := conn.Query(ctx, `SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid
			JOIN pg_roles o ON o.oid = m.member WHERE o.rolname = $1`, role)
		if err == nil {
			names, _ := pgx.CollectRows(rows, pgx.RowTo[string])
			for _, n := range names {
				_, _ = conn.Exec(ctx, `DROP OWNED BY `+pgx.Identifier{n}.Sanitize())
				_, _ = conn.Exec(ctx, `DROP ROLE IF EXISTS `+pgx.Identifier{n}.Sanitize())
			}
		}
		for _, q := range []string{
			`DROP OWNED BY ` + role,
			`DROP ROLE IF EXISTS ` + role,
		} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Errorf("drop owner role: %s: %v", q, err)
			}
		}
	})
	return b
}
