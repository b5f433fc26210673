// Package pluginapi is the HTTP face of the plugin platform: the server's
// own plugin routes (per-table feature activation, CONTRACT §6; the plugin
// list and the circuit breaker's reset) and the plugins' routes, checked
// against the server's before they are mounted and forwarded to their
// plugin (or run as a job, for routes declared Job) after the same
// authentication and privilege gate as core routes.
package pluginapi

import (
	"encoding/json"

	"fmt"
	"github.com/strata-archaeo/strata/core/api"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/pluginhost"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/pluginsdk"
)

// pluginAdminRoutes are the server's own plugin routes: per-table feature
// activation (CONTRACT §6) and the plugin list with the circuit breaker's
// reset. They exist with or without plugins. Gin prefers static segments,
// so /config/table/:tb/:feature never shadows the config helper's
// /config/table/:tb/fields, /field, /indexes and /validation.
func AdminRoutes(s Deps) []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/config/table/:tb/:feature", Access: auth.SuperAdminOnly, Handler: s.handleActivateFeature},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/table/:tb/:feature", Access: auth.SuperAdminOnly, Handler: s.handleDeactivateFeature},
		{Scope: api.App, Method: http.MethodGet, Path: "/plugins", Access: auth.SuperAdminOnly, Handler: s.handleListPlugins},
		{Scope: api.App, Method: http.MethodGet, Path: "/plugin-labels", Access: auth.Enter, Handler: s.handlePluginLabels},
		{Scope: api.App, Method: http.MethodPost, Path: "/plugins/:name/enable", Access: auth.SuperAdminOnly, Handler: s.handleEnablePlugin},
		{Scope: api.App, Method: http.MethodPost, Path: "/plugins/:name/reload", Access: auth.SuperAdminOnly, Handler: s.handleReloadPlugin},
		{Scope: api.App, Method: http.MethodGet, Path: "/plugins/:name/unchecked", Access: auth.AdminOnly, Handler: s.handleUnchecked, ReadOnly: true},
		{Scope: api.App, Method: http.MethodPost, Path: "/plugins/:name/revalidate", Access: auth.AdminOnly, Handler: s.handleRevalidate},
	}
}

var errFeatureNotFound = errs.New(errs.NotFound, "feature_not_found", "no plugin offers a table feature of that name")

// firstPartyFeatures are the features of the plugins shipped with Strata
// (CONTRACT §6), by name or alias: asking for one while its plugin is not
// loaded is 503 plugin_unavailable rather than 404.
var firstPartyFeatures = map[string]string{
	"chronology": "chronology", "fuzzy-date": "chronology", "osteology": "osteology", "radiocarbon": "radiocarbon",
}

// POST /config/table/{tb}/{feature} — activate a plugin feature on a table.
func (s Deps) handleActivateFeature(c *gin.Context) { s.changeFeature(c, true) }

// DELETE /config/table/{tb}/{feature} — deactivate it (columns, child table
// and data are kept, hidden until reactivation).
func (s Deps) handleDeactivateFeature(c *gin.Context) { s.changeFeature(c, false) }

