package pluginhost

import (
	"context"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// RevalidateKind is the job kind of POST /plugins/{name}/revalidate: it
// re-runs a plugin's BeforeSave over the rows saved while it was down
// (records.RecheckUnchecked), with progress done/total.
const RevalidateKind = "plugin_revalidate"

// maxRefusedReported bounds the refused rows a revalidation's result
// lists; RefusedCount counts them all.
const maxRefusedReported = 1000

// uncheckedPage is how many markers a revalidation reads at once.
const uncheckedPage = 200

type revalidateArgs struct {
	Plugin string `json:"plugin"`
}

// RevalidateResult is a revalidation job's result.
type RevalidateResult struct {
	Plugin string `json:"plugin"`
	Total  int64  `json:"total"` // markers when the job started
	// Fixed: accepted, with values that differed from the stored ones
	// (written by the system actor "plugin:<name>"); Unchanged: accepted
	// as stored; Gone: the record or row no longer exists. Their markers
	// are cleared.
	Fixed     int64 `json:"fixed"`
	Unchanged int64 `json:"unchanged"`
	Gone      int64 `json:"gone"`
	// Refused are the rows the plugin refuses now (their markers stay),
	// the first maxRefusedReported of RefusedCount.
	RefusedCount int64        `json:"refused_count"`
	Refused      []RefusedRow `json:"refused"`
	Kept         int64        `json:"kept"` // markers kept for another reason (see Refused's code)
}

// RefusedRow is a marker the revalidation kept: the plugin's field errors,
// or the code of what kept it (feature_inactive, a failed call).
type RefusedRow struct {
	records.Unchecked
	Errors  []records.FieldError `json:"errors,omitempty"`
	Code    string               `json:"code,omitempty"`
	Message string               `json:"message,omitempty"`
}

// StartRevalidate enqueues the revalidation of plugin's unchecked rows in
// app. The plugin must be loaded (404 plugin_not_found) and running (503
// plugin_unavailable): the job would only fail.
func (m *Manager) StartRevalidate(ctx context.Context, sys *jobs.System, app string, user int64, plugin string) (jobs.Job, error) {
	p, ok := m.plugin(plugin)
	if !ok {
		return jobs.Job{}, ErrNotFound.With("plugin", plugin)
	}
	if _, err := p.client(); err != nil {
		return jobs.Job{}, err
	}
	return sys.Enqueue(ctx, app, user, RevalidateKind, revalidateArgs{Plugin: plugin})
}

// runRevalidate walks the plugin's markers in id order. A plugin found
// down fails the job with plugin_unavailable (the markers not reached
// stay, a later run takes them up).
func (m *Manager) runRevalidate(ctx context.Context, run *jobs.Run) (any, error) {
	var args revalidateArgs
	if err := run.Bind(&args); err != nil {
		return nil, err
	}
	if m.opts.Apps == nil {
		return nil, errNoApps
	}
	a, err := m.opts.Apps.Get(ctx, run.App())
	if err != nil {
		return nil, err
	}
	res := RevalidateResult{Plugin: args.Plugin, Refused: []RefusedRow{}}
	// Only the markers the admin who started the job may edit, through the
	// one gate (records.Grants, read now): a table denied by an override
	// and the rows outside a subset are neither rewritten nor reported.
	mayEdit, err := m.editScopes(ctx, a, run.User())
	if err != nil {
		return nil, err
	}
	_, total, err := records.ListUnchecked(ctx, a.DB, records.UncheckedQuery{Plugin: args.Plugin, PerPage: 1, Scope: mayEdit})
	if err != nil {
		return nil, err
	}
	res.Total = total
	run.Progress(0, total)
	scopes := map[string]*records.Scope{}
	var done, after int64
	for {
		page, _, err := records.ListUnchecked(ctx, a.DB, records.UncheckedQuery{Plugin: args.Plugin, AfterID: after, PerPage: uncheckedPage, Scope: mayEdit})
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, u := range page {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			after = u.ID
			sc, ok := scopes[u.Table]
			if !ok {
				// The catalog is read again per table: a model changed
				// while the job runs is taken as it is now.
				full, err := m.catalogs.Get(ctx, a.Name, a.DB)
				if err != nil {
					return nil, err
				}
				cat := full.Visible()
				if t, found := cat.Table(u.Table); found {
					sc = &records.Scope{DB: a.DB, Catalog: cat, Table: t, App: a.Name}
					ex := m.ForTable(t)
					sc.Features, sc.Sections, sc.SchemaFlags = ex.Features, ex.Sections, ex.SchemaFlags
					sc = records.SystemScope(sc, args.Plugin)
					sc.UncheckedLog = m.uncheckedLog(a.Name)
				}
				scopes[u.Table] = sc
			}
			if sc == nil {
				res.keep(u, errs.New(errs.NotFound, schema.ErrTableNotFound.Code, "the table no longer exists"))
			} else if err := res.recheck(ctx, sc, u); err != nil {
				return nil, err
			}
			done++
			run.Progress(done, max(total, done))
		}
	}
	return res, nil
}

// editScopes is the gate of the revalidation's markers for the user who
// started it: the user's scope on a table where they may edit records, else
// records.ErrNotEnough (ListUnchecked then leaves the table out).
func (m *Manager) editScopes(ctx context.Context, a *apps.App, user int64) (func(string) (*records.Scope, error), error) {
	u, err := auth.FindUser(ctx, a.DB, user)
	if err != nil {
		return nil, err
	}
	overrides, err := auth.ListTablePrivileges(ctx, a.DB, u.ID)
	if err != nil {
		return nil, err
	}
	g := records.NewGrants(&auth.Actor{UserID: u.ID, Name: u.Name, Email: u.Email, Privilege: u.Privilege}, overrides)
	return func(table string) (*records.Scope, error) {
		full, err := m.catalogs.Get(ctx, a.Name, a.DB)
		if err != nil {
			return nil, err
		}
		sc, err := g.Scope(ctx, a.DB, full.Visible(), table)
		if err == nil && !auth.Edit.Allows(sc.Level) {
			err = records.ErrNotEnough
		}
		return sc, err
	}, nil
}

// recheck revalidates one marker into res; only a plugin found down is an
// error (it ends the job).
func (res *RevalidateResult) recheck(ctx context.Context, sc *records.Scope, u records.Unchecked) error {
	out, err := records.RecheckUnchecked(ctx, sc, u)
	if err != nil {
		if e, ok := errs.As(err); ok && (e.Code == ErrUnavailable.Code || e.Code == ErrUnresponsive.Code) {
			return ErrUnavailable.With("plugin", res.Plugin).With("done", res.Fixed+res.Unchanged+res.Gone+res.RefusedCount+res.Kept)
		}
		if e, ok := errs.As(err); ok && e.Kind != errs.Internal {
			res.keep(u, e)
			return nil
		}
		return err
	}
	switch {
	case out.Gone:
		res.Gone++
	case len(out.Errors) > 0:
		res.RefusedCount++
		if len(res.Refused) < maxRefusedReported {
			res.Refused = append(res.Refused, RefusedRow{Unchecked: u, Errors: out.Errors, Code: records.ErrValidation.Code})
		}
	case out.Written:
		res.Fixed++
	default:
		res.Unchanged++
	}
	return nil
}

// keep reports a marker kept for another reason than the plugin's field
// errors.
func (res *RevalidateResult) keep(u records.Unchecked, e *errs.Error) {
	res.Kept++
	if len(res.Refused) < maxRefusedReported {
		res.Refused = append(res.Refused, RefusedRow{Unchecked: u, Code: e.Code, Message: e.Message})
	}
}

// uncheckedLog is records.Scope.UncheckedLog for saves the host makes.
func (m *Manager) uncheckedLog(app string) func(records.Unchecked) {
	return func(u records.Unchecked) {
		m.log.Warn("saved without a plugin's check: the row is marked unchecked until the plugin revalidates it",
			"app", app, "plugin", u.Plugin, "feature", u.Feature, "table", u.Table, "record_id", u.RecordID,
			"row_table", u.RowTable, "row_id", u.RowID, "reason", u.Reason)
	}
}
