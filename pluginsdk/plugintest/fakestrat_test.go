package plugintest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-archaeo/strata/pluginsdk"
	"github.com/strata-archaeo/strata/pluginsdk/plugintest"
	pluginv1 "github.com/strata-archaeo/strata/pluginsdk/proto/v1"
)

// sequence reads a matrix and the dates of its units through its Host,
// as a chronology model would: POST /seq/matrix {table, filter} and
// POST /seq/dates {table, feature, ids}, both as the caller.
type sequence struct {
	mu   sync.Mutex
	host pluginsdk.Host
}

func (p *sequence) Configure(_ context.Context, host pluginsdk.Host, _ json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.host = host
	return nil
}

func (p *sequence) hostOf() pluginsdk.Host {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.host
}

type seqBody struct {
	Table   string          `json:"table"`
	Feature string          `json:"feature"`
	IDs     []int64         `json:"ids"`
	Filter  json.RawMessage `json:"filter"`
}

func (p *sequence) Manifest() pluginsdk.Manifest {
	handle := func(f func(r *http.Request, b seqBody, actor *pluginsdk.Actor) (any, error)) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var b seqBody
			if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
				pluginsdk.WriteError(w, http.StatusBadRequest, "bad_body", err.Error())
				return
			}
			actor := pluginsdk.ActorFrom(r)
			out, err := f(r, b, &actor)
			if err != nil {
				_ = pluginsdk.WriteHostError(w, err)
				return
			}
			pluginsdk.WriteJSON(w, http.StatusOK, out)
		})
	}
	return pluginsdk.Manifest{Name: "seq", Version: "1.0.0",
		Routes: []pluginsdk.Route{
			{Method: "POST", Path: "/seq/matrix", Access: pluginsdk.AccessRead, Handler: handle(func(r *http.Request, b seqBody, a *pluginsdk.Actor) (any, error) {
				var filter any
				if len(b.Filter) > 0 {
					filter = b.Filter
				}
				return p.hostOf().Stratigraphy(r.Context(), pluginsdk.StratigraphyInput{App: a.App, Table: b.Table, Filter: filter, Actor: a})
			})},
			{Method: "POST", Path: "/seq/dates", Access: pluginsdk.AccessRead, Handler: handle(func(r *http.Request, b seqBody, a *pluginsdk.Actor) (any, error) {
				return p.hostOf().FeatureRows(r.Context(), pluginsdk.FeatureRowsInput{App: a.App, Table: b.Table, Feature: b.Feature, RecordIDs: b.IDs, Actor: a})
			})},
		}}
}

func year(y int64) *int64 { return &y }

// matrixOf is a Stratigraphy answer, as the route encodes it.
type matrixOf struct {
	HasChronology bool
	Units         []pluginsdk.StratUnit
	Relations     []pluginsdk.StratRelation
}