func (s Deps) changeFeature(c *gin.Context, activate bool) {
	ctx := c.Request.Context()
	a := api.AppOf(c)
	cat, err := s.Catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	t, ok := cat.Table(c.Param("tb"))
	if !ok {
		api.Fail(c, schema.ErrTableNotFound.With("table", c.Param("tb")))
		return
	}
	if t.IsPlugin {
		// Answered here: schema refuses it too, but as a field parameter
		// (invalid_field_parameter), which is not what the client asked.
		api.Fail(c, records.ErrInvalidParameter.With("parameter", "tb").With("detail", "features are activated on normal tables, not on plugin tables"))
		return
	}
	name := c.Param("feature")
	now := s.Now().UTC()
	f, loaded := s.Plugins.Feature(name)
	if !loaded {
		canonical := name
		if fp, ok := firstPartyFeatures[name]; ok {
			canonical = fp
		}
		st, recorded := t.Features[canonical]
		switch {
		case recorded && !activate:
			// Turning a feature off needs nothing from its plugin, so an
			// admin can still do it once the plugin is gone.
			if err := schema.DeactivateFeature(ctx, a.DB, t.Name, canonical, now); err != nil {
				api.Fail(c, err)
				return
			}
			api.Success(c, http.StatusOK, gin.H{"code": st.Plugin + "_deactivated", "table": t.Name, "feature": canonical})
		case recorded || firstPartyFeatures[name] != "":
			api.Fail(c, records.ErrPluginUnavailable.With("feature", name))
		default:
			api.Fail(c, errFeatureNotFound.With("feature", name))
		}
		return
	}
	// Called by BraDypUS's name for chronology (fuzzy-date), the code
	// names it, as the clients that use it expect (fuzzy_date_activated).
	prefix := f.Plugin
	if name == "fuzzy-date" {
		prefix = "fuzzy_date"
	}
	code := prefix + "_deactivated"
	if activate {
		if !f.Running {
			api.Fail(c, records.ErrPluginUnavailable.With("feature", f.Name).With("plugin", f.Plugin))
			return
		}
		err, code = schema.ActivateFeature(ctx, a.DB, t.Name, f.Spec, now), prefix+"_activated"
	} else {
		err = schema.DeactivateFeature(ctx, a.DB, t.Name, f.Name, now)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	// "tb" names the table the feature's data lives in (its child table
	// when it has one), as BraDypUS answers.
	tb := t.Name
	if f.Spec.Child != nil {
		tb = t.Name + "_" + f.Spec.Child.Suffix
	}
	api.Success(c, http.StatusOK, gin.H{"code": code, "table": t.Name, "tb": tb, "feature": f.Name})
}

// pluginView is a plugin as GET /plugins shows it: the manager's view and
// the tables of this application where each feature is active.
type pluginView struct {
	pluginhost.Info
	ActiveTables map[string][]string `json:"active_tables"`
}

// GET /plugins — the loaded plugins, their state and features.
func (s Deps) handleListPlugins(c *gin.Context) {
	a := api.AppOf(c)
	cat, err := s.Catalogs.Get(c.Request.Context(), a.Name, a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	views := []pluginView{}
	for _, in := range s.Plugins.List() {
		views = append(views, pluginView{Info: in, ActiveTables: activeTables(cat, in)})
	}
	api.Success(c, http.StatusOK, gin.H{"plugins": views})
}

// GET /plugin-labels — the running plugins' labels and messages in every
// language they declare, for any signed-in client to show a plugin's
// strings in its user's language (GET /plugins is for super admins).
func (s Deps) handlePluginLabels(c *gin.Context) {
	api.Success(c, http.StatusOK, gin.H{"plugins": s.Plugins.Texts(), "languages": append([]string{pluginsdk.DefaultLanguage}, s.Plugins.Languages()...)})
}

func activeTables(cat *schema.Catalog, in pluginhost.Info) map[string][]string {
	out := map[string][]string{}
	for _, f := range in.Features {
		out[f.Name] = []string{}
		for _, t := range cat.Tables {
			if t.Active(f.Name) {
				out[f.Name] = append(out[f.Name], t.Name)
			}
		}
	}
	return out
}

// POST /plugins/{name}/enable — re-enable a plugin the circuit breaker
// disabled (or restart one waiting for its backoff) now.
func (s Deps) handleEnablePlugin(c *gin.Context) {
	if s.Plugins == nil {
		api.Fail(c, pluginhost.ErrNotFound.With("plugin", c.Param("name")))
		return
	}
	in, err := s.Plugins.Enable(c.Request.Context(), c.Param("name"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "plugin_enabled", "plugin": in})
}

// POST /plugins/{name}/reload — start the plugin's executable anew (a new
// version installed with `strata plugin install`) and swap it in; a bad
// one leaves the running process serving and the answer says why.
func (s Deps) handleReloadPlugin(c *gin.Context) {
	if s.Plugins == nil {
		api.Fail(c, pluginhost.ErrNotFound.With("plugin", c.Param("name")))
		return
	}
	in, err := s.Plugins.Reload(c.Request.Context(), c.Param("name"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "plugin_reloaded", "plugin": in})
}

// mountablePluginRoutes returns the loaded plugins' routes as server
// routes. A plugin whose route would answer a path one of core's answers
// (any method), or that the router cannot take next to them, or whose
// feature name a config route already uses, is rejected whole: the
// manager stops it and the server starts without it.
func Mountable(s Deps, core []api.Route) []api.Route {
	if s.Plugins == nil {
		return nil
	}
	byPlugin := map[string][]pluginhost.Route{}
	for _, r := range s.Plugins.Routes() {
		byPlugin[r.Plugin] = append(byPlugin[r.Plugin], r)
	}
	var accepted []api.Route
	for _, in := range s.Plugins.List() {
		var mine []api.Route
		for _, r := range byPlugin[in.Name] {
			mine = append(mine, api.Route{Scope: api.App, Method: r.Method, Path: r.Path, Access: r.Access,
				BodyLimit: r.BodyLimit, TableQuery: r.TableParam, Handler: s.pluginProxy(r)})
		}
		if err := checkPluginRoutes(core, accepted, mine, in); err != nil {
			s.Plugins.Reject(in.Name, err)
			continue
		}
		accepted = append(accepted, mine...)
	}
	return accepted
}

func checkPluginRoutes(core, accepted, mine []api.Route, in pluginhost.Info) error {
	for _, f := range in.Features {
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			for _, r := range core {
				if r.Scope == api.App && (r.Path == "/config/table/:tb/"+n || strings.HasPrefix(r.Path, "/config/table/:tb/"+n+"/")) {
					return fmt.Errorf("feature %q: %s %s of the server uses that name", n, r.Method, r.Path)
				}
			}
		}
	}
	for _, m := range mine {
		for _, r := range core {
			if r.Scope == api.App && pluginhost.PathsOverlap(m.Path, r.Path) {
				return fmt.Errorf("route %s %s overlaps %s %s of the server", m.Method, m.Path, r.Method, r.Path)
			}
		}
	}
	// The router refuses some neighbours that never answer the same path
	// (two parameter names at one place); try on a scratch router.
	return tryMount(append(append(append([]api.Route{}, core...), accepted...), mine...))
}

func tryMount(routes []api.Route) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the router refuses its routes: %v", v)
		}
	}()
	e := gin.New()
	noop := func(*gin.Context) {}
	for _, r := range routes {
		e.Handle(r.Method, r.FullPath(), noop)
	}
	return nil
}

