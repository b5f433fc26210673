package server

import (
	"context"
	"fmt"
	"github.com/strata-archaeo/strata/core/pluginhost/pluginapi"
	"github.com/strata-archaeo/strata/core/schema/schemaapi"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/strata-archaeo/strata/config"
	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/appgate"
	"github.com/strata-archaeo/strata/core/appinfo"
	"github.com/strata-archaeo/strata/core/applog"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/assemblage"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/backup"
	"github.com/strata-archaeo/strata/core/batch"
	"github.com/strata-archaeo/strata/core/bradypus"
	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/charts"
	"github.com/strata-archaeo/strata/core/dbml/dbmlapi"
	"github.com/strata-archaeo/strata/core/fieldsync"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/files/filesapi"
	"github.com/strata-archaeo/strata/core/files/localstore"
	"github.com/strata-archaeo/strata/core/files/s3store"
	"github.com/strata-archaeo/strata/core/freesql"
	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/imports"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/mail"
	"github.com/strata-archaeo/strata/core/ops"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/publish"
	"github.com/strata-archaeo/strata/core/ratelimit"
	"github.com/strata-archaeo/strata/core/realtime"
	"github.com/strata-archaeo/strata/core/retention"
	"github.com/strata-archaeo/strata/core/rscheck"
	"github.com/strata-archaeo/strata/core/savedquery"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/scratch"
	"github.com/strata-archaeo/strata/core/searchreplace"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/templates"
	"github.com/strata-archaeo/strata/core/vocab"
	"github.com/strata-archaeo/strata/core/webui"
	"github.com/strata-archaeo/strata/core/welcome"
	"github.com/strata-archaeo/strata/core/widgets"
)

// Scope and Route are the kit's (core/api): every area's route table is
// made of the same rows.
type (
	Scope = api.Scope
	Route = api.Route
)

const (
	// Instance routes live under the bare /api prefix.
	Instance = api.Instance
	// App routes live under /<app>/api and see a resolved application.
	App = api.App
	// Root routes are the bare operations endpoints (/healthz, /readyz).
	Root = api.Root
	// Site routes are an application's public pages under /<app>.
	Site = api.Site
)

// Deps are what the server needs from the rest of the process.
type Deps struct {
	Config config.Config
	Apps   *apps.Registry
	Logger *slog.Logger
	Now    func() time.Time
	// Getenv reads the OAuth endpoint overrides (CONTRACT §7) on every
	// request; tests point them at local fakes. Default os.Getenv.
	Getenv func(string) string
	// Mailer sends the transactional emails (SPEC §6). Default: the
	// provider client reading its settings through Getenv on every send.
	Mailer *mail.Client
	// ExtraRoutes are mounted after the core routes with the same middleware
	// (tests mount probes this way).
	ExtraRoutes []Route
	// RealtimeHeartbeat overrides the live streams' heartbeat interval
	// (0: 15 s); tests shorten it.
	RealtimeHeartbeat time.Duration
	// RealtimePresenceTTL and RealtimeBeat override how long a presence
	// entry lasts (0: 60 s) and how often a node refreshes its streams'
	// rows and sweeps expired entries (0: 10 s); tests shorten them.
	RealtimePresenceTTL, RealtimeBeat time.Duration
	// Plugins is the started plugin host (nil: no plugins). Its routes are
	// mounted after the core routes, behind the same gate; its features,
	// operators and sections join the records scope.
	Plugins *pluginhost.Manager
	// Files stores uploaded files' bytes (default: the S3 bucket of
	// Config.S3 when set, checked here; else the local disk under
	// <data-dir>/files, one folder per app).
	Files files.Storage
	// Jobs is the instance's job system (core/jobs), opened on the same
	// storage as Apps; areas register their kinds on it while New builds
	// them, so the caller starts it after New and stops it after the HTTP
	// server. Nil: the /jobs routes answer 503 jobs_unavailable.
	Jobs *jobs.System
	// Scratch is the process's temporary folder under the data folder
	// (core/scratch; `strata serve` opens it). nil: the system's, for
	// tests and commands that serve no data folder.
	Scratch *scratch.Dir
}

// FileStorage is the file store the configuration names: S3 when a
// bucket is set (New fails when it cannot be reached), else the local disk.
func FileStorage(c config.Config) (files.Storage, error) {
	if c.S3.Bucket == "" {
		return localstore.New(filepath.Join(c.DataDir, "files")), nil
	}
	st, err := s3store.New(S3Options(c.S3))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := st.Check(ctx); err != nil {
		return nil, fmt.Errorf("file storage (STRATA_S3_*): %w", err)
	}
	return st, nil
}

