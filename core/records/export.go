package records

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// ExportBatch is how many rows one query of an export reads. An export
// holds one batch in memory at a time and releases the connection before
// writing it out, so a slow client never holds a database connection.
const ExportBatch = 500

// ErrTooManyRows: a worksheet holds excelize.TotalRows rows, the header
// included.
var ErrTooManyRows = errs.New(errs.Invalid, "too_many_rows", "more rows than a spreadsheet holds; export as csv or json, or filter").
	With("limit", excelize.TotalRows-1)

// ExportQuery is what an export asks for: the list's parameters without
// paging (CONTRACT §5).
type ExportQuery struct {
	SortField string
	SortDir   string
	Columns   []string
	Where     *Cond
	// Batch is the number of rows per query (0: ExportBatch); tests make
	// it small to cross many batch boundaries.
	Batch int
}

// Export is a checked export, ready to run: every error a caller's input
// can cause (columns, sort) has been reported by NewExport, and Run reads
// the first batch before writing anything, so that a failing query can
// still be answered with an error instead of a truncated file.
type Export struct {
	s        *Scope
	cols     []FieldRef
	types    []schema.DBType
	sort     string // the sort column; "" sorts by id
	desc     bool
	order    string
	where    *Cond
	batch    int
	selected []string
}

// NewExport checks q against the scope's table: the columns and order are
// those of the list (List), so an export has exactly the list's rows, in
// the list's order, with the list's values.
func NewExport(s *Scope, q ExportQuery) (*Export, error) {
	cols, err := listColumns(s.Table, q.Columns)
	if err != nil {
		return nil, err
	}
	order, err := s.orderBy(q.SortField, q.SortDir)
	if err != nil {
		return nil, err
	}
	e := &Export{s: s, cols: cols, order: order, where: q.Where, batch: q.Batch,
		desc: strings.EqualFold(strings.TrimSpace(q.SortDir), "desc")}
	if e.batch <= 0 {
		e.batch = ExportBatch
	}
	if q.SortField != schema.ColID {
		e.sort = q.SortField
	}
	// The key columns come first: id and the sort column, read raw, to
	// bind as the next batch's starting point.
	e.selected = []string{s.column(schema.ColID)}
	if e.sort != "" {
		e.selected = append(e.selected, s.column(e.sort))
	}
	e.types = make([]schema.DBType, len(cols))
	for i, c := range cols {
		e.types[i], _ = dbTypeOf(s.Table, c.Name)
		e.selected = append(e.selected, s.column(c.Name))
	}
	return e, nil
}

// Columns are the exported columns, id first.
func (e *Export) Columns() []FieldRef { return e.cols }

// after is the keyset condition that keeps the rows following (id, key)
// in the order orderBy writes: NULLs after values when ascending (before
// them when descending), then the key, then id. Paging by key rather than
// by OFFSET costs the same for every batch and neither skips nor repeats
// a row when others insert or delete meanwhile.
func (e *Export) after(id int64, key any) *Cond {
	idc := e.s.column(schema.ColID)
	cmp := ">"
	if e.desc {
		cmp = "<"
	}
	if e.sort == "" {
		return &Cond{SQL: idc + " " + cmp + " ?", Args: []any{id}}
	}
	col := e.s.column(e.sort)
	k := col
	if t, _ := dbTypeOf(e.s.Table, e.sort); t == schema.DBText && e.s.DB.Engine == store.Postgres {
		k += ` COLLATE "C"`
	}
	switch {
	case !e.desc && key == nil:
		return &Cond{SQL: col + " IS NULL AND " + idc + " > ?", Args: []any{id}}
	case !e.desc:
		return &Cond{SQL: col + " IS NULL OR " + k + " > ? OR (" + k + " = ? AND " + idc + " > ?)", Args: []any{key, key, id}}
	case key == nil:
		return &Cond{SQL: col + " IS NOT NULL OR " + idc + " < ?", Args: []any{id}}
	}
	return &Cond{SQL: col + " IS NOT NULL AND (" + k + " < ? OR (" + k + " = ? AND " + idc + " < ?))", Args: []any{key, key, id}}
}

