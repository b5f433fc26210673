package demo

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Shown is what Showcase put in the demo application: the plugin
// features it turned on, and those it left off because their plugin is
// not running (named in the log too).
type Shown struct {
	Features []string // "table/feature", e.g. "units/radiocarbon"
	Missing  []string // the same, for the features whose plugin is absent
}

// The plugin features the demo turns on, in this order: chronology before
// radiocarbon, so a unit's dating and its dates appear together.
var showcaseFeatures = []struct{ table, feature string }{
	{"units", "chronology"},
	{"units", "radiocarbon"},
	{"burials", "osteology"},
}

// Showcase adds to an application filled by Seed (Small) what makes every
// feature visible at once (issue 30, "First run"): geodata on the sites
// (outlines at real coordinates in Italy), a burials table, the
// chronology, radiocarbon and osteology features with a few records using
// them, the sequence plugin's chronology model of the first trench (when it
// runs), images attached to records, a chart, a saved query and a print
// template. The stratigraphic relations Seed made are the clean matrix.
//
// Everything after the catalog goes through h, the server's own handler,
// as the application's admin (adminEmail): the same gate, validation and
// plugin hooks as any client, so radiocarbon dates are calibrated by the
// plugin and osteology documents checked by it. A feature whose plugin is
// not running is left off and logged; the rest is still made. Each step
// looks before it writes, so a second call adds nothing.
func Showcase(ctx context.Context, h http.Handler, app *apps.App, adminEmail string, now time.Time, log *slog.Logger) (Shown, error) {
	var shown Shown
	c, err := newClient(ctx, h, app, adminEmail, now)
	if err != nil {
		return shown, err
	}
	if err := showcaseCatalog(ctx, app.DB, now); err != nil {
		return shown, err
	}
	if err := showcaseGeodata(ctx, c, app.DB); err != nil {
		return shown, err
	}
	active := map[string]bool{}
	for _, f := range showcaseFeatures {
		name := f.table + "/" + f.feature
		status, body, err := c.call(ctx, http.MethodPost, "/config/table/"+f.table+"/"+f.feature, nil)
		switch {
		case err != nil:
			return shown, err
		case status == http.StatusOK:
			active[name] = true
			shown.Features = append(shown.Features, name)
		case status == http.StatusNotFound || status == http.StatusServiceUnavailable:
			// No plugin offers it (binary absent) or it is not running:
			// the demo goes on without it and says so.
			shown.Missing = append(shown.Missing, name)
			log.Warn("demo: a plugin feature is left off, its plugin is not running",
				"feature", f.feature, "table", f.table, "code", body["code"],
				"hint", "build the plugins (make build), start again and turn it on under Administration, Plugin features")
		default:
			return shown, fmt.Errorf("demo: turn on %s: %d %v", name, status, body)
		}
	}
	steps := []func(context.Context, *client, *store.DB, map[string]bool) error{
		showcaseBurials, showcaseDating, showcaseFiles, showcaseViews,
	}
	for _, step := range steps {
		if err := step(ctx, c, app.DB, active); err != nil {
			return shown, err
		}
	}
	if err := showcaseSequence(ctx, c, active, log); err != nil {
		return shown, err
	}
	if err := showcasePublish(ctx, c, log); err != nil {
		return shown, err
	}
	return shown, nil
}

// publishSetting is the demo's publication: sites, units and finds with
// their photographs; descriptions of trenches and units' types stay
// private, as a project's notes would.
var publishSetting = map[string]any{
	"title": "Demo excavation", "description": "The demo application's sites, stratigraphic units and finds, published as open data.",
	"licence": "CC-BY-4.0", "contact": "data@example.org", "publisher": "Strata demo", "language": "en",
	"keywords": []string{"archaeology", "excavation", "demo"},
	"authors":  []map[string]any{{"name": "Demo, Admin", "given_name": "Admin", "family_name": "Demo"}},
	"tables": []map[string]any{
		{"name": "sites", "kind": "site", "fields": []string{"name", "region"}},
		{"name": "units", "kind": "stratigraphic_unit", "fields": []string{"code", "description"}},
		{"name": "finds", "kind": "find", "fields": []string{"label", "unit", "material", "weight", "found_on"}, "images": true},
	},
}

