package pluginhost

import (
	"context"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

var errUpdateRows = errs.New(errs.Invalid, "invalid_rows", "rows must be a JSON array of objects, each with a positive id")

// UpdateRecords updates records' columns of the calling plugin's own
// features active on the table, as the system actor "plugin:<name>"
// (records.SaveAsPlugin): validation, the row lock and a version naming
// the actor, as any save. Every row's columns are checked before the
// first write, so a column that is not the plugin's writes nothing.
func (h *hostServer) UpdateRecords(ctx context.Context, req *pluginv1.UpdateRecordsRequest) (*pluginv1.UpdateRecordsResponse, error) {
	versions, err := h.updateRecords(ctx, req)
	if err != nil {
		return nil, h.hostError("UpdateRecords", err)
	}
	return &pluginv1.UpdateRecordsResponse{Versions: versions}, nil
}

func (h *hostServer) updateRecords(ctx context.Context, req *pluginv1.UpdateRecordsRequest) ([]int64, error) {
	raw, err := decodeValue(req.GetRows())
	if err != nil {
		return nil, errUpdateRows.With("detail", err.Error())
	}
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		return nil, errUpdateRows
	}
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
	if !ok || t.IsPlugin {
		return nil, schema.ErrTableNotFound.With("table", req.GetTable())
	}
	sc := &records.Scope{DB: a.DB, Catalog: cat, Table: t, App: a.Name}
	ex := h.m.ForTable(t)
	sc.Features, sc.Sections, sc.SchemaFlags = ex.Features, ex.Sections, ex.SchemaFlags
	sc.UncheckedLog = h.m.uncheckedLog(a.Name)
	sc.HookLog = func(name string, err error) {
		h.m.log.Warn("a plugin call failed; the record operation went on without it", "app", a.Name,
			"table", t.Name, "feature_or_section", name, "err", err)
	}
	cols, computed := records.PluginColumns(sc, h.p.name)
	type change struct {
		id     int64
		values map[string]any
	}
	changes := make([]change, len(list))
	for i, item := range list {
		row, ok := item.(map[string]any)
		if !ok {
			return nil, errUpdateRows.With("row", i)
		}
		id, err := records.IDOf(row["id"])
		if err != nil || id <= 0 {
			return nil, errUpdateRows.With("row", i)
		}
		values := map[string]any{}
		for k, v := range row {
			if k == schema.ColID {
				continue
			}
			if !contains(cols, k) && !contains(computed, k) {
				return nil, records.ErrNotPluginField.With("field", k).With("table", t.Name).With("plugin", h.p.name).With("row", i)
			}
			values[k] = v
		}
		changes[i] = change{id: id, values: values}
	}
	versions := make([]int64, 0, len(changes))
	for i, c := range changes {
		res, err := records.SaveAsPlugin(ctx, sc, h.p.name, c.id, c.values)
		if err != nil {
			if e, ok := errs.As(err); ok {
				return nil, e.With("row", i).With("id", c.id)
			}
			return nil, err
		}
		versions = append(versions, res.Version)
	}
	return versions, nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
