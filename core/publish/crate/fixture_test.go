package crate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostile strings for CSV cells and names: CSV syntax, formula lookalikes,
// odd unicode, a long value.
var hostile = []string{
	`plain`,
	`comma, inside`,
	`"quoted" and ""doubled""`,
	"line\nbreak",
	"crlf\r\ninside",
	"lone\rcarriage return",
	`=HYPERLINK("http://evil.example","x")`,
	`+1+2`,
	`-3`,
	`@SUM(A1)`,
	` leading and trailing blanks `,
	"\ttab first",
	"Ελληνικά · 中文 · עברית · emoji 🏺",
	"combining e\u0301 and NFC \u00e9",
	"zero\u200bwidth and bidi \u202eoverride",
	"\uFEFFbom in a cell",
	"line separator \u2028 paragraph \u2029",
	`back\slash`,
	strings.Repeat("long value ", 20000),
}

// fixture is a small snapshot: three tables (sites, stratigraphic units
// with a self-reference, finds referring to both), extra files, and the
// crate metadata over all of it.
type fixture struct {
	pkg   Package
	files []File
	ds    Dataset
}

func testDataset() Dataset {
	return Dataset{
		Name:        "Excavations at Tell Example, snapshot 3",
		Description: "Stratigraphic units, finds and samples of the Tell Example project, seasons 2019–2024.",
		License: License{
			URI: "https://creativecommons.org/licenses/by/4.0/", Name: "Creative Commons Attribution 4.0 International",
			SPDX: "CC-BY-4.0",
		},
		DatePublished: time.Date(2026, 3, 14, 15, 9, 26, 500, time.FixedZone("CET", 3600)),
		Version:       "3",
		CiteAs:        "https://doi.org/10.5555/strata.tell-example.3",
		Identifier:    "https://doi.org/10.5555/strata.tell-example.3",
		URL:           "https://strata.example.org/tell/publish/3",
		Authors: []Person{
			{Name: "Josiah Carberry", GivenName: "Josiah", FamilyName: "Carberry", ORCID: "0000-0002-1825-0097",
				Affiliation: &Organization{ID: "https://ror.org/05gq02987", Name: "Brown University"}},
			{Name: "Ana \"Tal\" d'Ávila", Affiliation: &Organization{Name: "Museu d'Arqueologia"}},
			{Name: "Sofia Kovalenko", ORCID: "https://orcid.org/0000-0001-5109-3700", Affiliation: &Organization{ID: "https://ror.org/05gq02987", Name: "Brown University"}},
		},
		Publisher:       &Organization{Name: "Strata demo instance", URL: "https://strata.example.org/"},
		Keywords:        []string{"archaeology", "stratigraphy", "Harris matrix"},
		PreviousVersion: "https://doi.org/10.5555/strata.tell-example.2",
		Temporal:        "-2500/-1200",
		Spatial:         &Place{Name: "Tell Example", South: 36.1, West: 38.2, North: 36.2, East: 38.35},
		Directories: []Directory{
			{Path: "records", Name: "Records", Description: "One Linked Art JSON-LD document per record."},
			{Path: "tables", Name: "Tables", Description: "The tables as a Frictionless data package."},
		},
	}
}

func testPackage() Package {
	req := &Constraints{Required: true}
	return Package{
		Name: "tell-example", Title: "Tell Example", Description: "Tables of the Tell Example excavation.",
		ID: "https://doi.org/10.5555/strata.tell-example.3", Homepage: "https://strata.example.org/tell/publish/3",
		Licenses: []License{{URI: "https://creativecommons.org/licenses/by/4.0/", Name: "Creative Commons Attribution 4.0 International", SPDX: "CC-BY-4.0"}},
		Version:  "3", Created: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC),
		Keywords: []string{"archaeology"},
		Contributors: []Contributor{
			{Title: "Josiah Carberry", GivenName: "Josiah", FamilyName: "Carberry", Path: "https://orcid.org/0000-0002-1825-0097", Roles: []string{"author"}},
		},
		Resources: []Resource{
			{Name: "sites", Path: "tables/sites.csv", Title: "Sites", Schema: Schema{
				Fields: []Field{
					{Name: "id", Type: TypeInteger, Constraints: &Constraints{Required: true, Unique: true, Minimum: "1"}},
					{Name: "name", Type: TypeString, Constraints: req},
					{Name: "homepage", Type: TypeString, Format: "uri"},
					{Name: "founded", Type: TypeYear},
				},
				PrimaryKey: []string{"id"},
			}},
			{Name: "units", Path: "tables/units.csv", Title: "Stratigraphic units", Schema: Schema{
				Fields: []Field{
					{Name: "site", Type: TypeInteger, Constraints: req},
					{Name: "su", Type: TypeInteger, Constraints: req, RDFType: "http://www.cidoc-crm.org/extensions/crmarchaeo/A8_Stratigraphic_Unit"},
					{Name: "above_site", Type: TypeInteger},
					{Name: "above_su", Type: TypeInteger},
					{Name: "kind", Type: TypeString, Constraints: &Constraints{Enum: []string{"layer", "cut", "fill"}}},
					{Name: "description", Type: TypeString},
					{Name: "excavated", Type: TypeDate},
					{Name: "recorded", Type: TypeDatetime},
					{Name: "finished", Type: TypeBoolean},
					{Name: "tags", Type: TypeArray},
					{Name: "extra", Type: TypeObject},
				},
				PrimaryKey: []string{"site", "su"},
				ForeignKeys: []ForeignKey{
					{Fields: []string{"site"}, Reference: Reference{Resource: "sites", Fields: []string{"id"}}},
					{Fields: []string{"above_site", "above_su"}, Reference: Reference{Resource: "units", Fields: []string{"site", "su"}}},
				},
			}},
			{Name: "finds", Path: "tables/finds.csv", Schema: Schema{
				Fields: []Field{
					{Name: "id", Type: TypeString, Constraints: &Constraints{Required: true, Pattern: `F-[0-9]+`}},
					{Name: "site", Type: TypeInteger},
					{Name: "su", Type: TypeInteger},
					{Name: "weight_g", Type: TypeNumber, Constraints: &Constraints{Minimum: "0"}},
					{Name: "label", Type: TypeString},
					{Name: "location", Type: TypeGeoJSON},
				},
				PrimaryKey:  []string{"id"},
				ForeignKeys: []ForeignKey{{Fields: []string{"site", "su"}, Reference: Reference{Resource: "units", Fields: []string{"site", "su"}}}},
			}},
		},
	}
}

