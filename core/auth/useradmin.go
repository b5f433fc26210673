package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// adminOAuthProviders are the provider slugs an account may be linked to
// (SPEC §2.4); apps.OAuthProviders is the same list, but apps imports auth.
var adminOAuthProviders = map[string]bool{"idp_a": true, "idp_b": true}

// emailUniqueIndex is the index of migration 0001 that keeps emails unique;
// PostgreSQL names it in a violation, which tells it from the OAuth index.
const emailUniqueIndex = "sys_users_email_uq"

// Errors of user, table-privilege and API-key administration (CONTRACT §4).
var (
	ErrLastSuperAdmin         = errs.New(errs.Conflict, "last_super_admin", "the last super_admin cannot be demoted or deleted")
	ErrUserEmailPresent       = errs.New(errs.Conflict, "email_present", "another account already uses this email")
	ErrUserOAuthIdentityTaken = errs.New(errs.Conflict, "oauth_identity_already_linked", "this external identity is already linked to another account")
	ErrUserPrivilegeInvalid   = errs.New(errs.Invalid, "invalid_privilege", "privilege is one of 1, 10, 20, 25, 30, 40")
	ErrUserEmailMissing       = errs.New(errs.Invalid, "parameter_missing", "email is required").With("parameter", "email")
	ErrOAuthProviderInvalid   = errs.New(errs.Invalid, "invalid_oauth_provider", "oauth_provider is idp_a, idp_b or empty")
	ErrOAuthIdentityPartial   = errs.New(errs.Invalid, "oauth_identity_incomplete", "oauth_provider and oauth_sub are set, or cleared, together")
	ErrSQLSubsetSuperAdmin    = ErrNotEnoughPrivilege.With("reason", "sql_subset_needs_super_admin")
	ErrPrivilegeAboveOwn      = ErrNotEnoughPrivilege.With("reason", "privilege_above_own")
	ErrTargetMorePowerful     = ErrNotEnoughPrivilege.With("reason", "target_more_powerful")
)

// UserSummary is an account as user administration shows it.
type UserSummary struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	Email         string  `json:"email"`
	Privilege     int     `json:"privilege"`
	OAuthProvider *string `json:"oauth_provider"`
	OAuthSub      *string `json:"oauth_sub"`
	OverrideCount int     `json:"override_count"`
}

// CanManageUser reports whether actor may edit, delete or revoke an account
// at targetPrivilege: only at an equal or more powerful level, so an admin
// never acts on a super_admin.
func CanManageUser(actor *Actor, targetPrivilege int) bool { return actor.Privilege <= targetPrivilege }

// mayGrantLevel reports whether actor may hand out level: never one more
// powerful than its own.
func mayGrantLevel(actor *Actor, level int) bool { return actor.Privilege <= level }

// userSummaryQuery reads accounts with their override counts in one statement;
// the count comes from a grouped subquery so listing N users costs one
// round trip, not N+1.
func userSummaryQuery(db *store.DB, where string) string {
	return `SELECT u.id, u.name, u.email, u.privilege, u.oauth_provider, u.oauth_sub, COALESCE(c.n, 0)
FROM ` + db.Sys("users") + ` u
LEFT JOIN (SELECT user_id, COUNT(*) AS n FROM ` + db.Sys("table_privileges") + ` GROUP BY user_id) c ON c.user_id = u.id
` + where + `
ORDER BY u.id`
}

