package imports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/geo"
	"github.com/strata-archaeo/strata/core/jobs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// The GeoJSON import (SPEC §4.5): a FeatureCollection whose features are
// attached to the records one of their properties names (by a key field
// of the table), or to records it creates; previewed first, then all or
// nothing. Coordinates are EPSG:4326, or the projected system the file's
// `crs` names (or the request's `crs`), converted by core/geo.

// KindGeoJSON is the job kind of a GeoJSON import.
const KindGeoJSON = "import.geojson"

// isGeoJSON: a JSON object that says it is a FeatureCollection or Feature.
func isGeoJSON(data []byte) bool {
	d := bytes.TrimSpace(data)
	if len(d) == 0 || d[0] != '{' {
		return false
	}
	var head struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(d, &head) == nil && (head.Type == "FeatureCollection" || head.Type == "Feature")
}

// previewGeoJSON answers the preview of a GeoJSON file: {temp_id,
// file_token, format: "geojson", count, geometry_types, geo_props, crs,
// geo_field, columns, rows}; every geometry is checked now.
func (h handlers) previewGeoJSON(c *gin.Context, up *uploaded) {
	ff, err := geo.ParseCollection(up.data)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var geoField any
	if up.tb != "" {
		cat, err := h.host.Catalog(c.Request.Context(), api.AppOf(c))
		if err != nil {
			api.Fail(c, err)
			return
		}
		if t, ok := cat.Table(up.tb); ok && t.Geodata {
			geoField = "geodata"
		}
	}
	key, _, err := h.store.Put(c.Request.Context(), api.AppOf(c).Name, bytes.NewReader(up.data))
	if err != nil {
		api.Fail(c, err)
		return
	}
	props := ff.PropertyNames()
	rows := [][]any{}
	for i, f := range ff.Features {
		if i == PreviewRows {
			break
		}
		row := make([]any, len(props))
		for j, p := range props {
			row[j] = f.Properties[p]
		}
		rows = append(rows, row)
	}
	api.Success(c, http.StatusOK, gin.H{"temp_id": key, "file_token": key, "format": "geojson", "count": len(ff.Features),
		"geometry_types": ff.Types(), "geo_props": props, "crs": fmt.Sprintf("EPSG:%d", ff.CRS), "geo_field": geoField,
		"columns": props, "rows": rows})
}

// geoArgs are a GeoJSON import's.
type geoArgs struct {
	Token    string `json:"token"`
	Tb       string `json:"tb"`
	GeoProp  string `json:"geo_prop"`
	KeyField string `json:"key_field"`
	// Append keeps a record's features (default: they are replaced).
	Append bool `json:"append,omitempty"`
	// Create makes a record (key field = the property) for a value no
	// record has.
	Create bool `json:"create,omitempty"`
	CRS    int  `json:"crs,omitempty"`
	DryRun bool `json:"dry_run,omitempty"`
}

type geoBody struct {
	previewRef
	GeoProp       string `json:"geo_prop"`
	KeyField      string `json:"key_field"`
	Mode          string `json:"mode"` // replace (default) or append
	Append        any    `json:"append"`
	CreateMissing any    `json:"create_missing"`
	CRS           string `json:"crs"`
	DryRun        any    `json:"dry_run"`
	Async         any    `json:"async"`
}