// testRows are the rows of each table, as a database would hand them over.
func testRows() map[string][][]any {
	units := [][]any{}
	finds := [][]any{}
	for i, h := range hostile {
		su := int64(100 + i)
		var aboveSite, aboveSU any
		if i > 0 {
			aboveSite, aboveSU = int64(1), su-1
		}
		units = append(units, []any{int64(1), su, aboveSite, aboveSU, []string{"layer", "cut", "fill"}[i%3], h,
			time.Date(2019+i%5, time.Month(1+i%12), 1+i, 0, 0, 0, 0, time.UTC),
			time.Date(2024, 5, 6, 7, 8, 9, i*1000, time.UTC), i%2 == 0,
			[]string{"a", h}, map[string]any{"z": 1, "a": h}})
		finds = append(finds, []any{"F-" + string(rune('0'+i%10)) + "0" + string(rune('0'+i/10)), int64(1), su, 0.1 * float64(i), h,
			map[string]any{"type": "Point", "coordinates": []float64{38.25, 36.15}}})
	}
	finds = append(finds, []any{"F-999", nil, nil, 1e21, nil, nil})
	return map[string][][]any{
		"sites": {
			{int64(1), "Tell Example", "https://example.org/tell?a=1&b=2", int64(-2500)},
			{int64(2), "=cmd|' /C calc'!A0", nil, nil},
		},
		"units": units,
		"finds": finds,
	}
}

// writeCrate writes the fixture's tables, datapackage.json, a few record
// files with hostile names, and ro-crate-metadata.json into dir; it returns
// the package and the file list it described.
func writeCrate(t testing.TB, dir string, ds Dataset) (Package, []File) {
	t.Helper()
	pkg := testPackage()
	rows := testRows()
	var files []File
	for i := range pkg.Resources {
		r := &pkg.Resources[i]
		p := filepath.Join(dir, filepath.FromSlash(r.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		cw, err := NewCSV(f, r.Schema.Fields)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows[r.Name] {
			if err := cw.Row(row); err != nil {
				t.Fatalf("%s: %v", r.Name, err)
			}
		}
		if err := cw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		r.Bytes, r.Hash = cw.Bytes(), cw.Hash()
		files = append(files, File{Path: r.Path, Name: r.Title, EncodingFormat: "text/csv",
			ConformsTo: []string{ProfileFrictionlessTable}, ContentSize: cw.Bytes(), SHA256: cw.SHA256()})
	}
	var dp bytes.Buffer
	if err := WriteDataPackage(&dp, pkg); err != nil {
		t.Fatal(err)
	}
	extra := map[string][]byte{
		"datapackage.json":                  dp.Bytes(),
		"records/su 100.json":               []byte(`{"id": 100}`),
		"records/données été #1.json":       []byte(`{"id": "é"}`),
		"records/100%.json":                 []byte(`{}`),
		"records/a:b?c.json":                []byte(`{}`),
		"records/面试.json":                   []byte(`{}`),
		"records/sub/dir/deep [1].geojson":  []byte(`{"type":"FeatureCollection","features":[]}`),
		"datacite.xml":                      []byte(`<resource/>`),
		"records/C1 control \u0085 end.txt": []byte(``),
	}
	for p, b := range extra {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		f := File{Path: p, ContentSize: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), EncodingFormat: "application/ld+json"}
		switch {
		case p == "datapackage.json":
			f.ConformsTo = []string{ProfileFrictionlessPackage}
			f.EncodingFormat = "application/json"
		case strings.HasSuffix(p, ".geojson"):
			f.ConformsTo = []string{ProfileGeoJSON}
			f.EncodingFormat = "application/geo+json"
		case strings.HasSuffix(p, ".xml"):
			f.ConformsTo = []string{ProfileDataCite4}
			f.EncodingFormat = "application/xml"
		default:
			f.ConformsTo = []string{ProfileLinkedArt}
		}
		files = append(files, f)
	}
	mf, err := os.Create(filepath.Join(dir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteMetadata(mf, ds, files); err != nil {
		t.Fatal(err)
	}
	if err := mf.Close(); err != nil {
		t.Fatal(err)
	}
	return pkg, files
}
