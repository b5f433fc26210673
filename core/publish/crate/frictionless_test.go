package crate

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/publish/publishtest"
)

func TestDataPackageValidatesAgainstProfiles(t *testing.T) {
	dir := t.TempDir()
	writeCrate(t, dir, testDataset())
	b, err := os.ReadFile(filepath.Join(dir, "datapackage.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"2.0", "1.0"} {
		if err := publishtest.DataPackageProfile(b, profile); err != nil {
			t.Errorf("%s: %v", profile, err)
		}
		// The validator must be able to fail: a field of an unknown type.
		bad := strings.Replace(string(b), `"type": "geojson"`, `"type": "nonsense"`, 1)
		if bad == string(b) {
			t.Fatal("no geojson field to break")
		}
		if publishtest.DataPackageProfile([]byte(bad), profile) == nil {
			t.Errorf("%s accepted a field of type nonsense", profile)
		}
	}
	var dp map[string]any
	if err := json.Unmarshal(b, &dp); err != nil {
		t.Fatal(err)
	}
	if dp["$schema"] != DataPackageProfile {
		t.Errorf("$schema %v", dp["$schema"])
	}
}

// TestCSVRowsEqualTheData reads every table back per its schema and
// compares each value with what was written; CheckPackage passes.
func TestCSVRowsEqualTheData(t *testing.T) {
	dir := t.TempDir()
	pkg, _ := writeCrate(t, dir, testDataset())
	if err := CheckPackage(os.DirFS(dir)); err != nil {
		t.Fatalf("CheckPackage: %v", err)
	}
	rows := testRows()
	for _, r := range pkg.Resources {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(r.Path)))
		if err != nil {
			t.Fatal(err)
		}
		var got [][]string
		err = ReadCSV(f, func(n int, cells []string) error {
			got = append(got, append([]string(nil), cells...))
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := rows[r.Name]
		if len(got) != len(want)+1 {
			t.Fatalf("%s: %d records, want header + %d", r.Name, len(got), len(want))
		}
		for i, row := range want {
			for k, v := range row {
				fl := r.Schema.Fields[k]
				back, err := ParseCell(fl, got[i+1][k])
				if err != nil {
					t.Errorf("%s row %d %s: %v", r.Name, i+1, fl.Name, err)
					continue
				}
				if !sameValue(fl, v, back) {
					t.Errorf("%s row %d %s: wrote %#v, read %#v", r.Name, i+1, fl.Name, v, back)
				}
			}
		}
	}
}

// sameValue compares a value handed to the writer with the value read
// back: the same after the documented conversions.
func sameValue(f Field, in, out any) bool {
	if in == nil {
		return out == nil
	}
	switch f.Type {
	case TypeDate:
		return in.(time.Time).Format(time.DateOnly) == out.(time.Time).Format(time.DateOnly)
	case TypeDatetime:
		return in.(time.Time).Equal(out.(time.Time))
	case TypeArray, TypeObject, TypeGeoJSON:
		a, _ := json.Marshal(in)
		var norm any
		json.Unmarshal(a, &norm)
		b, _ := json.Marshal(out)
		var normOut any
		json.Unmarshal(b, &normOut)
		return fmt.Sprint(norm) == fmt.Sprint(normOut)
	}
	return fmt.Sprint(in) == fmt.Sprint(out)
}

func TestCSVHostileCells(t *testing.T) {
	fields := []Field{{Name: "v", Type: TypeString}, {Name: "n", Type: TypeInteger}}
	tests := []struct {
		in, raw string // raw is the cell as it must appear in the file
	}{
		{"plain", "plain"},
		{"comma, inside", `"comma, inside"`},
		{`say "hi"`, `"say ""hi"""`},
		{"a\nb", "\"a\nb\""},
		{"a\r\nb", "\"a\r\nb\""},
		{"a\rb", "\"a\rb\""},
		// Data, not a spreadsheet: formula lookalikes are written as they are.
		{"=1+2", "=1+2"},
		{"+1", "+1"},
		{"-1", "-1"},
		{"@SUM(A1)", "@SUM(A1)"},
		{" padded ", `" padded "`},
		{"ünïcødé 🏺", "ünïcødé 🏺"},
		{"", ""},
	}
	for _, tc := range tests {
		var buf bytes.Buffer
		w, err := NewCSV(&buf, fields)
		if err != nil {
			t.Fatal(err)
		}
		var v any = tc.in
		if tc.in == "" {
			v = nil
		}
		if err := w.Row([]any{v, 7}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := "v,n\r\n" + tc.raw + ",7\r\n"
		if buf.String() != want {
			t.Errorf("%q written as %q, want %q", tc.in, buf.String(), want)
		}
		if w.Bytes() != int64(buf.Len()) || w.Rows() != 1 {
			t.Errorf("%q: Bytes %d Rows %d, file %d", tc.in, w.Bytes(), w.Rows(), buf.Len())
		}
		var back []string
		if err := ReadCSV(bytes.NewReader(buf.Bytes()), func(n int, c []string) error {
			if n == 2 {
				back = c
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(back) != 2 || back[0] != tc.in {
			t.Errorf("%q read back as %q", tc.in, back)
		}
		// A third-party RFC 4180 reader agrees (encoding/csv folds CRLF
		// inside quotes to LF and drops a lone CR before LF, so those
		// two are compared after the same folding).
		recs, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
		if err != nil {
			t.Errorf("%q: encoding/csv: %v", tc.in, err)
		} else if want := strings.ReplaceAll(tc.in, "\r\n", "\n"); recs[1][0] != want && tc.in != "a\rb" {
			t.Errorf("%q: encoding/csv read %q", tc.in, recs[1][0])
		}
	}
	// Long values, a one-column table with a missing value (not a blank
	// line), and no BOM.
	var buf bytes.Buffer
	w, _ := NewCSV(&buf, []Field{{Name: "only", Type: TypeString}})
	long := strings.Repeat("x,\"y\"\n", 200_000)
	for _, v := range []any{long, nil} {
		if err := w.Row([]any{v}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if !strings.HasSuffix(buf.String(), "\r\n\"\"\r\n") || bytes.HasPrefix(buf.Bytes(), []byte("\xef\xbb\xbf")) {
		t.Errorf("one-column missing value or BOM: ...%q", buf.String()[buf.Len()-10:])
	}
	var cells [][]string
	ReadCSV(&buf, func(_ int, c []string) error { cells = append(cells, append([]string(nil), c...)); return nil })
	if len(cells) != 3 || cells[1][0] != long || cells[2][0] != "" {
		t.Errorf("long value or missing cell not read back (%d records)", len(cells))
	}
}

func TestFormatCell(t *testing.T) {
	n := func(typ string) Field { return Field{Name: "f", Type: typ} }
	day := time.Date(2024, 2, 29, 23, 30, 0, 0, time.FixedZone("X", -5*3600))
	tests := []struct {
		f    Field
		in   any
		want string // "ERR" for an error
	}{
		{n(TypeString), "x", "x"},
		{n(TypeString), []byte("b"), "b"},
		{n(TypeString), 5, "ERR"},
		{n(TypeString), "bad \xff", "ERR"},
		{n(TypeString), "nul \x00", "ERR"},
		{n(TypeInteger), int64(math.MaxInt64), "9223372036854775807"},
		{n(TypeInteger), int8(-8), "-8"},
		{n(TypeInteger), uint64(math.MaxUint64), "ERR"},
		{n(TypeInteger), 3.0, "3"},
		{n(TypeInteger), 3.5, "ERR"},
		{n(TypeInteger), 1e300, "ERR"},
		{n(TypeInteger), "12", "12"},
		{n(TypeInteger), "1e3", "ERR"},
		{n(TypeInteger), "0x10", "ERR"},
		{n(TypeNumber), 0.1, "0.1"},
		{n(TypeNumber), 1e21, "1e+21"},
		{n(TypeNumber), 123456789.0, "1.23456789e+08"},
		{n(TypeNumber), math.Copysign(0, -1), "-0"},
		{n(TypeNumber), float32(0.1), "0.1"},
		{n(TypeNumber), math.NaN(), "ERR"},
		{n(TypeNumber), math.Inf(1), "ERR"},
		{n(TypeNumber), math.Inf(-1), "ERR"},
		{n(TypeNumber), 42, "42"},
		{n(TypeNumber), json.Number("2.50"), "2.50"},
		{n(TypeNumber), "NaN", "ERR"},
		{n(TypeNumber), "Inf", "ERR"},
		{n(TypeNumber), "0x1p3", "ERR"},
		{n(TypeNumber), "1e999", "ERR"},
		{n(TypeBoolean), true, "true"},
		{n(TypeBoolean), false, "false"},
		{n(TypeBoolean), "yes", "ERR"},
		{n(TypeDate), day, "2024-02-29"},
		{n(TypeDate), "2023-02-29", "ERR"},
		{n(TypeDate), time.Date(-44, 3, 15, 0, 0, 0, 0, time.UTC), "ERR"},
		{n(TypeDatetime), day, "2024-03-01T04:30:00Z"},
		{n(TypeDatetime), time.Date(2024, 1, 2, 3, 4, 5, 120000000, time.UTC), "2024-01-02T03:04:05.12Z"},
		{n(TypeYear), -450, "-450"},
		{n(TypeArray), []any{1, "a", nil}, `[1,"a",null]`},
		{n(TypeArray), map[string]int{}, "ERR"},
		{n(TypeArray), "[1,", "ERR"},
		{n(TypeObject), map[string]any{"b": 1, "a": "<&>"}, `{"a":"<&>","b":1}`},
		{n(TypeObject), json.RawMessage(`{"x":1} {}`), "ERR"},
		{n(TypeGeoJSON), map[string]any{"type": "Point", "coordinates": []float64{1, 2}}, `{"coordinates":[1,2],"type":"Point"}`},
		{n(TypeGeoJSON), map[string]any{"coordinates": 1}, "ERR"},
		{n(TypeInteger), nil, ""},
		{n(TypeInteger), (*int)(nil), ""},
	}
	for _, tc := range tests {
		got, err := FormatCell(tc.f, tc.in)
		if err == nil {
			err = CheckCell(tc.f, got)
		}
		if tc.want == "ERR" {
			if err == nil {
				t.Errorf("%s %#v: wrote %q, want an error", tc.f.Type, tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %#v = %q, %v; want %q", tc.f.Type, tc.in, got, err, tc.want)
		}
	}
}

func TestRowConstraints(t *testing.T) {
	one, three := 1, 3
	fields := []Field{
		{Name: "id", Type: TypeInteger, Constraints: &Constraints{Required: true, Minimum: "1", Maximum: "+10"}},
		{Name: "kind", Type: TypeString, Constraints: &Constraints{Enum: []string{"cut", "fill"}, MinLength: &one, MaxLength: &three}},
		{Name: "code", Type: TypeString, Constraints: &Constraints{Pattern: `[A-Z]{2}`}},
	}
	tests := []struct {
		row  []any
		want string
	}{
		{[]any{1, "cut", "AB"}, ""},
		{[]any{10, nil, nil}, ""},
		{[]any{nil, "cut", "AB"}, "required"},
		{[]any{0, "cut", "AB"}, "minimum"},
		{[]any{11, "cut", "AB"}, "maximum"},
		{[]any{1, "layer", "AB"}, "not one of"},
		{[]any{1, "cut", "ABC"}, "does not match"},
		{[]any{1, "cut"}, "2 values for 3 fields"},
	}
	for _, tc := range tests {
		w, err := NewCSV(io.Discard, fields)
		if err != nil {
			t.Fatal(err)
		}
		err = w.Row(tc.row)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: error %v, want %q", tc.row, err, tc.want)
		}
	}
	// And the descriptor writes numeric bounds as JSON numbers.
	var buf bytes.Buffer
	err := WriteDataPackage(&buf, Package{Name: "p", Resources: []Resource{{Name: "t", Path: "t.csv", Schema: Schema{Fields: fields}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"maximum": 10`) || !strings.Contains(buf.String(), `"enum": [`+"\n") {
		t.Errorf("constraints written as %s", buf.String())
	}
}

// TestCheckPackageFindsFaults breaks a good package in one way each and
// expects CheckPackage to say so.
func TestCheckPackageFindsFaults(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(dir string) error
		want   string
	}{
		{"dangling foreign key", appendRow("tables/finds.csv", "F-77,1,999,1,,\r\n"), `matches no row of "units"`},
		{"dangling self reference", appendRow("tables/units.csv", "1,500,1,499,cut,,,,,,\r\n"), `foreign key [above_site above_su]`},
		{"duplicate primary key", appendRow("tables/sites.csv", "1,Again,,\r\n"), "primary key [id] repeats row 2"},
		{"missing primary key part", appendRow("tables/units.csv", "1,,,,cut,,,,,,\r\n"), "required but missing"},
		{"bad integer", appendRow("tables/sites.csv", "3.5,X,,\r\n"), "not a valid integer"},
		{"enum", appendRow("tables/units.csv", "1,600,,,pit,,,,,,\r\n"), "not one of"},
		{"short row", appendRow("tables/sites.csv", "4\r\n"), "1 cells for 4 fields"},
		{"header", replaceIn("tables/sites.csv", "id,name", "ident,name"), "header"},
		{"unterminated quote", appendRow("tables/sites.csv", "5,\"open\r\n"), "unterminated"},
		{"bare LF-only is fine but CR alone is not", appendRow("tables/sites.csv", "6,x,,\r"), "CR not followed by LF"},
		{"file missing", func(dir string) error { return os.Remove(filepath.Join(dir, "tables/finds.csv")) }, "finds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCrate(t, dir, testDataset())
			if err := tc.break_(dir); err != nil {
				t.Fatal(err)
			}
			err := CheckPackage(os.DirFS(dir))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckPackage: %v; want an error containing %q", err, tc.want)
			}
			// Any change to a described file also breaks its size or hash.
			if tc.name != "file missing" {
				if err == nil || !strings.Contains(err.Error(), "hash") {
					t.Errorf("the hash mismatch went unnoticed: %v", err)
				}
				if err := CheckCrate(os.DirFS(dir)); err == nil || !strings.Contains(err.Error(), "sha256") {
					t.Errorf("CheckCrate: %v; want a sha256 mismatch", err)
				}
			}
		})
	}
}

func appendRow(p, row string) func(string) error {
	return func(dir string) error {
		f, err := os.OpenFile(filepath.Join(dir, p), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(row); err != nil {
			return err
		}
		return f.Close()
	}
}

func replaceIn(p, old, new string) func(string) error {
	return func(dir string) error {
		full := filepath.Join(dir, p)
		b, err := os.ReadFile(full)
		if err != nil {
			return err
		}
		return os.WriteFile(full, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
	}
}

func TestCheckCrateFindsFaults(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(dir string) error
		want   string
	}{
		{"undescribed file", func(dir string) error { return os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("x"), 0o644) }, `"secret.txt" is in the crate but not described`},
		{"described file gone", func(dir string) error { return os.Remove(filepath.Join(dir, "datacite.xml")) }, "datacite.xml"},
		{"wrong conformsTo", replaceIn(MetadataFile, "https://w3id.org/ro/crate/1.2\"", "https://w3id.org/ro/crate/1.1\""), "descriptor conformsTo"},
		{"nested entity", replaceIn(MetadataFile, `"about": {"@id": "./"}`, `"about": {"@id": "./", "name": "x"}`), "nested entity"},
		{"no hasPart link", replaceIn(MetadataFile, `{"@id": "datacite.xml"},`, ``), "not reachable"},
		{"bad date", replaceIn(MetadataFile, `"datePublished": "2026-03-14T14:09:26Z"`, `"datePublished": "14 March 2026"`), "ISO 8601"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCrate(t, dir, testDataset())
			if err := CheckCrate(os.DirFS(dir)); err != nil {
				t.Fatalf("good crate: %v", err)
			}
			if err := tc.break_(dir); err != nil {
				t.Fatal(err)
			}
			err := CheckCrate(os.DirFS(dir))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckCrate: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestWriteDataPackageErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Package)
		want string
	}{
		{"bad package name", func(p *Package) { p.Name = "Tell Example" }, "name"},
		{"no resources", func(p *Package) { p.Resources = nil }, "no resources"},
		{"duplicate resource", func(p *Package) { p.Resources[1].Name = "sites" }, "twice"},
		{"same path", func(p *Package) { p.Resources[1].Path = p.Resources[0].Path }, "used twice"},
		{"unknown type", func(p *Package) { p.Resources[0].Schema.Fields[0].Type = "decimal" }, "unknown type"},
		{"duplicate field", func(p *Package) { p.Resources[0].Schema.Fields[1].Name = "id" }, "twice"},
		{"primary key field", func(p *Package) { p.Resources[0].Schema.PrimaryKey = []string{"nope"} }, "unknown field"},
		{"foreign key resource", func(p *Package) { p.Resources[2].Schema.ForeignKeys[0].Reference.Resource = "nope" }, "unknown resource"},
		{"foreign key field", func(p *Package) { p.Resources[2].Schema.ForeignKeys[0].Reference.Fields = []string{"site", "nope"} }, "unknown field"},
		{"foreign key arity", func(p *Package) { p.Resources[2].Schema.ForeignKeys[0].Fields = []string{"site"} }, "differ in number"},
		{"enum not of the type", func(p *Package) {
			p.Resources[0].Schema.Fields[0].Constraints = &Constraints{Enum: []string{"one"}}
		}, "constraint value"},
		{"missing values without empty", func(p *Package) { p.Resources[0].Schema.MissingValues = []string{"NA"} }, "missingValues"},
		{"path escaping", func(p *Package) { p.Resources[0].Path = "../x.csv" }, ". or .."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := testPackage()
			tc.edit(&p)
			err := WriteDataPackage(io.Discard, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestCrateDeterministic publishes the same data twice: every file is
// byte-identical; with a new date and version, only metadata lines naming
// them differ.
func TestCrateDeterministic(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	ds := testDataset()
	writeCrate(t, a, ds)
	writeCrate(t, b, ds)
	ds.DatePublished = ds.DatePublished.AddDate(1, 0, 0)
	ds.Version = "4"
	writeCrate(t, c, ds)
	err := fs.WalkDir(os.DirFS(a), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		x, _ := os.ReadFile(filepath.Join(a, p))
		y, err := os.ReadFile(filepath.Join(b, p))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two identical publications (%v)", p, err)
		}
		z, _ := os.ReadFile(filepath.Join(c, p))
		if p != MetadataFile && !bytes.Equal(x, z) {
			t.Errorf("%s changed with the date and version", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
