package freesql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-archaeo/strata/core/store"
)

// Session unlocks (issue 29). BraDypUS's client confirms the password with
// POST /free-sql/verify and then sends POST /free-sql/run {sql} with no
// token: its server keeps no confirmation at all (the gate is the client's
// own). Strata keeps the confirmation on the server instead, for the
// session that made it: a successful verify unlocks free SQL for that
// session token, and a run of the same session without sql_token is
// allowed while the unlock lasts.
//
// An unlock is keyed by a hash of the app and the session token itself
// (every token carries a random jti, so two sign-ins are two sessions)
// and remembers the user and token version it was made for, which a run
// must still present. So it ends with the session: sign-out
// (GET /auth/logout drops it), revoke, a password or privilege change
// (each bumps the token version, and the token is refused), a refresh
// (a new token is a new session). It lives on the server only: the
// client neither reads nor sends anything for it.
//
// It lasts UnlockIdle after the verify or the last run it allowed (like
// sudo's timestamp, an active user is not interrupted, one who walked
// away must confirm again), and never more than UnlockMax after the
// verify.
const (
	UnlockIdle = 10 * time.Minute
	UnlockMax  = time.Hour
)

// Session is the caller of a request as an unlock knows it: a session
// token's user, never an API key (which has no password to confirm).
type Session struct {
	App          string
	Token        string // the bearer session token
	UserID       int64
	TokenVersion int
}

func (s Session) key() string {
	h := sha256.Sum256([]byte("strata-free-sql-unlock\x00" + s.App + "\x00" + s.Token))
	return hex.EncodeToString(h[:])
}

// Unlocks keeps the sessions that confirmed their password. now always
// comes from the server's clock, so tests can move it.
type Unlocks interface {
	// Grant unlocks s from now.
	Grant(ctx context.Context, s Session, now time.Time) error
	// Use reports whether s is unlocked at now and, when it is, extends
	// the unlock to now+UnlockIdle (within UnlockMax of the verify).
	Use(ctx context.Context, s Session, now time.Time) (bool, error)
	// End drops the unlock of the session token of app, if any.
	End(ctx context.Context, app, token string) error
}

// UnlocksFor is where backend b keeps unlocks: on PostgreSQL, which several
// nodes may share, a table in the instance's service schema
// <namespace>__freesql, so a verify on one node unlocks the runs another
// node answers; on SQLite (one node, DESIGN §8) the node's memory.
func UnlocksFor(b store.Backend) Unlocks {
	if pg, ok := b.(*store.PostgresBackend); ok {
		return NewPostgresUnlocks(pg.Pool(), pg.ServiceSchema("freesql"))
	}
	return NewMemoryUnlocks()
}

// deadline is when an unlock verified at verified ends if used at now.
func deadline(verified, now time.Time) time.Time {
	end := now.Add(UnlockIdle)
	if max := verified.Add(UnlockMax); max.Before(end) {
		end = max
	}
	return end
}

// memoryUnlocks: the unlocks of a one-node server.
type memoryUnlocks struct {
	mu        sync.Mutex
	m         map[string]memoryUnlock
	nextSweep time.Time
}

type memoryUnlock struct {
	userID       int64
	tokenVersion int
	verified     time.Time
	expires      time.Time
}

// NewMemoryUnlocks keeps unlocks in this process's memory.
func NewMemoryUnlocks() Unlocks { return &memoryUnlocks{m: map[string]memoryUnlock{}} }

func (u *memoryUnlocks) Grant(_ context.Context, s Session, now time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	// Expired unlocks are dropped at most once an idle window, so the map
	// holds only the sessions unlocked within the last UnlockMax.
	if !now.Before(u.nextSweep) {
		u.nextSweep = now.Add(UnlockIdle)
		for k, e := range u.m {
			if !now.Before(e.expires) {
				delete(u.m, k)
			}
		}
	}
	u.m[s.key()] = memoryUnlock{userID: s.UserID, tokenVersion: s.TokenVersion, verified: now, expires: deadline(now, now)}
	return nil
}

func (u *memoryUnlocks) Use(_ context.Context, s Session, now time.Time) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := s.key()
	e, ok := u.m[k]
	if !ok || e.userID != s.UserID || e.tokenVersion != s.TokenVersion || !now.Before(e.expires) {
		return false, nil
	}
	e.expires = deadline(e.verified, now)
	u.m[k] = e
	return true, nil
}

