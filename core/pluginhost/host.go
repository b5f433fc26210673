package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/secrets"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Bounds of QueryRecords.
const (
	defaultQueryLimit = 1000
	maxQueryLimit     = 10000
)

var (
	errNoApps      = errs.New(errs.Unavailable, "host_unavailable", "the server has no applications to serve")
	errActorDenied = errs.New(errs.Forbidden, "not_enough_privilege", "the actor may not read this table")
)

// hostServer is the Host service as one plugin reaches it: every call is
// made as that plugin, so it touches only its own system tables.
type hostServer struct {
	pluginv1.UnimplementedHostServer
	m *Manager
	p *plugin
}

// hostError turns an error into the gRPC status a plugin receives: the
// code of a client error travels as an ErrorInfo reason (as pluginsdk
// reads plugin errors), anything else is logged and answered Internal.
func (h *hostServer) hostError(call string, err error) error {
	e, ok := errs.As(err)
	if !ok || e.Kind == errs.Internal {
		h.m.log.Error("plugin host call failed", "plugin", h.p.name, "call", call, "err", err)
		return status.Error(codes.Internal, "the server failed; the failure has been logged")
	}
	code := codes.InvalidArgument
	switch e.Kind {
	case errs.NotFound:
		code = codes.NotFound
	case errs.Forbidden, errs.Unauthenticated:
		code = codes.PermissionDenied
	case errs.Unavailable:
		code = codes.Unavailable
	case errs.Conflict:
		code = codes.AlreadyExists
	}
	msg := e.Message
	if d, ok := e.Extra["detail"].(string); ok && d != "" {
		msg += ": " + d
	}
	st := status.New(code, e.Code+": "+msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: e.Code, Domain: pluginsdk.ErrorDomain}); err == nil {
		st = d
	}
	return st.Err()
}

func (h *hostServer) app(ctx context.Context, name string) (*apps.App, error) {
	if h.m.opts.Apps == nil {
		return nil, errNoApps
	}
	a, err := h.m.opts.Apps.Get(ctx, name)
	if errors.Is(err, store.ErrAppNotFound) {
		return nil, apps.ErrNotFound.With("app", name)
	}
	return a, err
}

// QueryRecords lists records as the actor would (its level, per-table
// overrides and row subsets, re-read now), or every record when the
// plugin asks on its own behalf.
func (h *hostServer) QueryRecords(ctx context.Context, req *pluginv1.QueryRequest) (*pluginv1.QueryResponse, error) {
	resp, err := h.queryRecords(ctx, req)
	if err != nil {
		return nil, h.hostError("QueryRecords", err)
	}
	return resp, nil
}

func (h *hostServer) queryRecords(ctx context.Context, req *pluginv1.QueryRequest) (*pluginv1.QueryResponse, error) {
	a, err := h.app(ctx, req.GetApp())
	if err != nil {
		return nil, err
	}
	full, err := h.m.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	cat := full.Visible()
	t, ok := cat.Table(req.GetTable())
	if !ok {
		return nil, schema.ErrTableNotFound.With("table", req.GetTable())
	}
	sc, opt, actor, err := h.scope(ctx, a, cat, t, req.GetActor())
	if err != nil {
		return nil, err
	}
	q := records.ListQuery{SortField: req.GetSortField(), SortDir: req.GetSortDir(), Columns: req.GetColumns()}
	if len(q.Columns) == 0 {
		for _, f := range t.Fields {
			q.Columns = append(q.Columns, f.Name)
		}
	}
	node, err := filter.ParseJSON(req.GetFilter())
	if err != nil {
		return nil, err
	}
	if node != nil {
		sql, args, err := filter.RenderWith(WithActor(ctx, actor), a.DB, cat, t.Name, node, opt)
		if err != nil {
			return nil, err
		}
		q.Where = &records.Cond{SQL: sql, Args: args}
	}
	limit, offset := int(req.GetLimit()), max(int(req.GetOffset()), 0)
	switch {
	case limit <= 0:
		limit = defaultQueryLimit
	case limit > maxQueryLimit:
		limit = maxQueryLimit
	}
	rows, total, err := queryWindow(ctx, sc, q, offset, limit)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	return &pluginv1.QueryResponse{Total: total, Rows: b}, nil
}