// forwardedHeaders are the request headers a plugin route sees; never
// Authorization or Cookie: the server has authenticated the caller and
// passes the actor instead.
var forwardedHeaders = []string{"Accept", "Accept-Language", "Content-Type", "If-Match", "If-Modified-Since",
	"If-None-Match", "User-Agent", "X-Request-Id", "X-Forwarded-For", "X-Forwarded-Proto"}

// hopHeaders of a plugin's answer are the HTTP server's to write.
var hopHeaders = map[string]bool{"Connection": true, "Content-Length": true, "Keep-Alive": true,
	"Proxy-Authenticate": true, "Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true}

// pluginProxy forwards a request of a plugin route, after the same
// authentication and privilege gate as core routes, and returns the
// plugin's status, headers and body as they are.
func (s Deps) pluginProxy(rt pluginhost.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		body, err := io.ReadAll(c.Request.Body)
		if err != nil {
			api.Fail(c, api.BodyReadErr(err))
			return
		}
		a := api.AppOf(c)
		actor := &records.Actor{App: a.Name}
		if rt.Access != auth.Public {
			who := api.ActorOf(c)
			actor.UserID, actor.APIKeyID, actor.Name, actor.Email = who.UserID, who.KeyID, who.Name, who.Email
			actor.Privilege = api.LevelOf(c)
		}
		params := map[string]string{}
		for _, p := range c.Params {
			if p.Key != "app" {
				params[p.Key] = p.Value
			}
		}
		headers := map[string]string{}
		for _, h := range forwardedHeaders {
			if v := c.GetHeader(h); v != "" {
				headers[h] = v
			}
		}
		req := pluginhost.Request{
			Route: rt, Path: strings.TrimPrefix(c.Request.URL.Path, "/"+a.Name+"/api"), Params: params,
			RawQuery: c.Request.URL.RawQuery, Headers: headers, Body: body, Actor: actor,
		}
		if rt.Job && s.Jobs != nil {
			s.pluginJob(c, req)
			return
		}
		resp, err := s.Plugins.HandleRequest(c.Request.Context(), req)
		if err != nil {
			if e, ok := errs.As(err); ok && e.Code == pluginhost.ErrTimeout.Code {
				err = e.With("plugin", rt.Plugin) // 504 (errs.Timeout)
			}
			api.Fail(c, err)
			return
		}
		keys := make([]string, 0, len(resp.Headers))
		for k := range resp.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !hopHeaders[http.CanonicalHeaderKey(k)] {
				c.Header(k, resp.Headers[k])
			}
		}
		c.Status(resp.Status)
		_, _ = c.Writer.Write(resp.Body)
	}
}

// jobRouteWait is how long a job route's request waits for its job before
// answering 202 with the job to follow (?async=1: not at all).
const jobRouteWait = 30 * time.Second

// pluginJob runs a job route's call as a job (pluginhost.StartJob) and
// answers the plugin's answer when the job ends within jobRouteWait,
// with the job's id in X-Strata-Job; else 202 {code:"job_started", job}.
func (s Deps) pluginJob(c *gin.Context, req pluginhost.Request) {
	job, err := s.Plugins.StartJob(c.Request.Context(), s.Jobs, req)
	if err != nil {
		api.Fail(c, err)
		return
	}
	wait := min(jobRouteWait, req.Route.Timeout)
	if v := c.Query("async"); v == "1" || v == "true" {
		wait = 0
	}
	job = s.Jobs.Await(c.Request.Context(), job, wait)
	var res pluginhost.JobResult
	if job.State != jobs.Done || json.Unmarshal(job.Result, &res) != nil || res.Status < 100 {
		jobs.AnswerUnfinished(c, job, "job_started", "job_failed")
		return
	}
	c.Header(pluginsdk.JobHeader, strconv.FormatInt(job.ID, 10))
	if res.ContentType != "" {
		c.Header("Content-Type", res.ContentType)
	}
	body := []byte(res.Body)
	var text string
	if !strings.HasPrefix(res.ContentType, "application/json") && json.Unmarshal(res.Body, &text) == nil {
		body = []byte(text)
	}
	c.Status(res.Status)
	_, _ = c.Writer.Write(body)
}

// Deps is what the plugin routes need of the server.
type Deps struct {
	Plugins  *pluginhost.Manager // nil: no plugins
	Catalogs *schema.Cache
	Jobs     *jobs.System // nil: job routes are called like any other
	Now      func() time.Time

	// Scopes is the caller's records scope on a table (the records gate),
	// for the routes that read rows of user tables (unchecked.go).
	Scopes func(c *gin.Context, table string) (*records.Scope, error)
}