func (u *memoryUnlocks) End(_ context.Context, app, token string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.m, Session{App: app, Token: token}.key())
	return nil
}

// postgresUnlocks: the unlocks of the nodes sharing one PostgreSQL.
type postgresUnlocks struct {
	db     *sql.DB
	schema string
	table  string

	readyMu sync.Mutex
	ready   bool

	sweepMu   sync.Mutex
	nextSweep time.Time
}

// NewPostgresUnlocks keeps unlocks in a table of schema on db, made by the
// first verify (so a server that never unlocks leaves no schema behind).
// schema must be a safe identifier chosen by the server (a service schema
// of the backend), never client input.
func NewPostgresUnlocks(db *sql.DB, schema string) Unlocks {
	return &postgresUnlocks{db: db, schema: schema, table: `"` + schema + `"."unlocks"`}
}

// ensure makes the schema and table once per node. Two nodes making them
// at once can collide on the catalog's unique index: the loser tries
// again and finds them made.
func (u *postgresUnlocks) ensure(ctx context.Context) error {
	u.readyMu.Lock()
	defer u.readyMu.Unlock()
	if u.ready {
		return nil
	}
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = u.create(ctx); err == nil {
			u.ready = true
			return nil
		}
	}
	return fmt.Errorf("free sql unlocks: %w", err)
}

func (u *postgresUnlocks) create(ctx context.Context) error {
	for _, stmt := range []string{
		`CREATE SCHEMA IF NOT EXISTS "` + u.schema + `"`,
		`CREATE TABLE IF NOT EXISTS ` + u.table + ` (k text PRIMARY KEY, user_id bigint NOT NULL, token_version integer NOT NULL,
 verified_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)`,
	} {
		if _, err := u.db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// missing: the table is not made yet (no verify on any node), so nothing
// is unlocked.
func missing(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "42P01" || pg.Code == "3F000") // undefined_table, invalid_schema_name
}

func (u *postgresUnlocks) Grant(ctx context.Context, s Session, now time.Time) error {
	if err := u.ensure(ctx); err != nil {
		return err
	}
	u.sweep(ctx, now)
	_, err := u.db.ExecContext(ctx, `INSERT INTO `+u.table+` (k, user_id, token_version, verified_at, expires_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (k) DO UPDATE SET user_id = EXCLUDED.user_id, token_version = EXCLUDED.token_version,
 verified_at = EXCLUDED.verified_at, expires_at = EXCLUDED.expires_at`,
		s.key(), s.UserID, s.TokenVersion, now, deadline(now, now))
	if err != nil {
		return fmt.Errorf("free sql unlock: %w", err)
	}
	return nil
}

// Use checks and extends in one statement, so two nodes answering runs
// of one session at once cannot extend an unlock that has just ended.
func (u *postgresUnlocks) Use(ctx context.Context, s Session, now time.Time) (bool, error) {
	res, err := u.db.ExecContext(ctx, `UPDATE `+u.table+`
 SET expires_at = least($4::timestamptz + $5 * interval '1 microsecond', verified_at + $6 * interval '1 microsecond')
 WHERE k = $1 AND user_id = $2 AND token_version = $3 AND expires_at > $4::timestamptz`,
		s.key(), s.UserID, s.TokenVersion, now, UnlockIdle.Microseconds(), UnlockMax.Microseconds())
	if missing(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("free sql unlock: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func (u *postgresUnlocks) End(ctx context.Context, app, token string) error {
	_, err := u.db.ExecContext(ctx, `DELETE FROM `+u.table+` WHERE k = $1`, Session{App: app, Token: token}.key())
	if err != nil && !missing(err) {
		return fmt.Errorf("free sql unlock: %w", err)
	}
	return nil
}

// sweep drops the ended unlocks, at most once an idle window per node:
// the table holds only the sessions unlocked within the last UnlockMax.
func (u *postgresUnlocks) sweep(ctx context.Context, now time.Time) {
	u.sweepMu.Lock()
	due := !now.Before(u.nextSweep)
	if due {
		u.nextSweep = now.Add(UnlockIdle)
	}
	u.sweepMu.Unlock()
	if due {
		// A failed sweep leaves rows that Use refuses anyway (expired);
		// the next one removes them.
		_, _ = u.db.ExecContext(ctx, `DELETE FROM `+u.table+` WHERE expires_at <= $1`, now)
	}
}
