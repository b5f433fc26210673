// Package rscheck is the matrix check of issue 33: what is wrong with a
// table's stratigraphic relations (cycles, "same as" units related above
// each other, missing reciprocal rows, relations to records that are
// gone, redundant relations, period and terminus post quem inversions),
// and the one fix it offers (adding a missing reciprocal row; it never
// deletes). It reads and writes only through core/records' Scope, so a
// caller's report covers the records they may read and no more. The
// graph work is core/matrix's; the meaning of each category is in
// docs/api.md ("Matrix check").
package rscheck

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/wire"
)

// KindCheck is the job kind of a check run as a job.
const KindCheck = "rs.check"

// InlineRelations is the most relations (those the caller can see) a
// check answers in the request; above it, or with async=1, it runs as a
// job. A few thousand relations check in milliseconds; the bound keeps
// a request of a large table from holding a connection for seconds.
const InlineRelations = 5000

// MaxFixes bounds the fixes of one POST.
const MaxFixes = 1000

// Errors of the check's routes.
var (
	ErrUnknownFix = errs.New(errs.Invalid, "unknown_fix", "the only fix offered is missing_reciprocal")
	ErrTooMany    = errs.New(errs.Invalid, "too_many_fixes", "at most 1000 fixes at once")
	ErrNoFixes    = errs.New(errs.Invalid, "parameter_missing", "kind and relation_id are required")
	ErrNotMissing = errs.New(errs.Conflict, "reciprocal_not_missing",
		"this relation is not missing its reciprocal (the check does not report it)")
)

// Routes are the check's: any reader of the table runs it; the fix
// writes relations, as adding one does (the gate checks the table's
// per-table level, :tb being in the path).
func Routes(host api.Host, sys *jobs.System) []api.Route {
	h := handlers{host: host, jobs: sys}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/rs/:tb/check", Access: auth.Read, Handler: h.check},
		{Scope: api.App, Method: http.MethodPost, Path: "/rs/:tb/check/fix", Access: auth.Edit, Handler: h.fix},
	}
}

// Register adds the check's job kind: the job acts as the user who
// started it, with their rights as they are when it runs.
func Register(sys *jobs.System, host api.Host, reg *apps.Registry) {
	sys.Register(KindCheck, func(ctx context.Context, run *jobs.Run) (any, error) {
		var a checkArgs
		if err := run.Bind(&a); err != nil {
			return nil, err
		}
		app, err := reg.Get(ctx, run.App())
		if err != nil {
			return nil, err
		}
		sc, err := host.ScopeFor(ctx, app, run.User(), a.Tb)
		if err != nil {
			return nil, err
		}
		d, err := records.ReadMatrixCheck(ctx, sc)
		if err != nil {
			return nil, err
		}
		return Check(a.Tb, d, run.Progress), nil
	})
}

type checkArgs struct {
	Tb string `json:"tb"`
}

type handlers struct {
	host api.Host
	jobs *jobs.System // nil: every check runs in the request
}

// GET /rs/{tb}/check[?async=1] — the report (200) when it runs in the
// request; 202 {code: rs_check_started, job} when it runs as a job,
// whose result is the report.
func (h handlers) check(c *gin.Context) {
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	async := false
	if v, ok := c.GetQuery("async"); ok {
		if async, err = wire.Bool(v); err != nil {
			api.Fail(c, records.ErrInvalidParameter.With("parameter", "async").With("detail", "async must be a boolean"))
			return
		}
	}
	d, err := records.ReadMatrixCheck(c.Request.Context(), sc)
	if err != nil {
		api.Fail(c, err)
		return
	}
	user := api.ActorOf(c).UserID
	// A job acts for a user: an API key's check runs here, whatever its size.
	if (async || len(d.Relations) > InlineRelations) && h.jobs != nil && user != 0 {
		job, err := h.jobs.Enqueue(c.Request.Context(), api.AppOf(c).Name, user, KindCheck, checkArgs{Tb: sc.Table.Name})
		if err != nil {
			api.Fail(c, err)
			return
		}
		api.Success(c, http.StatusAccepted, gin.H{"code": "rs_check_started", "job": jobs.Wire(job)})
		return
	}
	r := Check(sc.Table.Name, d, nil)
	api.Success(c, http.StatusOK, gin.H{"tb": r.Table, "units": r.Units, "relations": r.Relations, "clean": r.Clean,
		"limit": r.Limit, "skipped": r.Skipped, "problems": r.Problems})
}

// fixBody is one fix asked for.
type fixBody struct {
	Kind       string `json:"kind"`
	RelationID any    `json:"relation_id"`
}

// POST /rs/{tb}/check/fix {kind, relation_id} or a list of them — adds
// each missing reciprocal row, all or none: {code: ok_rs_fixed, added:
// [{relation_id, id}]}.
func (h handlers) fix(c *gin.Context) {
	sc, err := h.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		api.Fail(c, api.BodyReadErr(err))
		return
	}
	var fixes []fixBody
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		err = wire.Decode(body, &fixes, wire.Options{ExactNumbers: true})
	} else {
		var one fixBody
		err = wire.Decode(body, &one, wire.Options{ExactNumbers: true})
		fixes = []fixBody{one}
	}
	if err != nil {
		api.Fail(c, api.DecodeErr(err))
		return
	}
	switch {
	case len(fixes) == 0:
		api.Fail(c, ErrNoFixes)
		return
	case len(fixes) > MaxFixes:
		api.Fail(c, ErrTooMany.With("max", MaxFixes))
		return
	}
	var ids []int64
	for i, f := range fixes {
		if f.Kind == "" || f.RelationID == nil {
			api.Fail(c, ErrNoFixes.With("index", i))
			return
		}
		if f.Kind != MissingReciprocal {
			api.Fail(c, ErrUnknownFix.With("index", i).With("kind", f.Kind))
			return
		}
		id, err := api.ParseID(f.RelationID)
		if err != nil || id == 0 {
			api.Fail(c, records.ErrInvalidID.With("index", i))
			return
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	// Only what the check reports is fixed, judged on what the caller
	// sees (as their report is).
	d, err := records.ReadMatrixCheck(c.Request.Context(), sc)
	if err != nil {
		api.Fail(c, err)
		return
	}
	visible := make(map[int64]bool, len(d.Relations))
	for _, r := range d.Relations {
		visible[r.ID] = true
	}
	missing := Missing(d.Relations)
	for _, id := range ids {
		if !visible[id] {
			api.Fail(c, records.ErrRelationNotFound.With("id", id))
			return
		}
		if !missing[id] {
			api.Fail(c, ErrNotMissing.With("id", id))
			return
		}
	}
	added, err := records.AddReciprocals(c.Request.Context(), sc, ids)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		out[i] = map[string]any{"relation_id": id, "id": added[i]}
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_rs_fixed", "added": out})
}