// showcasePublish saves the publication setting and starts the first
// version (a job), unless the application was configured before. A
// server without a job system keeps the setting and says so.
func showcasePublish(ctx context.Context, c *client, log *slog.Logger) error {
	status, body, err := c.call(ctx, http.MethodGet, "/publish/config", nil)
	if err != nil || status != http.StatusOK {
		return fmt.Errorf("demo: publication setting: %d %v %w", status, body, err)
	}
	if body["configured"] == true {
		return nil
	}
	if err := c.ok(ctx, http.MethodPut, "/publish/config", publishSetting); err != nil {
		return err
	}
	status, body, err = c.call(ctx, http.MethodPost, "/publish/snapshots", nil)
	switch {
	case err != nil:
		return err
	case status == http.StatusServiceUnavailable:
		log.Warn("demo: the first publication is not made, this server runs no jobs", "code", body["code"])
		return nil
	case status != http.StatusAccepted:
		return fmt.Errorf("demo: publish: %d %v", status, body)
	}
	return nil
}

// sequenceModel is the demo's Bayesian chronology model: the first
// trench's units (ids 1–8, which the dating above covers), in phases by
// their periods.
var sequenceModel = map[string]any{"name": "Trench 1 by period", "phases": map[string]any{"by": "chronology"},
	"filter": map[string]any{"id": map[string]any{"_in": []any{1, 2, 3, 4, 5, 6, 7, 8}}}, "seed": 1}

// showcaseSequence creates the sequence plugin's model of the first
// trench (not run: a run is a job the visitor starts), when the plugin
// is running and the units have their dates and periods, unless the
// table already has a model. Without the plugin its routes are not
// mounted: the demo goes on and says so.
func showcaseSequence(ctx context.Context, c *client, active map[string]bool, log *slog.Logger) error {
	if !active["units/chronology"] || !active["units/radiocarbon"] {
		return nil
	}
	status, body, err := c.call(ctx, http.MethodGet, "/sequence/units/models", nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		log.Warn("demo: no chronology model, the sequence plugin is not running", "code", body["code"],
			"hint", "build the plugins (make build) and start again")
		return nil
	}
	if list, _ := body["models"].([]any); len(list) > 0 {
		return nil
	}
	status, body, err = c.call(ctx, http.MethodPost, "/sequence/units/models", sequenceModel)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("demo: create the sequence model: %d %v", status, body)
	}
	return err
}

// showcaseCatalog turns geodata on for the sites and creates the burials
// table with its vocabulary, unless an earlier call did.
func showcaseCatalog(ctx context.Context, db *store.DB, now time.Time) error {
	cat, err := schema.Load(ctx, db)
	if err != nil {
		return err
	}
	if sites, ok := cat.Table("sites"); ok && !sites.Geodata {
		if _, err := schema.PutTable(ctx, db, "sites", schema.TableConfig{Geodata: schema.Set(true)}, now); err != nil {
			return fmt.Errorf("demo: geodata on sites: %w", err)
		}
	}
	if _, ok := cat.Table("burials"); ok {
		return nil
	}
	if _, err := schema.CreateTable(ctx, db, schema.TableDef{Name: "burials", Label: "Burials"}, now); err != nil {
		return fmt.Errorf("demo table burials: %w", err)
	}
	for _, f := range []schema.FieldDef{
		{Name: "code", Label: "Burial", Required: true, Unique: true},
		{Name: "unit", Label: "Unit", Type: "select", IDFromTb: "units", Required: true},
		{Name: "age_class", Label: "Age class", Type: "select", VocabularySet: "age_classes"},
		{Name: "orientation", Label: "Orientation"},
		{Name: "notes", Label: "Notes", Type: "long_text"},
	} {
		if _, err := schema.AddField(ctx, db, "burials", f, now); err != nil {
			return fmt.Errorf("demo field burials.%s: %w", f.Name, err)
		}
	}
	if _, err := schema.PutTable(ctx, db, "burials", schema.TableConfig{IDField: schema.Set("code")}, now); err != nil {
		return fmt.Errorf("demo table burials settings: %w", err)
	}
	for i, v := range ageClasses {
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Sys("vocabularies")+` (voc, value, sort) VALUES (?, ?, ?)`, "age_classes", v, i); err != nil {
			return fmt.Errorf("demo vocabulary: %w", err)
		}
	}
	return nil
}

var ageClasses = []string{"infant", "juvenile", "adult", "mature", "senile"}

// siteCentres are the demo's sites on the map, by site id: real
// coordinates (longitude, latitude, EPSG:4326) at well-known Roman and
// Greek excavations, so the base map puts them where an archaeologist
// expects them; Showcase sets each site's region to match.
var siteCentres = map[int64]struct {
	lon, lat float64
	region   string
}{
	1: {14.4869, 40.7489, "Campania"}, // Pompeii
	2: {12.2920, 41.7560, "Lazio"},    // Ostia
	3: {12.8280, 37.5840, "Sicilia"},  // Selinunte
}

