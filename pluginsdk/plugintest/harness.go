// Package plugintest runs a Strata plugin in a test, without the server:
// the plugin is served over a real gRPC connection in the test process
// (go-plugin's in-process test connection, the same code paths as a plugin
// process), against FakeHost, an in-memory Host service the test seeds and
// inspects, brokered to the plugin at Configure exactly as the server does.
//
//	h := plugintest.New(t, myPlugin{})
//	resp, err := h.CallRoute("GET", "/munsell/parse?q=10YR+5/3", nil, plugintest.Reader)
//
// Conformance checks a plugin against the rules the server relies on.
package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Actors for calls. The harness checks route access as the server does, so
// a test can show that a reader is refused an admin route.
var (
	Reader     = pluginsdk.Actor{App: "demo", UserID: 3, Privilege: pluginsdk.PrivilegeReader, Name: "Reader", Email: "reader@example.org"}
	Writer     = pluginsdk.Actor{App: "demo", UserID: 2, Privilege: pluginsdk.PrivilegeWriter, Name: "Writer", Email: "writer@example.org"}
	Admin      = pluginsdk.Actor{App: "demo", UserID: 4, Privilege: pluginsdk.PrivilegeAdmin, Name: "Admin", Email: "admin@example.org"}
	SuperAdmin = pluginsdk.Actor{App: "demo", UserID: 1, Privilege: pluginsdk.PrivilegeSuperAdmin, Name: "Super", Email: "super@example.org"}
	Anonymous  = pluginsdk.Actor{App: "demo"}
)

// Default deadlines of the server's calls (PLUGINS.md): the harness uses
// them too, so a hook too slow for the server is too slow in its tests.
const (
	DefaultHookTimeout  = 2 * time.Second
	DefaultRouteTimeout = 30 * time.Second
	// configureTimeout covers a plugin loading data at start.
	configureTimeout = 30 * time.Second
)

// Option configures New.
type Option func(*config)

type config struct {
	host         *FakeHost
	settings     json.RawMessage
	configure    bool
	hookTimeout  time.Duration
	routeTimeout time.Duration
}

// WithHost makes the plugin talk to h (seeded by the test) instead of an
// empty FakeHost.
func WithHost(h *FakeHost) Option { return func(c *config) { c.host = h } }

// WithSettings passes settings (a JSON object) to the plugin's Configure.
func WithSettings(settings json.RawMessage) Option { return func(c *config) { c.settings = settings } }

// WithoutConfigure leaves Configure to the test (h.Configure), e.g. to test
// that bad settings are refused.
func WithoutConfigure() Option { return func(c *config) { c.configure = false } }

// WithTimeouts replaces the server's default deadlines of hook calls and of
// route calls (a route's own Timeout still wins).
func WithTimeouts(hook, route time.Duration) Option {
	return func(c *config) { c.hookTimeout, c.routeTimeout = hook, route }
}

// Harness is a plugin running over gRPC in the test process.
type Harness struct {
	// Host is the fake server the plugin reaches through pluginsdk.Host.
	Host *FakeHost

	t        testing.TB
	cfg      config
	client   pluginv1.PluginClient
	broker   *plugin.GRPCBroker
	manifest pluginsdk.Manifest
}

// New serves p over a real gRPC connection, reads its manifest (Describe)
// and configures it (unless WithoutConfigure). Everything is closed when
// the test ends. A failure to start or configure fails the test.
func New(t testing.TB, p pluginsdk.Plugin, opts ...Option) *Harness {
	t.Helper()
	cfg := config{configure: true, hookTimeout: DefaultHookTimeout, routeTimeout: DefaultRouteTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.host == nil {
		cfg.host = NewFakeHost()
	}
	gc, gs := connect(t, p)
	t.Cleanup(func() {
		// Close asks the plugin side to stop (go-plugin's controller
		// Shutdown); stopping it here as well would race with that.
		_ = gc.Close()
		select {
		case <-gs.DoneCh:
		case <-time.After(5 * time.Second):
			gs.Stop()
		}
	})
	raw, err := gc.Dispense(pluginsdk.PluginKey)
	if err != nil {
		t.Fatalf("plugintest: dispense: %v", err)
	}
	c := raw.(*pluginsdk.Client)
	h := &Harness{Host: cfg.host, t: t, cfg: cfg, client: c.Plugin, broker: c.Broker}
	if h.manifest, err = h.Describe(); err != nil {
		t.Fatalf("plugintest: Describe: %v", err)
	}
	h.Host.setManifest(h.manifest)
	if cfg.configure {
		if err := h.Configure(cfg.settings); err != nil {
			t.Fatalf("plugintest: Configure: %v", err)
		}
	}
	return h
}

// Manifest is the manifest the plugin described when the harness started,
// as the server receives it (routes without handlers).
func (h *Harness) Manifest() pluginsdk.Manifest { return h.manifest }

// Describe asks the plugin for its manifest again.
func (h *Harness) Describe() (pluginsdk.Manifest, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.hookTimeout)
	defer cancel()
	pm, err := h.client.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return pluginsdk.Manifest{}, err
	}
	return pluginsdk.ManifestFromProto(pm), nil
}