// batchOf reads the rows after (id, key) (all from the start when first).
func (e *Export) batchOf(ctx context.Context, first bool, id int64, key any) (rows [][]any, lastID int64, lastKey any, err error) {
	cond := e.where
	if !first {
		cond = joinConds(e.where, e.after(id, key))
	}
	where, args := e.s.where(cond)
	q := `SELECT ` + strings.Join(e.selected, ", ") + ` FROM ` + e.s.DB.Qualify(e.s.Table.Name) +
		` WHERE ` + where + ` ORDER BY ` + e.order + ` LIMIT ?`
	rs, err := e.s.DB.Query(ctx, q, append(args, e.batch)...)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("export %s: %w", e.s.Table.Name, err)
	}
	defer rs.Close()
	keys := len(e.selected) - len(e.cols)
	raw := make([]any, len(e.selected))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, 0, nil, fmt.Errorf("export %s: %w", e.s.Table.Name, err)
		}
		lastID = fromDB(schema.DBInt, raw[0]).(int64)
		lastKey = nil
		if keys == 2 {
			lastKey = raw[1]
			if b, ok := lastKey.([]byte); ok {
				lastKey = string(b) // bound back as text, not bytes
			}
		}
		vals := make([]any, len(e.cols))
		for i := range e.cols {
			vals[i] = fromDB(e.types[i], raw[keys+i])
		}
		rows = append(rows, vals)
	}
	return rows, lastID, lastKey, rs.Err()
}

// Run writes the export to w: the header, then every row the caller may
// see that matches, batch by batch, then Finish. It returns the number of
// rows written. Nothing is written before the first batch has been read.
func (e *Export) Run(ctx context.Context, w RowWriter) (int64, error) {
	var n, id int64
	var key any
	for first := true; ; first = false {
		rows, lastID, lastKey, err := e.batchOf(ctx, first, id, key)
		if err != nil {
			return n, err
		}
		if first {
			if err := w.Header(e.cols); err != nil {
				return n, err
			}
		}
		for _, r := range rows {
			if err := w.Row(r); err != nil {
				return n, err
			}
			n++
		}
		if len(rows) < e.batch {
			break
		}
		id, key = lastID, lastKey
	}
	return n, w.Finish()
}

// RowWriter writes an export in one file format. Values come in column
// order, in their list JSON form (int64, float64, bool, string, nil; dates
// as yyyy-mm-dd).
type RowWriter interface {
	Header(cols []FieldRef) error
	Row(vals []any) error
	// Finish completes the document after the last row.
	Finish() error
	// Close releases what the writer holds (temporary files); it is
	// called once, whether or not the export succeeded.
	Close() error
}

// ExportFormat is a file format an export can be written in.
type ExportFormat struct {
	Name        string
	Ext         string
	ContentType string
	open        func(w io.Writer, sheet string) (RowWriter, error)
	// OpenFor, set by formats of other areas (geo's GeoJSON and KML),
	// writes with what else it reads of the scope's records.
	OpenFor func(ctx context.Context, s *Scope, w io.Writer) (RowWriter, error)
}

// NewWriter returns a writer of the format onto w; sheet names the
// worksheet where the format has one.
func (f ExportFormat) NewWriter(w io.Writer, sheet string) (RowWriter, error) {
	return f.open(w, sheet)
}

// NewWriterFor returns a writer of the format onto w for the export of
// s's table.
func (f ExportFormat) NewWriterFor(ctx context.Context, s *Scope, w io.Writer) (RowWriter, error) {
	if f.OpenFor != nil {
		return f.OpenFor(ctx, s, w)
	}
	return f.open(w, s.Table.Name)
}

var exportFormats = []ExportFormat{
	{Name: "csv", Ext: "csv", ContentType: "text/csv; charset=utf-8", open: newCSVWriter},
	{Name: "json", Ext: "json", ContentType: "application/json; charset=utf-8", open: newJSONWriter},
	{Name: "xlsx", Ext: "xlsx", ContentType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", open: newXLSXWriter},
}

// ExportFormatOf returns the format called name (csv, json or xlsx, or
// one of extra).
func ExportFormatOf(name string, extra ...ExportFormat) (ExportFormat, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	all := append(slices.Clip(exportFormats), extra...)
	allowed := make([]string, len(all))
	for i, f := range all {
		if f.Name == name {
			return f, nil
		}
		allowed[i] = f.Name
	}
	if name == "" {
		return ExportFormat{}, errSearchParamMissing.With("parameter", "format").With("allowed", allowed)
	}
	return ExportFormat{}, ErrInvalidParameter.With("parameter", "format").With("allowed", allowed)
}

// spreadsheetSafe defuses text a spreadsheet program would run as a
// formula (OWASP's CSV injection advice): text starting with =, +, -, @,
// a tab or a carriage return gets a leading apostrophe, which spreadsheets
// show as text and hide. Numbers are never touched: -5 stays a number.
func spreadsheetSafe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

// cellText is a value as text, written as the list's JSON writes it.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case float64:
		if b, err := json.Marshal(x); err == nil {
			return string(b)
		}
		return strconv.FormatFloat(x, 'g', -1, 64) // NaN and infinities, which JSON lacks
	}
	return fmt.Sprint(v)
}

// csvWriter writes RFC 4180 CSV (CRLF line ends) in UTF-8 with a byte
// order mark, which spreadsheet programs need to read UTF-8. The header
// holds the field names, as BraDypUS writes it, so that an export imports
// back as it is (the XLSX export, for reading, has the labels).
type csvWriter struct {
	out io.Writer
	w   *csv.Writer
	rec []string
}

