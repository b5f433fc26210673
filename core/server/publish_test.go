package server_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/publish/crate"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// pubFix is an excavation with public and private data: trenches
// (finished ones published), units with stratigraphic relations and a
// private note, finds referring to units. Every private value and every
// record the filters leave out carries a marker of its own, searched for
// in everything the publication shows.
type pubFix struct {
	t       *testing.T
	app     *apps.App
	markers []string
	n       int
}

// marker is a unique string that must never be published.
func (f *pubFix) marker() string {
	f.n++
	m := fmt.Sprintf("PRIVATE-MARKER-%03d-ZQX", f.n)
	f.markers = append(f.markers, m)
	return m
}

func (f *pubFix) insert(tb string, vals map[string]any) int64 {
	f.t.Helper()
	cols := make([]string, 0, len(vals))
	for k := range vals {
		cols = append(cols, k)
	}
	sort.Strings(cols)
	args := make([]any, len(cols))
	quoted := make([]string, len(cols))
	for i, c := range cols {
		args[i], quoted[i] = vals[c], `"`+c+`"`
	}
	var id int64
	q := `INSERT INTO ` + f.app.DB.Qualify(tb) + ` (` + strings.Join(quoted, ", ") + `) VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + `) RETURNING "id"`
	if err := f.app.DB.QueryRow(f.t.Context(), q, args...).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	return id
}

func newPubFix(t *testing.T, a *apps.App) *pubFix {
	t.Helper()
	ctx, now := t.Context(), time.Now().UTC()
	f := &pubFix{t: t, app: a}
	mk := func(tb string, fields ...schema.FieldDef) {
		if _, err := schema.CreateTable(ctx, a.DB, schema.TableDef{Name: tb, Label: strings.ToUpper(tb[:1]) + tb[1:]}, now); err != nil {
			t.Fatal(err)
		}
		for _, fd := range fields {
			if _, err := schema.AddField(ctx, a.DB, tb, fd, now); err != nil {
				t.Fatal(tb, fd.Name, err)
			}
		}
	}
	mk("trenches", schema.FieldDef{Name: "code", Label: "Code"}, schema.FieldDef{Name: "status", Label: "Status"},
		schema.FieldDef{Name: "notes", Label: "Private notes"})
	mk("units", schema.FieldDef{Name: "code", Label: "Code"}, schema.FieldDef{Name: "description", Label: "Description", Type: "long_text"},
		schema.FieldDef{Name: "trench", Label: "Trench", IDFromTb: "trenches", Type: "combo_select"}, schema.FieldDef{Name: "secret", Label: "Secret"},
		schema.FieldDef{Name: "depth", Label: "Depth", DBType: "float"}, schema.FieldDef{Name: "dug", Label: "Dug on", Type: "date"})
	mk("finds", schema.FieldDef{Name: "code", Label: "Code"}, schema.FieldDef{Name: "material", Label: "Material"},
		schema.FieldDef{Name: "unit", Label: "Unit", IDFromTb: "units", Type: "combo_select"}, schema.FieldDef{Name: "owner", Label: "Owner (private)"},
		schema.FieldDef{Name: "count", Label: "Count", DBType: "int"}, schema.FieldDef{Name: "fragile", Label: "Fragile", Type: "boolean"})
	mk("staff", schema.FieldDef{Name: "name", Label: "Name"})
	if _, err := schema.PutTable(ctx, a.DB, "units", schema.TableConfig{RS: schema.RSOn(true), IDField: schema.Set("code")}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.PutTable(ctx, a.DB, "trenches", schema.TableConfig{IDField: schema.Set("code")}, now); err != nil {
		t.Fatal(err)
	}
	chrono := schema.FeatureSpec{Plugin: "chronology", Name: schema.ChronologyFeature,
		Columns: []schema.FieldDef{{Name: "chrono_from", DBType: "int"}, {Name: "chrono_to", DBType: "int"}, {Name: "chrono_label"}}}
	if err := schema.ActivateFeature(ctx, a.DB, "units", chrono, now); err != nil {
		t.Fatal(err)
	}
	t1 := f.insert("trenches", map[string]any{"code": "T1", "status": "finished", "notes": f.marker()})
	t2 := f.insert("trenches", map[string]any{"code": f.marker(), "status": "open", "notes": f.marker()}) // not published
	units := map[string]int64{}
	for i, code := range []string{"US1", "US2", "US3", "US4"} {
		units[code] = f.insert("units", map[string]any{"code": code, "description": "Layer " + code + ` with "quotes", commas, and