// Configure serves the Host service (h.Host) on a new broker id and calls
// the plugin's Configure with it, as the server does after every start.
func (h *Harness) Configure(settings json.RawMessage) error {
	id := h.broker.NextId()
	go h.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pluginv1.RegisterHostServer(s, h.Host)
		return s
	})
	ctx, cancel := context.WithTimeout(context.Background(), configureTimeout)
	defer cancel()
	_, err := h.client.Configure(ctx, &pluginv1.ConfigureRequest{HostBrokerId: id, Settings: settings, ServerVersion: "plugintest"})
	return clientError(err)
}

// clientError returns the plugin's *pluginsdk.Error when it sent one (so a
// test can errors.As it), else err as received.
func clientError(err error) error {
	if e, ok := pluginsdk.ErrorFromStatus(err); ok {
		return e
	}
	return err
}

// Request is a full route call for Do.
type Request struct {
	Method string
	Target string // path after /<app>/api with an optional query, e.g. "/munsell/parse?q=N+5/"
	Header http.Header
	Body   []byte
	Actor  pluginsdk.Actor
}

// Response is a route's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r Response) JSON(v any) error {
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("response body %q: %w", clip(r.Body), err)
	}
	return nil
}

// CallRoute calls a route as the server would after routing: target is
// the path after /<app>/api, with an optional query string.
func (h *Harness) CallRoute(method, target string, body []byte, actor pluginsdk.Actor) (Response, error) {
	return h.Do(Request{Method: method, Target: target, Body: body, Actor: actor})
}

// Do calls a route. Like the server, it matches Target against the
// manifest's routes (an unmatched path is still sent, and the plugin
// answers 404 route_not_found), checks the route's access for req.Actor
// (401 unauthenticated for no user or key on a non-public route, 403
// not_enough_privilege for a too low privilege; the plugin is not called),
// never forwards an Authorization header, and applies the route's deadline.
func (h *Harness) Do(req Request) (Response, error) {
	u, err := url.Parse(req.Target)
	if err != nil {
		return Response{}, fmt.Errorf("plugintest: target %q: %w", req.Target, err)
	}
	method := strings.ToUpper(req.Method)
	route, params, found := h.match(method, u.Path)
	pattern := u.Path
	timeout := h.cfg.routeTimeout
	if found {
		pattern = route.Path
		if route.Timeout > 0 {
			timeout = route.Timeout
		}
		// The server's per-table gate: the level on the route's table(s)
		// (SetRights) replaces the actor's for record work.
		if route.Access == pluginsdk.AccessRead || route.Access == pluginsdk.AccessAddNew || route.Access == pluginsdk.AccessEdit {
			req.Actor.Privilege = h.Host.tableLevel(req.Actor, routeTables(route, params, u.Query()))
		}
		if status, code := accessCheck(route.Access, req.Actor); status != 0 {
			body, _ := json.Marshal(map[string]string{"status": "error", "code": code, "message": "refused by the server's access check (plugintest)"})
			return Response{Status: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: body}, nil
		}
	}
	headers := map[string]string{}
	for k, vs := range req.Header {
		if !strings.EqualFold(k, "Authorization") && len(vs) > 0 {
			headers[http.CanonicalHeaderKey(k)] = strings.Join(vs, ", ")
		}
	}
	if len(req.Body) > 0 && headers["Content-Type"] == "" {
		headers["Content-Type"] = "application/json"
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := h.client.HandleRequest(ctx, &pluginv1.HTTPRequest{
		Method: method, Route: pattern, Path: u.Path, Params: params, RawQuery: u.RawQuery,
		Headers: headers, Body: req.Body, Actor: actorToProto(req.Actor),
	})
	if err != nil {
		return Response{}, clientError(err)
	}
	out := Response{Status: int(resp.GetStatus()), Header: http.Header{}, Body: resp.GetBody()}
	for k, v := range resp.GetHeaders() {
		out.Header.Set(k, v)
	}
	return out, nil
}

// match finds the manifest route of a path, as the server's router would:
// static segments before parameters.
func (h *Harness) match(method, path string) (pluginsdk.Route, map[string]string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best pluginsdk.Route
	var bestParams map[string]string
	bestScore := -1
	for _, r := range h.manifest.Routes {
		if r.Method != method {
			continue
		}
		params, score, ok := matchRoute(strings.Split(strings.Trim(r.Path, "/"), "/"), segs)
		if ok && score > bestScore {
			best, bestParams, bestScore = r, params, score
		}
	}
	return best, bestParams, bestScore >= 0
}

// matchRoute matches path segments against a route's; score counts the
// static segments, so "/a/new" wins over "/a/:id".
func matchRoute(route, segs []string) (map[string]string, int, bool) {
	params := map[string]string{}
	score := 0
	for i, rs := range route {
		switch {
		case strings.HasPrefix(rs, "*"):
			params[rs[1:]] = "/" + strings.Join(segs[i:], "/")
			return params, score, true
		case i >= len(segs):
			return nil, 0, false
		case strings.HasPrefix(rs, ":"):
			if segs[i] == "" {
				return nil, 0, false
			}
			params[rs[1:]] = segs[i]
		case rs == segs[i]:
			score++
		default:
			return nil, 0, false
		}
	}
	return params, score, len(route) == len(segs)
}

// accessCheck is the server's gate for a route's access (SPEC §2.7).
func accessCheck(access string, a pluginsdk.Actor) (status int, code string) {
	if access == pluginsdk.AccessPublic {
		return 0, ""
	}
	if a.UserID == 0 && a.APIKeyID == 0 {
		return http.StatusUnauthorized, "unauthenticated"
	}
	lvl := a.Privilege
	ok := false
	if lvl > 0 {
		switch access {
		case pluginsdk.AccessEnter:
			ok = lvl < 40
		case pluginsdk.AccessRead:
			ok = lvl <= pluginsdk.PrivilegeReader
		case pluginsdk.AccessAddNew, pluginsdk.AccessEdit:
			ok = lvl <= pluginsdk.PrivilegeSelfWriter
		case pluginsdk.AccessAdmin:
			ok = lvl <= pluginsdk.PrivilegeAdmin
		case pluginsdk.AccessSuperAdmin:
			ok = lvl == pluginsdk.PrivilegeSuperAdmin
		}
	}
	if !ok {
		return http.StatusForbidden, "not_enough_privilege"
	}
	return 0, ""
}

func (h *Harness) hookContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), h.cfg.hookTimeout)
}

