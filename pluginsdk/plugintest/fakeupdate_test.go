package plugintest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
)

// recompute is a plugin that rewrites its computed column through
// Host.UpdateRecords (the rows come in the route's body).
type recompute struct {
	mu   sync.Mutex
	host pluginsdk.Host
}

func (p *recompute) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return nil
}

func (p *recompute) Manifest() pluginsdk.Manifest {
	return pluginsdk.Manifest{Name: "recomp", Version: "1.0.0",
		Features: []pluginsdk.Feature{{Name: "recomp", Columns: []pluginsdk.Column{{Name: "n", Type: "text", DBType: "int"},
			{Name: "n2", Type: "text", DBType: "int"}}, Computed: []string{"n2"}}},
		Routes: []pluginsdk.Route{{Method: "POST", Path: "/recomp/run", Access: pluginsdk.AccessAdmin, Handler: http.HandlerFunc(p.run)}}}
}

func (p *recompute) run(w http.ResponseWriter, r *http.Request) {
	var rows []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&rows); err != nil {
		pluginsdk.WriteError(w, http.StatusBadRequest, "bad_body", err.Error())
		return
	}
	p.mu.Lock()
	host := p.host
	p.mu.Unlock()
	versions, err := host.UpdateRecords(r.Context(), pluginsdk.UpdateRecordsInput{App: pluginsdk.ActorFrom(r).App, Table: "finds", Rows: rows})
	if err != nil {
		pluginsdk.WriteHostError(w, err)
		return
	}
	pluginsdk.WriteJSON(w, http.StatusOK, map[string]any{"versions": versions})
}

// FakeHost.UpdateRecords updates the seeded records with the plugin's own
// columns and refuses any other column before writing anything.
func TestFakeHostUpdateRecords(t *testing.T) {
	h := plugintest.New(t, &recompute{})
	h.Host.SetRecords("digs", "finds", map[string]any{"id": 1, "n": 2, "label": "a"}, map[string]any{"id": 2, "n": 3})
	actor := pluginsdk.Actor{App: "digs", UserID: 1, Privilege: 1}
	resp, err := h.CallRoute("POST", "/recomp/run", []byte(`[{"id":1,"n2":4},{"id":2,"n2":6}]`), actor)
	if err != nil || resp.Status != 200 {
		t.Fatalf("update: %v %d %s", err, resp.Status, resp.Body)
	}
	ups := h.Host.RecordUpdates()
	if len(ups) != 2 || ups[0].ID != 1 || ups[0].Values["n2"] != json.Number("4") || ups[1].ID != 2 {
		t.Errorf("updates: %+v", ups)
	}
	for _, c := range []struct{ body, code string }{
		{`[{"id":1,"n2":5},{"id":2,"label":"x"}]`, "not_plugin_field"},
		{`[{"id":9,"n2":5}]`, "record_not_found"},
	} {
		resp, err := h.CallRoute("POST", "/recomp/run", []byte(c.body), actor)
		if err != nil || resp.Status < 400 || !strings.Contains(string(resp.Body), `"code":"`+c.code+`"`) {
			t.Errorf("%s: %v %d %s, want %s", c.body, err, resp.Status, resp.Body, c.code)
		}
	}
	if n := len(h.Host.RecordUpdates()); n != 2 {
		t.Errorf("refused calls recorded %d updates", n-2)
	}
}