func scanUserSummaries(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
}) ([]UserSummary, error) {
	out := []UserSummary{}
	for rows.Next() {
		var u UserSummary
		if err := rows.Scan(&u.ID, &u.Name, &u.Email, &u.Privilege, &u.OAuthProvider, &u.OAuthSub, &u.OverrideCount); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// ListUsers returns every account ordered by id, with its number of
// per-table overrides.
func ListUsers(ctx context.Context, db *store.DB) ([]UserSummary, error) {
	rows, err := db.Query(ctx, userSummaryQuery(db, ""))
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	out, err := scanUserSummaries(rows)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// GetUserSummary returns one account as ListUsers shows it.
func GetUserSummary(ctx context.Context, db *store.DB, id int64) (*UserSummary, error) {
	rows, err := db.Query(ctx, userSummaryQuery(db, "WHERE u.id = ?"), id)
	if err != nil {
		return nil, fmt.Errorf("read user %d: %w", id, err)
	}
	defer rows.Close()
	out, err := scanUserSummaries(rows)
	if err != nil {
		return nil, fmt.Errorf("read user %d: %w", id, err)
	}
	if len(out) == 0 {
		return nil, ErrUserNotFound
	}
	return &out[0], nil
}

// UserInput is a create (ID 0) or a partial update of an account: a nil
// field was not sent and is left as it is. An empty Password counts as not
// sent, since forms send the empty field when the password is not changed;
// an empty OAuthProvider or OAuthSub clears it.
type UserInput struct {
	ID            int64
	Name          *string
	Email         *string
	Password      *string
	Privilege     *int
	OAuthProvider *string
	OAuthSub      *string
}

// ownProfile reports whether in changes only the actor's own name, email
// or password.
func (in *UserInput) ownProfile(actor *Actor) bool {
	return actor.UserID != 0 && in.ID == actor.UserID && in.OAuthProvider == nil && in.OAuthSub == nil &&
		(in.Privilege == nil || *in.Privilege == actor.Privilege)
}

// normalize checks the shape of every field sent, so nothing is written
// and no bcrypt work is spent on a request that cannot succeed.
func (in *UserInput) normalize() error {
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
	}
	if in.Email != nil {
		*in.Email = NormalizeEmail(*in.Email)
		if *in.Email == "" {
			return ErrUserEmailMissing
		}
		if err := ValidateEmail(*in.Email); err != nil {
			return err
		}
	} else if in.ID == 0 {
		return ErrUserEmailMissing
	}
	if in.Password != nil && *in.Password == "" {
		in.Password = nil
	}
	if in.Password != nil {
		if err := CheckPasswordRules(*in.Password); err != nil {
			return err
		}
	}
	if in.Privilege != nil && !ValidPrivilege(*in.Privilege) {
		return ErrUserPrivilegeInvalid
	}
	if in.OAuthProvider != nil {
		*in.OAuthProvider = strings.TrimSpace(*in.OAuthProvider)
		if p := *in.OAuthProvider; p != "" && !adminOAuthProviders[p] {
			return ErrOAuthProviderInvalid
		}
	}
	if in.OAuthSub != nil {
		*in.OAuthSub = strings.TrimSpace(*in.OAuthSub)
	}
	return nil
}

// emptyAsNull maps the empty string to NULL.
func emptyAsNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// oauthPairComplete says whether the identity after the change is whole:
// both parts set, or neither.
func oauthPairComplete(provider, sub *string) bool { return (provider == nil) == (sub == nil) }

// SaveUser creates (in.ID == 0) or updates an account on behalf of actor and
// returns its id and whether it was created. The rules of CONTRACT §4: no
// level more powerful than the actor's own is granted, no account more
// powerful than the actor is touched, the last super_admin keeps its level,
// emails and OAuth identities stay unique. A privilege change bumps the
// account's token version, so its existing tokens stop working at once.
// cost is the bcrypt cost of a new password hash.
//
// Below admin, an account may change only its own name, email and
// password (its profile), never its privilege or OAuth identity.
func SaveUser(ctx context.Context, db *store.DB, actor *Actor, in UserInput, cost int, now time.Time) (int64, bool, error) {
	if actor.Privilege > Admin && !in.ownProfile(actor) {
		return 0, false, ErrNotEnoughPrivilege.With("required", AdminOnly.String())
	}
	if err := in.normalize(); err != nil {
		return 0, false, err
	}
	if in.Privilege != nil && !mayGrantLevel(actor, *in.Privilege) {
		return 0, false, ErrPrivilegeAboveOwn
	}
	// Hash before the transaction: bcrypt is slow, and the write lock is
	// held only for the short checks and the write.
	var hash string
	var err error
	switch {
	case in.Password != nil:
		hash, err = HashPassword(*in.Password, cost)
	case in.ID == 0:
		hash, err = InertHash(cost)
	}
	if err != nil {
		return 0, false, err
	}
	if in.ID == 0 {
		id, err := createUser(ctx, db, in, hash, now)
		return id, err == nil, err
	}
	return in.ID, false, db.Tx(ctx, func(tx *store.DB) error {
		return updateUser(ctx, tx, actor, in, hash, now)
	})
}

func createUser(ctx context.Context, db *store.DB, in UserInput, hash string, now time.Time) (int64, error) {
	u := User{Email: *in.Email, Password: hash, Privilege: Pending, TokenVersion: 1, CreatedAt: now, UpdatedAt: now}
	if in.Name != nil {
		u.Name = *in.Name
	}
	if in.Privilege != nil {
		u.Privilege = *in.Privilege
	}
	if in.OAuthProvider != nil {
		u.OAuthProvider = emptyAsNull(*in.OAuthProvider)
	}
	if in.OAuthSub != nil {
		u.OAuthSub = emptyAsNull(*in.OAuthSub)
	}
	if !oauthPairComplete(u.OAuthProvider, u.OAuthSub) {
		return 0, ErrOAuthIdentityPartial
	}
	err := db.Tx(ctx, func(tx *store.DB) error {
		if err := emailFreeFor(ctx, tx, u.Email, 0); err != nil {
			return err
		}
		if err := tx.Gorm.WithContext(ctx).Create(&u).Error; err != nil {
			return userWriteError("create user", err)
		}
		return nil
	})
	return u.ID, err
}

func updateUser(ctx context.Context, tx *store.DB, actor *Actor, in UserInput, hash string, now time.Time) error {
	superAdmins, err := lockSuperAdmins(ctx, tx)
	if err != nil {
		return err
	}
	target, err := lockUserRow(ctx, tx, in.ID)
	if err != nil {
		return err
	}
	if !CanManageUser(actor, target.Privilege) {
		return ErrTargetMorePowerful
	}
	changes := map[string]any{}
	if in.Name != nil {
		changes["name"] = *in.Name
	}
	if in.Email != nil && *in.Email != target.Email {
		if err := emailFreeFor(ctx, tx, *in.Email, target.ID); err != nil {
			return err
		}
		changes["email"] = *in.Email
	}
	if hash != "" {
		// A new password ends every session of the account, on every node
		// (the token version is checked on each request): whoever knew the
		// old one is signed out. The caller changing their own gets a new
		// token in the answer.
		changes["password"] = hash
		changes["token_version"] = gorm.Expr("token_version + 1")
	}
	if in.Privilege != nil && *in.Privilege != target.Privilege {
		if target.Privilege == SuperAdmin && superAdmins <= 1 {
			return ErrLastSuperAdmin
		}
		changes["privilege"] = *in.Privilege
		changes["token_version"] = gorm.Expr("token_version + 1")
	}
	provider, sub := target.OAuthProvider, target.OAuthSub
	if in.OAuthProvider != nil {
		provider = emptyAsNull(*in.OAuthProvider)
		changes["oauth_provider"] = provider
	}
	if in.OAuthSub != nil {
		sub = emptyAsNull(*in.OAuthSub)
		changes["oauth_sub"] = sub
	}
	if !oauthPairComplete(provider, sub) {
		return ErrOAuthIdentityPartial
	}
	if len(changes) == 0 {
		return nil
	}
	changes["updated_at"] = now
	err = tx.Gorm.WithContext(ctx).Model(&User{}).Where("id = ?", target.ID).Updates(changes).Error
	if err != nil {
		return userWriteError("update user", err)
	}
	if _, bumped := changes["token_version"]; bumped {
		return privilegeChanged(ctx, tx, target.ID)
	}
	return nil
}

// DeleteUser removes an account on behalf of actor. Its table overrides go
// with it (ON DELETE CASCADE); API keys it created stay, without creator.
func DeleteUser(ctx context.Context, db *store.DB, actor *Actor, id int64) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		superAdmins, err := lockSuperAdmins(ctx, tx)
		if err != nil {
			return err
		}
		target, err := lockUserRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if !CanManageUser(actor, target.Privilege) {
			return ErrTargetMorePowerful
		}
		if target.Privilege == SuperAdmin && superAdmins <= 1 {
			return ErrLastSuperAdmin
		}
		if err := tx.Gorm.WithContext(ctx).Where("id = ?", id).Delete(&User{}).Error; err != nil {
			return fmt.Errorf("delete user %d: %w", id, err)
		}
		return privilegeChanged(ctx, tx, id)
	})
}

