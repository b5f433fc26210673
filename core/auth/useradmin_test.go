package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

const testCost = bcrypt.MinCost

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

// adminFixture is an app with its first super_admin and an admin.
type adminFixture struct {
	app   *apps.App
	super *auth.User
	admin *auth.User
}

func newAdminFixture(t *testing.T, e store.Engine) adminFixture {
	t.Helper()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "admin")
	super, err := auth.FindUserByEmail(t.Context(), a.DB, "admin@example.org")
	if err != nil {
		t.Fatal(err)
	}
	return adminFixture{app: a, super: super, admin: testenv.NewUser(t, a, "Ada", "ada@example.org", auth.Admin)}
}

func actorFor(u *auth.User) *auth.Actor {
	return &auth.Actor{UserID: u.ID, Name: u.Name, Email: u.Email, Privilege: u.Privilege}
}

func wantCode(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Kind != kind || e.Code != code {
		t.Fatalf("error %v, want kind %d code %s", err, kind, code)
	}
}

func mustFind(t *testing.T, db *store.DB, id int64) *auth.User {
	t.Helper()
	u, err := auth.FindUser(t.Context(), db, id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSaveUserRefusesBadInputAndEscalation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		linked := testenv.NewUser(t, f.app, "Linked", "linked@example.org", auth.Reader)
		if _, _, err := auth.SaveUser(ctx, f.app.DB, actorFor(f.super), auth.UserInput{ID: linked.ID,
			OAuthProvider: str("idp_a"), OAuthSub: str("sub-1")}, testCost, now); err != nil {
			t.Fatal(err)
		}
		reader := testenv.NewUser(t, f.app, "Reader", "reader@example.org", auth.Reader)
		before := snapshotUsers(t, f.app.DB)
		for _, c := range []struct {
			name  string
			actor *auth.User
			in    auth.UserInput
			kind  errs.Kind
			code  string
		}{
			{"create without email", f.super, auth.UserInput{Name: str("X")}, errs.Invalid, "parameter_missing"},
			{"create with blank email", f.super, auth.UserInput{Email: str("   ")}, errs.Invalid, "parameter_missing"},
			{"malformed email", f.super, auth.UserInput{Email: str("not an email")}, errs.Invalid, "email_not_valid"},
			{"display-name email", f.super, auth.UserInput{Email: str("Bob <bob@example.org>")}, errs.Invalid, "email_not_valid"},
			{"short password", f.super, auth.UserInput{Email: str("n@example.org"), Password: str("short")}, errs.Invalid, "password_too_short"},
			{"password over 72 bytes", f.super, auth.UserInput{Email: str("n@example.org"), Password: str(strings.Repeat("p", 73))}, errs.Invalid, "password_too_long"},
			{"unknown privilege", f.super, auth.UserInput{Email: str("n@example.org"), Privilege: num(5)}, errs.Invalid, "invalid_privilege"},
			{"privilege zero", f.super, auth.UserInput{Email: str("n@example.org"), Privilege: num(0)}, errs.Invalid, "invalid_privilege"},
			{"unknown provider", f.super, auth.UserInput{Email: str("n@example.org"), OAuthProvider: str("github"), OAuthSub: str("1")}, errs.Invalid, "invalid_oauth_provider"},
			{"sub without provider", f.super, auth.UserInput{Email: str("n@example.org"), OAuthSub: str("1")}, errs.Invalid, "oauth_identity_incomplete"},
			{"provider without sub", f.super, auth.UserInput{Email: str("n@example.org"), OAuthProvider: str("idp_b")}, errs.Invalid, "oauth_identity_incomplete"},
			{"clearing only the sub", f.super, auth.UserInput{ID: linked.ID, OAuthSub: str("")}, errs.Invalid, "oauth_identity_incomplete"},
			{"duplicate email in another case", f.super, auth.UserInput{Email: str("  ADA@Example.ORG ")}, errs.Conflict, "email_present"},
			{"email of another account on update", f.super, auth.UserInput{ID: reader.ID, Email: str("Ada@example.org")}, errs.Conflict, "email_present"},
			{"identity linked elsewhere on create", f.super, auth.UserInput{Email: str("n@example.org"), OAuthProvider: str("idp_a"), OAuthSub: str("sub-1")}, errs.Conflict, "oauth_identity_already_linked"},
			{"identity linked elsewhere on update", f.super, auth.UserInput{ID: reader.ID, OAuthProvider: str("idp_a"), OAuthSub: str("sub-1")}, errs.Conflict, "oauth_identity_already_linked"},
			{"admin creates a super_admin", f.admin, auth.UserInput{Email: str("n@example.org"), Privilege: num(auth.SuperAdmin)}, errs.Forbidden, "not_enough_privilege"},
			{"admin raises itself", f.admin, auth.UserInput{ID: f.admin.ID, Privilege: num(auth.SuperAdmin)}, errs.Forbidden, "not_enough_privilege"},
			{"admin raises a reader to super_admin", f.admin, auth.UserInput{ID: reader.ID, Privilege: num(auth.SuperAdmin)}, errs.Forbidden, "not_enough_privilege"},
			{"admin renames a super_admin", f.admin, auth.UserInput{ID: f.super.ID, Name: str("Owned")}, errs.Forbidden, "not_enough_privilege"},
			{"admin demotes a super_admin", f.admin, auth.UserInput{ID: f.super.ID, Privilege: num(auth.Pending)}, errs.Forbidden, "not_enough_privilege"},
			{"last super_admin demotes itself", f.super, auth.UserInput{ID: f.super.ID, Privilege: num(auth.Admin)}, errs.Conflict, "last_super_admin"},
			{"unknown id", f.super, auth.UserInput{ID: 999999, Name: str("Ghost")}, errs.NotFound, "user_not_found"},
		} {
			t.Run(c.name, func(t *testing.T) {
				_, _, err := auth.SaveUser(ctx, f.app.DB, actorFor(c.actor), c.in, testCost, now)
				wantCode(t, err, c.kind, c.code)
			})
		}
		if after := snapshotUsers(t, f.app.DB); before != after {
			t.Fatalf("refused saves changed the users:\nbefore %v\nafter  %v", before, after)
		}
	})
}