// showcaseGeodata gives each site without geodata an outline (a small
// quadrilateral about 300 m across) and a datum point, and its region.
// Sites beyond the three named places (a larger Size) are left off the map.
func showcaseGeodata(ctx context.Context, c *client, db *store.DB) error {
	var n int
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("geodata")+` WHERE tb = 'sites'`).Scan(&n); err != nil || n > 0 {
		return err
	}
	for id := int64(1); id <= int64(len(siteCentres)); id++ {
		p := siteCentres[id]
		x, y := p.lon, p.lat
		const dx, dy = 0.0019, 0.0014 // about 160 m each way
		outline := map[string]any{"type": "Polygon", "coordinates": [][][2]float64{{
			{x - dx, y - dy}, {x + dx, y - dy*0.8}, {x + dx*1.1, y + dy}, {x - dx*0.9, y + dy*1.1}, {x - dx, y - dy},
		}}}
		datum := map[string]any{"type": "Point", "coordinates": [2]float64{x, y}}
		for _, g := range []any{outline, datum} {
			if err := c.ok(ctx, http.MethodPost, "/geoface/feature", map[string]any{"tb": "sites", "id": id, "geometry": g}); err != nil {
				return err
			}
		}
		if err := c.ok(ctx, http.MethodPost, fmt.Sprint("/record/sites/", id), map[string]any{"core": map[string]any{"region": p.region}}); err != nil {
			return err
		}
	}
	return nil
}

// The burials of the demo, in unit US 2 to US 7 of the first trench.
var burials = []struct {
	code, age, orientation string
	unit                   int64
	notes                  string
}{
	{"T 1", "adult", "E-W", 2, "Supine, arms along the body; a coin in the mouth."},
	{"T 2", "infant", "E-W", 3, "In an amphora (enchytrismos)."},
	{"T 3", "mature", "N-S", 6, "Tile grave (a cappuccina), partly robbed."},
}

// osteologyOf is the inventory of a burial: the adult and the mature
// individual with their recorded elements, the infant with a few.
func osteologyOf(code string) map[string]any {
	bone := func(present bool, conservation string) map[string]any {
		b := map[string]any{"present": present}
		if conservation != "" {
			b["conservation"] = conservation
		}
		return b
	}
	switch code {
	case "T 1":
		return map[string]any{"individuals": []any{map[string]any{"id": 1, "label": "T 1 adult", "bones": map[string]any{
			"cranium": bone(true, "complete"), "mandible": bone(true, "gt50"), "humerus_left": bone(true, "complete"),
			"humerus_right": bone(true, "gt50"), "femur_left": bone(true, "complete"), "femur_right": bone(true, "complete"),
			"tibia_left": bone(true, "fragmentary"), "tibia_right": bone(false, ""), "os_coxae_left": bone(true, "gt50"),
			"tooth_11": bone(true, ""), "tooth_21": bone(true, ""), "tooth_36": bone(true, ""),
		}}}}
	case "T 2":
		return map[string]any{"individuals": []any{map[string]any{"id": 1, "label": "T 2 infant", "bones": map[string]any{
			"cranium": bone(true, "fragmentary"), "femur_left": bone(true, "traces"), "os_coxae_left": bone(true, "traces"),
		}}}}
	default:
		return map[string]any{"individuals": []any{map[string]any{"id": 1, "label": "T 3 mature", "bones": map[string]any{
			"cranium": bone(true, "gt50"), "mandible": bone(false, ""), "femur_left": bone(true, "complete"),
			"femur_right": bone(true, "fragmentary"), "talus_left": bone(true, "complete"), "talus_right": bone(true, "complete"),
		}}}}
	}
}

// showcaseBurials adds the burials, with their osteology inventory when
// the feature is on; an existing burial only gets the inventory it lacks.
func showcaseBurials(ctx context.Context, c *client, db *store.DB, active map[string]bool) error {
	for _, b := range burials {
		core := map[string]any{"code": b.code, "unit": b.unit, "age_class": b.age, "orientation": b.orientation, "notes": b.notes}
		var id int64
		var osteo *string
		q := `SELECT id FROM ` + db.Qualify("burials") + ` WHERE code = ?`
		if active["burials/osteology"] {
			q = `SELECT id, osteo_data FROM ` + db.Qualify("burials") + ` WHERE code = ?`
		}
		dest := []any{&id}
		if active["burials/osteology"] {
			dest = append(dest, &osteo)
		}
		err := db.QueryRow(ctx, q, b.code).Scan(dest...)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case !active["burials/osteology"] || osteo != nil:
			continue // made by an earlier call
		default:
			core = map[string]any{}
		}
		path := "/record/burials"
		if id != 0 {
			path += fmt.Sprint("/", id)
		}
		if active["burials/osteology"] {
			doc, _ := json.Marshal(osteologyOf(b.code)) // plain maps: always encodes
			core["osteo_data"] = string(doc)
		}
		if err := c.ok(ctx, http.MethodPost, path, map[string]any{"core": core}); err != nil {
			return err
		}
	}
	return nil
}