// RevokeTokens bumps an account's token version: every token issued
// before is refused from the next request on.
func RevokeTokens(ctx context.Context, db *store.DB, actor *Actor, id int64, now time.Time) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		target, err := lockUserRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if !CanManageUser(actor, target.Privilege) {
			return ErrTargetMorePowerful
		}
		err = tx.Gorm.WithContext(ctx).Model(&User{}).Where("id = ?", id).
			Updates(map[string]any{"token_version": gorm.Expr("token_version + 1"), "updated_at": now}).Error
		if err != nil {
			return fmt.Errorf("revoke tokens of user %d: %w", id, err)
		}
		return privilegeChanged(ctx, tx, id)
	})
}

// lockSuperAdmins counts the super_admins and, on PostgreSQL, locks their
// rows until the transaction ends. Every change that could remove a
// super_admin takes these locks first, in id order, so two concurrent
// demotions queue: the second one counts again after the first committed
// and finds it is now the last. On SQLite the transaction holds the
// database write lock from BEGIN IMMEDIATE (store.DB.Tx).
func lockSuperAdmins(ctx context.Context, tx *store.DB) (int, error) {
	q := `SELECT id FROM ` + tx.Sys("users") + ` WHERE privilege = ? ORDER BY id`
	if tx.Engine == store.Postgres {
		q += ` FOR UPDATE`
	}
	rows, err := tx.Query(ctx, q, SuperAdmin)
	if err != nil {
		return 0, fmt.Errorf("lock super admins: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("lock super admins: %w", err)
	}
	return n, nil
}

// lockUserRow reads an account inside tx, locked against concurrent changes
// on PostgreSQL.
func lockUserRow(ctx context.Context, tx *store.DB, id int64) (*User, error) {
	q := tx.Gorm.WithContext(ctx)
	if tx.Engine == store.Postgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var u User
	err := q.Where("id = ?", id).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrUserNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read user %d: %w", id, err)
	}
	return &u, nil
}

