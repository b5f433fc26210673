package geo

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// Routes are the geodata area's (SPEC §4.5, §4.6; CONTRACT §10). The
// table comes in the query or the body, so the level is checked by the
// handler on that table (records' scope), not at the gate.
func Routes(host api.Host) []api.Route {
	h := handlers{host: host}
	return append([]api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/geoface", Access: auth.Enter, Handler: h.collection},
		{Scope: api.App, Method: http.MethodPost, Path: "/geoface/feature", Access: auth.Enter, Handler: h.insert},
		{Scope: api.App, Method: http.MethodPut, Path: "/geoface/feature", Access: auth.Enter, Handler: h.update},
		{Scope: api.App, Method: http.MethodDelete, Path: "/geoface/feature", Access: auth.Enter, Handler: h.delete},
	}, layerRoutes(host)...)
}

type handlers struct{ host api.Host }

var errMissing = errs.New(errs.Invalid, "parameter_missing", "a required parameter is missing")

// readScope is the caller's scope on table, which they must be able to read.
func (h handlers) readScope(c *gin.Context, table string) (*records.Scope, error) {
	if strings.TrimSpace(table) == "" {
		return nil, errMissing.With("parameter", "tb")
	}
	// The records gate refuses a table the caller may not read.
	return h.host.RecordScope(c, table)
}

// GET /geoface?tb=&filter…&bbox= — {geojson, meta}: the features of the
// caller's records of tb matching the list filter (its bracket or JSON
// form, geodata._intersects included), those meeting bbox when given.
func (h handlers) collection(c *gin.Context) {
	sc, err := h.readScope(c, c.Query("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	q := CollectionQuery{}
	if s := strings.TrimSpace(c.Query("bbox")); s != "" {
		b, err := ParseBBox(s)
		if err != nil {
			api.Fail(c, err)
			return
		}
		q.Viewport = &b
	}
	if q.Where, err = h.host.Condition(c, sc, nil, c.Query("search")); err != nil {
		api.Fail(c, err)
		return
	}
	layers, err := mapLayers(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	meta := gin.H{
		"tb_id": sc.Table.Name, "tb_label": sc.Table.Label, "id_field": records.IDFieldOf(sc.Table),
		"canUserEdit": auth.Edit.Allows(sc.Level), "preview_fields": []string{},
		"has_fuzzy_date": sc.SchemaFlags["has_chronology"], "layers": layers,
	}
	if !sc.Table.Geodata {
		// BraDypUS's client offers "View on map" for every table and
		// BraDypUS answers a table without geodata with an empty
		// collection, so this shared route does too (CONTRACT §9/§10: the
		// client wins); reason and message say why, for clients that
		// explain it. Drawing is not offered: every feature would be
		// refused with geodata_not_enabled.
		meta["canUserEdit"] = false
		for _, f := range previewFields(sc.Table) {
			meta["preview_fields"] = append(meta["preview_fields"].([]string), f.Label)
		}
		api.Success(c, http.StatusOK, gin.H{
			"geojson":   gin.H{"type": "FeatureCollection", "features": []any{}},
			"truncated": false, "meta": meta,
			"reason": ErrNotGeoTable.Code, "message": ErrNotGeoTable.Message,
		})
		return
	}
	col, err := ReadCollection(c.Request.Context(), sc, q)
	if err != nil {
		api.Fail(c, err)
		return
	}
	meta["preview_fields"] = col.Preview
	api.Success(c, http.StatusOK, gin.H{"geojson": col.GeoJSON(), "truncated": col.Truncated, "meta": meta})
}

type insertBody struct {
	Tb       string          `json:"tb"`
	ID       any             `json:"id"`
	Geometry json.RawMessage `json:"geometry"`
}

// POST /geoface/feature {tb, id, geometry} — {code: ok_insert_geodata,
// geo_id}: a feature added to record id (which the caller may edit).
func (h handlers) insert(c *gin.Context) {
	var b insertBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	id, err := api.ParseID(b.ID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if strings.TrimSpace(b.Tb) == "" || id == 0 || len(b.Geometry) == 0 {
		api.Fail(c, errMissing.With("detail", "tb, id and geometry are required"))
		return
	}
	g, err := Parse(b.Geometry)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var fid int64
	err = h.writer(c).Do(c.Request.Context(), func(t *Tx) error {
		fid, err = t.Insert(c.Request.Context(), b.Tb, id, g)
		return err
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_insert_geodata", "geo_id": fid, "id": fid})
}

func (h handlers) writer(c *gin.Context) Writer {
	return Writer{DB: api.AppOf(c).DB, ScopeOf: func(table string) (*records.Scope, error) { return h.host.RecordScope(c, table) }}
}

type updateBody struct {
	Geodata []struct {
		ID       any             `json:"id"`
		Geometry json.RawMessage `json:"geometry"`
	} `json:"geodata"`
}

// PUT /geoface/feature {geodata: [{id, geometry}]} — {code:
// ok_update_geometry}: every geometry replaced, or none.
func (h handlers) update(c *gin.Context) {
	var b updateBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	if len(b.Geodata) == 0 {
		api.Fail(c, errMissing.With("parameter", "geodata"))
		return
	}
	ids := make([]int64, len(b.Geodata))
	geoms := make([]orb.Geometry, len(b.Geodata))
	for i, item := range b.Geodata {
		id, err := api.ParseID(item.ID)
		if err == nil && id == 0 {
			err = errMissing.With("detail", "each item needs its feature id")
		}
		if err != nil {
			api.Fail(c, err)
			return
		}
		g, err := Parse(item.Geometry)
		if err != nil {
			api.Fail(c, withIndex(err, i))
			return
		}
		ids[i], geoms[i] = id, g
	}
	ctx := c.Request.Context()
	err := h.writer(c).Do(ctx, func(t *Tx) error {
		for i, id := range ids {
			if err := t.Update(ctx, id, geoms[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_update_geometry", "updated": len(ids)})
}

type deleteBody struct {
	IDs []any `json:"ids"`
	ID  any   `json:"id"`
}

// DELETE /geoface/feature {ids: [...]} — {code: ok_delete_geodata}: every
// feature deleted, or none.
func (h handlers) delete(c *gin.Context) {
	var b deleteBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	raw := b.IDs
	if b.ID != nil {
		raw = append(raw, b.ID)
	}
	if len(raw) == 0 {
		api.Fail(c, errMissing.With("parameter", "ids"))
		return
	}
	ids := make([]int64, 0, len(raw))
	for _, v := range raw {
		id, err := api.ParseID(v)
		if err != nil || id == 0 {
			api.Fail(c, records.ErrInvalidID)
			return
		}
		ids = append(ids, id)
	}
	ctx := c.Request.Context()
	err := h.writer(c).Do(ctx, func(t *Tx) error {
		for _, id := range ids {
			if err := t.Delete(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_delete_geodata", "deleted": len(ids)})
}

// withIndex says which item of a list an error is about.
func withIndex(err error, i int) error {
	if e, ok := errs.As(err); ok {
		return e.With("index", i)
	}
	return err
}