// S3Options maps the configuration to the S3 store's options.
func S3Options(c config.S3) s3store.Options {
	return s3store.Options{
		Endpoint: c.Endpoint, Bucket: c.Bucket, Region: c.Region,
		AccessKey: c.AccessKey, SecretKey: c.SecretKey,
		Prefix: c.Prefix, PathStyle: c.PathStyle,
	}
}

// Server is the HTTP handler of an instance.
type Server struct {
	authn    *auth.Authenticator
	catalogs *schema.Cache
	cfg      config.Config
	apps     *apps.Registry
	log      *slog.Logger
	now      func() time.Time
	engine   *gin.Engine
	handler  http.Handler // engine behind compressAnswers
	routes   []Route
	getenv   func(string) string
	mailer   *mail.Client
	plugins  *pluginhost.Manager // nil-safe: no plugins
	limits   *ratelimit.Set
	files    *files.Service
	access   *auth.AccessCache // accounts and overrides by auth version
	tokens   *auth.TokenCache  // verified session tokens
	unlocks  freesql.Unlocks   // sessions that confirmed their password for free SQL
	seen     seenVersions      // the apps' versions as last read
	jobs     *jobs.System      // nil: none
	health   *ops.Health
	metrics  *ops.Metrics
	backups  backup.Deps
	gate     *appgate.Gate  // requests in progress per app
	realtime *realtime.Hub  // live streams (core/realtime)
	webui    *webui.Handler // the web application's pages (fallback)
	publish  publish.Deps   // open-data publishing (core/publish)

	// scopeWatch, when set (by tests only), is told of every table a
	// request asks the records gate about, so the route-table walk knows
	// which routes take a table and can prove each reached the gate.
	scopeWatch func(r *http.Request, table string)
}

func init() { gin.SetMode(gin.ReleaseMode) }

