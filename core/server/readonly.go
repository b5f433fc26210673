package server

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// A request decides who may do what from cached catalogs and accounts,
// valid while the app's catalog and access versions are those they were
// read at (versions_cache.go). Reading the versions first costs a round
// trip of its own on PostgreSQL, before the read's own batch. A read-only
// route (api.Route.ReadOnly) instead runs on the versions this server
// last saw for the app, and its first pipelined batch reads them again as
// its first statement (store.Assumed); a full record's statement reads
// them with its row, and on SQLite, where there are no batches, a list's
// page with its first row (store.AssumedIn); other reads on SQLite at
// their end. The
// answer is held back until they are known to be the assumed ones. When
// they have moved (a change made by this node, another node, the command
// line or a restore), or could not be checked, the answer is thrown away
// and the request runs again on the versions as they now are, exactly as
// one that read them first. Nothing is sent, written or logged by the
// first run.
//
// A save (api.Route.Replayable) runs the same way: its transaction reads
// the versions as its first statement, sent with BEGIN and its first
// writes, and fails when they moved, so nothing of the first run is
// committed; a plugin's hook waits until they are known to hold
// (store.Confirm). The body is read before the first run and given again
// to the second.

// versionKeys are the counters a request's caches depend on, in the
// order of versions' fields.
var versionKeys = []string{schema.SettingCatalogVersion, auth.SettingAuthVersion}

// seenVersions are the versions last read for each open app's database.
type seenVersions struct {
	mu sync.Mutex
	m  map[*store.DB]versions
}

// saw records v as read for db. Versions only grow: an older reading
// (a request that read them earlier and finished later) is ignored.
func (sv *seenVersions) saw(db *store.DB, v versions) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.m == nil {
		sv.m = map[*store.DB]versions{}
	}
	old, ok := sv.m[db]
	if ok && old.catalog >= v.catalog && old.auth >= v.auth {
		return
	}
	if !ok && len(sv.m) >= maxSeenApps {
		clear(sv.m)
	}
	sv.m[db] = versions{catalog: max(old.catalog, v.catalog), auth: max(old.auth, v.auth)}
}

// maxSeenApps bounds the map; past it, it starts again empty.
const maxSeenApps = 10000

func (sv *seenVersions) get(db *store.DB) (versions, bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	v, ok := sv.m[db]
	return v, ok
}

// readOnly runs a read-only route: identification, privilege check and
// handler, on assumed versions when the request qualifies (assume), else
// as the middleware chain would.
func (s *Server) readOnly(r Route) gin.HandlerFunc {
	run := func(c *gin.Context) {
		if s.admit(c, r.SignedLink, r.Access, r.TableQuery) {
			r.Handler(c)
		}
	}
	return func(c *gin.Context) {
		assumed, v := s.assume(c, r)
		if assumed == nil {
			run(c)
			return
		}
		body, ok := readBody(c)
		if !ok {
			run(c)
			return
		}
		req, keys := c.Request, maps.Clone(c.Keys)
		held := api.Hold(c.Writer)
		func() {
			// Restored whatever happens (a panic is answered on the
			// real writer by recoverPanics).
			defer func() { c.Writer, c.Request = held.ResponseWriter, req }()
			c.Writer = held
			c.Request = req.WithContext(store.WithAssumed(req.Context(), assumed))
			body.give(c.Request)
			c.Set(ctxVersions, v)
			run(c)
		}()
		ok, got, err := assumed.Check(req.Context())
		if err == nil {
			s.seen.saw(appOf(c).DB, versions{catalog: got[0], auth: got[1]})
		}
		if err == nil && ok {
			held.Release()
			return
		}
		// Run again from what the request held before the first run, on
		// the versions just read (no need to read them once more).
		c.Keys = keys
		c.Errors = c.Errors[:0]
		if err == nil {
			c.Set(ctxVersions, versions{catalog: got[0], auth: got[1]})
		}
		body.give(c.Request)
		run(c)
	}
}

// heldBody is a request's body, read before a run that may be done again.
type heldBody struct {
	b   []byte
	has bool
}

// readBody reads the body of a request that has one (ok is false, and the
// body is as it was, when it could not be read: too large, too slow; the
// handler then meets the same error on a run that is not repeated).
func readBody(c *gin.Context) (heldBody, bool) {
	r := c.Request
	if r.Body == nil || r.Body == http.NoBody {
		return heldBody{}, true
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
		return heldBody{}, false
	}
	return heldBody{b: b, has: true}, true
}

// give makes r's body the held one, from its start.
func (h heldBody) give(r *http.Request) {
	if h.has {
		r.Body = io.NopCloser(bytes.NewReader(h.b))
	}
}

// errReader fails every read with its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// assume is the assumption a request runs on, with the versions assumed:
// nil for a request that must read them first. Only a GET, or a POST of a
// replayable route, with a session token qualifies (an API key's use is
// recorded, a write), on an app whose versions this server has read
// before, on PostgreSQL outside tests' one-by-one mode (where a pipeline
// is no single round trip).
func (s *Server) assume(c *gin.Context, r Route) (*store.Assumed, versions) {
	if m := c.Request.Method; m != http.MethodGet && !(m == http.MethodPost && r.Replayable) {
		return nil, versions{}
	}
	cred := bearer(c.GetHeader("Authorization"))
	if cred == "" || auth.IsAPIKey(cred) {
		return nil, versions{}
	}
	db := appOf(c).DB
	v, ok := s.seen.get(db)
	if !ok {
		return nil, versions{}
	}
	ctx := c.Request.Context()
	// On SQLite a read checks them with its first statement's row where
	// it can (store.AssumedIn), else at the end; a save's transaction
	// would read them as a statement of its own, as it would without.
	sqliteRead := db.Engine == store.SQLite && c.Request.Method == http.MethodGet && !store.Unpipelined(ctx)
	if !db.Pipeline().Pipelined(ctx) && !sqliteRead {
		return nil, versions{}
	}
	return db.Assume(versionKeys, []int64{v.catalog, v.auth}), v
}