func newCSVWriter(w io.Writer, _ string) (RowWriter, error) {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	return &csvWriter{out: w, w: cw}, nil
}

func (c *csvWriter) Header(cols []FieldRef) error {
	// Written straight to out: the csv buffer is still empty.
	if _, err := io.WriteString(c.out, "\uFEFF"); err != nil {
		return err
	}
	c.rec = make([]string, len(cols))
	for i, col := range cols {
		c.rec[i] = col.Name
	}
	return c.w.Write(c.rec)
}

func (c *csvWriter) Row(vals []any) error {
	for i, v := range vals {
		if s, isText := v.(string); isText {
			c.rec[i] = spreadsheetSafe(s)
			continue
		}
		c.rec[i] = cellText(v)
	}
	return c.w.Write(c.rec)
}

func (c *csvWriter) Finish() error {
	c.w.Flush()
	return c.w.Error()
}

func (c *csvWriter) Close() error { return nil }

// jsonWriter writes an array of objects keyed by column name, in column
// order, one object a line.
type jsonWriter struct {
	w    *bufio.Writer
	keys [][]byte // `"name":` per column
	buf  bytes.Buffer
	enc  *json.Encoder
	rows int
}

func newJSONWriter(w io.Writer, _ string) (RowWriter, error) {
	j := &jsonWriter{w: bufio.NewWriterSize(w, 32<<10)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false) // as the list answers: an API, not HTML
	return j, nil
}

func (j *jsonWriter) Header(cols []FieldRef) error {
	j.keys = make([][]byte, len(cols))
	for i, c := range cols {
		k, err := json.Marshal(c.Name)
		if err != nil {
			return err
		}
		j.keys[i] = append(k, ':')
	}
	_, err := j.w.WriteString("[")
	return err
}

func (j *jsonWriter) Row(vals []any) error {
	j.buf.Reset()
	if j.rows > 0 {
		j.buf.WriteByte(',')
	}
	j.buf.WriteString("\n{")
	for i, v := range vals {
		if i > 0 {
			j.buf.WriteByte(',')
		}
		j.buf.Write(j.keys[i])
		if err := j.enc.Encode(v); err != nil {
			return err
		}
		j.buf.Truncate(j.buf.Len() - 1) // Encode's newline
	}
	j.buf.WriteByte('}')
	j.rows++
	_, err := j.w.Write(j.buf.Bytes())
	return err
}

func (j *jsonWriter) Finish() error {
	end := "]\n"
	if j.rows > 0 {
		end = "\n]\n"
	}
	if _, err := j.w.WriteString(end); err != nil {
		return err
	}
	return j.w.Flush()
}

func (j *jsonWriter) Close() error { return nil }

// xlsxWriter writes one worksheet through excelize's StreamWriter, which
// keeps rows in a temporary file past a few megabytes rather than in
// memory. The zip container needs the whole sheet, so the file goes out
// at Finish. Numbers and booleans are typed cells, dates text as in the
// list; a header of labels in bold stays frozen on top. The format
// truncates text cells at 32,767 characters.
type xlsxWriter struct {
	out io.Writer
	f   *excelize.File
	sw  *excelize.StreamWriter
	row int
}

func newXLSXWriter(w io.Writer, sheet string) (RowWriter, error) {
	f := excelize.NewFile()
	// A sheet name has at most 31 characters; table names need no other
	// care (letters, digits, underscores).
	if len(sheet) > 31 {
		sheet = sheet[:31]
	}
	if sheet == "" {
		sheet = "Sheet1"
	}
	if err := f.SetSheetName(f.GetSheetName(0), sheet); err != nil {
		_ = f.Close()
		return nil, err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return &xlsxWriter{out: w, f: f, sw: sw}, nil
}

func (x *xlsxWriter) Header(cols []FieldRef) error {
	bold, err := x.f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	if err := x.sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	labels := make([]any, len(cols))
	for i, c := range cols {
		labels[i] = c.Label
	}
	x.row = 1
	return x.sw.SetRow("A1", labels, excelize.RowOpts{StyleID: bold})
}

func (x *xlsxWriter) Row(vals []any) error {
	x.row++
	if x.row > excelize.TotalRows {
		return ErrTooManyRows
	}
	cell, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	for i, v := range vals {
		if s, isText := v.(string); isText {
			vals[i] = spreadsheetSafe(s)
		}
	}
	return x.sw.SetRow(cell, vals)
}

func (x *xlsxWriter) Finish() error {
	if err := x.sw.Flush(); err != nil {
		return err
	}
	return x.f.Write(x.out)
}

func (x *xlsxWriter) Close() error { return x.f.Close() }