// New builds the server with its full route table.
func New(d Deps) (*Server, error) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Getenv == nil {
		d.Getenv = os.Getenv
	}
	if d.Mailer == nil {
		d.Mailer = mail.New(d.Getenv, nil)
	}
	s := &Server{cfg: d.Config, apps: d.Apps, log: d.Logger, now: d.Now, getenv: d.Getenv, mailer: d.Mailer, plugins: d.Plugins, jobs: d.Jobs}
	cost := d.Config.PasswordCost
	if cost == 0 {
		cost = auth.DefaultBcryptCost
	}
	authn, err := auth.NewAuthenticator(cost, d.Now)
	if err != nil {
		return nil, err
	}
	s.authn = authn
	if d.Files == nil {
		if d.Files, err = FileStorage(d.Config); err != nil {
			return nil, err
		}
	}
	s.files = &files.Service{Storage: d.Files, Now: d.Now}
	var plugins ops.Plugins // a nil *Manager must stay a nil interface
	if d.Plugins != nil {
		plugins = d.Plugins
	}
	s.gate = appgate.New(d.Config.AppMaxConcurrent, d.Config.AppQueueTimeout)
	s.health, s.metrics = ops.New(d.Apps, plugins, d.Now)
	s.metrics.WatchGate(s.gate.Refused)
	if d.Jobs != nil {
		s.metrics.WatchJobs(func(ctx context.Context) (map[string]int64, error) {
			counts, err := d.Jobs.CountByState(ctx)
			out := make(map[string]int64, len(counts))
			for st, n := range counts {
				out[string(st)] = n
			}
			return out, err
		})
	}
	s.backups = backup.Deps{Apps: d.Apps, Files: d.Files, Store: backup.StoreFor(d.Files, d.Config.DataDir),
		Jobs: d.Jobs, Now: d.Now, MaxUpload: d.Config.MaxBackupUploadBytes, TmpDir: d.Scratch.Path()}
	if d.Jobs != nil && d.Plugins != nil {
		d.Plugins.RegisterJobs(d.Jobs) // job routes of plugins (PLUGINS.md)
	}
	if d.Jobs != nil {
		backup.Register(s.backups)
		imports.Register(d.Jobs, s, d.Apps, d.Files)
		rscheck.Register(d.Jobs, s, d.Apps)
		retention.Register(d.Jobs, d.Apps, d.Now)
	}
	s.publish = publish.Deps{Apps: d.Apps, Host: s, Files: d.Files, Jobs: d.Jobs, TmpDir: d.Scratch.Path(), PublicURL: d.Config.PublicURL, Now: d.Now}
	if d.Jobs != nil {
		publish.Register(s.publish)
	}
	var shared *ratelimit.Shared
	if d.Apps != nil {
		if shared, err = ratelimit.SharedFor(d.Apps.Backend(), d.Config.RateLimits); err != nil {
			return nil, err
		}
	}
	if s.limits, err = ratelimit.NewSet(d.Config.RateLimits, d.Config.TrustedProxies, d.Now, shared); err != nil {
		return nil, err
	}
	if d.Apps != nil {
		s.unlocks = freesql.UnlocksFor(d.Apps.Backend())
	}
	changes.SetRetention(changes.Retention{MaxAge: d.Config.ChangeLogMaxAge, MaxEvents: d.Config.ChangeLogMaxEvents})
	var pgConn *pgx.ConnConfig
	if d.Apps != nil {
		if pg, ok := d.Apps.Backend().(*store.PostgresBackend); ok {
			pgConn = pg.ConnConfig()
		}
	}
	s.realtime = realtime.New(s, realtime.Config{PerApp: d.Config.RealtimePerApp, PerUser: d.Config.RealtimePerUser,
		Buffer: d.Config.RealtimeBuffer, Heartbeat: d.RealtimeHeartbeat, PresenceTTL: d.RealtimePresenceTTL, Beat: d.RealtimeBeat}, d.Now, pgConn)
	s.catalogs = schema.NewCache()
	s.access = auth.NewAccessCache()
	s.tokens = auth.NewTokenCache()
	if d.Config.PublicURL == "" {
		// Without it the service's own origin is whatever Host a request
		// names (oauth.AllowedOrigins), and a client can forge that.
		s.log.Warn("SERVICE_PUBLIC_URL is not set: reset links and OAuth redirect addresses will use the Host of each request, which a client can forge; set it in production")
	}
	// App properties read each app's optional configuration file under the
	// data folder (apps.ConfigFilePath): tell the registry where that is.
	if s.apps != nil && s.cfg.DataDir != "" {
		s.apps.SetConfigDir(s.cfg.DataDir)
	}
	e := gin.New()
	// Paths are answered exactly as asked: no redirects to a cleaned or
	// slash-adjusted path, which would turn JSON errors into HTML 301s.
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.HandleMethodNotAllowed = false // fallback() answers 405 with "allowed"
	e.ContextWithFallback = true
	e.Use(s.metrics.Middleware, s.recoverPanics, s.logRequests, s.checkQuery)
	s.webui = webui.New()
	e.NoRoute(s.fallback)
	s.engine = e
	s.handler = compressAnswers(e)
	routes := append(s.routeTable(), s.adminRoutes()...)
	routes = append(routes, schemaapi.Routes(s.now)...)
	routes = append(routes, s.signupRoutes()...)
	routes = append(routes, s.oauthRoutes()...)
	pluginDeps := pluginapi.Deps{Plugins: s.plugins, Catalogs: s.catalogs, Jobs: s.jobs, Now: s.now, Scopes: s.recordScope}
	routes = append(routes, pluginapi.AdminRoutes(pluginDeps)...)
	routes = append(routes, d.ExtraRoutes...)
	// Plugin routes come last, once checked against everything above.
	for _, r := range append(routes, pluginapi.Mountable(pluginDeps, routes)...) {
		s.handle(r)
	}
	return s, nil
}

// handle mounts one route with the middleware its scope needs.
func (s *Server) handle(r Route) {
	chain := []gin.HandlerFunc{s.limitBody(r.BodyLimit, r.BodyTimeout)}
	if !r.Stream && !r.LongAnswer && s.cfg.WriteTimeout > 0 {
		chain = append(chain, s.writeDeadline(r.BodyTimeout))
	}
	if r.Scope == Site {
		if r.Access != auth.Public {
			panic("server: site route " + r.Path + " must be public")
		}
		chain = append(chain, s.resolveApp(r), s.gateApp)
	}
	if r.Scope == App {
		chain = append(chain, s.resolveApp(r))
		if !r.Stream && !r.AwaitingUpgrade { // a BraDypUS folder has no Strata app to count
			chain = append(chain, s.gateApp)
		}
		if (r.ReadOnly && r.Method == http.MethodGet || r.Replayable && r.Method == http.MethodPost) &&
			r.Access != auth.Public && !applog.Logged(r) && !r.AwaitingUpgrade {
			// Identification, privilege check and handler in one step,
			// which may run them twice (readonly.go).
			chain = append(chain, s.readOnly(r))
			s.engine.Handle(r.Method, r.FullPath(), chain...)
			s.routes = append(s.routes, r)
			return
		}
		if r.Access != auth.Public {
			chain = append(chain, s.authenticator(r.SignedLink), s.authorize(r.Access, r.TableQuery))
		}
	}
	if applog.Logged(r) {
		chain = append(chain, applog.Middleware(r, s.now, func(c *gin.Context, err error) {
			s.log.ErrorContext(c.Request.Context(), "application log entry not written", "path", c.Request.URL.Path, "err", err)
		}))
	}
	chain = append(chain, r.Handler)
	s.engine.Handle(r.Method, r.FullPath(), chain...)
	s.routes = append(s.routes, r)
}