// emailFreeFor checks, inside the writing transaction, that no account other
// than exceptID uses email. It gives the clear answer on both engines; on
// PostgreSQL the unique index still guards against a concurrent insert.
func emailFreeFor(ctx context.Context, tx *store.DB, email string, exceptID int64) error {
	var n int64
	err := tx.Gorm.WithContext(ctx).Model(&User{}).Where("email = ? AND id <> ?", email, exceptID).Count(&n).Error
	if err != nil {
		return fmt.Errorf("check email: %w", err)
	}
	if n > 0 {
		return ErrUserEmailPresent
	}
	return nil
}

// userWriteError names a unique-index violation on sys_users. SQLite's
// driver reports no index name, but there the email was checked in the same
// transaction under the write lock, so a violation can only be the OAuth
// pair.
func userWriteError(op string, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, gorm.ErrDuplicatedKey) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.ConstraintName == emailUniqueIndex {
		return ErrUserEmailPresent.Wrap(err)
	}
	return ErrUserOAuthIdentityTaken.Wrap(err)
}

// UserTablePrivileges returns the overrides of an existing account.
func UserTablePrivileges(ctx context.Context, db *store.DB, userID int64) ([]TablePrivilege, error) {
	if _, err := FindUser(ctx, db, userID); err != nil {
		return nil, err
	}
	return ListTablePrivileges(ctx, db, userID)
}

// SubsetChecker validates a row subset for a table against the catalog and
// says whether it is the SQL WHERE form (which only a super_admin may set).
// The server supplies it: auth does not know the catalog.
type SubsetChecker func(table string, subset json.RawMessage) (sqlForm bool, err error)

// GrantTablePrivilege upserts the override of (user, table) on behalf of
// actor, with an optional row subset that check validates before anything
// is written.
func GrantTablePrivilege(ctx context.Context, db *store.DB, actor *Actor, userID int64, table string, privilege int, subset json.RawMessage, now time.Time, check SubsetChecker) (*TablePrivilege, error) {
	var stored *string
	if s := strings.TrimSpace(string(subset)); s != "" && s != "null" {
		sqlForm, err := check(table, subset)
		if err != nil {
			return nil, err
		}
		if sqlForm && actor.Privilege != SuperAdmin {
			return nil, ErrSQLSubsetSuperAdmin
		}
		stored = &s
	}
	if !ValidOverridePrivilege(privilege) {
		return nil, ErrOverridePrivilege
	}
	if !mayGrantLevel(actor, privilege) {
		return nil, ErrPrivilegeAboveOwn
	}
	target, err := FindUser(ctx, db, userID)
	if err != nil {
		return nil, err
	}
	if !CanManageUser(actor, target.Privilege) {
		return nil, ErrTargetMorePowerful
	}
	tp := &TablePrivilege{UserID: userID, TableName: table, Privilege: privilege, Subset: stored}
	if err := SaveTablePrivilege(ctx, db, tp, now); err != nil {
		return nil, err
	}
	return tp, nil
}

// RemoveTablePrivilege deletes an override on behalf of actor, who must be
// allowed to manage its account.
func RemoveTablePrivilege(ctx context.Context, db *store.DB, actor *Actor, id int64) error {
	var tp TablePrivilege
	err := db.Gorm.WithContext(ctx).Where("id = ?", id).Take(&tp).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrTablePrivilegeNotFound
	}
	if err != nil {
		return fmt.Errorf("read table privilege %d: %w", id, err)
	}
	target, err := FindUser(ctx, db, tp.UserID)
	if err != nil {
		return err
	}
	if !CanManageUser(actor, target.Privilege) {
		return ErrTargetMorePowerful
	}
	_, err = DeleteTablePrivilege(ctx, db, id)
	return err
}

// IssueAPIKey creates a key on behalf of actor, never more powerful than
// actor itself. The creator is recorded when actor is a user.
func IssueAPIKey(ctx context.Context, db *store.DB, actor *Actor, label string, privilege int, now time.Time) (*APIKey, string, error) {
	if !ValidAPIKeyPrivilege(privilege) {
		return nil, "", ErrAPIKeyPrivilege
	}
	if !mayGrantLevel(actor, privilege) {
		return nil, "", ErrPrivilegeAboveOwn
	}
	var createdBy *int64
	if actor.UserID != 0 {
		id := actor.UserID
		createdBy = &id
	}
	return CreateAPIKey(ctx, db, label, privilege, createdBy, now)
}
