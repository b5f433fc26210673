package apps_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestValidateName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"pompeii", true}, {"ab", true}, {"site_2024", true}, {strings.Repeat("a", 63), true},
		{"", false}, {"a", false}, {strings.Repeat("a", 64), false}, {strings.Repeat("a", 70), false},
		{"api", false}, {"API", false}, {"Api", false}, {"login", false}, {"projects", false}, {"cache", false},
		{"healthz", false}, {"readyz", false}, {"metrics", false}, {"jobs", false}, {"static", false},
		{"assets", false}, {"new-app", false}, {"oauth-callback", false}, {"index.php", false}, {"favicon.svg", false},
		{"../x", false}, {"A B", false}, {"Pompeii", false}, {"1site", false}, {"_x", false}, {"a-b", false},
		{"a.b", false}, {"a/b", false}, {"ä_site", false}, {"x\x00y", false},
	}
	for _, c := range cases {
		err := apps.ValidateName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && errs.CodeOf(err) != "invalid_app_name" {
			t.Errorf("ValidateName(%q) code %s", c.name, errs.CodeOf(err))
		}
	}
}

func TestConcurrentCreatesOfOneNameYieldOneApp(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		r := testenv.NewRegistry(t, e)
		const n = 4
		var wg sync.WaitGroup
		results := make(chan error, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := r.Create(context.Background(), apps.CreateParams{Name: "race", Email: "a@b.org", Password: testenv.Password})
				results <- err
			}()
		}
		wg.Wait()
		close(results)
		created := 0
		for err := range results {
			switch {
			case err == nil:
				created++
			case !errors.Is(err, store.ErrAppExists):
				t.Errorf("unexpected error: %v", err)
			}
		}
		if created != 1 {
			t.Fatalf("%d creations succeeded, want 1", created)
		}
		names, _ := r.List(context.Background())
		if len(names) != 1 || names[0] != "race" {
			t.Fatalf("apps after race: %v", names)
		}
	})
}

// TestAppsAreIsolated writes through app A's handle on every path a
// feature uses (gorm on system tables, raw SQL on system and user tables)
// and checks that app B sees none of it, and that nothing in A's handle can
// name B's storage.
func TestAppsAreIsolated(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		r := testenv.NewRegistry(t, e)
		a := testenv.NewApp(t, r, "alpha")
		b := testenv.NewApp(t, r, "beta")

		// Writes in A: a user through gorm, a setting, a user table with rows.
		intruder := auth.User{Name: "Only in A", Email: "only-a@example.org", Password: "x", Privilege: auth.Reader}
		if err := a.DB.Gorm.WithContext(ctx).Create(&intruder).Error; err != nil {
			t.Fatal(err)
		}
		if err := a.SetSettings(ctx, map[string]string{apps.SettingDefinition: "changed in A"}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(ctx, `CREATE TABLE `+a.DB.Qualify("finds")+` (id integer PRIMARY KEY, label text)`); err != nil {
			t.Fatal(err)
		}
		if _, err := a.DB.Exec(ctx, `INSERT INTO `+a.DB.Qualify("finds")+` (id, label) VALUES (1, 'amphora')`); err != nil {
			t.Fatal(err)
		}

		// B is untouched.
		var users []auth.User
		if err := b.DB.Gorm.WithContext(ctx).Find(&users).Error; err != nil {
			t.Fatal(err)
		}
		if len(users) != 1 || users[0].Email != "admin@example.org" {
			t.Fatalf("B sees users %+v", users)
		}
		if def, _, _ := b.Setting(ctx, apps.SettingDefinition); def == "changed in A" {
			t.Fatal("B sees A's setting")
		}
		var n int
		if err := b.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+b.DB.Qualify("finds")).Scan(&n); err == nil {
			t.Fatal("B can read a table that exists only in A")
		}
		if _, err := b.DB.Exec(ctx, `INSERT INTO `+b.DB.Qualify("finds")+` (id, label) VALUES (2, 'x')`); err == nil {
			t.Fatal("B can write a table that exists only in A")
		}
		secretA, _ := a.JWTSecret(ctx)
		secretB, _ := b.JWTSecret(ctx)
		if string(secretA) == string(secretB) {
			t.Fatal("apps share a JWT secret")
		}

		switch e {
		case store.Postgres:
			if a.DB.Schema() == b.DB.Schema() || !strings.Contains(a.DB.Qualify("finds"), a.DB.Schema()) {
				t.Fatalf("schemas %q and %q", a.DB.Schema(), b.DB.Schema())
			}
			// A forgotten qualification fails loudly: the pool's search_path
			// names no application schema.
			pool := r.Backend().(*store.PostgresBackend).Pool()
			if _, err := pool.ExecContext(ctx, `SELECT COUNT(*) FROM sys_users`); err == nil {
				t.Fatal("an unqualified query reached some application's table")
			}
		case store.SQLite:
			if a.DB.Qualify("finds") != `"finds"` {
				t.Fatalf("sqlite qualification %s", a.DB.Qualify("finds"))
			}
		}
	})
}