// snapshotUsers renders every stored column of every account.
func snapshotUsers(t *testing.T, db *store.DB) string {
	t.Helper()
	var users []auth.User
	if err := db.Gorm.Order("id").Find(&users).Error; err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	deref := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, u := range users {
		fmt.Fprintf(&b, "%d|%s|%s|%s|%d|%s|%s|%d|%s\n", u.ID, u.Name, u.Email, u.Password, u.Privilege,
			deref(u.OAuthProvider), deref(u.OAuthSub), u.TokenVersion, u.UpdatedAt.Format(time.RFC3339Nano))
	}
	return b.String()
}

func TestSaveUserCreatesAndPatches(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		authn, err := auth.NewAuthenticator(testCost, nil)
		if err != nil {
			t.Fatal(err)
		}

		// Without password: pending, normalised email, an inert hash no
		// password opens.
		id, created, err := auth.SaveUser(ctx, f.app.DB, actorFor(f.admin), auth.UserInput{Name: str(" Nora "), Email: str(" Nora@Example.org ")}, testCost, now)
		if err != nil || !created {
			t.Fatalf("create: %v created %v", err, created)
		}
		u := mustFind(t, f.app.DB, id)
		if u.Email != "nora@example.org" || u.Name != "Nora" || u.Privilege != auth.Pending || u.TokenVersion != 1 ||
			u.OAuthProvider != nil || u.OAuthSub != nil || !strings.HasPrefix(u.Password, "$2") {
			t.Fatalf("created %+v", u)
		}
		if _, err := authn.Login(ctx, f.app.DB, "nora@example.org", ""); err == nil {
			t.Fatal("an inert hash let an empty password in")
		}

		// With password: bcrypt at the given cost, and login works.
		id2, _, err := auth.SaveUser(ctx, f.app.DB, actorFor(f.admin), auth.UserInput{Email: str("w@example.org"),
			Password: str("long enough"), Privilege: num(auth.Writer), OAuthProvider: str("idp_b"), OAuthSub: str("0000-0001")}, testCost, now)
		if err != nil {
			t.Fatal(err)
		}
		w := mustFind(t, f.app.DB, id2)
		if cost, err := bcrypt.Cost([]byte(w.Password)); err != nil || cost != testCost {
			t.Fatalf("hash cost %d, %v", cost, err)
		}
		if _, err := authn.Login(ctx, f.app.DB, "w@example.org", "long enough"); err != nil {
			t.Fatalf("login with the admin-set password: %v", err)
		}
		if w.OAuthProvider == nil || *w.OAuthProvider != "idp_b" || *w.OAuthSub != "0000-0001" {
			t.Fatalf("identity %v %v", w.OAuthProvider, w.OAuthSub)
		}

		// An update touches only what was sent and keeps the tokens.
		_, created, err = auth.SaveUser(ctx, f.app.DB, actorFor(f.admin), auth.UserInput{ID: id2, Name: str("Wendy"), Password: str("")}, testCost, now)
		if err != nil || created {
			t.Fatalf("rename: %v created %v", err, created)
		}
		w2 := mustFind(t, f.app.DB, id2)
		if w2.Name != "Wendy" || w2.Email != w.Email || w2.Password != w.Password || w2.Privilege != auth.Writer ||
			w2.TokenVersion != w.TokenVersion || *w2.OAuthSub != "0000-0001" {
			t.Fatalf("partial update changed more than the name: %+v", w2)
		}

		// A privilege change bumps the token version; a new password is
		// re-hashed; null-like empty values clear the identity.
		_, _, err = auth.SaveUser(ctx, f.app.DB, actorFor(f.admin), auth.UserInput{ID: id2, Privilege: num(auth.Reader),
			Password: str("another secret"), OAuthProvider: str(""), OAuthSub: str("")}, testCost, now)
		if err != nil {
			t.Fatal(err)
		}
		w3 := mustFind(t, f.app.DB, id2)
		if w3.Privilege != auth.Reader || w3.TokenVersion != w.TokenVersion+1 || w3.OAuthProvider != nil || w3.OAuthSub != nil {
			t.Fatalf("after privilege change %+v", w3)
		}
		if _, err := authn.Login(ctx, f.app.DB, "w@example.org", "another secret"); err != nil {
			t.Fatalf("login with the new password: %v", err)
		}
		// Sending the same privilege again is no change: tokens survive.
		if _, _, err := auth.SaveUser(ctx, f.app.DB, actorFor(f.admin), auth.UserInput{ID: id2, Privilege: num(auth.Reader)}, testCost, now); err != nil {
			t.Fatal(err)
		}
		if v := mustFind(t, f.app.DB, id2).TokenVersion; v != w3.TokenVersion {
			t.Fatalf("unchanged privilege bumped the token version to %d", v)
		}

		// A super_admin may step down once another one exists.
		_, _, err = auth.SaveUser(ctx, f.app.DB, actorFor(f.super), auth.UserInput{ID: f.admin.ID, Privilege: num(auth.SuperAdmin)}, testCost, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := auth.SaveUser(ctx, f.app.DB, actorFor(f.super), auth.UserInput{ID: f.super.ID, Privilege: num(auth.Admin)}, testCost, now); err != nil {
			t.Fatalf("second-to-last super_admin stepping down: %v", err)
		}
	})
}

