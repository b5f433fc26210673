package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// Without plugins the activation and plugin routes exist and answer in
// the envelope; /config/table/{tb}/{feature} shadows none of the config
// helper's static routes (gin prefers static segments). The plugin host's
// own tests cover the routes with real plugin processes.
func TestPluginRoutesWithoutPlugins(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		for _, c := range []struct {
			method, path, body string
			status             int
			code               string
		}{
			{"GET", "/config/table/finds/fields", "", 200, ""},
			{"POST", "/config/table/finds/field", `{"name":"weight","db_type":"float"}`, 200, "field_created"},
			{"POST", "/config/table/finds/fields/sort", `{"sort":["label","site","site_ref","weight"]}`, 200, ""},
			{"GET", "/config/table/finds/indexes", "", 200, ""},
			{"POST", "/config/table/finds/indexes", `{"name":"ix_label","columns":["label"]}`, 200, ""},
			{"GET", "/config/table/finds/validation", "", 200, ""},
			{"POST", "/config/table/finds/munsell", "", 404, "feature_not_found"},
			{"DELETE", "/config/table/finds/munsell", "", 404, "feature_not_found"},
			{"POST", "/config/table/finds/chronology", "", 503, "plugin_unavailable"},
			{"POST", "/config/table/finds/fuzzy-date", "", 503, "plugin_unavailable"},
			{"DELETE", "/config/table/finds/radiocarbon", "", 503, "plugin_unavailable"},
			{"POST", "/config/table/nowhere/chronology", "", 404, "table_not_found"},
			{"GET", "/plugins", "", 200, ""},
			{"POST", "/plugins/chronology/enable", "", 404, "plugin_not_found"},
		} {
			status, body := env.do(t, env.superTok, c.method, c.path, c.body)
			if status != c.status || (c.code != "" && body["code"] != c.code) {
				t.Errorf("%s %s: %d %v, want %d %s", c.method, c.path, status, body, c.status, c.code)
			}
		}
		if status, body := env.do(t, env.superTok, "GET", "/plugins", ""); status != 200 || len(body["plugins"].([]any)) != 0 {
			t.Errorf("GET /plugins: %v", body)
		}
		for _, c := range []struct{ method, path string }{
			{"POST", "/config/table/finds/chronology"}, {"GET", "/plugins"}, {"POST", "/plugins/x/enable"},
		} {
			if status, _ := env.do(t, env.adminTok, c.method, c.path, ""); status != 403 {
				t.Errorf("%s %s as admin: %d", c.method, c.path, status)
			}
		}
	})
}

// A feature activated in an earlier run whose plugin is not installed:
// its columns show, saves that would need the plugin are refused with
// 503, others go on, and the admin can still deactivate it.
func TestFeatureOfAMissingPlugin(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		env := newConfigEnv(t, e)
		spec := schema.FeatureSpec{Plugin: "chronology", Name: "chronology",
			Columns: []schema.FieldDef{{Name: "chrono_label"}, {Name: "chrono_from", DBType: "int"}}, Computed: []string{"chrono_from"}}
		if err := schema.ActivateFeature(context.Background(), env.app.DB, "finds", spec, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if status, body := env.do(t, env.superTok, "POST", "/record/finds", `{"core":{"label":"x","chrono_label":"c4 BCE"}}`); status != 503 || body["code"] != "plugin_unavailable" {
			t.Errorf("save needing the plugin: %d %v", status, body)
		}
		if status, body := env.do(t, env.superTok, "POST", "/record/finds/1", `{"core":{"label":"renamed"}}`); status != 200 {
			t.Errorf("save without the feature's columns: %d %v", status, body)
		}
		status, body := env.do(t, env.superTok, "DELETE", "/config/table/finds/fuzzy-date", "")
		if status != http.StatusOK || body["code"] != "chronology_deactivated" {
			t.Fatalf("deactivate: %d %v", status, body)
		}
		if status, body := env.do(t, env.superTok, "POST", "/record/finds", `{"core":{"label":"y"}}`); status != 200 {
			t.Errorf("save after deactivation: %d %v", status, body)
		}
	})
}
