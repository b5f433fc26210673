package api

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
)

// Scope says where a route is mounted.
type Scope int

const (
	// Instance routes live under /api and answer for the whole service.
	Instance Scope = iota
	// App routes live under /{app}/api: the app is resolved (404 when it
	// does not exist) and, unless Access is auth.Public, the caller is
	// authenticated and authorised before the handler runs.
	App
	// Root routes are mounted at their bare path, outside any /api prefix
	// and without credentials: the operations endpoints (/healthz, /readyz,
	// /metrics) that load balancers and scrapers call.
	Root
	// Site routes live under /{app} outside /api: the app is resolved and
	// nobody is authenticated (Access must be auth.Public). They are the
	// pages and protocols an application shows the world: the landing
	// pages of its publications and its OAI-PMH endpoint (core/publish).
	Site
)

// Route is one row of a route table.
type Route struct {
	Scope   Scope
	Method  string
	Path    string
	Handler gin.HandlerFunc
	// Access is the privilege the route requires (app routes only; every
	// instance route is public). A path with a :tb parameter is checked
	// against the caller's level on that table.
	Access auth.Access
	// TableQuery names a query parameter that names the table the route
	// works on (plugin routes: pluginsdk.Route.TableParam, "tb" by
	// default): each table it names (repeated, or comma-separated) is
	// checked as a :tb path parameter is, and the level is the least.
	TableQuery string
	// BodyLimit overrides the configured cap for this route (0: default).
	BodyLimit int64
	// BodyTimeout overrides the time allowed to send the body (0: the
	// configured one): uploads take longer than a JSON body.
	BodyTimeout time.Duration
	// SignedLink lets a request without Authorization authenticate with a
	// signed `t` query parameter made for its path (auth.SignLink): for
	// what browsers fetch by URL (<img>, a new tab).
	SignedLink bool
	// Stream marks a route that stays open to push events (job progress):
	// no write deadline, and no slot of the app's concurrency cap, since it
	// waits on others' work rather than taking the server's.
	Stream bool
	// LongAnswer marks a route whose answer may take long to send (a
	// download or an export of any size): no write deadline.
	LongAnswer bool
	// AwaitingUpgrade lets the route answer for an application that is
	// still a BraDypUS folder awaiting its major upgrade (core/bradypus):
	// no Strata application is resolved then, the folder is in the
	// context. Every other route of such an application answers 409
	// major_upgrade_required.
	AwaitingUpgrade bool
	// ReadOnly marks a GET whose handler only reads and answers (no
	// change, nothing sent before it returns): on PostgreSQL the server
	// may run it on the app's versions as it last saw them, checked with
	// its first queries instead of a round trip before them, and run it
	// again when they have moved (core/server/readonly.go).
	ReadOnly bool
	// Replayable marks a POST with a session token that may run the same
	// way: its writes are in database transactions, which check the
	// assumed versions with their first statement and roll back when they
	// moved, and what else it does that leaves the process (a plugin's
	// hook, a write outside a transaction) waits for store.Confirm. Its
	// body is read first, so that it can be run again.
	Replayable bool
}

// FullPath is the gin pattern the route is mounted at.
func (r Route) FullPath() string {
	switch r.Scope {
	case Instance:
		return "/api" + r.Path
	case Root:
		return r.Path
	case Site:
		return "/:app" + r.Path
	}
	return "/:app/api" + r.Path
}