// FakeHost.Stratigraphy answers the matrix a test set, as the actor sees
// it (a denied table, a row subset matched against the seeded records)
// and narrowed by the filter, with relations only between units left;
// a table never set is refused as a table without relations.
func TestFakeHostStratigraphy(t *testing.T) {
	h := plugintest.New(t, &sequence{})
	h.Host.SetRecords("digs", "us", map[string]any{"id": 1, "area": "A"}, map[string]any{"id": 2, "area": "A"},
		map[string]any{"id": 3, "area": "B"})
	h.Host.SetStratigraphy("digs", "us", pluginsdk.Stratigraphy{HasChronology: true,
		Units: []pluginsdk.StratUnit{{ID: 3, Label: "US3"}, {ID: 1, Label: "US1", ChronoFrom: year(-300), ChronoTo: year(-250), ChronoLabel: "Hellenistic"},
			{ID: 2, Label: "US2"}},
		Relations: []pluginsdk.StratRelation{{ID: 10, First: 1, Second: 2, Relation: 5}, {ID: 11, First: 2, Second: 3, Relation: 1},
			{ID: 12, First: 1, Second: 3, Relation: 9}}})
	reader := plugintest.Reader
	reader.App, reader.UserID = "digs", 7
	subsetReader := reader
	subsetReader.UserID = 8
	h.Host.SetRights(subsetReader, "us", plugintest.Rights{Subset: map[string]any{"area": map[string]any{"_eq": "A"}}})
	denied := reader
	denied.UserID = 9
	h.Host.SetRights(denied, "us", plugintest.Rights{Privilege: 50})

	for _, c := range []struct {
		label, body string
		actor       pluginsdk.Actor
		units       string // ids, in order
		relations   string // "id:order" in order
		status      int
		code        string
	}{
		{"everything", `{"table":"us"}`, reader, "1 2 3", "10:above 11:below 12:same", 200, ""},
		{"a row subset", `{"table":"us"}`, subsetReader, "1 2", "10:above", 200, ""},
		{"a filter", `{"table":"us","filter":{"area":{"_eq":"B"}}}`, reader, "3", "", 200, ""},
		{"a filter within a subset", `{"table":"us","filter":{"area":{"_eq":"B"}}}`, subsetReader, "", "", 200, ""},
		{"a denied table", `{"table":"us"}`, denied, "", "", 403, "not_enough_privilege"},
		{"a table without relations", `{"table":"finds"}`, reader, "", "", 400, "rs_not_enabled"},
	} {
		resp, err := h.CallRoute("POST", "/seq/matrix", []byte(c.body), c.actor)
		if err != nil {
			t.Fatalf("%s: %v", c.label, err)
		}
		if resp.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.label, resp.Status, resp.Body, c.status)
			continue
		}
		if c.code != "" {
			if !strings.Contains(string(resp.Body), `"code":"`+c.code+`"`) {
				t.Errorf("%s: %s, want %s", c.label, resp.Body, c.code)
			}
			continue
		}
		var m matrixOf
		if err := resp.JSON(&m); err != nil {
			t.Fatal(err)
		}
		var units, rels []string
		for _, u := range m.Units {
			units = append(units, fmt.Sprint(u.ID))
		}
		for _, r := range m.Relations {
			rels = append(rels, fmt.Sprintf("%d:%s", r.ID, r.Order))
		}
		if strings.Join(units, " ") != c.units || strings.Join(rels, " ") != c.relations || !m.HasChronology {
			t.Errorf("%s: units %v relations %v (chronology %v), want %q %q", c.label, units, rels, m.HasChronology, c.units, c.relations)
		}
		for _, u := range m.Units {
			if u.ID == 1 && (u.ChronoFrom == nil || *u.ChronoFrom != -300 || *u.ChronoTo != -250 || u.ChronoLabel != "Hellenistic" || u.Label != "US1") {
				t.Errorf("%s: unit 1 %+v", c.label, u)
			}
			if u.ID == 2 && (u.ChronoFrom != nil || u.ChronoTo != nil) {
				t.Errorf("%s: an undated unit dated: %+v", c.label, u)
			}
		}
	}
}

