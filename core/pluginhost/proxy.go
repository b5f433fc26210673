package pluginhost

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Route is a plugin's HTTP route as the server mounts it under /<app>/api.
type Route struct {
	Plugin    string
	Method    string
	Path      string // gin syntax, as declared
	Access    auth.Access
	Timeout   time.Duration // the manifest's timeout_ms, else RouteTimeout
	BodyLimit int64         // 0: the server's default cap
	Job       bool          // run each call as a job (StartJob)
	// TableParam is the query parameter naming the route's table(s),
	// gated per table as a :tb path parameter (the manifest's
	// table_param, else DefaultTableParam).
	TableParam string
}

// DefaultTableParam is the query parameter a plugin route's table is
// taken from when its manifest names none: the server's own routes call
// it tb, and a plugin that reads ?tb= without saying so is gated all the
// same.
const DefaultTableParam = "tb"

// Routes lists the loaded plugins' routes, by plugin name then in
// manifest order.
func (m *Manager) Routes() []Route {
	var out []Route
	for _, p := range m.loaded() {
		for _, r := range p.manifest().GetRoutes() {
			rt := Route{Plugin: p.name, Method: r.GetMethod(), Path: r.GetPath(), Access: accessByName[r.GetAccess()],
				Timeout: m.opts.RouteTimeout, BodyLimit: int64(r.GetBodyLimit()), Job: r.GetJob(), TableParam: r.GetTableParam()}
			if rt.TableParam == "" {
				rt.TableParam = DefaultTableParam
			}
			if ms := r.GetTimeoutMs(); ms > 0 {
				rt.Timeout = time.Duration(ms) * time.Millisecond
			}
			out = append(out, rt)
		}
	}
	return out
}

// Request is one HTTP request to a plugin route, as data.
type Request struct {
	Route    Route
	Path     string            // after /<app>/api
	Params   map[string]string // path parameters (not :app)
	RawQuery string
	Headers  map[string]string // selected by the server; never Authorization
	Body     []byte
	Actor    *records.Actor // App always set; no user for public routes
}

// Response is the plugin's answer, passed on as it is.
type Response struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// HandleRequest sends a request to the route's plugin within the route's
// deadline. A plugin that is not running fails at once (ErrUnavailable);
// one that does not answer in time gives ErrTimeout.
func (m *Manager) HandleRequest(ctx context.Context, req Request) (*Response, error) {
	p, ok := m.plugin(req.Route.Plugin)
	if !ok {
		return nil, ErrUnavailable.With("plugin", req.Route.Plugin)
	}
	// A reload may have changed the route since the server mounted it.
	cur, err := p.currentRoute(req.Route)
	if err != nil {
		return nil, err
	}
	if ms := cur.GetTimeoutMs(); ms > 0 {
		req.Route.Timeout = time.Duration(ms) * time.Millisecond
	}
	c, err := p.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, req.Route.Timeout)
	defer cancel()
	resp, err := c.HandleRequest(ctx, &pluginv1.HTTPRequest{
		Method: req.Route.Method, Route: req.Route.Path, Path: req.Path, Params: req.Params,
		RawQuery: req.RawQuery, Headers: req.Headers, Body: req.Body, Actor: actorProto(req.Actor),
	})
	if err != nil {
		return nil, p.callError("HandleRequest "+req.Route.Method+" "+req.Route.Path, err)
	}
	if s := resp.GetStatus(); s < 100 || s > 599 {
		return nil, p.callError("HandleRequest "+req.Route.Method+" "+req.Route.Path, fmt.Errorf("HTTP status %d", s))
	}
	return &Response{Status: int(resp.GetStatus()), Headers: resp.GetHeaders(), Body: resp.GetBody()}, nil
}
