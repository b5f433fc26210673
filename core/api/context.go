package api

import (
	"context"
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// Context keys the server's middleware sets.
const (
	CtxApp   = "strata.app"
	CtxActor = "strata.actor"
	CtxLevel = "strata.level" // effective level for the route's table
)

// AppOf is the application the path names (app routes only).
func AppOf(c *gin.Context) *apps.App { return c.MustGet(CtxApp).(*apps.App) }

// ActorOf is who is calling (app routes with an Access other than Public).
func ActorOf(c *gin.Context) *auth.Actor { return c.MustGet(CtxActor).(*auth.Actor) }

// LevelOf is the privilege level that passed the route's gate: the
// per-table override on routes naming a table, else the global level.
func LevelOf(c *gin.Context) int { return c.GetInt(CtxLevel) }

// Host is what an area asks the server for: things built from the
// server's caches and the caller's grants, which no area should rebuild.
type Host interface {
	// RecordScope is the caller's scope on table (its level there, its
	// row subset, the plugin sections): every records operation goes
	// through one. An unknown table is schema.ErrTableNotFound.
	RecordScope(c *gin.Context, table string) (*records.Scope, error)
	// Catalog is the request's app catalog as the API shows it (hidden
	// system tables left out), from the server's cache.
	Catalog(ctx context.Context, a *apps.App) (*schema.Catalog, error)
	// ListRecords is a page of table's records as GET /records/{tb}
	// answers it, with the list parameters of def (filter, search,
	// sort_field, sort_dir, columns, per_page) and the request's query
	// string for the rest; with check, def is only validated.
	ListRecords(c *gin.Context, table string, def map[string]any, check bool) (gin.H, error)
	// Condition is a filter (the filter language, JSON) and a quick
	// search as a condition on sc's table, validated as a list does;
	// sc.Where adds the caller's row subset.
	Condition(c *gin.Context, sc *records.Scope, filter json.RawMessage, search string) (*records.Cond, error)
	// ScopeFor is a user's scope on table outside a request (a job's),
	// their account and overrides read afresh.
	ScopeFor(ctx context.Context, a *apps.App, userID int64, table string) (*records.Scope, error)
	// ActorScope is actor's scope on table and filter (JSON, may be
	// empty) as a condition on it, outside a request: the gate of
	// RecordScope and Condition for an actor a stream authenticated.
	ActorScope(ctx context.Context, a *apps.App, actor *auth.Actor, table string, filter json.RawMessage) (*records.Scope, *records.Cond, error)
}

// RecordTarget is the caller's scope on the path's table (:tb) and the
// path's record id (:id); on failure it has answered, and ok is false.
func RecordTarget(h Host, c *gin.Context) (sc *records.Scope, id int64, ok bool) {
	sc, err := h.RecordScope(c, c.Param("tb"))
	if err == nil {
		id, err = ParseIDString(c.Param("id"))
	}
	if err != nil {
		Fail(c, err)
		return nil, 0, false
	}
	return sc, id, true
}

// quietKey marks a request the server makes to itself.
type quietKey struct{}

// Quiet marks ctx as a request the server makes to itself through its own
// handler (the demo's seeding at the first start): its access-log line is
// written at debug level, so dozens of seeding requests do not bury the
// start-up lines. Failures are still logged as errors.
func Quiet(ctx context.Context) context.Context { return context.WithValue(ctx, quietKey{}, true) }

// IsQuiet tells whether ctx was marked by Quiet.
func IsQuiet(ctx context.Context) bool { q, _ := ctx.Value(quietKey{}).(bool); return q }
