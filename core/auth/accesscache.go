package auth

import (
	"context"
	"errors"
	"sync"

	"github.com/strata-archaeo/strata/core/store"
)

// SettingAuthVersion is the sys_settings key that database triggers move
// whenever a user's name, email, privilege or token version changes, a
// user is deleted or a per-table override changes (migration 0014).
const SettingAuthVersion = "auth_version"

// Grants is what a request's access is decided from: the account as it is
// now and its per-table overrides.
type Grants struct {
	User      *User
	Overrides []TablePrivilege
	notFound  bool
	atVersion int64
}

// AccessCache keeps Grants per (app, user) for one auth version, so a
// request costs one query (the versions, read with the catalog's) instead
// of three. The privilege used for decisions is still the database's
// (CONTRACT §3): any change moves the version, on this node or another,
// and the next request reloads.
type AccessCache struct {
	mu sync.Mutex
	m  map[accessKey]*Grants
}

type accessKey struct {
	app  string
	user int64
}

// maxCachedAccess bounds the cache; past it, it starts again empty.
const maxCachedAccess = 10000

// NewAccessCache returns an empty cache.
func NewAccessCache() *AccessCache { return &AccessCache{m: map[accessKey]*Grants{}} }

// Get is user id's Grants in app at auth version (which the caller has
// just read): ErrUserNotFound when the account does not exist.
func (c *AccessCache) Get(ctx context.Context, app string, db *store.DB, id int64, version int64) (*Grants, error) {
	key := accessKey{app, id}
	c.mu.Lock()
	a := c.m[key]
	c.mu.Unlock()
	if a == nil || a.atVersion != version {
		// Loaded after the version was read, so never older than it: a
		// change in between moves the version again and forces a reload.
		a = &Grants{atVersion: version}
		u, err := FindUser(ctx, db, id)
		switch {
		case errors.Is(err, ErrUserNotFound):
			a.notFound = true
		case err != nil:
			return nil, err
		default:
			a.User = u
			if a.Overrides, err = ListTablePrivileges(ctx, db, id); err != nil {
				return nil, err
			}
		}
		c.mu.Lock()
		if len(c.m) >= maxCachedAccess {
			clear(c.m)
		}
		c.m[key] = a
		c.mu.Unlock()
	}
	if a.notFound {
		return nil, ErrUserNotFound
	}
	return a, nil
}
