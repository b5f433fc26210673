package imports

import (
	"testing"

	"github.com/xuri/excelize/v2"
)

func workbook(t *testing.T, rows [][]any) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseXLSX(t *testing.T) {
	data := workbook(t, [][]any{
		{" sigla ", "peso", "città"},
		{"IMP001", 12.5, "Pompéi"},
		{nil, nil, nil},
		{"IMP002", 3, ""},
	})
	tb, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Format != "xlsx" || len(tb.Columns) != 3 || tb.Columns[0] != "sigla" || len(tb.Rows) != 2 {
		t.Fatalf("table %+v", tb)
	}
	if tb.Rows[0]["peso"] != "12.5" || tb.Rows[0]["città"] != "Pompéi" || tb.Rows[1]["peso"] != "3" || tb.Rows[1]["città"] != "" {
		t.Fatalf("rows %v", tb.Rows)
	}
	for name, bad := range map[string][]byte{
		"a zip that is no workbook":   []byte("PK\x03\x04 not really"),
		"an empty sheet":              workbook(t, nil),
		"a row wider than the header": workbook(t, [][]any{{"a"}, {"1", "2"}}),
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