// The dating of the first trench's units, latest first as the relations
// have them (US 1 covers US 2 …, US 5 cuts US 4), and the radiocarbon
// dates of three of them, consistent with it.
var (
	unitDating = map[int64]string{1: "c1 CE", 2: "c1 BCE", 3: "c2 BCE", 4: "c3 BCE", 5: "c2 BCE", 6: "c3 BCE", 7: "c4 BCE", 8: "c5 BCE"}
	unitDates  = []struct {
		unit          int64
		lab, material string
		bp, err       int
	}{
		{4, "LTL-21034", "charcoal", 2150, 25},
		{7, "OxA-38211", "charred seed", 2330, 30},
		{8, "OxA-38212", "bone collagen", 2450, 30},
	}
)

// showcaseDating sets the chronology of the first trench's units and
// adds their radiocarbon dates, where the features are on and the unit
// has none yet; the plugins compute the years and calibrate the dates.
func showcaseDating(ctx context.Context, c *client, db *store.DB, active map[string]bool) error {
	if active["units/chronology"] {
		for id := int64(1); id <= int64(len(unitDating)); id++ {
			var label *string
			if err := db.QueryRow(ctx, `SELECT chrono_label FROM `+db.Qualify("units")+` WHERE id = ?`, id).Scan(&label); err != nil {
				return fmt.Errorf("demo: unit %d: %w", id, err)
			}
			if label != nil {
				continue
			}
			if err := c.ok(ctx, http.MethodPost, fmt.Sprint("/record/units/", id),
				map[string]any{"core": map[string]any{"chrono_label": unitDating[id], "chrono_certainty": 2}}); err != nil {
				return err
			}
		}
	}
	if !active["units/radiocarbon"] {
		return nil
	}
	for _, d := range unitDates {
		var n int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Qualify("units_radiocarbon")+` WHERE id_link = ?`, d.unit).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		row := map[string]any{"_isNew": true, "fields": map[string]any{"lab_code": d.lab, "bp": d.bp, "bp_error": d.err,
			"material": d.material, "curve": "intcal20"}}
		if err := c.ok(ctx, http.MethodPost, fmt.Sprint("/record/units/", d.unit),
			map[string]any{"core": map[string]any{}, "plugins": map[string]any{"units_radiocarbon": []any{row}}}); err != nil {
			return err
		}
	}
	return nil
}

// The images attached to records: a site plan, section drawings of two
// units and a burial photograph, drawn here (demoImage) at a few KB each.
var showcaseImages = []struct {
	table    string
	id       int64
	filename string
	kind     imageKind
}{
	{"sites", 1, "site-01-plan.png", imagePlan},
	{"units", 4, "us-4-section.png", imageSection},
	{"units", 7, "us-7-section.png", imageSection},
	{"burials", 1, "t-1-burial.png", imageBurial},
}

// showcaseFiles uploads the images to records that have no file yet.
func showcaseFiles(ctx context.Context, c *client, db *store.DB, _ map[string]bool) error {
	for i, img := range showcaseImages {
		var n int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("file_links")+` WHERE tb = ? AND record_id = ?`, img.table, img.id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		data, err := demoImage(img.kind, uint64(i+1))
		if err != nil {
			return err
		}
		if err := c.upload(ctx, fmt.Sprintf("/record/%s/%d/file", img.table, img.id), img.filename, data); err != nil {
			return err
		}
	}
	return nil
}

// Names of the saved views the demo makes: each is made once.
const (
	chartName    = "Finds by material"
	queryName    = "Bronze finds, heaviest first"
	templateName = "unit_sheet"
)

