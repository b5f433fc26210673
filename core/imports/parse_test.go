package imports

import (
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/strata-archaeo/strata/core/errs"
)

func TestParse(t *testing.T) {
	latin1, _ := charmap.Windows1252.NewEncoder().String("sigla;periodo\nA1;Età del Bronzo\n")
	cases := []struct {
		name, in string
		format   string
		delim    string
		enc      string
		cols     string
		rows     string
		err      string
	}{
		{"comma", "a,b\n1,2\n3,4\n", "csv", ",", "UTF-8", "[a b]", "[map[a:1 b:2] map[a:3 b:4]]", ""},
		{"semicolon (Italian spreadsheets)", "a;b\n1;2,5\n", "csv", ";", "UTF-8", "[a b]", "[map[a:1 b:2,5]]", ""},
		{"tab", "a\tb\n1\t2\n", "csv", "\t", "UTF-8", "[a b]", "[map[a:1 b:2]]", ""},
		{"BOM", "\xef\xbb\xbfa,b\n1,2\n", "csv", ",", "UTF-8 (BOM)", "[a b]", "[map[a:1 b:2]]", ""},
		{"Windows-1252", latin1, "csv", ";", "Windows-1252", "[sigla periodo]", "[map[periodo:Età del Bronzo sigla:A1]]", ""},
		{"quoted delimiter", "a,b\n\"x,y\",2\n", "csv", ",", "UTF-8", "[a b]", "[map[a:x,y b:2]]", ""},
		{"semicolons inside quotes do not win", "\"a;x\",b\n1,2\n", "csv", ",", "UTF-8", "[a;x b]", "[map[a;x:1 b:2]]", ""},
		{"blank lines", "a,b\n\n1,2\n\n", "csv", ",", "UTF-8", "[a b]", "[map[a:1 b:2]]", ""},
		{"ragged", "a,b\n1\n", "", "", "", "", "", "line 2 has 1 values"},
		{"empty", "  \n", "", "", "", "", "", "empty"},
		{"json", `[{"a":1,"b":"x"},{"b":"y","c":true}]`, "json", "", "", "[a b c]", "[map[a:1 b:x] map[b:y c:true]]", ""},
		{"json not a list", `{"a":1}`, "", "", "", "", "", "array of objects"},
	}
	for _, tc := range cases {
		tb, err := Parse([]byte(tc.in))
		if tc.err != "" {
			e, ok := errs.As(err)
			if !ok || e.Code != "import_file_invalid" || !strings.Contains(fmt.Sprint(e.Extra["detail"]), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tb.Format != tc.format || tb.Delimiter != tc.delim || tb.Encoding != tc.enc || fmt.Sprint(tb.Columns) != tc.cols || fmt.Sprint(tb.Rows) != tc.rows {
			t.Errorf("%s: %s %q %s %v %v", tc.name, tb.Format, tb.Delimiter, tb.Encoding, tb.Columns, tb.Rows)
		}
	}
}

// FuzzParse: any bytes are parsed or refused with a coded error, never a
// panic, and a parsed CSV's rows all have the header's columns.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a;b\n\"x;y\";2", "[{\"a\":1}]", "\xef\xbb\xbfa\tb\n1\t2", "a\n\"unterminated"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := Parse(data)
		if err != nil || tb.Format != "csv" {
			return
		}
		for _, r := range tb.Rows {
			if len(r) > len(tb.Columns) {
				t.Fatalf("a row with more values than columns: %v / %v", r, tb.Columns)
			}
		}
	})
}

// TestPreview: a preview keeps the first n rows and counts them all, and
// is otherwise Parse: the same columns, encoding, delimiter, rows (the
// first n of Parse's) and count, and the same refusals, whatever row
// breaks the rules (after the rows shown too).
func TestPreview(t *testing.T) {
	latin1, _ := charmap.Windows1252.NewEncoder().String("sigla;periodo\nA1;Età del Bronzo\nA2;Età del Ferro\nA3;Romana\n")
	var long strings.Builder
	long.WriteString("n,label\n")
	for i := range 1000 {
		fmt.Fprintf(&long, "%d,\"row, %d\"\n", i, i)
	}
	cases := []struct {
		name string
		in   []byte
		n    int
		err  string
	}{
		{"comma", []byte("a,b\n1,2\n3,4\n5,6\n"), 2, ""},
		{"fewer rows than n", []byte("a,b\n1,2\n"), 20, ""},
		{"no rows", []byte("a,b\n"), 20, ""},
		{"BOM and blank lines", []byte("\xef\xbb\xbfa;b\n\n1;2\n\n3;4\n"), 1, ""},
		{"Windows-1252", []byte(latin1), 2, ""},
		{"a thousand rows", []byte(long.String()), 20, ""},
		{"ragged after the rows shown", []byte("a,b\n1,2\n3,4\n5\n"), 1, "line 4 has 1 values"},
		{"unterminated quote after the rows shown", []byte("a,b\n1,2\n3,\"4\n"), 1, "extraneous or missing"},
		{"json", []byte(`[{"a":1},{"a":2},{"b":3}]`), 2, ""},
		{"xlsx", workbook(t, [][]any{{"sigla", "peso"}, {"A", 1}, {nil, nil}, {"B", 2.5}, {"C", 3}}), 2, ""},
		{"xlsx wider row after the rows shown", workbook(t, [][]any{{"a"}, {"1"}, {"2", "3"}}), 1, "row 3 has 2 values"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, count, err := Preview(c.in, c.n)
			whole, werr := Parse(c.in)
			if c.err != "" {
				for _, e := range []error{err, werr} {
					if e, ok := errs.As(e); !ok || e.Code != "import_file_invalid" || !strings.Contains(fmt.Sprint(e.Extra["detail"]), c.err) {
						t.Fatalf("%v, want %q", e, c.err)
					}
				}
				return
			}
			if err != nil || werr != nil {
				t.Fatal(err, werr)
			}
			want := whole.Rows[:min(c.n, len(whole.Rows))]
			if count != len(whole.Rows) || fmt.Sprint(got.Rows) != fmt.Sprint(want) || fmt.Sprint(got.Columns) != fmt.Sprint(whole.Columns) ||
				got.Format != whole.Format || got.Encoding != whole.Encoding || got.Delimiter != whole.Delimiter {
				t.Fatalf("preview %+v (count %d), parse %+v", got, count, whole)
			}
		})
	}
}