// Jobs is the job system long operations run on (nil when the server was
// built without one): an area registers its kinds on it.
func (s *Server) Jobs() *jobs.System { return s.jobs }

// MetricsHandler serves the Prometheus metrics (for their own listener,
// STRATA_METRICS_ADDR).
func (s *Server) MetricsHandler() http.Handler { return s.metrics.Handler() }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// routeTable lists every route of the service. Later features add their
// rows here, so the whole API surface can be read in one place.
func (s *Server) routeTable() []Route {
	core := []Route{
		{Scope: Instance, Method: http.MethodGet, Path: "/info", Handler: s.handleInfo},
		{Scope: Instance, Method: http.MethodGet, Path: "/new-app/status", Handler: s.handleNewAppStatus},
		{Scope: Instance, Method: http.MethodPost, Path: "/new-app", Handler: s.handleNewApp},
		{Scope: Instance, Method: http.MethodGet, Path: "/auth/apps", Handler: s.handleAuthApps},
		{Scope: App, Method: http.MethodGet, Path: "/upgrade/status", AwaitingUpgrade: true, Handler: s.handleUpgradeStatus},
		{Scope: App, Method: http.MethodPost, Path: "/upgrade/minor", Access: auth.AdminOnly, Handler: s.handleUpgradeMinor},

		// Accounts and access (SPEC §4.3, §4.5; CONTRACT §3–4).
		{Scope: App, Method: http.MethodPost, Path: "/auth/login", Handler: s.handleLogin},
		{Scope: App, Method: http.MethodGet, Path: "/auth/refresh", Access: auth.Enter, Handler: s.handleRefresh},
		{Scope: App, Method: http.MethodGet, Path: "/auth/logout", Handler: s.handleLogout},
		{Scope: App, Method: http.MethodPost, Path: "/admin/check-password", Access: auth.SuperAdminOnly, Handler: s.handleCheckPassword},
		{Scope: App, Method: http.MethodGet, Path: "/migrations", Access: auth.AdminOnly, Handler: s.handleMigrations},
	}
	core = append(core, appinfo.Routes(s, s.pluginSummary)...)
	core = append(core, s.recordRoutes()...)
	core = append(core, filesapi.Routes(s, s.files, s.cfg.MaxUploadBytes)...)
	core = append(core, vocab.Routes(s)...)
	core = append(core, applog.Routes(s.now)...)
	core = append(core, searchreplace.Routes(s)...)
	core = append(core, freesql.Routes(freesql.Deps{Check: s.checkPassword, Now: s.now, Unlocks: s.unlocks, Session: s.freeSQLSession})...)
	core = append(core, welcome.Routes()...)
	core = append(core, savedquery.Routes(s, s.now)...)
	core = append(core, charts.Routes(s, s.now)...)
	core = append(core, geo.Routes(s)...)
	core = append(core, rscheck.Routes(s, s.jobs)...)
	core = append(core, retention.Routes(s.jobs)...)
	core = append(core, publish.Routes(s.publish)...)
	core = append(core, s.realtime.Routes()...)
	core = append(core, fieldsync.Routes(fieldsync.Deps{Host: s, Files: s.files, MaxUploadBytes: s.cfg.MaxUploadBytes, Now: s.now, Hold: s.cfg.SyncHold})...)
	core = append(core, assemblage.Routes(s, s.now)...)
	core = append(core, templates.Routes(s, s.files, s.now)...)
	core = append(core, widgets.Routes(s.now)...)
	core = append(core, imports.Routes(s, s.files, s.cfg.MaxUploadBytes, s.jobs, s.backups.TmpDir)...)
	core = append(core, jobs.Routes(s.jobs)...)
	core = append(core, backup.Routes(s.backups)...)
	core = append(core, dbmlapi.Routes(s.plugins.RunningSpec, s.now)...)
	core = append(core, bradypus.Routes(bradypus.Deps{Apps: s.apps, DataDir: s.cfg.DataDir, Now: s.now, Files: s.files, Plugins: s.plugins, Limits: s.limits})...)
	core = append(core, s.health.Routes()...)
	core = append(core, s.metrics.Route(s.cfg.MetricsToken))
	return append(core, batch.Routes(s, s.cfg.MaxBatchRequests)...)
}
