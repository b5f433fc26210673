package imports

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"
)

// zipMagic starts every XLSX file (an Office Open XML package is a ZIP).
var zipMagic = []byte("PK\x03\x04")

// maxXLSXRows bounds what one sheet may hold (a row is read into memory).
const maxXLSXRows = 1_000_000

// scanXLSX reads the first sheet of a workbook a row at a time (excelize's
// Rows iterator; a large sheet's XML is spooled to a temporary file by
// excelize, not held): its first non-empty row is the header, the rows
// after it the data (cells as the sheet shows them, which is what a user
// typed: dates as formatted, numbers without float noise), each handed to
// keep.
func scanXLSX(data []byte, keep func(t *Table, row func() map[string]any)) (*Table, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		return nil, ErrUnreadable.With("detail", "not a readable XLSX workbook")
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, ErrUnreadable.With("detail", "the workbook has no sheet")
	}
	rows, err := f.Rows(sheets[0])
	if err != nil {
		return nil, ErrUnreadable.With("detail", "the first sheet cannot be read")
	}
	defer rows.Close()
	t := &Table{Format: "xlsx"}
	line := 0
	for rows.Next() {
		line++
		if line > maxXLSXRows {
			return nil, ErrUnreadable.With("detail", fmt.Sprintf("more than %d rows", maxXLSXRows))
		}
		cells, err := rows.Columns()
		if err != nil {
			return nil, ErrUnreadable.With("detail", fmt.Sprintf("row %d cannot be read", line))
		}
		if blank(cells) {
			continue
		}
		if t.Columns == nil {
			for _, c := range cells {
				t.Columns = append(t.Columns, strings.TrimSpace(c))
			}
			continue
		}
		if len(cells) > len(t.Columns) && !blank(cells[len(t.Columns):]) {
			return nil, ErrUnreadable.With("detail", fmt.Sprintf("row %d has %d values, the header %d", line, len(cells), len(t.Columns)))
		}
		keep(t, func() map[string]any {
			row := make(map[string]any, len(t.Columns))
			for i, h := range t.Columns {
				if i < len(cells) {
					row[h] = cells[i]
				} else {
					row[h] = ""
				}
			}
			return row
		})
	}
	if t.Columns == nil {
		return nil, ErrUnreadable.With("detail", "the first sheet is empty")
	}
	return t, nil
}

func blank(cells []string) bool {
	for _, c := range cells {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
