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
