package pluginhost

import (
	"context"
	"encoding/json"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/pluginsdk"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// Catalog describes an application's user tables as records see them
// (pluginsdk.Catalog): the columns and child tables of a feature inactive
// on its table are left out, as QueryRecords leaves them out, so a plugin
// never follows a link into something it could not then read. The
// request names no actor: tables the caller may not read are listed, and
// QueryRecords refuses them as it would anyway.
func (h *hostServer) Catalog(ctx context.Context, req *pluginv1.CatalogRequest) (*pluginv1.CatalogResponse, error) {
	raw, err := h.catalog(ctx, req.GetApp())
	if err != nil {
		return nil, h.hostError("Catalog", err)
	}
	return &pluginv1.CatalogResponse{Catalog: raw}, nil
}

func (h *hostServer) catalog(ctx context.Context, app string) ([]byte, error) {
	a, err := h.app(ctx, app)
	if err != nil {
		return nil, err
	}
	full, err := h.m.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	cat := full.Visible()
	rels, err := schema.ListRelations(ctx, a.DB)
	if err != nil {
		return nil, err
	}
	out := pluginsdk.Catalog{Tables: make([]pluginsdk.CatalogTable, 0, len(cat.Tables)), Relations: []pluginsdk.CatalogRelation{}}
	for _, t := range cat.Tables {
		ct := pluginsdk.CatalogTable{Name: t.Name, Label: t.Label, IsPlugin: t.IsPlugin, PluginOf: t.PluginOf,
			IDField: t.IDField, ChronoDensityPath: t.ChronoDensityPath, Fields: make([]pluginsdk.CatalogField, 0, len(t.Fields))}
		if len(t.Features) > 0 {
			ct.Features = make(map[string]bool, len(t.Features))
			for name, st := range t.Features {
				ct.Features[name] = st.Active
			}
		}
		for _, f := range t.Fields {
			ct.Fields = append(ct.Fields, pluginsdk.CatalogField{Name: f.Name, Label: f.Label, Type: string(f.Type),
				DBType: string(f.DBType), IDFromTb: f.IDFromTb})
		}
		out.Tables = append(out.Tables, ct)
	}
	for _, r := range rels {
		// A relation from or to a hidden child table is hidden with it.
		if _, ok := cat.Table(r.FromTb); !ok {
			continue
		}
		if _, ok := cat.Table(r.ToTb); !ok {
			continue
		}
		out.Relations = append(out.Relations, pluginsdk.CatalogRelation{FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol})
	}
	return json.Marshal(out)
}
