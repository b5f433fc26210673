package pluginhost

import (
	"context"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

var errActorRequired = errs.New(errs.Invalid, "actor_required", "a geodata write is made as a user or API key: pass the call's actor")

// AddGeodata adds a feature to a record's geodata as the actor, through
// the geodata area's own writer: the same checks (the table keeps geodata,
// the actor may edit this record: level, own-record rule, row subset), the
// same validation of the geometry and the same version of the record as
// POST /geoface/feature. A plugin never writes user data on its own
// behalf: the actor is required.
func (h *hostServer) AddGeodata(ctx context.Context, req *pluginv1.AddGeodataRequest) (*pluginv1.AddGeodataResponse, error) {
	id, err := h.addGeodata(ctx, req)
	if err != nil {
		return nil, h.hostError("AddGeodata", err)
	}
	return &pluginv1.AddGeodataResponse{Id: id}, nil
}

func (h *hostServer) addGeodata(ctx context.Context, req *pluginv1.AddGeodataRequest) (int64, error) {
	pa := req.GetActor()
	if pa == nil || (pa.GetUserId() == 0 && pa.GetApiKeyId() == 0) {
		return 0, errActorRequired
	}
	if req.GetRecordId() <= 0 {
		return 0, records.ErrRecordNotFound.With("id", req.GetRecordId())
	}
	g, err := geo.Parse(req.GetGeometry())
	if err != nil {
		return 0, err
	}
	a, err := h.app(ctx, req.GetApp())
	if err != nil {
		return 0, err
	}
	full, err := h.m.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return 0, err
	}
	cat := full.Visible()
	scopeOf := func(table string) (*records.Scope, error) {
		t, ok := cat.Table(table)
		if !ok {
			return nil, schema.ErrTableNotFound.With("table", table)
		}
		sc, _, _, err := h.scope(ctx, a, cat, t, pa)
		return sc, err
	}
	var fid int64
	err = geo.Writer{DB: a.DB, ScopeOf: scopeOf}.Do(ctx, func(t *geo.Tx) error {
		fid, err = t.Insert(ctx, req.GetTable(), req.GetRecordId(), g)
		return err
	})
	return fid, err
}