// FakeHost.FeatureRows answers the rows SetFeatureRows seeded, grouped by
// parent, for the records asked and visible to the actor; an inactive
// feature, a feature never seeded and too many records are refused as on
// the server.
func TestFakeHostFeatureRows(t *testing.T) {
	h := plugintest.New(t, &sequence{})
	h.Host.SetRecords("digs", "us", map[string]any{"id": 1, "area": "A"}, map[string]any{"id": 2, "area": "B"}, map[string]any{"id": 3, "area": "A"})
	h.Host.SetFeatureRows("digs", "us", "radiocarbon",
		map[string]any{"id": 5, "id_link": 2, "bp": 2450, "bp_error": 30, "lab_code": "OxA-2"},
		map[string]any{"id": 4, "id_link": 1, "bp": 2500, "bp_error": 25, "lab_code": "OxA-1b"},
		map[string]any{"id": 3, "id_link": 1, "bp": 2510, "bp_error": 35, "lab_code": "OxA-1a"},
		map[string]any{"id": 6, "id_link": 3, "bp": 2400, "bp_error": 40, "lab_code": "OxA-3"})
	h.Host.SetFeatures("digs", "nodates", "chronology")
	reader := plugintest.Reader
	reader.App, reader.UserID = "digs", 7
	subsetReader := reader
	subsetReader.UserID = 8
	h.Host.SetRights(subsetReader, "us", plugintest.Rights{Subset: map[string]any{"area": map[string]any{"_eq": "A"}}})
	denied := reader
	denied.UserID = 9
	h.Host.SetRights(denied, "us", plugintest.Rights{Privilege: 50})
	many := make([]string, pluginsdk.MaxFeatureRecords+1)
	for i := range many {
		many[i] = fmt.Sprint(i + 1)
	}

	for _, c := range []struct {
		label, body string
		actor       pluginsdk.Actor
		want        string // parent:lab codes
		status      int
		code        string
	}{
		{"two records", `{"table":"us","feature":"radiocarbon","ids":[1,2]}`, reader, "1:OxA-1a,OxA-1b 2:OxA-2", 200, ""},
		{"a record without rows", `{"table":"us","feature":"radiocarbon","ids":[9]}`, reader, "", 200, ""},
		{"a row subset", `{"table":"us","feature":"radiocarbon","ids":[1,2,3]}`, subsetReader, "1:OxA-1a,OxA-1b 3:OxA-3", 200, ""},
		{"a denied table", `{"table":"us","feature":"radiocarbon","ids":[1]}`, denied, "", 403, "not_enough_privilege"},
		{"an inactive feature", `{"table":"nodates","feature":"radiocarbon","ids":[1]}`, reader, "", 404, "feature_not_active"},
		{"a feature never seeded", `{"table":"us","feature":"osteology","ids":[1]}`, reader, "", 404, "feature_not_active"},
		{"no feature", `{"table":"us","ids":[1]}`, reader, "", 400, "parameter_missing"},
		{"a bad id", `{"table":"us","feature":"radiocarbon","ids":[0]}`, reader, "", 400, "invalid_parameter"},
	} {
		resp, err := h.CallRoute("POST", "/seq/dates", []byte(c.body), c.actor)
		if err != nil {
			t.Fatalf("%s: %v", c.label, err)
		}
		if resp.Status != c.status {
			t.Errorf("%s: %d %s, want %d", c.label, resp.Status, resp.Body, c.status)
			continue
		}
		if c.code != "" {
			if !strings.Contains(string(resp.Body), `"code":"`+c.code+`"`) {
				t.Errorf("%s: %s, want %s", c.label, resp.Body, c.code)
			}
			continue
		}
		var res pluginsdk.FeatureRowsResult
		if err := resp.JSON(&res); err != nil {
			t.Fatal(err)
		}
		if res.ChildTable != "us_radiocarbon" {
			t.Errorf("%s: child table %q", c.label, res.ChildTable)
		}
		if got := groups(res.Rows); got != c.want {
			t.Errorf("%s: %q, want %q", c.label, got, c.want)
		}
	}
	// Too many records: refused with a code, through the SDK and
	// WriteHostError as straight to the fake.
	resp, err := h.CallRoute("POST", "/seq/dates", []byte(`{"table":"us","feature":"radiocarbon","ids":[`+strings.Join(many, ",")+`]}`), reader)
	if err != nil || resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), `"code":"too_many_records"`) {
		t.Errorf("too many records: %v %d %s", err, resp.Status, resp.Body)
	}
	ids := make([]int64, pluginsdk.MaxFeatureRecords+1)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	_, err = h.Host.FeatureRows(context.Background(), &pluginv1.FeatureRowsRequest{App: "digs", Table: "us", Feature: "radiocarbon", RecordIds: ids})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.HasPrefix(st.Message(), "too_many_records: ") {
		t.Errorf("the fake with too many records: %v", err)
	}
	// At the bound, accepted.
	if _, err := h.Host.FeatureRows(context.Background(), &pluginv1.FeatureRowsRequest{App: "digs", Table: "us", Feature: "radiocarbon", RecordIds: ids[:pluginsdk.MaxFeatureRecords]}); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}

// groups renders rows by parent as "parent:lab,lab parent:lab", parents
// ascending.
func groups(rows map[int64][]map[string]any) string {
	var out []string
	for id := int64(1); id <= 20; id++ {
		rs, ok := rows[id]
		if !ok {
			continue
		}
		var labs []string
		for _, r := range rs {
			if fmt.Sprint(r["id_link"]) != fmt.Sprint(id) {
				return fmt.Sprintf("row %v under parent %d", r, id)
			}
			labs = append(labs, fmt.Sprint(r["lab_code"]))
		}
		out = append(out, fmt.Sprintf("%d:%s", id, strings.Join(labs, ",")))
	}
	return strings.Join(out, " ")
}