func saveRequest(call pluginsdk.SaveCall) (*pluginv1.SaveRequest, error) {
	req := &pluginv1.SaveRequest{Feature: call.Feature, Table: call.Table, RowTable: call.RowTable, Actor: actorToProto(call.Actor)}
	if req.RowTable == "" {
		req.RowTable = call.Table
	}
	for i, r := range call.Rows {
		values := r.Values
		if values == nil {
			values = map[string]any{}
		}
		b, err := json.Marshal(values)
		if err != nil {
			return nil, fmt.Errorf("plugintest: row %d: %w", i, err)
		}
		pr := &pluginv1.Row{Id: r.ID, ParentId: r.ParentID, Values: b}
		if r.Record != nil {
			if pr.Record, err = json.Marshal(r.Record); err != nil {
				return nil, fmt.Errorf("plugintest: row %d record: %w", i, err)
			}
		}
		req.Rows = append(req.Rows, pr)
	}
	return req, nil
}

// BeforeSave calls the BeforeSave hook. RowTable defaults to Table. The
// results' Values are the values the server would write (decoded with
// UseNumber, the row as sent when the plugin left it unchanged).
//
// A row without a Record gets one built as the server does: the row of
// RowTable stored in the fake host (SetRecords, app call.Actor.App) with
// the row's id, overlaid with its Values; a new row's (or one the host
// does not hold) is its Values. Set Record yourself to pass another row.
func (h *Harness) BeforeSave(call pluginsdk.SaveCall) ([]pluginsdk.RowResult, error) {
	rowTable := call.RowTable
	if rowTable == "" {
		rowTable = call.Table
	}
	call.Rows = slices.Clone(call.Rows)
	for i, r := range call.Rows {
		if r.Record != nil {
			continue
		}
		rec := map[string]any{}
		if r.ID != 0 {
			if stored := h.Host.StoredRow(call.Actor.App, rowTable, r.ID); stored != nil {
				rec = stored
			}
		}
		maps.Copy(rec, r.Values)
		call.Rows[i].Record = rec
	}
	req, err := saveRequest(call)
	if err != nil {
		return nil, err
	}
	ctx, cancel := h.hookContext()
	defer cancel()
	resp, err := h.client.BeforeSave(ctx, req)
	if err != nil {
		return nil, clientError(err)
	}
	if len(resp.GetRows()) != len(call.Rows) {
		return nil, fmt.Errorf("plugintest: %d results for %d rows", len(resp.GetRows()), len(call.Rows))
	}
	out := make([]pluginsdk.RowResult, len(resp.GetRows()))
	for i, pr := range resp.GetRows() {
		values, err := pluginsdk.DecodeObject(pr.GetValues())
		if err != nil {
			return nil, fmt.Errorf("plugintest: result %d: %w", i, err)
		}
		out[i].Values = values
		for _, fe := range pr.GetErrors() {
			out[i].Errors = append(out[i].Errors, pluginsdk.FieldError{Field: fe.GetField(), Rule: fe.GetRule(), Message: fe.GetMessage(), Path: fe.GetPath()})
		}
	}
	return out, nil
}