func TestListUsersCountsOverrides(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		reader := testenv.NewUser(t, f.app, "Reader", "reader@example.org", auth.Reader)
		for _, tb := range []string{"finds", "sites", "contexts"} {
			if _, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), reader.ID, tb, auth.Writer, nil, now, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), f.admin.ID, "finds", auth.Reader, json.RawMessage("null"), now, nil); err != nil {
			t.Fatal(err)
		}
		users, err := auth.ListUsers(ctx, f.app.DB)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, u := range users {
			got[u.Email] = u.OverrideCount
		}
		want := map[string]int{"admin@example.org": 0, "ada@example.org": 1, "reader@example.org": 3}
		if fmt.Sprint(got) != fmt.Sprint(want) || users[0].ID != f.super.ID {
			t.Fatalf("users %+v", users)
		}
		one, err := auth.GetUserSummary(ctx, f.app.DB, reader.ID)
		if err != nil || one.OverrideCount != 3 || one.Email != "reader@example.org" || one.Privilege != auth.Reader {
			t.Fatalf("summary %+v, %v", one, err)
		}
		_, err = auth.GetUserSummary(ctx, f.app.DB, 424242)
		wantCode(t, err, errs.NotFound, "user_not_found")
	})
}

// Two super_admins demoting (or deleting) each other at the same moment:
// the rule is checked under a lock, so exactly one wins and one
// super_admin remains.
func TestConcurrentDemotionsKeepOneSuperAdmin(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx := t.Context()
		for round := range 6 {
			// Start each round with exactly two fresh super_admins.
			if err := f.app.DB.Gorm.Model(&auth.User{}).Where("privilege = ?", auth.SuperAdmin).Update("privilege", auth.Admin).Error; err != nil {
				t.Fatal(err)
			}
			both := []*auth.User{
				testenv.NewUser(t, f.app, "A", fmt.Sprintf("a%d@example.org", round), auth.SuperAdmin),
				testenv.NewUser(t, f.app, "B", fmt.Sprintf("b%d@example.org", round), auth.SuperAdmin),
			}
			deleting := round%2 == 1
			results := make([]error, 2)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i, target := range both {
				actor := actorFor(both[1-i])
				wg.Go(func() {
					<-start
					if deleting {
						results[i] = auth.DeleteUser(ctx, f.app.DB, actor, target.ID)
						return
					}
					_, _, results[i] = auth.SaveUser(ctx, f.app.DB, actor, auth.UserInput{ID: target.ID, Privilege: num(auth.Admin)}, testCost, time.Now().UTC())
				})
			}
			close(start)
			wg.Wait()
			refused := 0
			for _, err := range results {
				if err != nil {
					wantCode(t, err, errs.Conflict, "last_super_admin")
					refused++
				}
			}
			if refused != 1 {
				t.Fatalf("round %d (delete %v): %d of 2 refused, want exactly 1", round, deleting, refused)
			}
			if n := countSuperAdmins(t, f.app.DB); n != 1 {
				t.Fatalf("round %d: %d super_admins left", round, n)
			}
		}
	})
}