// queryWindow reads rows [offset, offset+limit) of q with records.List,
// whose pages are at most records.MaxPerPage rows: page by page when the
// offset falls on a page boundary, else through the ordered ids.
func queryWindow(ctx context.Context, sc *records.Scope, q records.ListQuery, offset, limit int) ([]map[string]any, int64, error) {
	const page = records.MaxPerPage
	out := []map[string]any{}
	if offset%page == 0 {
		q.PerPage, q.Page = page, offset/page+1
		var total int64
		for len(out) < limit {
			res, err := records.List(ctx, sc, q)
			if err != nil {
				return nil, 0, err
			}
			total = res.Total
			out = append(out, res.Data...)
			if len(res.Data) < page {
				break
			}
			q.Page++
		}
		return out[:min(limit, len(out))], total, nil
	}
	// The ordered ids of the window, read in pages of records.MaxIDsPerPage
	// from the one holding offset.
	const idPage = records.MaxIDsPerPage
	idq := q
	idq.IDsOnly, idq.PerPage, idq.Page = true, idPage, offset/idPage+1
	skip := offset % idPage
	var ids []int64
	var res *records.ListResult
	for {
		var err error
		if res, err = records.List(ctx, sc, idq); err != nil {
			return nil, 0, err
		}
		ids = append(ids, res.IDs...)
		if len(res.IDs) < idPage || len(ids) >= skip+limit {
			break
		}
		idq.Page++
	}
	ids = ids[min(skip, len(ids)):min(skip+limit, len(ids))]
	for len(ids) > 0 {
		chunk := ids[:min(page, len(ids))]
		ids = ids[len(chunk):]
		args := make([]string, len(chunk))
		for i, id := range chunk {
			args[i] = jsonInt(id)
		}
		idSQL, idArgs, err := filter.Render(sc.DB, sc.Catalog, sc.Table.Name, filter.Cond{Field: schema.ColID, Op: "_in", Args: args})
		if err != nil {
			return nil, 0, err
		}
		cq := q
		cq.Page, cq.PerPage = 1, page
		cq.Where = &records.Cond{SQL: idSQL, Args: idArgs}
		if q.Where != nil {
			cq.Where = &records.Cond{SQL: "(" + q.Where.SQL + ") AND (" + idSQL + ")", Args: append(append([]any{}, q.Where.Args...), idArgs...)}
		}
		part, err := records.List(ctx, sc, cq)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, part.Data...)
	}
	return out, res.Total, nil
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// scope is the records scope of the actor on t, the filter options that
// keep its nested conditions within what it may read, and the actor as
// plugin operators see it, opened through the same gate as a request's
// (records.Grants).
func (h *hostServer) scope(ctx context.Context, a *apps.App, cat *schema.Catalog, t *schema.Table, pa *pluginv1.Actor) (*records.Scope, filter.Options, *records.Actor, error) {
	sc := &records.Scope{DB: a.DB, Catalog: cat, Table: t, App: a.Name}
	if pa == nil || (pa.GetUserId() == 0 && pa.GetApiKeyId() == 0) {
		// The plugin on its own behalf reads every record.
		sc.Actor = &auth.Actor{Name: "plugin " + h.p.name, Privilege: auth.SuperAdmin}
		sc.Level = auth.SuperAdmin
		return sc, filter.Options{Operators: h.m.ops}, &records.Actor{App: a.Name, Privilege: auth.SuperAdmin, Name: sc.Actor.Name}, nil
	}
	actor := &auth.Actor{}
	var overrides []auth.TablePrivilege
	if pa.GetUserId() != 0 {
		u, err := auth.FindUser(ctx, a.DB, pa.GetUserId())
		if errors.Is(err, auth.ErrUserNotFound) {
			return nil, filter.Options{}, nil, errActorDenied.With("reason", "no such user")
		}
		if err != nil {
			return nil, filter.Options{}, nil, err
		}
		actor = &auth.Actor{UserID: u.ID, Name: u.Name, Email: u.Email, Privilege: u.Privilege}
		if overrides, err = auth.ListTablePrivileges(ctx, a.DB, u.ID); err != nil {
			return nil, filter.Options{}, nil, err
		}
	} else {
		var label string
		var privilege int
		var revoked any
		err := a.DB.QueryRow(ctx, `SELECT label, privilege, revoked_at FROM `+a.DB.Sys("api_keys")+` WHERE id = ?`,
			pa.GetApiKeyId()).Scan(&label, &privilege, &revoked)
		if err != nil || revoked != nil {
			return nil, filter.Options{}, nil, errActorDenied.With("reason", "no such active API key")
		}
		actor = &auth.Actor{KeyID: pa.GetApiKeyId(), Name: label, Privilege: privilege}
	}
	// The same gate as every request's (records.Grants): the level and
	// subset of the actor, read from the database now, never taken from
	// the plugin.
	g := records.NewGrants(actor, overrides)
	gated, err := g.Scope(ctx, a.DB, cat, t.Name)
	if errors.Is(err, records.ErrNotEnough) {
		return nil, filter.Options{}, nil, errActorDenied.With("table", t.Name)
	}
	if err != nil {
		return nil, filter.Options{}, nil, err
	}
	gated.App = a.Name
	sc = gated
	opt := g.FilterOptions(cat)
	opt.Operators = h.m.ops
	ra := &records.Actor{App: a.Name, UserID: actor.UserID, APIKeyID: actor.KeyID, Privilege: sc.Level, Name: actor.Name, Email: actor.Email}
	return sc, opt, ra, nil
}

