package fieldsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// dig is an application with sites, finds (a lookup to sites, an area
// the row subsets use, a plugin table of samples) and its users: an
// admin, a writer, and two readers whose subsets on finds differ (north
// and south).
type dig struct {
	inst                 *testenv.Instance
	app                  *apps.App
	admin, writer        string
	north, south         string
	northID, southID     int64
	reader, readerNoRead string
}

func newDig(t *testing.T, e store.Engine) *dig {
	t.Helper()
	inst := testenv.NewInstance(t, e)
	a := testenv.NewApp(t, inst.Apps, "dig")
	ctx, now := context.Background(), time.Now().UTC()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "sites", Label: "Sites"}, now))
	must(schema.AddField(ctx, a.DB, "sites", schema.FieldDef{Name: "name", Label: "Name", Required: true}, now))
	must(schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds", Label: "Finds"}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "label", Label: "Label", Required: true}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "area", Label: "Area"}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "weight", Label: "Weight", DBType: "float"}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "found_on", Label: "Found on", Type: "date"}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "complete", Label: "Complete", Type: "boolean"}, now))
	must(schema.AddField(ctx, a.DB, "finds", schema.FieldDef{Name: "site", Label: "Site", Type: "select", IDFromTb: "sites"}, now))
	must(schema.CreateTable(ctx, a.DB, schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"}, now))
	must(schema.AddField(ctx, a.DB, "finds_samples", schema.FieldDef{Name: "lab", Label: "Lab"}, now))

	d := &dig{inst: inst, app: a}
	d.admin = testenv.Login(t, inst.Server, "dig", "admin@example.org", testenv.Password)
	for _, u := range []struct {
		dst   *string
		id    *int64
		email string
		level int
	}{{&d.writer, nil, "writer@example.org", auth.Writer}, {&d.north, &d.northID, "north@example.org", auth.Reader},
		{&d.south, &d.southID, "south@example.org", auth.Reader}, {&d.reader, nil, "reader@example.org", auth.Reader},
		{&d.readerNoRead, nil, "noread@example.org", auth.Reader}} {
		usr := testenv.NewUser(t, a, u.email, u.email, u.level)
		if u.id != nil {
			*u.id = usr.ID
		}
		*u.dst = testenv.Login(t, inst.Server, "dig", u.email, testenv.Password)
	}
	d.setSubset(t, d.northID, `{"area":{"_eq":"north"}}`)
	d.setSubset(t, d.southID, `{"area":{"_eq":"south"}}`)
	noRead := d.userID(t, "noread@example.org")
	if code, m := d.do(t, d.admin, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", noRead), `{"table_name":"finds","privilege":40}`); code != 200 {
		t.Fatalf("deny finds: %d %v", code, m)
	}
	return d
}

func (d *dig) userID(t *testing.T, email string) int64 {
	t.Helper()
	var id int64
	if err := d.app.DB.QueryRow(t.Context(), `SELECT id FROM `+d.app.DB.Sys("users")+` WHERE email = ?`, email).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// setSubset gives user a reader's override on finds with subset.
func (d *dig) setSubset(t *testing.T, user int64, subset string) {
	t.Helper()
	body := fmt.Sprintf(`{"table_name":"finds","privilege":%d,"subset":%s}`, auth.Reader, subset)
	if code, m := d.do(t, d.admin, "POST", fmt.Sprintf("/dig/api/user/%d/privileges", user), body); code != 200 {
		t.Fatalf("subset: %d %v", code, m)
	}
}

func (d *dig) do(t *testing.T, who, method, url, body string) (int, map[string]any) {
	t.Helper()
	return testenv.Do(t, d.inst.Server, method, url, body, testenv.Bearer(who))
}

// create makes a record as the writer and returns its id.
func (d *dig) create(t *testing.T, tb, body string) int64 {
	t.Helper()
	code, m := d.do(t, d.writer, "POST", "/dig/api/record/"+tb, body)
	if code != 200 {
		t.Fatalf("create %s %s: %d %v", tb, body, code, m)
	}
	return int64(m["id"].(float64))
}

// find makes a find in area with a sample, and returns its id.
func (d *dig) find(t *testing.T, label, area string, site int64) int64 {
	t.Helper()
	siteVal := "null"
	if site != 0 {
		siteVal = fmt.Sprint(site)
	}
	return d.create(t, "finds", fmt.Sprintf(`{"core":{"label":%q,"area":%q,"weight":1.5,"found_on":"2024-05-01","complete":true,"site":%s},"plugins":{"finds_samples":[{"fields":{"lab":"lab of %s"}}]}}`, label, area, siteVal, label))
}

func (d *dig) update(t *testing.T, id int64, core string) {
	t.Helper()
	if code, m := d.do(t, d.writer, "POST", fmt.Sprintf("/dig/api/record/finds/%d", id), `{"core":`+core+`}`); code != 200 {
		t.Fatalf("update %d: %d %v", id, code, m)
	}
}

func (d *dig) delete(t *testing.T, id int64) {
	t.Helper()
	if code, m := d.do(t, d.writer, "DELETE", fmt.Sprintf("/dig/api/record/finds/%d", id), ""); code != 200 {
		t.Fatalf("delete %d: %d %v", id, code, m)
	}
}

// page is one answer of GET /sync/{tb}.
type page struct {
	Table      string           `json:"table"`
	Rows       []map[string]any `json:"rows"`
	Removed    []int64          `json:"removed"`
	Checkpoint string           `json:"checkpoint"`
	More       bool             `json:"more"`
	Reset      bool             `json:"reset"`
}

// pull asks one page.
func (d *dig) pull(t *testing.T, who, tb, checkpoint string, limit int, filter string) page {
	t.Helper()
	q := url.Values{"checkpoint": {checkpoint}}
	if limit > 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	if filter != "" {
		q.Set("filter", filter)
	}
	code, m := d.do(t, who, "GET", "/dig/api/sync/"+tb+"?"+q.Encode(), "")
	if code != 200 {
		t.Fatalf("pull %s %s: %d %v", tb, q.Encode(), code, m)
	}
	b, _ := json.Marshal(m)
	var p page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.Table != tb || p.Checkpoint == "" || p.Rows == nil || p.Removed == nil {
		t.Fatalf("answer's shape: %s", b)
	}
	return p
}

// device is what a device holds of a table after pulling: rows by id.
type device struct {
	rows       map[int64]map[string]any
	checkpoint string
	pages      int
	resets     int
	removed    []int64
	sent       []int64 // ids of rows received by the last sync, in order
}

// sync pulls until up to date, applying pages as a device does.
func (d *dig) sync(t *testing.T, who, tb string, dev *device, limit int, filter string) {
	t.Helper()
	dev.removed, dev.sent = nil, nil
	for range 1000 {
		p := d.pull(t, who, tb, dev.checkpoint, limit, filter)
		dev.pages++
		if p.Reset || dev.rows == nil {
			if p.Reset {
				dev.resets++
			}
			dev.rows = map[int64]map[string]any{}
		}
		for _, r := range p.Rows {
			id := int64(r["id"].(float64))
			dev.rows[id] = r
			dev.sent = append(dev.sent, id)
		}
		for _, id := range p.Removed {
			delete(dev.rows, id)
		}
		dev.removed = append(dev.removed, p.Removed...)
		dev.checkpoint = p.Checkpoint
		if !p.More {
			return
		}
	}
	t.Fatal("the pull never ended")
}

// listIDs are the ids GET /records/{tb} shows who (with filter).
func (d *dig) listIDs(t *testing.T, who, tb, filter string) []int64 {
	t.Helper()
	q := url.Values{"per_page": {"1000"}}
	if filter != "" {
		q.Set("filter", filter)
	}
	code, m := d.do(t, who, "GET", "/dig/api/records/"+tb+"?"+q.Encode(), "")
	if code != 200 {
		t.Fatalf("list: %d %v", code, m)
	}
	out := []int64{}
	for _, r := range m["data"].([]any) {
		out = append(out, int64(r.(map[string]any)["id"].(float64)))
	}
	return out
}

// held is the sorted ids a device holds.
func (dev *device) held() []int64 {
	out := []int64{}
	for id := range dev.rows {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// sameAsRead checks every row the device holds against GET
// /record/{tb}/{id} as who: values, lookup labels, plugin rows, files and
// version.
func (d *dig) sameAsRead(t *testing.T, who, tb string, dev *device) {
	t.Helper()
	for id, row := range dev.rows {
		code, rec := d.do(t, who, "GET", fmt.Sprintf("/dig/api/record/%s/%d", tb, id), "")
		if code != 200 {
			t.Fatalf("read %d: %d %v", id, code, rec)
		}
		values, labels := row["values"].(map[string]any), row["labels"].(map[string]any)
		for name, e := range rec["core"].(map[string]any) {
			field := e.(map[string]any)
			if !reflect.DeepEqual(values[name], field["val"]) {
				t.Errorf("row %d field %s: pull %#v, read %#v", id, name, values[name], field["val"])
			}
			if vl, ok := field["val_label"]; ok && !reflect.DeepEqual(labels[name], vl) {
				t.Errorf("row %d label of %s: pull %#v, read %#v", id, name, labels[name], vl)
			}
		}
		if v := rec["metadata"].(map[string]any)["version"]; v != row["version"] {
			t.Errorf("row %d version: pull %v, read %v", id, row["version"], v)
		}
		plugins := row["plugins"].(map[string]any)
		for name, sec := range rec["plugins"].(map[string]any) {
			var want []any
			for _, e := range sec.(map[string]any)["data"].([]any) {
				r := map[string]any{}
				for k, v := range e.(map[string]any) {
					r[k] = v.(map[string]any)["val"]
				}
				want = append(want, r)
			}
			got, _ := plugins[name].([]any)
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("row %d plugin %s: pull %v, read %v", id, name, got, want)
			}
		}
		if !sameFiles(row["files"], rec["files"]) {
			t.Errorf("row %d files: pull %v, read %v", id, row["files"], rec["files"])
		}
	}
}

// sameFiles compares files entries but for their signed addresses, which
// carry the time they were signed.
func sameFiles(a, b any) bool {
	strip := func(v any) []any {
		list, _ := v.([]any)
		out := make([]any, len(list))
		for i, e := range list {
			m := map[string]any{}
			for k, x := range e.(map[string]any) {
				if k != "url" && k != "thumb_url" {
					m[k] = x
				}
			}
			out[i] = m
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}
