package calib

import (
	"errors"
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
	raw, err := os.ReadFile(filepath.Join(curvesDir(t), "shcal20.14c"))
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

func TestLoadDirPartialMissingAndBad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "intcal20.14c", tinyCurve)
	cs, err := LoadDir(dir)
	var me *MissingCurvesError
	if !errors.As(err, &me) || !reflect.DeepEqual(me.Missing, []string{"shcal20", "marine20"}) {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "shcal20.14c") || !strings.Contains(err.Error(), "marine20.14c") {
		t.Errorf("message %q does not name the files", err)
	}
	if cs == nil || cs["intcal20"] == nil || len(cs) != 1 {
		t.Fatalf("partial set %v", cs)
	}
	if _, err := cs.Calibrate("intcal20", 110, 10); err != nil {
		t.Errorf("calibrating with the loaded curve: %v", err)
	}
	if _, err := cs.Calibrate("shcal20", 110, 10); !errors.Is(err, ErrCurveNotLoaded) {
		t.Errorf("shcal20: %v", err)
	}

	empty := t.TempDir()
	if cs, err := LoadDir(empty); cs != nil || !errors.As(err, &me) || len(me.Missing) != 3 {
		t.Errorf("empty dir: %v %v", cs, err)
	}

	writeFile(t, dir, "marine20.14c", "100,100,10,0,0\nx\n")
	cs, err = LoadDir(dir)
	var pe *ParseError
	if cs != nil || !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "marine20") {
		t.Errorf("bad file: %v %v", cs, err)
	}
}

func TestResolveDir(t *testing.T) {
	root := t.TempDir()
	dataDir := filepath.Join(root, "data")
	dev := filepath.Join(root, "shared")
	noCurves := filepath.Join(root, "nocurves")
	writeFile(t, dev, "intcal20.14c", tinyCurve)
	writeFile(t, noCurves, "README.md", "x")

	// Env wins, even over a populated data dir; it need not hold curves
	// yet (LoadDir then names what is missing), but it must exist.
	if got, err := ResolveDir(noCurves, dataDir, dev); err != nil || got != noCurves {
		t.Errorf("env: %q %v", got, err)
	}
	if _, err := ResolveDir(filepath.Join(root, "nope"), dataDir, dev); err == nil || !strings.Contains(err.Error(), "STRATA_CURVES_DIR") {
		t.Errorf("missing env dir: %v", err)
	}
	writeFile(t, root, "file", "x")
	if _, err := ResolveDir(filepath.Join(root, "file"), "", dev); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("env file: %v", err)
	}

	// No <data-dir>/curves yet: the development fallback.
	if got, err := ResolveDir("", dataDir, noCurves, dev); err != nil || got != dev {
		t.Errorf("fallback: %q %v", got, err)
	}
	// An empty <data-dir>/curves does not count.
	if err := os.MkdirAll(filepath.Join(dataDir, "curves"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveDir("", dataDir, dev); err != nil || got != dev {
		t.Errorf("empty curves dir: %q %v", got, err)
	}
	writeFile(t, filepath.Join(dataDir, "curves"), "shcal20.14c", tinyCurve)
	if got, err := ResolveDir("", dataDir, dev); err != nil || got != filepath.Join(dataDir, "curves") {
		t.Errorf("data dir: %q %v", got, err)
	}
	// Relative candidates come back absolute.
	t.Chdir(root)
	if got, err := ResolveDir("", "", "shared"); err != nil || got != dev {
		t.Errorf("relative: %q %v", got, err)
	}
	_, err := ResolveDir("", filepath.Join(root, "other"), noCurves)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "other", "curves")) || !strings.Contains(err.Error(), noCurves) {
		t.Errorf("nothing found: %v", err)
	}
}