a new line`, "trench": t1, "secret": f.marker(), "depth": 1.25 * float64(i+1), "dug": "2024-06-0" + fmt.Sprint(i+1),
			"chrono_from": -500 + 100*i, "chrono_to": -401 + 100*i, "chrono_label": fmt.Sprintf("c%d BCE", 5-i)})
	}
	hidden := f.insert("units", map[string]any{"code": f.marker(), "description": f.marker(), "trench": t2, "secret": f.marker()})
	rel := func(a int64, r int, b int64) {
		if _, err := f.app.DB.Exec(ctx, `INSERT INTO `+f.app.DB.Sys("rs")+` (tb, first, second, relation, created_at) VALUES ('units', ?, ?, ?, ?)`, a, b, r, now); err != nil {
			t.Fatal(err)
		}
	}
	rel(units["US1"], 5, units["US2"]) // US1 covers US2
	rel(units["US2"], 6, units["US3"]) // US2 cuts US3
	rel(units["US3"], 5, hidden)       // to a unit that is not published: left out
	for i := range 12 {
		u := units[[]string{"US1", "US2", "US3", "US4"}[i%4]]
		f.insert("finds", map[string]any{"code": fmt.Sprintf("F%02d", i+1), "material": []string{"bronze", "=1+2", "bone, burnt", "pottery"}[i%4],
			"unit": u, "owner": f.marker(), "count": i, "fragile": i%2 == 0})
	}
	f.insert("finds", map[string]any{"code": f.marker(), "material": f.marker(), "unit": hidden, "owner": f.marker()})
	f.insert("staff", map[string]any{"name": f.marker()})
	return f
}

// pubConfig publishes finished trenches, their units and finds.
const pubConfig = `{"title":"Excavations at Test Hill","description":"Units & finds, <b>not</b> markup.","licence":"CC-BY-4.0",
 "contact":"data@example.org","publisher":"Test University","language":"en","keywords":["archaeology","excavation"],
 "authors":[{"name":"Carver, Martin","given_name":"Martin","family_name":"Carver","orcid":"0000-0002-1825-0097","affiliation":"Test University"},
            {"name":"Harris, Edward","given_name":"Edward","family_name":"Harris"}],
 "tables":[
  {"name":"trenches","kind":"site","fields":["code"],"filter":{"status":{"_eq":"finished"}}},
  {"name":"units","kind":"stratigraphic_unit","term":{"id":"http://vocab.getty.edu/aat/300411702","label":"stratigraphic units"},
   "fields":["code","description","trench","depth","dug","chrono_from","chrono_to","chrono_label"],"filter":{"trench":{"status":{"_eq":"finished"}}}},
  {"name":"finds","kind":"find","term":{"id":"http://vocab.getty.edu/aat/300234110","label":"archaeological objects"},
   "fields":["code","material","unit","count","fragile"],"filter":{"unit":{"trench":{"status":{"_eq":"finished"}}}},"images":true,
   "roles":{"material":"material","dimensions":[{"field":"count","type":{"id":"http://vocab.getty.edu/aat/300404433","label":"count"},
    "unit":{"id":"http://vocab.getty.edu/aat/300404433","label":"items"}}]}}]}`

func TestPublish(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		inst := testenv.NewInstanceWithJobs(t, e)
		a := testenv.NewApp(t, inst.Apps, "dig")
		f := newPubFix(t, a)
		testenv.NewUser(t, a, "pub@example.org", "pub@example.org", auth.Admin)
		testenv.NewUser(t, a, "w@example.org", "w@example.org", auth.Writer)
		h := testenv.Bearer(testenv.Login(t, inst.Server, "dig", "pub@example.org", testenv.Password))
		writer := testenv.Login(t, inst.Server, "dig", "w@example.org", testenv.Password)

		t.Run("settings", func(t *testing.T) {
			testenv.Scenario{Name: "nothing yet", Method: "GET", URL: "/dig/api/publish/config", Headers: h, ExpectedStatus: 200,
				ExpectedContent: []string{`"configured":false`, `"licence":"CC-BY-4.0"`}}.Run(t, inst.Server)
			testenv.Scenario{Name: "writer", Method: "GET", URL: "/dig/api/publish/config", Headers: testenv.Bearer(writer), ExpectedStatus: 403}.Run(t, inst.Server)
			testenv.Scenario{Name: "no snapshot before settings", Method: "POST", URL: "/dig/api/publish/snapshots", Headers: h, ExpectedStatus: 409,
				ExpectedContent: []string{`"code":"publish_not_configured"`}}.Run(t, inst.Server)
			bad := func(name, from, to, field string) {
				t.Helper()
				body := strings.Replace(pubConfig, from, to, 1)
				if body == pubConfig {
					t.Fatalf("%s: %q not in the setting", name, from)
				}
				testenv.Scenario{Name: name, Method: "PUT", URL: "/dig/api/publish/config", Body: body, Headers: h, ExpectedStatus: 400,
					ExpectedContent: []string{`"code":"publish_config_invalid"`, `"field":"` + field + `"`}}.Run(t, inst.Server)
			}
			bad("unknown table", `"name":"finds"`, `"name":"nope"`, "tables[2].name")
			bad("unknown field", `"count","fragile"`, `"count","nope"`, "tables[2].fields[4]")
			bad("bad orcid", `0000-0002-1825-0097`, `0000-0002-1825-0098`, "authors[0].orcid")
			bad("bad licence", `"CC-BY-4.0"`, `"MIT-ish"`, "licence")
			bad("bad kind", `"kind":"site"`, `"kind":"castle"`, "tables[0].kind")
			bad("bad term", `http://vocab.getty.edu/aat/300411702`, `javascript:alert(1)`, "tables[1].term")
			bad("bad filter", `{"status":{"_eq":"finished"}}`, `{"nope":{"_eq":"x"}}`, "tables[0].filter")
			bad("no contact", `"data@example.org"`, `""`, "contact")
			bad("material not public", `"material":"material"`, `"material":"owner"`, "tables[2].roles.material")
			bad("dimension not numeric", `"field":"count"`, `"field":"code"`, "tables[2].roles.dimensions[0].field")
			bad("bad doi", `"language":"en"`, `"language":"en","doi":{"provider":"datacite","base_url":"ftp://x"}`, "doi.base_url")
			testenv.Scenario{Name: "unknown key", Method: "PUT", URL: "/dig/api/publish/config", Body: `{"title":"x","surprise":1}`, Headers: h,
				ExpectedStatus: 400}.Run(t, inst.Server)
			testenv.Scenario{Name: "saved", Method: "PUT", URL: "/dig/api/publish/config", Body: pubConfig, Headers: h, ExpectedStatus: 200,
				ExpectedContent: []string{`"code":"ok_publish_config"`, `"doi_secret_set":false`}}.Run(t, inst.Server)
			testenv.Scenario{Name: "read back", Method: "GET", URL: "/dig/api/publish/config", Headers: h, ExpectedStatus: 200,
				ExpectedContent: []string{`"configured":true`, `"title":"Excavations at Test Hill"`}}.Run(t, inst.Server)
		})

		// Photographs of a published find (with a private description) and
		// of a find that is not published.
		pubFind := publishedIDs(t, a, `SELECT "id" FROM `+a.DB.Qualify("finds")+` WHERE "code" = 'F01'`)[0]
		hiddenFind := publishedIDs(t, a, `SELECT MAX("id") FROM `+a.DB.Qualify("finds"))[0]
		for _, id := range []int64{pubFind, pubFind, hiddenFind} {
			st, m := testenv.DoMultipart(t, inst.Server, fmt.Sprintf("/dig/api/record/finds/%d/file", id), h["Authorization"],
				map[string]string{"description": f.marker()}, testenv.FormFile{Field: "file", Name: f.marker() + ".png", Data: testPNG(t, 700, 300)})
			if st != 200 {
				t.Fatalf("upload: %d %v", st, m)
			}
		}

		v1 := publishNow(t, inst, h)
		crate1 := downloadCrate(t, inst, h, v1.ID)

		t.Run("crate", func(t *testing.T) {
			if err := crate.CheckCrate(crate1); err != nil {
				t.Fatalf("RO-Crate: %v", err)
			}
			if err := crate.CheckPackage(crate1); err != nil {
				t.Fatalf("data package: %v", err)
			}
			// Every CSV row equals the database's published rows.
			wantUnits := publishedIDs(t, a, `SELECT u."id" FROM `+a.DB.Qualify("units")+` u JOIN `+a.DB.Qualify("trenches")+` t ON t."id" = u."trench" WHERE t."status" = 'finished' ORDER BY u."id"`)
			wantFinds := publishedIDs(t, a, `SELECT f."id" FROM `+a.DB.Qualify("finds")+` f JOIN `+a.DB.Qualify("units")+` u ON u."id" = f."unit" JOIN `+a.DB.Qualify("trenches")+` t ON t."id" = u."trench" WHERE t."status" = 'finished' ORDER BY f."id"`)
			if got := csvIDs(t, crate1, "data/units.csv"); !slices.Equal(got, wantUnits) {
				t.Fatalf("units.csv ids %v, want %v", got, wantUnits)
			}
			if got := csvIDs(t, crate1, "data/finds.csv"); !slices.Equal(got, wantFinds) {
				t.Fatalf("finds.csv ids %v, want %v", got, wantFinds)
			}
			rows := csvRows(t, crate1, "data/units.csv")
			if !slices.Equal(rows[0], []string{"id", "code", "description", "trench", "depth", "dug", "chrono_from", "chrono_to", "chrono_label"}) {
				t.Fatalf("units.csv header %v", rows[0])
			}
			var desc, depth, dug string
			if err := a.DB.QueryRow(t.Context(), `SELECT "description", CAST("depth" AS TEXT), CAST("dug" AS TEXT) FROM `+a.DB.Qualify("units")+` WHERE "id" = ?`, wantUnits[1]).Scan(&desc, &depth, &dug); err != nil {
				t.Fatal(err)
			}
			if rows[2][2] != desc || rows[2][4] != strings.TrimSuffix(depth, ".0") && rows[2][4] != depth || rows[2][5] != dug {
				t.Fatalf("units.csv row %v, database %q %q %q", rows[2], desc, depth, dug)
			}
			finds := csvRows(t, crate1, "data/finds.csv")
			if finds[2][2] != "=1+2" {
				t.Fatalf("a value that looks like a formula is data, written as it is: %q", finds[2][2])
			}
			rels := csvRows(t, crate1, "data/units_relations.csv")
			if len(rels) != 3 { // header + the two relations among published units
				t.Fatalf("relations %v", rels)
			}
			for _, id := range wantUnits {
				doc := fileOf(t, crate1, fmt.Sprintf("records/units/%d.json", id))
				var m map[string]any
				if err := json.Unmarshal(doc, &m); err != nil {
					t.Fatalf("unit %d JSON-LD: %v", id, err)
				}
				if m["id"] != fmt.Sprintf("https://strata.example/dig/data/record/units/%d", id) && !strings.HasSuffix(fmt.Sprint(m["id"]), fmt.Sprintf("/dig/data/record/units/%d", id)) {
					t.Fatalf("unit %d's URI: %v", id, m["id"])
				}
			}
			// A unit's dating is its formation's time-span, in astronomical
			// years (the chronology plugin's −500 is 500 BCE: −0499).
			us1 := string(fileOf(t, crate1, fmt.Sprintf("records/units/%d.json", wantUnits[0])))
			if !strings.Contains(us1, `"begin_of_the_begin": "-0499-01-01T00:00:00Z"`) || !strings.Contains(us1, `"end_of_the_end": "-0400-12-31T23:59:59Z"`) || !strings.Contains(us1, "c5 BCE") {
				t.Fatalf("unit US1's production:\n%s", us1)
			}
			// A find's material and measurement have their own places.
			var find map[string]any
			json.Unmarshal(fileOf(t, crate1, fmt.Sprintf("records/finds/%d.json", wantFinds[1])), &find)
			if made := fmt.Sprint(find["made_of"]); !strings.Contains(made, "=1+2") {
				t.Fatalf("made_of %s", made)
			}
			if dim := fmt.Sprint(find["dimension"]); !strings.Contains(dim, "value:1") || !strings.Contains(dim, "items") {
				t.Fatalf("dimension %s", dim)
			}
			for _, name := range []string{"ro-crate-metadata.json", "datapackage.json", "datacite.xml"} {
				fileOf(t, crate1, name)
			}
			// The published find's two photographs as IIIF, named by its
			// document; none of the find that is not published.
			manifest := fileOf(t, crate1, fmt.Sprintf("iiif/finds/%d/manifest.json", pubFind))
			if !bytes.Contains(fileOf(t, crate1, fmt.Sprintf("records/finds/%d.json", pubFind)), []byte(fmt.Sprintf("/dig/data/iiif/finds/%d/manifest.json", pubFind))) {
				t.Fatal("the find's document does not name its manifest")
			}
			for _, n := range []int{1, 2} {
				info := fileOf(t, crate1, fmt.Sprintf("iiif/finds/%d/%d/info.json", pubFind, n))
				if !bytes.Contains(info, []byte(`"width": 700`)) && !bytes.Contains(info, []byte(`"width":700`)) {
					t.Fatalf("info.json %s", info)
				}
				fileOf(t, crate1, fmt.Sprintf("iiif/finds/%d/%d/full/max/0/default.jpg", pubFind, n))
			}
			if !bytes.Contains(manifest, []byte(`"type": "Canvas"`)) && !bytes.Contains(manifest, []byte(`"type":"Canvas"`)) {
				t.Fatalf("manifest %s", manifest)
			}
			if _, err := fs.Stat(crate1, fmt.Sprintf("iiif/finds/%d", hiddenFind)); err == nil {
				t.Fatal("the images of a find that is not published were published")
			}
			// The Harris matrix: the four published units, US1 above US2
			// above US3, US4 on its own; the hidden unit not drawn.
			svg := string(fileOf(t, crate1, "figures/units-matrix.svg"))
			for _, want := range []string{">US1<", ">US2<", ">US3<", ">US4<"} {
				if !strings.Contains(svg, want) {
					t.Fatalf("the matrix lacks %s:\n%s", want, svg)
				}
			}
			if strings.Count(svg, "<line") != 2 || strings.Count(svg, "<rect") != 4 {
				t.Fatalf("the matrix has %d relations and %d units, want 2 and 4:\n%s", strings.Count(svg, "<line"), strings.Count(svg, "<rect"), svg)
			}
			if _, err := fs.Stat(crate1, "data/staff.csv"); err == nil {
				t.Fatal("a table that is not public was published")
			}
			var dc struct {
				XMLName xml.Name
			}
			if err := xml.Unmarshal(fileOf(t, crate1, "datacite.xml"), &dc); err != nil || dc.XMLName.Local != "resource" {
				t.Fatalf("datacite.xml: %v %v", dc.XMLName, err)
			}
		})

		pages := map[string][]byte{}
		t.Run("landing pages", func(t *testing.T) {
			get := func(url, accept string, status int, want ...string) []byte {
				t.Helper()
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", url, nil)
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				inst.Server.ServeHTTP(rec, req)
				if rec.Code != status {
					t.Fatalf("%s: %d %s", url, rec.Code, rec.Body.String())
				}
				for _, w := range want {
					if !strings.Contains(rec.Body.String(), w) {
						t.Fatalf("%s lacks %q:\n%s", url, w, rec.Body.String())
					}
				}
				pages[url+" "+accept] = rec.Body.Bytes()
				return rec.Body.Bytes()
			}
			get("/dig/data", "text/html", 200, "Excavations at Test Hill", "<td>Units</td>", "Carver, M., &amp; Harris, E.", "Units &amp; finds, &lt;b&gt;not&lt;/b&gt; markup.", "@misc{dig_v1")
			get("/dig/data/snapshot/1", "application/ld+json", 200, `"@type":"Dataset"`, `"version":"1"`)
			ids := csvIDs(t, crate1, "data/units.csv")
			get(fmt.Sprintf("/dig/data/record/units/%d", ids[0]), "", 200, "US1", "covers", "Depth")
			ld := get(fmt.Sprintf("/dig/data/record/units/%d", ids[0]), "application/ld+json", 200)
			if !bytes.Equal(ld, fileOf(t, crate1, fmt.Sprintf("records/units/%d.json", ids[0]))) {
				t.Fatal("the record's JSON-LD differs from the crate's")
			}
			get("/dig/data/record/units/999999", "", 404, `"code":"record_not_published"`)
			// The crate is browsable, and IIIF resolves at its stable URIs.
			finds := csvIDs(t, crate1, "data/finds.csv")
			iiifURL := fmt.Sprintf("/dig/data/iiif/finds/%d/manifest.json", finds[0])
			if !bytes.Equal(get(iiifURL, "", 200), fileOf(t, crate1, fmt.Sprintf("iiif/finds/%d/manifest.json", finds[0]))) {
				t.Fatal("the manifest served differs from the crate's")
			}
			if !bytes.Equal(get("/dig/data/snapshot/1/files/data/units.csv", "", 200), fileOf(t, crate1, "data/units.csv")) {
				t.Fatal("a crate file served differs from the crate's")
			}
			get(fmt.Sprintf("/dig/data/iiif/finds/%d/1/full/max/0/default.jpg", finds[0]), "", 200)
			get("/dig/data/snapshot/1/files/../../etc/passwd", "", 404)
			get("/dig/data/snapshot/1/files/data/staff.csv", "", 404, `"code":"file_not_published"`)
			get("/dig/data/record/staff/1", "", 404, `"code":"record_not_published"`)
			get("/dig/data/snapshot/7", "", 404, `"code":"snapshot_not_found"`)
			zipBytes := get("/dig/data/snapshot/1/download", "", 200)
			if _, err := zip.NewReader(bytes.NewReader(zipBytes), int64(len(zipBytes))); err != nil {
				t.Fatalf("public download: %v", err)
			}
		})

		t.Run("oai-pmh", func(t *testing.T) {
			for _, q := range []string{"verb=Identify", "verb=ListSets", "verb=ListMetadataFormats",
				"verb=ListRecords&metadataPrefix=datacite&set=table:finds"} {
				pages["oai "+q] = oaiGet(t, inst, q)
			}
			// The union of the pages is exactly the published records.
			got := oaiHarvest(t, inst, "verb=ListIdentifiers&metadataPrefix=oai_dc", pages)
			var want []string
			for _, tb := range []string{"trenches", "units", "finds"} {
				for _, id := range csvIDs(t, crate1, "data/"+tb+".csv") {
					want = append(want, fmt.Sprintf("/dig/data/record/%s/%d", tb, id))
				}
			}
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Fatalf("harvested %v\nwant %v", got, want)
			}
		})

		t.Run("nothing private leaks", func(t *testing.T) {
			var everything [][]byte
			fs.WalkDir(crate1, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					everything = append(everything, fileOf(t, crate1, p))
				}
				return err
			})
			for _, p := range pages {
				everything = append(everything, p)
			}
			for _, m := range f.markers {
				for _, b := range everything {
					if bytes.Contains(b, []byte(m)) {
						t.Fatalf("private marker %s published", m)
					}
				}
			}
		})

		t.Run("a new version", func(t *testing.T) {
			v2 := publishNow(t, inst, h)
			crate2 := downloadCrate(t, inst, h, v2.ID)
			// The same data again: every file but the three that carry the
			// date and the version is byte-identical.
			dated := []string{"ro-crate-metadata.json", "datapackage.json", "datacite.xml"}
			fs.WalkDir(crate1, ".", func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || slices.Contains(dated, p) {
					return err
				}
				if !bytes.Equal(fileOf(t, crate1, p), fileOf(t, crate2, p)) {
					t.Fatalf("%s differs between two publications of the same data", p)
				}
				return nil
			})
			meta := string(fileOf(t, crate2, "ro-crate-metadata.json"))
			if !strings.Contains(meta, "/dig/data/snapshot/1") {
				t.Fatal("version 2 does not point at version 1")
			}
			if dc := string(fileOf(t, crate2, "datacite.xml")); !strings.Contains(dc, `relationType="IsNewVersionOf">`) || !strings.Contains(dc, "/dig/data/snapshot/1<") {
				t.Fatalf("version 2's DataCite metadata does not point at version 1:\n%s", dc)
			}
		})

		// A snapshot left running by a node that stopped (its job gone, or
		// never queued) does not block the next one: it is marked failed.
		t.Run("a stale run", func(t *testing.T) {
			for i, job := range []any{int64(999999), nil} {
				id := int64(200 * (i + 1))
				if _, err := a.DB.Exec(t.Context(), `INSERT INTO `+a.DB.Sys("publish_snapshots")+` (id, status, job_id, config, created_at) VALUES (?, 'running', ?, ?, 0)`,
					id, job, `{"config":{},"base_url":""}`); err != nil {
					t.Fatal(err)
				}
				testenv.Scenario{Name: "blocked while it runs", Method: "GET", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d", id), Headers: h,
					ExpectedStatus: 200, ExpectedContent: []string{`"status":"running"`}}.Run(t, inst.Server)
				s := publishNow(t, inst, h)
				if *s.Version != int64(3+i) {
					t.Fatalf("version %d, want %d", *s.Version, 3+i)
				}
				testenv.Scenario{Name: "released", Method: "GET", URL: fmt.Sprintf("/dig/api/publish/snapshots/%d", id), Headers: h,
					ExpectedStatus: 200, ExpectedContent: []string{`"status":"failed"`}}.Run(t, inst.Server)
			}
		})
	})
}

