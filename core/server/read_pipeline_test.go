package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/server"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// TestPipelinedReadEqualsSequential: the full record read with its queries
// pipelined (one round trip for the independent ones on PostgreSQL; on
// both engines the version and lookup labels folded into the record's
// statement) answers
// byte for byte what it answers with every query run one by one, for every
// kind of caller (privilege overrides, row subsets, self_writer), on records
// with lookups (one to their own table), plugin rows, files, links,
// backlinks, manual links, stratigraphic relations and features, and for
// hidden, missing and new records (on SQLite, the sections the record's
// statement found empty are not read: the answer is the same).
func TestPipelinedReadEqualsSequential(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		// File links are signed with an expiry: the clock stands still
		// while the answers are compared.
		var frozen atomic.Pointer[time.Time]
		clock := func() time.Time {
			if at := frozen.Load(); at != nil {
				return *at
			}
			return time.Now().UTC()
		}
		f := newSecretDeps(t, e, server.Deps{Now: clock})
		ctx, now := t.Context(), time.Now().UTC()
		if _, err := schema.AddField(ctx, f.app.DB, "finds", schema.FieldDef{Name: "parent", Label: "Parent", Type: "select", IDFromTb: "finds"}, now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, f.app.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, now); err != nil {
			t.Fatal(err)
		}
		f.must(t, 200, f.super, "PUT", "/dig/api/config/table/units", `{"backlinks":["finds:finds:unit"]}`)
		f.must(t, 200, f.super, "PUT", "/dig/api/config/table/finds", `{"id_field":"label"}`)
		f.must(t, 200, f.super, "POST", "/dig/api/record/finds", fmt.Sprintf(`{"id":%d,"core":{"unit":%d,"weight":12.5,"complete":true,"notes":"**fine** ware","found_on":"2026-05-04","inv":"INV-7"}}`, f.find, f.unitP))
		find2 := f.create(t, f.self, "finds", fmt.Sprintf(`{"label":"b","unit":%d,"parent":%d,"site":%d}`, f.unitH, f.find, f.pompeii))
		f.must(t, 200, f.super, "POST", "/dig/api/record/finds", fmt.Sprintf(`{"id":%d,"core":{"parent":%d}}`, f.find, find2))
		for _, row := range []string{`"lab":"Oxford","bp":2100`, `"lab":"Kiel","bp":null`} {
			f.must(t, 200, f.writer, "POST", "/dig/api/record/finds_samples", fmt.Sprintf(`{"core":{"id_link":%d,%s}}`, f.find, row))
		}
		f.uploadOK(t, f.writer, "finds", f.find, "pianta.png", pngPixel)
		f.uploadOK(t, f.writer, "finds", f.find, "relazione.pdf", []byte("%PDF-1.7\nbody"))
		unit3 := f.create(t, f.writer, "units", fmt.Sprintf(`{"code":"US P3","site":%d}`, f.pompeii))
		for _, rel := range [][3]int64{{f.unitP, 5, f.unitH}, {unit3, 8, f.unitP}} {
			f.must(t, 200, f.writer, "POST", "/dig/api/record/units/rs", fmt.Sprintf(`{"first":%d,"relation":%d,"second":%d}`, rel[0], rel[1], rel[2]))
		}
		f.must(t, 200, f.super, "POST", "/dig/api/manual-link", fmt.Sprintf(`{"tb_one":"finds","id_one":%d,"tb_two":"units","id_two":%d,"label":"from"}`, f.find, f.unitH))
		f.must(t, 200, f.super, "PUT", "/dig/api/config/table/units", `{"geodata":true}`)
		f.must(t, 200, f.writer, "POST", "/dig/api/geoface/feature", fmt.Sprintf(`{"tb":"units","id":%d,"geometry":{"type":"Point","coordinates":[14.48,40.75]}}`, f.unitP))
		// The reader sees only the units whose code starts with "US P", and
		// only the find "amph" (not its parent).
		readerPriv := fmt.Sprintf("/dig/api/user/%d/privileges", f.userID(t, "reader@example.org"))
		f.must(t, 200, f.super, "POST", readerPriv, `{"table_name":"units","privilege":20,"subset":{"code":{"_starts_with":"US P"}}}`)
		f.must(t, 200, f.super, "POST", readerPriv, `{"table_name":"finds","privilege":20,"subset":{"label":{"_eq":"amph"}}}`)

		// The fixture reaches every section.
		m := f.must(t, 200, f.super, "GET", fmt.Sprintf("/dig/api/record/finds/%d", f.find), "")
		if n := len(m["files"].([]any)); n != 2 {
			t.Fatalf("files: %d", n)
		}
		if n := len(m["plugins"].(map[string]any)["finds_samples"].(map[string]any)["data"].([]any)); n != 2 {
			t.Fatalf("plugin rows: %d", n)
		}
		if n := len(m["manualLinks"].(map[string]any)); n != 3 {
			t.Fatalf("manual links: %d", n)
		}
		if n := len(m["backlinks"].(map[string]any)); n != 1 {
			t.Fatalf("backlinks: %v", m["backlinks"])
		}
		if l := m["core"].(map[string]any)["parent"].(map[string]any)["val_label"]; l != "b" {
			t.Fatalf("self lookup label: %v", l)
		}
		m = f.must(t, 200, f.super, "GET", fmt.Sprintf("/dig/api/record/units/%d", f.unitP), "")
		if len(m["rs"].(map[string]any)) != 2 || len(m["links"].(map[string]any)) != 1 || len(m["backlinks"].(map[string]any)) != 1 || len(m["geodata"].(map[string]any)) != 1 {
			t.Fatalf("unit sections: rs %v links %v backlinks %v geodata %v", m["rs"], m["links"], m["backlinks"], m["geodata"])
		}

		m = f.must(t, 200, f.reader, "GET", fmt.Sprintf("/dig/api/record/finds/%d", f.find), "")
		if c := m["core"].(map[string]any); c["parent"].(map[string]any)["val_label"] != nil || c["unit"].(map[string]any)["val_label"] != "US P" {
			t.Fatalf("reader's labels: parent %v, unit %v", c["parent"], c["unit"])
		}

		urls := []string{
			fmt.Sprintf("/dig/api/record/finds/%d", f.find),
			fmt.Sprintf("/dig/api/record/finds/%d", find2),
			"/dig/api/record/finds/new",
			fmt.Sprintf("/dig/api/record/units/%d", f.unitP),
			fmt.Sprintf("/dig/api/record/units/%d", f.unitH),
			fmt.Sprintf("/dig/api/record/units/%d", unit3),
			fmt.Sprintf("/dig/api/record/sites/%d", f.pompeii),
			fmt.Sprintf("/dig/api/record/sites/%d", f.herc),
			fmt.Sprintf("/dig/api/record/secret/%d", f.secret),
			"/dig/api/record/finds/999999",
			"/dig/api/record/finds/0",
			"/dig/api/record/nowhere/1",
		}
		at := time.Now().UTC()
		frozen.Store(&at)
		read := func(who, url string, sequential bool) *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", who)
			if sequential {
				req = req.WithContext(store.WithoutPipelining(req.Context()))
			}
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			return rec
		}
		statuses := map[int]int{}
		for _, who := range []struct{ name, token string }{{"super", f.super}, {"writer", f.writer}, {"self", f.self}, {"reader", f.reader}} {
			for _, url := range urls {
				want := read(who.token, url, true)
				got := read(who.token, url, false)
				statuses[want.Code]++
				// The answer is what encoding/json writes (gin's PureJSON):
				// decoded and encoded again, it does not change. A feature's
				// GeoJSON is the exception: it is given as kept ("type"
				// first), as a json.RawMessage would be.
				if again := reencode(t, got.Body.Bytes()); !bytes.Equal(again, got.Body.Bytes()) && !bytes.Contains(got.Body.Bytes(), []byte(`"geojson":`)) {
					t.Errorf("%s GET %s: the answer is not encoding/json's\n got  %s\n json %s", who.name, url, got.Body.Bytes(), again)
				}
				if got.Code != want.Code || got.Header().Get("ETag") != want.Header().Get("ETag") || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
					t.Errorf("%s GET %s\npipelined:  %d %s %s\none by one: %d %s %s", who.name, url,
						got.Code, got.Header().Get("ETag"), got.Body.String(), want.Code, want.Header().Get("ETag"), want.Body.String())
				}
			}
		}
		// Hidden (the reader's unit H, the writer's Herculaneum) and
		// missing records answer 404 both ways; the rest 200.
		if statuses[200] < 30 || statuses[404] < 6 || statuses[400] != 4 {
			t.Errorf("statuses: %v", statuses)
		}

		// On PostgreSQL a record with no rows in its probed sections (no
		// files, manual links, relations) is read in one round trip, the
		// request's check of the app's versions (in the same batch), its
		// links and lookup labels included, hidden or not; one with manual
		// links in three: its statement says it has some, they are read
		// in the second, their labels in the third; a lookup of the
		// record's own table whose label the caller may not see is looked
		// up once more.
		rounds := func(who, url string) int64 {
			var n atomic.Int64
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", who)
			req = req.WithContext(store.CountRounds(req.Context(), &n))
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d %s", url, rec.Code, rec.Body.String())
			}
			return n.Load()
		}
		if e == store.Postgres {
			for _, c := range []struct {
				who, url string
				want     int64
			}{
				{f.super, fmt.Sprintf("/dig/api/record/finds/%d", find2), 1},
				{f.super, fmt.Sprintf("/dig/api/record/finds/%d", f.find), 3},
				{f.writer, fmt.Sprintf("/dig/api/record/finds/%d", f.find), 3},
				{f.reader, fmt.Sprintf("/dig/api/record/finds/%d", f.find), 4},
				{f.super, fmt.Sprintf("/dig/api/record/sites/%d", f.pompeii), 1},
			} {
				if got := rounds(c.who, c.url); got != c.want {
					t.Errorf("GET %s: %d round trips, want %d", c.url, got, c.want)
				}
			}
		}
	})
}