// AfterSave calls the AfterSave hook.
func (h *Harness) AfterSave(call pluginsdk.SaveCall) error {
	req, err := saveRequest(call)
	if err != nil {
		return err
	}
	ctx, cancel := h.hookContext()
	defer cancel()
	_, err = h.client.AfterSave(ctx, req)
	return clientError(err)
}

// ResolveFilter calls a filter operator. The result's Filter is the filter
// object decoded (map[string]any, numbers as json.Number), nil with UseIDs.
func (h *Harness) ResolveFilter(call pluginsdk.FilterCall) (pluginsdk.FilterResult, error) {
	ctx, cancel := h.hookContext()
	defer cancel()
	resp, err := h.client.ResolveFilter(ctx, &pluginv1.FilterRequest{
		Operator: call.Operator, Table: call.Table, Field: call.Field, Value: call.Value, Actor: actorToProto(call.Actor),
	})
	if err != nil {
		return pluginsdk.FilterResult{}, clientError(err)
	}
	if resp.GetUseIds() {
		ids := resp.GetIds()
		if ids == nil {
			ids = []int64{}
		}
		return pluginsdk.FilterResult{UseIDs: true, IDs: ids}, nil
	}
	filter, err := pluginsdk.DecodeObject(resp.GetFilter())
	if err != nil {
		return pluginsdk.FilterResult{}, fmt.Errorf("plugintest: filter: %w", err)
	}
	return pluginsdk.FilterResult{Filter: filter}, nil
}

// Enrich asks for a record section; values are decoded (UseNumber).
func (h *Harness) Enrich(call pluginsdk.EnrichCall) (map[int64]any, error) {
	ctx, cancel := h.hookContext()
	defer cancel()
	resp, err := h.client.EnrichRecord(ctx, &pluginv1.EnrichRequest{Section: call.Section, Table: call.Table, Ids: call.IDs, Actor: actorToProto(call.Actor)})
	if err != nil {
		return nil, clientError(err)
	}
	out := make(map[int64]any, len(resp.GetSections()))
	for id, b := range resp.GetSections() {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("plugintest: section of record %d: %w", id, err)
		}
		out[id] = v
	}
	return out, nil
}

func actorToProto(a pluginsdk.Actor) *pluginv1.Actor {
	return &pluginv1.Actor{App: a.App, UserId: a.UserID, ApiKeyId: a.APIKeyID, Privilege: int32(a.Privilege), Name: a.Name, Email: a.Email}
}

func actorFromProto(a *pluginv1.Actor) *pluginsdk.Actor {
	if a == nil {
		return nil
	}
	return &pluginsdk.Actor{App: a.GetApp(), UserID: a.GetUserId(), APIKeyID: a.GetApiKeyId(), Privilege: int(a.GetPrivilege()), Name: a.GetName(), Email: a.GetEmail()}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// hclogOutput serialises the harnesses' swaps of hclog.DefaultOutput.
var hclogOutput sync.Mutex

// connect serves p over go-plugin's in-process gRPC connection with every
// log line (go-plugin's debug lines, the SDK's own: a recovered panic's
// stack) in the test's log rather than on the process's stderr, where
// they would mix with every other test's. go-plugin makes its logger from
// hclog.DefaultOutput, read once when the connection is made: it is set
// to the test's log for that moment only.
func connect(t testing.TB, p pluginsdk.Plugin) (*plugin.GRPCClient, *plugin.GRPCServer) {
	w := &testLog{t: t}
	// Registered before the connection's own clean-up, so it runs after
	// it: the lines of the closing connection still reach the log.
	t.Cleanup(w.stop)
	log := hclog.New(&hclog.LoggerOptions{Name: p.Manifest().Name, Output: w, Level: hclog.Debug})
	hclogOutput.Lock()
	defer hclogOutput.Unlock()
	prev := hclog.DefaultOutput
	hclog.DefaultOutput = w
	defer func() { hclog.DefaultOutput = prev }()
	return plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{pluginsdk.PluginKey: pluginsdk.NewGRPCPluginLogged(p, log)})
}

// testLog writes log lines to a test's log while the test runs. Lines
// written once it has ended (a goroutine of the closed connection) are
// dropped: t.Log would panic.
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (w *testLog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}