// showcaseViews saves a chart, a query and a print template, shared with
// every user of the demo.
func showcaseViews(ctx context.Context, c *client, db *store.DB, active map[string]bool) error {
	var n int
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("charts")+` WHERE name = ?`, chartName).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		_, body, err := c.must(ctx, http.MethodPost, "/charts", map[string]any{"name": chartName, "definition": map[string]any{
			"tb": "finds", "type": "bar", "x_field": "material", "y_function": "COUNT", "y_field": "id"}})
		if err != nil {
			return err
		}
		chart, _ := body["chart"].(map[string]any)
		if err := c.ok(ctx, http.MethodPost, fmt.Sprintf("/chart/%v/share", chart["id"]), nil); err != nil {
			return err
		}
	}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("saved_queries")+` WHERE name = ?`, queryName).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		_, body, err := c.must(ctx, http.MethodPost, "/saved-queries", map[string]any{"name": queryName, "tb": "finds", "query": map[string]any{
			"filter": map[string]any{"material": map[string]any{"_eq": "bronze"}}, "sort_field": "weight", "sort_dir": "desc"}})
		if err != nil {
			return err
		}
		q, _ := body["query"].(map[string]any)
		if err := c.ok(ctx, http.MethodPost, fmt.Sprintf("/saved-query/%v/share", q["id"]), nil); err != nil {
			return err
		}
	}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("templates")+` WHERE tb = 'units' AND name = ?`, templateName).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	sections := []any{
		map[string]any{"type": "core", "label": "Unit", "content": []any{
			map[string]any{"field": "code", "width": "1/2"}, map[string]any{"field": "trench", "width": "1/2"},
			map[string]any{"field": "type", "width": "1/3"}, map[string]any{"field": "description", "width": "2/3"}}},
	}
	if active["units/chronology"] {
		sections = append(sections, map[string]any{"type": "core", "label": "Dating", "content": []any{
			map[string]any{"field": "chrono_label", "width": "1/2"}, map[string]any{"field": "chrono_certainty", "width": "1/2"}}})
	}
	if active["units/radiocarbon"] {
		sections = append(sections, map[string]any{"type": "plugin", "label": "Radiocarbon dates", "plugin": "units_radiocarbon",
			"content": []any{"lab_code", "bp", "bp_error", "material", "cal_2s_from", "cal_2s_to"}})
	}
	return c.ok(ctx, http.MethodPost, "/template/units/"+templateName, map[string]any{"sections": sections})
}

// client calls the server's handler in process as the demo's admin.
type client struct {
	h     http.Handler
	app   string
	token string
}

func newClient(ctx context.Context, h http.Handler, app *apps.App, adminEmail string, now time.Time) (*client, error) {
	admin, err := auth.FindUserByEmail(ctx, app.DB, adminEmail)
	if err != nil {
		return nil, fmt.Errorf("demo: the admin %s: %w", adminEmail, err)
	}
	secret, err := app.JWTSecret(ctx)
	if err != nil {
		return nil, err
	}
	token, _, err := auth.IssueToken(secret, app.Name, admin, now)
	if err != nil {
		return nil, err
	}
	return &client{h: h, app: app.Name, token: token}, nil
}

// call sends a JSON request (body nil: none) and decodes the answer.
func (c *client) call(ctx context.Context, method, path string, body any) (int, map[string]any, error) {
	var r *bytes.Reader
	if body == nil {
		r = bytes.NewReader(nil)
	} else {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req := httptest.NewRequestWithContext(api.Quiet(ctx), method, "/"+c.app+"/api"+path, r)
	req.Header.Set("Content-Type", "application/json")
	return c.send(req)
}

func (c *client) send(req *http.Request) (int, map[string]any, error) {
	req.Header.Set("Authorization", "Bearer "+c.token)
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return rec.Code, nil, fmt.Errorf("demo: %s %s: %d, not JSON: %.200s", req.Method, req.URL.Path, rec.Code, rec.Body.String())
	}
	return rec.Code, out, nil
}

// must is call for a request that has to succeed.
func (c *client) must(ctx context.Context, method, path string, body any) (int, map[string]any, error) {
	status, out, err := c.call(ctx, method, path, body)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("demo: %s %s: %d %v", method, path, status, out)
	}
	return status, out, err
}

func (c *client) ok(ctx context.Context, method, path string, body any) error {
	_, _, err := c.must(ctx, method, path, body)
	return err
}

// upload posts data as the multipart part "file" named filename.
func (c *client) upload(ctx context.Context, path, filename string, data []byte) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", filename)
	if err == nil {
		_, err = fw.Write(data)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return err
	}
	req := httptest.NewRequestWithContext(api.Quiet(ctx), http.MethodPost, "/"+c.app+"/api"+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	status, out, err := c.send(req)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("demo: upload %s: %d %v", filename, status, out)
	}
	return err
}