// ReadSystemRows reads the plugin's own system table in an application.
func (h *hostServer) ReadSystemRows(ctx context.Context, req *pluginv1.SystemReadRequest) (*pluginv1.SystemRows, error) {
	rows, err := func() ([]map[string]any, error) {
		st, a, err := h.systemTable(ctx, req.GetApp(), req.GetTable())
		if err != nil {
			return nil, err
		}
		return readSystemRows(ctx, a.DB, st, req.GetFilter(), int(req.GetLimit()))
	}()
	if err != nil {
		return nil, h.hostError("ReadSystemRows", err)
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, h.hostError("ReadSystemRows", err)
	}
	return &pluginv1.SystemRows{Rows: b}, nil
}

// WriteSystemRows changes the plugin's own system table in an
// application, in one transaction.
func (h *hostServer) WriteSystemRows(ctx context.Context, req *pluginv1.SystemWriteRequest) (*pluginv1.SystemWriteResponse, error) {
	st, a, err := h.systemTable(ctx, req.GetApp(), req.GetTable())
	if err != nil {
		return nil, h.hostError("WriteSystemRows", err)
	}
	ids, err := writeSystemRows(ctx, a.DB, st, req.GetUpsert(), req.GetDeleteIds())
	if err != nil {
		return nil, h.hostError("WriteSystemRows", err)
	}
	return &pluginv1.SystemWriteResponse{Ids: ids}, nil
}

// systemTable resolves a table name of the plugin's manifest in an
// application, creating the plugin's tables there on first use.
func (h *hostServer) systemTable(ctx context.Context, app, name string) (*systemTable, *apps.App, error) {
	st, err := h.p.systemTable(name)
	if err != nil {
		return nil, nil, err
	}
	a, err := h.app(ctx, app)
	if err != nil {
		return nil, nil, err
	}
	if err := h.m.ensureSystemTables(ctx, a.DB, h.p); err != nil {
		return nil, nil, err
	}
	return st, a, nil
}

// secretSetting reports settings a plugin never sees (apps.IsSecretSetting).
func secretSetting(key string) bool { return apps.IsSecretSetting(key) }

// AppSettings returns an application's settings without the secrets.
func (h *hostServer) AppSettings(ctx context.Context, req *pluginv1.AppSettingsRequest) (*pluginv1.AppSettingsResponse, error) {
	a, err := h.app(ctx, req.GetApp())
	if err != nil {
		return nil, h.hostError("AppSettings", err)
	}
	all, err := a.Settings(ctx)
	if err != nil {
		return nil, h.hostError("AppSettings", err)
	}
	out := make(map[string]string, len(all))
	for k, v := range all {
		if !secretSetting(k) {
			out[k] = v
		}
	}
	return &pluginv1.AppSettingsResponse{Settings: out}, nil
}