func countSuperAdmins(t *testing.T, db *store.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT COUNT(*) FROM `+db.Sys("users")+` WHERE privilege = ?`, auth.SuperAdmin).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeleteUserAndRevokeTokens(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		writer := testenv.NewUser(t, f.app, "Writer", "writer@example.org", auth.Writer)
		if _, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.admin), writer.ID, "finds", auth.Reader, nil, now, nil); err != nil {
			t.Fatal(err)
		}
		key, _, err := auth.IssueAPIKey(ctx, f.app.DB, actorFor(writer), "by writer", auth.Writer, now)
		if err != nil || key.CreatedBy == nil || *key.CreatedBy != writer.ID {
			t.Fatalf("key %+v, %v", key, err)
		}

		wantCode(t, auth.RevokeTokens(ctx, f.app.DB, actorFor(f.admin), f.super.ID, now), errs.Forbidden, "not_enough_privilege")
		wantCode(t, auth.RevokeTokens(ctx, f.app.DB, actorFor(f.admin), 99999, now), errs.NotFound, "user_not_found")
		if err := auth.RevokeTokens(ctx, f.app.DB, actorFor(f.admin), writer.ID, now); err != nil {
			t.Fatal(err)
		}
		if v := mustFind(t, f.app.DB, writer.ID).TokenVersion; v != writer.TokenVersion+1 {
			t.Fatalf("token version %d after revoke", v)
		}

		wantCode(t, auth.DeleteUser(ctx, f.app.DB, actorFor(f.admin), f.super.ID), errs.Forbidden, "not_enough_privilege")
		wantCode(t, auth.DeleteUser(ctx, f.app.DB, actorFor(f.super), f.super.ID), errs.Conflict, "last_super_admin")
		wantCode(t, auth.DeleteUser(ctx, f.app.DB, actorFor(f.super), 99999), errs.NotFound, "user_not_found")
		if err := auth.DeleteUser(ctx, f.app.DB, actorFor(f.admin), writer.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := auth.FindUser(ctx, f.app.DB, writer.ID); !errors.Is(err, auth.ErrUserNotFound) {
			t.Fatalf("deleted user still found: %v", err)
		}
		// Overrides go with the account; keys it created stay, creatorless.
		privs, err := auth.ListTablePrivileges(ctx, f.app.DB, writer.ID)
		if err != nil || len(privs) != 0 {
			t.Fatalf("overrides left: %v %v", privs, err)
		}
		keys, err := auth.ListAPIKeys(ctx, f.app.DB)
		if err != nil || len(keys) != 1 || keys[0].CreatedBy != nil {
			t.Fatalf("keys after deleting their creator: %+v %v", keys, err)
		}
	})
}

func TestGrantsNeverExceedTheActor(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newAdminFixture(t, e)
		ctx, now := t.Context(), time.Now().UTC()
		reader := testenv.NewUser(t, f.app, "Reader", "reader@example.org", auth.Reader)
		writerActor := &auth.Actor{UserID: 777, Privilege: auth.Writer}
		keyActor := &auth.Actor{KeyID: 5, Privilege: auth.Admin}

		for _, c := range []struct {
			name string
			err  func() error
			kind errs.Kind
			code string
		}{
			{"a subset the catalog check refuses", func() error {
				refuse := func(string, json.RawMessage) (bool, error) {
					return false, errs.New(errs.Invalid, "invalid_subset", "unknown field")
				}
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), reader.ID, "finds", auth.Writer, json.RawMessage(`{"nope":{"_eq":"A"}}`), now, refuse)
				return err
			}, errs.Invalid, "invalid_subset"},
			{"an SQL subset set by an admin", func() error {
				sqlForm := func(string, json.RawMessage) (bool, error) { return true, nil }
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.admin), reader.ID, "finds", auth.Writer, json.RawMessage(`"site = 'A'"`), now, sqlForm)
				return err
			}, errs.Forbidden, "not_enough_privilege"},
			{"override above the actor", func() error {
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, writerActor, reader.ID, "finds", auth.Admin, nil, now, nil)
				return err
			}, errs.Forbidden, "not_enough_privilege"},
			{"override on a more powerful account", func() error {
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.admin), f.super.ID, "finds", auth.Reader, nil, now, nil)
				return err
			}, errs.Forbidden, "not_enough_privilege"},
			{"override at super_admin", func() error {
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), reader.ID, "finds", auth.SuperAdmin, nil, now, nil)
				return err
			}, errs.Invalid, "invalid_privilege"},
			{"override on a system table", func() error {
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), reader.ID, "sys_users", auth.Reader, nil, now, nil)
				return err
			}, errs.Invalid, "invalid_table"},
			{"override for an unknown user", func() error {
				_, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), 99999, "finds", auth.Reader, nil, now, nil)
				return err
			}, errs.NotFound, "user_not_found"},
			{"key above the actor", func() error {
				_, _, err := auth.IssueAPIKey(ctx, f.app.DB, writerActor, "k", auth.Admin, now)
				return err
			}, errs.Forbidden, "not_enough_privilege"},
			{"key at super_admin", func() error {
				_, _, err := auth.IssueAPIKey(ctx, f.app.DB, actorFor(f.super), "k", auth.SuperAdmin, now)
				return err
			}, errs.Invalid, "invalid_privilege"},
			{"key without label", func() error {
				_, _, err := auth.IssueAPIKey(ctx, f.app.DB, actorFor(f.super), "  ", auth.Reader, now)
				return err
			}, errs.Invalid, "parameter_missing"},
		} {
			t.Run(c.name, func(t *testing.T) { wantCode(t, c.err(), c.kind, c.code) })
		}
		if privs, _ := auth.ListTablePrivileges(ctx, f.app.DB, reader.ID); len(privs) != 0 {
			t.Fatalf("refused grants wrote %v", privs)
		}
		if keys, _ := auth.ListAPIKeys(ctx, f.app.DB); len(keys) != 0 {
			t.Fatalf("refused keys were stored: %v", keys)
		}

		// A key's creator is recorded only for users.
		k, plain, err := auth.IssueAPIKey(ctx, f.app.DB, keyActor, "from a key", auth.Reader, now)
		if err != nil || k.CreatedBy != nil || !strings.HasPrefix(plain, auth.APIKeyPrefix) {
			t.Fatalf("key by key: %+v %q %v", k, plain, err)
		}

		// The upsert keeps one row per (user, table).
		first, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.admin), reader.ID, "finds", auth.Writer, nil, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.admin), reader.ID, "finds", auth.Pending, nil, now, nil)
		if err != nil || again.ID != first.ID || again.Privilege != auth.Pending {
			t.Fatalf("upsert: %+v %v (first id %d)", again, err, first.ID)
		}
		wantCode(t, auth.RemoveTablePrivilege(ctx, f.app.DB, actorFor(f.admin), 99999), errs.NotFound, "not_found")
		superOverride, err := auth.GrantTablePrivilege(ctx, f.app.DB, actorFor(f.super), f.super.ID, "finds", auth.Reader, nil, now, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, auth.RemoveTablePrivilege(ctx, f.app.DB, actorFor(f.admin), superOverride.ID), errs.Forbidden, "not_enough_privilege")
		if err := auth.RemoveTablePrivilege(ctx, f.app.DB, actorFor(f.admin), first.ID); err != nil {
			t.Fatal(err)
		}
	})
}