// reencode decodes a JSON answer (numbers kept as written) and encodes it
// again as gin's PureJSON does.
func reencode(t *testing.T, body []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPipelinedListPageWithTotal: a page's total, when not cached, comes
// in the page's round trip on PostgreSQL (the request's versions check
// included), for a first page too (which needs it only when full), and
// the answer is the one of the queries run one by one.
func TestPipelinedListPageWithTotal(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		f := newDig(t, e)
		for i := 0; i < 7; i++ {
			f.create(t, f.writer, "sites", fmt.Sprintf(`{"name":"Site %d"}`, i))
		}
		get := func(url string, sequential bool) (*httptest.ResponseRecorder, int64) {
			var n atomic.Int64
			req := httptest.NewRequest("GET", url, nil)
			req.Header.Set("Authorization", f.reader)
			ctx := store.CountRounds(req.Context(), &n)
			if sequential {
				ctx = store.WithoutPipelining(ctx)
			}
			rec := httptest.NewRecorder()
			f.inst.Server.ServeHTTP(rec, req.WithContext(ctx))
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d %s", url, rec.Code, rec.Body.String())
			}
			return rec, n.Load()
		}
		for _, c := range []struct {
			url   string
			total int
		}{
			{"/dig/api/records/sites?per_page=3", 7},
			{"/dig/api/records/sites?per_page=30&filter[name][_ends_with]=5", 1}, // a first page not full
			{"/dig/api/records/sites?per_page=4&sort_field=name&filter[name][_starts_with]=Site", 7},
			{"/dig/api/records/sites?per_page=3&page=2", 7},
			{"/dig/api/records/sites?per_page=3&page=3&sort_field=name&sort_dir=desc", 7},
			{"/dig/api/records/sites?per_page=2&page=2&ids_only=1", 7},
			{"/dig/api/records/sites?per_page=3&page=2&filter[name][_starts_with]=Site", 7},
		} {
			// Pipelined first: the count is not cached yet, or cached by
			// an earlier page of the same filter.
			url := c.url
			got, rounds := get(url, false)
			want, _ := get(url, true)
			if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("GET %s\npipelined:  %s\none by one: %s", url, got.Body.String(), want.Body.String())
			}
			if total := fmt.Sprintf(`"total":%d`, c.total); !bytes.Contains(got.Body.Bytes(), []byte(total)) {
				t.Errorf("GET %s: %s, want %s", url, got.Body.String(), total)
			}
			if e == store.Postgres && rounds != 1 {
				t.Errorf("GET %s: %d round trips for the page and its count, want 1", url, rounds)
			}
		}
	})
}
