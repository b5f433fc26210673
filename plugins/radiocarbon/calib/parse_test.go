package calib

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const tinyCurve = `# a test curve
# CAL BP, 14C age,Sigma,Delta 14C,Sigma
130,140,12,1.5,0.2
110,120,10,1.0,0.1
100,100,10,0.5,0.1
97,94,7,0.0,0.1
90,80,6,-0.5,0.1
`

func TestParseCRLFAndIrregularSteps(t *testing.T) {
	lf, err := Parse("tiny", strings.NewReader(tinyCurve))
	if err != nil {
		t.Fatal(err)
	}
	crlf, err := Parse("tiny", strings.NewReader(strings.ReplaceAll(tinyCurve, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	// No final newline, stray spaces and blank lines are fine too.
	loose, err := Parse("tiny", strings.NewReader("\n  # c\n130, 140, 12, 1.5, 0.2\r\n\r\n110,120,10,1.0,0.1\n100,100,10,0.5,0.1\n97,94,7,0.0,0.1\n90,80,6,-0.5,0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lf.Header, []string{"a test curve", "CAL BP, 14C age,Sigma,Delta 14C,Sigma"}) || !reflect.DeepEqual(loose.Header, []string{"c"}) {
		t.Errorf("headers %q, %q", lf.Header, loose.Header)
	}
	loose.Header = lf.Header
	if !reflect.DeepEqual(lf, crlf) || !reflect.DeepEqual(lf, loose) {
		t.Fatalf("LF and CRLF parse differently:\n%+v\n%+v", lf, crlf)
	}
	if len(lf.Points) != 5 || lf.Points[0] != (Point{130, 140, 12, 1.5, 0.2}) {
		t.Fatalf("points %v", lf.Points)
	}
	if from, to := lf.CalRange(); from != 90 || to != 130 {
		t.Fatalf("grid %d…%d", from, to)
	}
	// Steps of 20, 10, 3 and 7 years, interpolated linearly (sigma too).
	for _, tc := range []struct {
		bp       int
		age, sig float64
	}{
		{130, 140, 12}, {120, 130, 11}, {105, 110, 10}, {100, 100, 10},
		{98, 96, 8}, {97, 94, 7}, {93.0, 86, 6 + 3.0/7}, {90, 80, 6},
	} {
		age, sig, ok := lf.At(tc.bp)
		if !ok || abs64(age-tc.age) > 1e-12 || abs64(sig-tc.sig) > 1e-12 {
			t.Errorf("At(%d) = %v ± %v, want %v ± %v", tc.bp, age, sig, tc.age, tc.sig)
		}
	}
	if _, _, ok := lf.At(131); ok {
		t.Error("At outside the curve")
	}
	if lo, hi := lf.AgeRange(); lo != 80 || hi != 140 {
		t.Errorf("age range %v…%v", lo, hi)
	}
	// Three columns (no Delta14C) are accepted.
	if _, err := Parse("three", strings.NewReader("20,30,5\n10,20,5\n")); err != nil {
		t.Error(err)
	}
}

func abs64(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestRealSHCal20IsCRLF(t *testing.T) {
	raw, err := BuiltinFile("shcal20.14c")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\r\n") {
		t.Fatal("expected the published CRLF endings")
	}
	c := loadReal(t)["shcal20"]
	if c.Points[0] != (Point{55000, 50132, 1008, 521.9, 190.2}) {
		t.Errorf("first row %v", c.Points[0])
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		msg        string
	}{
		{"letters", "# h\n100,100,10,0,0\n90,abc,10,0,0\n", 3, `14C age "abc"`},
		{"too few", "100,100\n", 1, "2 comma-separated fields"},
		{"too many", "100,100,10,0,0,7\n", 1, "6 comma-separated fields"},
		{"empty field", "100,,10,0,0\n", 1, `14C age ""`},
		{"semicolons", "100;100;10;0;0\n", 1, "1 comma-separated fields"},
		{"nan", "100,NaN,10,0,0\n", 1, "not a finite number"},
		{"inf", "100,100,Inf,0,0\n", 1, "not a finite number"},
		{"negative sigma", "100,100,-1,0,0\n90,90,1,0,0\n", 1, "negative"},
		{"ascending", "90,90,1,0,0\n100,100,10,0,0\n", 2, "oldest to youngest"},
		{"repeated", "100,100,1,0,0\n100,100,10,0,0\n", 2, "without repeats"},
		{"one row", "# h\n100,100,1,0,0\n", 0, "1 data rows"},
		{"empty", "", 0, "0 data rows"},
		{"comments only", "# a\r\n# b\r\n", 0, "0 data rows"},
		{"no whole year", "10.7,100,1,0,0\n10.2,100,1,0,0\n", 0, "no whole calendar year"},
	} {
		_, err := Parse("bad.14c", strings.NewReader(tc.text))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *ParseError", tc.name, err)
			continue
		}
		if pe.Line != tc.line || !strings.Contains(pe.Error(), tc.msg) || !strings.HasPrefix(pe.Error(), "bad.14c") {
			t.Errorf("%s: %q (line %d), want line %d containing %q", tc.name, pe.Error(), pe.Line, tc.line, tc.msg)
		}
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The built-in files are the published ones, byte for byte
// (shared/data/README.md lists their sha256).
func TestBuiltinFilesAreThePublishedOnes(t *testing.T) {
	for name, sum := range map[string]string{
		"intcal20.14c": "7f5647f3fb17f3ee8857e85fa9026b6a1ca9e1e06322278d87df6b5a5af4d9b3",
		"shcal20.14c":  "4be559d06a1b647738bb1dca169dcf548a1b8caa9e9f118687708fa0dce1b6e5",
		"marine20.14c": "3ce3741050016b6febeced357c334df39cf75356c28d4ae8e1c935be5ee3f168",
	} {
		b, err := BuiltinFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != sum {
			t.Errorf("%s: sha256 %s, want %s", name, got, sum)
		}
	}
	cs := loadReal(t)
	for _, name := range CurveNames {
		c := cs[name]
		if c.Source != BuiltinSource || c.Citation != Citations[name] || !strings.Contains(c.Citation, "doi:10.1017/RDC.2020.") {
			t.Errorf("%s: source %q citation %q", name, c.Source, c.Citation)
		}
		if len(c.Header) < 3 || !strings.HasPrefix(c.Header[len(c.Header)-1], "CAL BP") {
			t.Errorf("%s: header %q", name, c.Header)
		}
	}
}

// A curves directory replaces a built-in curve of the same name and adds
// the others; a broken file's curve is left out, not replaced by the
// built-in one.
func TestLoadOverridesAndAdds(t *testing.T) {
	if cs, err := Load(""); err != nil || !reflect.DeepEqual(cs.Names(), []string{"intcal20", "marine20", "shcal20"}) {
		t.Fatalf("built-in only: %v %v", cs.Names(), err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "IntCal20.14c", "# My lab's IntCal20, corrected\n"+tinyCurve)
	writeFile(t, dir, "local.14c", "100,100,10\n90,90,10\n")
	writeFile(t, dir, "notes.txt", "not a curve")
	cs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.Names(); !reflect.DeepEqual(got, []string{"intcal20", "local", "marine20", "shcal20"}) {
		t.Errorf("names %v", got)
	}
	ic := cs["intcal20"]
	if len(ic.Points) != 5 || ic.Source != filepath.Join(dir, "IntCal20.14c") ||
		ic.Citation != "My lab's IntCal20, corrected a test curve" {
		t.Errorf("override: %d points, source %q, citation %q", len(ic.Points), ic.Source, ic.Citation)
	}
	if r, err := cs.Calibrate("", 110, 10); err != nil || r.Curve != "intcal20" || r.Sigma2.To > 130 {
		t.Errorf("default curve is the override: %+v %v", r, err)
	}
	if cs["local"].Citation != "" || cs["shcal20"].Source != BuiltinSource {
		t.Errorf("local %q, shcal20 %q", cs["local"].Citation, cs["shcal20"].Source)
	}
	if _, err := cs.Calibrate("local", 95, 5); err != nil {
		t.Errorf("added curve: %v", err)
	}
	// Built-in sets are not shared between calls.
	if b, _ := Builtin(); b["intcal20"].Source != BuiltinSource || b["local"] != nil {
		t.Errorf("Load changed the built-in set: %v", b.Names())
	}

	// A headerless override of a built-in curve keeps the built-in citation.
	writeFile(t, dir, "intcal20.14c", "# CAL BP, 14C age,Sigma\n"+strings.Join(strings.Split(tinyCurve, "\n")[2:], "\n"))
	if err := os.Remove(filepath.Join(dir, "IntCal20.14c")); err != nil {
		t.Fatal(err)
	}
	if cs, err := Load(dir); err != nil || cs["intcal20"].Citation != Citations[IntCal20] {
		t.Errorf("headerless override: %v", err)
	}

	// The published file itself (as in shared/data): the built-in citation.
	b, err := BuiltinFile("shcal20.14c")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "shcal20.14c", string(b))
	if cs, err := Load(dir); err != nil || cs["shcal20"].Citation != Citations[SHCal20] || cs["shcal20"].Source == BuiltinSource {
		t.Errorf("copy of the published file: %v", err)
	}

	writeFile(t, dir, "marine20.14c", "100,100,10,0,0\nx\n")
	cs, err = Load(dir)
	var de *DirError
	if !errors.As(err, &de) || len(de.Broken) != 1 || !strings.Contains(err.Error(), "marine20.14c:2") {
		t.Fatalf("broken file: %v", err)
	}
	if _, err := cs.Calibrate("marine20", 3200, 40); !errors.Is(err, ErrCurveNotLoaded) {
		t.Errorf("broken override: %v, want not loaded", err)
	}
	if _, err := cs.Calibrate("shcal20", 3200, 40); err != nil {
		t.Errorf("the other curves are served: %v", err)
	}
	if _, err := cs.Calibrate("intcal13", 3200, 40); !errors.Is(err, ErrUnknownCurve) || !strings.Contains(err.Error(), "local") {
		t.Errorf("unknown: %v", err)
	}

	if cs, err := Load(filepath.Join(dir, "nowhere")); err == nil || len(cs) != 3 {
		t.Errorf("missing dir: %v %v", cs.Names(), err)
	}
}

func TestResolveDir(t *testing.T) {
	root := t.TempDir()
	dataDir := filepath.Join(root, "data")
	noCurves := filepath.Join(root, "nocurves")
	writeFile(t, noCurves, "README.md", "x")

	// Env wins, even over a populated data dir; it need not hold curves,
	// but it must exist.
	writeFile(t, filepath.Join(dataDir, "curves"), "shcal20.14c", tinyCurve)
	if got, err := ResolveDir(noCurves, dataDir); err != nil || got != noCurves {
		t.Errorf("env: %q %v", got, err)
	}
	if _, err := ResolveDir(filepath.Join(root, "nope"), dataDir); err == nil || !strings.Contains(err.Error(), "STRATA_CURVES_DIR") {
		t.Errorf("missing env dir: %v", err)
	}
	writeFile(t, root, "file", "x")
	if _, err := ResolveDir(filepath.Join(root, "file"), ""); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("env file: %v", err)
	}
	if got, err := ResolveDir("", dataDir); err != nil || got != filepath.Join(dataDir, "curves") {
		t.Errorf("data dir: %q %v", got, err)
	}
	// No curves in <data-dir>/curves, or no data dir: the built-in set.
	if err := os.MkdirAll(filepath.Join(root, "empty", "curves"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(root, "empty"), filepath.Join(root, "other"), ""} {
		if got, err := ResolveDir("", d); err != nil || got != "" {
			t.Errorf("%q: %q %v", d, got, err)
		}
	}
	// Relative directories come back absolute.
	t.Chdir(root)
	if got, err := ResolveDir("nocurves", ""); err != nil || got != noCurves {
		t.Errorf("relative: %q %v", got, err)
	}
}