// POST /import/geojson {temp_id, tb, geo_prop, key_field, mode?,
// create_missing?, crs?, dry_run?, async?} — {code: ok_import_geojson,
// total, updated, created, not_found}: runs as a job (import.geojson) as
// the data import does.
func (h handlers) geojson(c *gin.Context) {
	var b geoBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	token, err := b.token()
	if err != nil {
		api.Fail(c, err)
		return
	}
	args := geoArgs{Token: token, Tb: b.Tb, GeoProp: strings.TrimSpace(b.GeoProp), KeyField: strings.TrimSpace(b.KeyField)}
	if args.KeyField == "" {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "key_field (the table's field matched against geo_prop) is required"))
		return
	}
	if args.GeoProp == "" {
		args.GeoProp = args.KeyField
	}
	switch strings.ToLower(strings.TrimSpace(b.Mode)) {
	case "", "replace":
	case "append":
		args.Append = true
	default:
		api.Fail(c, errs.New(errs.Invalid, "invalid_parameter", "mode is replace or append").With("parameter", "mode"))
		return
	}
	var async bool
	for _, o := range []struct {
		v    any
		name string
		dst  *bool
	}{{b.Append, "append", &args.Append}, {b.CreateMissing, "create_missing", &args.Create}, {b.DryRun, "dry_run", &args.DryRun}, {b.Async, "async", &async}} {
		if o.v == nil {
			continue
		}
		v, err := optBool(o.v, o.name)
		if err != nil {
			api.Fail(c, err)
			return
		}
		*o.dst = *o.dst || v
	}
	if strings.TrimSpace(b.CRS) != "" {
		if args.CRS, err = geo.ParseCRS(b.CRS); err != nil {
			api.Fail(c, err)
			return
		}
	}
	a := api.AppOf(c)
	sc, err := h.host.RecordScope(c, b.Tb)
	if err != nil {
		api.Fail(c, err)
		return
	}
	user := api.ActorOf(c).UserID
	if args.DryRun || h.jobs == nil || user == 0 {
		scopeOf := func(table string) (*records.Scope, error) { return h.host.RecordScope(c, table) }
		out, err := importGeoJSON(c.Request.Context(), h.store, a.Name, sc, args, nil, scopeOf)
		if err != nil {
			api.Fail(c, err)
			return
		}
		api.Success(c, http.StatusOK, out)
		return
	}
	if _, err := openPreview(c.Request.Context(), h.store, a.Name, token); err != nil {
		api.Fail(c, err)
		return
	}
	job, err := h.jobs.Enqueue(c.Request.Context(), a.Name, user, KindGeoJSON, args)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if !async {
		job = h.jobs.Await(c.Request.Context(), job, h.wait)
	}
	if job.State != jobs.Done {
		jobs.AnswerUnfinished(c, job, "import_started", "import_failed")
		return
	}
	var out gin.H
	if err := json.Unmarshal(job.Result, &out); err != nil {
		api.Fail(c, err)
		return
	}
	out["job"] = jobs.Wire(job)
	api.Success(c, http.StatusOK, out)
}

// registerGeoJSON adds the GeoJSON import's job kind.
func registerGeoJSON(sys *jobs.System, host api.Host, reg *apps.Registry, store files.Storage) {
	sys.Register(KindGeoJSON, asUser(host, reg, func(a geoArgs) string { return a.Tb },
		func(ctx context.Context, app *apps.App, sc *records.Scope, a geoArgs, run *jobs.Run, scopeOf scopeFunc) (any, error) {
			return importGeoJSON(ctx, store, app.Name, sc, a, run.Progress, scopeOf)
		}))
}

// GeoResult of a GeoJSON import, counted in features.
type GeoResult struct {
	Total    int `json:"total"`
	Updated  int `json:"updated"`   // attached to records that existed
	Created  int `json:"created"`   // attached to records the import made
	NotFound int `json:"not_found"` // no record has their value (not created)
}

// importGeoJSON imports (or checks) the previewed file into sc's table.
func importGeoJSON(ctx context.Context, st files.Storage, app string, sc *records.Scope, a geoArgs, progress func(done, total int64), scopeOf func(string) (*records.Scope, error)) (gin.H, error) {
	blob, err := openPreview(ctx, st, app, a.Token)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(blob)
	blob.Close()
	if err != nil {
		return nil, err
	}
	ff, err := geo.ParseCollectionIn(data, a.CRS)
	if err != nil {
		return nil, err
	}
	res, err := RunGeoJSON(ctx, sc, ff, a, progress, scopeOf)
	if err != nil {
		return nil, err
	}
	out := gin.H{"code": "ok_import_geojson", "total": res.Total, "updated": res.Updated, "created": res.Created,
		"not_found": res.NotFound, "crs": fmt.Sprintf("EPSG:%d", ff.CRS)}
	if a.DryRun {
		out["code"], out["dry_run"] = "ok_import_checked", true
		return out, nil
	}
	_ = st.Delete(context.WithoutCancel(ctx), app, a.Token)
	return out, nil
}

