package pluginsdk_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

type catalogProbe struct{ host pluginsdk.Host }

func (p *catalogProbe) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{Name: "probe", Version: "1.0.0"}
}

func (p *catalogProbe) Configure(_ context.Context, h pluginsdk.Host, _ json.RawMessage) error {
	p.host = h
	return nil
}

func TestCatalogThroughTheHost(t *testing.T) {
	host := plugintest.NewFakeHost()
	host.SetCatalog("dig", pluginsdk.Catalog{
		Tables: []pluginsdk.CatalogTable{
			{Name: "sites", Fields: []pluginsdk.CatalogField{{Name: "name"}}},
			{Name: "units", Fields: []pluginsdk.CatalogField{{Name: "site", IDFromTb: "sites"}}},
			{Name: "sites_dates", IsPlugin: true, PluginOf: "sites"},
			{Name: "finds", Fields: []pluginsdk.CatalogField{{Name: "site_id"}}},
		},
		Relations: []pluginsdk.CatalogRelation{{FromTb: "finds", FromCol: "site_id", ToTb: "sites", ToCol: "id"}},
	})
	p := &catalogProbe{}
	plugintest.New(t, p, plugintest.WithHost(host))
	cat, err := p.host.Catalog(context.Background(), "dig")
	if err != nil {
		t.Fatal(err)
	}
	got := cat.Children("sites")
	want := []pluginsdk.ChildLink{{Table: "units", Column: "site"}, {Table: "sites_dates", Column: "id_link"}, {Table: "finds", Column: "site_id"}}
	if len(got) != len(want) {
		t.Fatalf("children %v", got)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("missing child %v in %v", w, got)
		}
	}
	if _, ok := cat.Table("units"); !ok {
		t.Error("Table lookup")
	}
}