// testPNG is a gradient image of w×h.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type pubSnapshot struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"`
	Version *int64 `json:"version"`
	Error   *string
}

// publishNow starts a snapshot and waits for it.
func publishNow(t *testing.T, inst *testenv.Instance, h map[string]string) pubSnapshot {
	t.Helper()
	rec := testenv.Scenario{Name: "publish", Method: "POST", URL: "/dig/api/publish/snapshots", Headers: h, ExpectedStatus: 202,
		ExpectedContent: []string{`"code":"publish_started"`}}.Run(t, inst.Server)
	var started struct {
		Snapshot pubSnapshot `json:"snapshot"`
	}
	json.Unmarshal(rec.Body.Bytes(), &started)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, m := testenv.Do(t, inst.Server, "GET", fmt.Sprintf("/dig/api/publish/snapshots/%d", started.Snapshot.ID), "", h)
		raw, _ := json.Marshal(m["snapshot"])
		var s pubSnapshot
		json.Unmarshal(raw, &s)
		switch {
		case s.Status == "done":
			return s
		case s.Status == "failed" || time.Now().After(deadline):
			t.Fatalf("snapshot: %v", m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// downloadCrate fetches a snapshot's zip as a file system.
func downloadCrate(t *testing.T, inst *testenv.Instance, h map[string]string, id int64) fs.FS {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", fmt.Sprintf("/dig/api/publish/snapshots/%d/download", id), nil)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	inst.Server.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/zip" {
		t.Fatalf("download: %d %s", rec.Code, rec.Body.String())
	}
	zr, err := zip.NewReader(bytes.NewReader(rec.Body.Bytes()), int64(rec.Body.Len()))
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, zf := range zr.File {
		r, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[zf.Name] = &fstest.MapFile{Data: b}
	}
	return out
}

func fileOf(t *testing.T, fsys fs.FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func csvRows(t *testing.T, fsys fs.FS, name string) [][]string {
	t.Helper()
	var rows [][]string
	if err := crate.ReadCSV(bytes.NewReader(fileOf(t, fsys, name)), func(_ int, cells []string) error {
		rows = append(rows, slices.Clone(cells))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows
}

func csvIDs(t *testing.T, fsys fs.FS, name string) []int64 {
	t.Helper()
	var ids []int64
	for _, r := range csvRows(t, fsys, name)[1:] {
		var id int64
		fmt.Sscan(r[0], &id)
		ids = append(ids, id)
	}
	return ids
}

func publishedIDs(t *testing.T, a *apps.App, q string) []int64 {
	t.Helper()
	rows, err := a.DB.Query(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

func oaiGet(t *testing.T, inst *testenv.Instance, query string) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	inst.Server.ServeHTTP(rec, httptest.NewRequest("GET", "/dig/oai?"+query, nil))
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "xml") {
		t.Fatalf("oai %s: %d %s", query, rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "<error") {
		t.Fatalf("oai %s: %s", query, rec.Body.String())
	}
	return rec.Body.Bytes()
}

// oaiHarvest follows the resumption tokens and returns the identifiers'
// paths.
func oaiHarvest(t *testing.T, inst *testenv.Instance, query string, pages map[string][]byte) []string {
	t.Helper()
	var out []string
	for q := query; ; {
		body := oaiGet(t, inst, q)
		pages["oai "+q] = body
		var resp struct {
			Headers []struct {
				Identifier string `xml:"identifier"`
			} `xml:"ListIdentifiers>header"`
			Token string `xml:"ListIdentifiers>resumptionToken"`
		}
		if err := xml.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		for _, h := range resp.Headers {
			u, err := url.Parse(h.Identifier)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u.Path)
		}
		if resp.Token == "" {
			return out
		}
		q = "verb=ListIdentifiers&resumptionToken=" + url.QueryEscape(resp.Token)
	}
}