// Log writes a plugin's line to the server's log, tagged with the plugin.
func (h *hostServer) Log(ctx context.Context, req *pluginv1.LogRequest) (*pluginv1.LogResponse, error) {
	level := slog.LevelInfo
	switch strings.ToLower(req.GetLevel()) {
	case "debug":
		level = slog.LevelDebug
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	args := []any{"plugin", h.p.name}
	for k, v := range req.GetFields() {
		args = append(args, "plugin."+k, v)
	}
	h.m.log.Log(ctx, level, req.GetMessage(), args...)
	return &pluginv1.LogResponse{}, nil
}

// Errors of Seal and Open.
var (
	errNoKeyring  = errs.New(errs.Unavailable, "secrets_unavailable", "the server has no instance key to seal values with")
	errSealArgs   = errs.New(errs.Invalid, "parameter_missing", "seal and open need an app and a purpose")
	errSealRefuse = errs.New(errs.Invalid, "secret_invalid", "the value was not sealed by this server for this plugin, app and purpose")
)

// sealPlace is the additional data a plugin's sealed value is bound to:
// the plugin, the app and the purpose, so a value copied to another app,
// purpose or plugin does not open. The NUL separators keep names from
// running into each other.
func sealPlace(plugin, app, purpose string) string {
	return "plugin\x00" + plugin + "\x00" + app + "\x00" + purpose
}

// sealArgs checks a Seal or Open call and returns the instance keyring.
func (h *hostServer) sealArgs(ctx context.Context, app, purpose string) (*secrets.Keyring, error) {
	if app == "" || purpose == "" {
		return nil, errSealArgs
	}
	if _, err := h.app(ctx, app); err != nil {
		return nil, err
	}
	kr := h.m.opts.Apps.Keyring()
	if kr == nil {
		return nil, errNoKeyring
	}
	return kr, nil
}

// Seal encrypts a plugin's value with the instance key (core/secrets),
// bound to the plugin, app and purpose. The plugin stores the answer; the
// key never leaves the server.
func (h *hostServer) Seal(ctx context.Context, req *pluginv1.SealRequest) (*pluginv1.SealResponse, error) {
	if _, err := h.sealArgs(ctx, req.GetApp(), req.GetPurpose()); err != nil {
		return nil, h.hostError("Seal", err)
	}
	sealed, err := h.m.Seal(h.p.name, req.GetApp(), req.GetPurpose(), req.GetClear())
	if err != nil {
		return nil, h.hostError("Seal", err)
	}
	return &pluginv1.SealResponse{Sealed: sealed}, nil
}

// Open decrypts a value Seal gave to the same plugin for the same app and
// purpose. Unlike a secret setting, a clear (unsealed) value is refused:
// a plugin's values were sealed from the start, so clear text where a
// sealed value belongs means something else wrote it.
func (h *hostServer) Open(ctx context.Context, req *pluginv1.OpenRequest) (*pluginv1.OpenResponse, error) {
	kr, err := h.sealArgs(ctx, req.GetApp(), req.GetPurpose())
	if err != nil {
		return nil, h.hostError("Open", err)
	}
	if !secrets.IsSealed(req.GetSealed()) {
		return nil, h.hostError("Open", errSealRefuse)
	}
	clear, err := kr.Open(req.GetSealed(), sealPlace(h.p.name, req.GetApp(), req.GetPurpose()))
	if err != nil {
		if errors.Is(err, secrets.ErrUnknownKey) {
			// The value was sealed with a key this server no longer holds.
			return nil, h.hostError("Open", errSealRefuse.With("detail", "sealed with key unknown here (restore the key file or "+secrets.EnvKey+")"))
		}
		return nil, h.hostError("Open", errSealRefuse)
	}
	return &pluginv1.OpenResponse{Clear: clear}, nil
}