// RunGeoJSON attaches ff's features to sc's records in one transaction:
// those whose key field equals a feature's geo_prop property (within the
// caller's rows; each record must be editable by them), grouped per
// record; each record's features are replaced (or, with Append, added to)
// and the record versioned once.
func RunGeoJSON(ctx context.Context, sc *records.Scope, ff *geo.FeatureFile, a geoArgs, progress func(done, total int64), scopeOf func(string) (*records.Scope, error)) (*GeoResult, error) {
	if !sc.Table.Geodata {
		return nil, geo.ErrNotGeoTable.With("table", sc.Table.Name)
	}
	key, ok := sc.Table.Field(a.KeyField)
	if !ok {
		return nil, ErrInvalidField.With("field", a.KeyField).With("parameter", "key_field").With("detail", a.KeyField+" is no field of "+sc.Table.Name)
	}
	if progress == nil {
		progress = func(int64, int64) {}
	}
	// Features by the value of their property, in file order.
	type group struct {
		value any
		geoms []orb.Geometry
	}
	var order []string
	groups := map[string]*group{}
	res := &GeoResult{Total: len(ff.Features)}
	for _, f := range ff.Features {
		v, ok := f.Properties[a.GeoProp]
		if !ok || v == nil || fmt.Sprint(v) == "" {
			res.NotFound++
			continue
		}
		k := fmt.Sprint(v)
		g, ok := groups[k]
		if !ok {
			g = &group{value: v}
			groups[k] = g
			order = append(order, k)
		}
		g.geoms = append(g.geoms, f.Geometry)
	}
	err := sc.DB.Tx(ctx, func(tx *store.DB) error {
		own := sc
		if a.DryRun {
			own = sc.DryRun() // records, versions and features take no sequence's ids
		}
		ts := *own
		ts.DB = tx
		w := geo.NewTx(tx, func(table string) (*records.Scope, error) {
			if table == sc.Table.Name {
				return own, nil
			}
			return scopeOf(table)
		}).WithIDs(own.DryRunID) // 0 unless a dry run on PostgreSQL
		for i, k := range order {
			g := groups[k]
			val, err := keyValue(tx.Engine, key, g.value)
			if err != nil {
				res.NotFound += len(g.geoms)
				continue
			}
			id, err := match(ctx, &ts, key, val)
			if err != nil {
				return err
			}
			if id == 0 {
				if !a.Create {
					res.NotFound += len(g.geoms)
					continue
				}
				r, err := records.SaveVersioned(ctx, &ts, records.SaveInput{Core: map[string]any{key.Name: g.value}})
				if err != nil {
					return withValue(err, k)
				}
				id = r.ID
				res.Created += len(g.geoms)
			} else {
				res.Updated += len(g.geoms)
			}
			if err := w.ReplaceAll(ctx, sc.Table.Name, id, g.geoms, a.Append); err != nil {
				return withValue(err, k)
			}
			if (i+1)%200 == 0 {
				progress(int64(i+1), int64(len(order)))
			}
		}
		progress(int64(len(order)), int64(len(order)))
		if a.DryRun {
			return errRollback
		}
		return nil
	})
	if err != nil && !errors.Is(err, errRollback) {
		return nil, err
	}
	return res, nil
}

// keyValue is a property's value as the key field stores it.
func keyValue(e store.Engine, key *schema.Field, v any) (any, error) {
	if s, ok := v.(string); ok {
		v = strings.TrimSpace(s)
	}
	if f, ok := v.(float64); ok && slices.Contains([]schema.DBType{schema.DBText}, key.DBType) {
		v = fmt.Sprint(f)
	}
	return records.ToDB(e, key.DBType, v)
}

// withValue says which property value an error is about.
func withValue(err error, v string) error {
	if e, ok := errs.As(err); ok {
		return e.With("value", v)
	}
	return err
}
