// Package assemblage is the pivot analysis of BraDypUS's "assemblages"
// (CONTRACT §9–10): an aggregate (count, sum, count_distinct) of a source
// table's rows by one of its fields (the characteristic, columns) and by a
// field reached through up to two lookup hops (the group, rows), in one
// SQL query over the caller's rows of every table on the path; and saved
// analyses, their owner's and, when shared, read-only to everyone.
package assemblage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// Step is one hop of a group path: local_field of the current table, a
// lookup, leads to join_tb's row whose id (join_pk) it holds.
type Step struct {
	LocalField string `json:"local_field"`
	JoinTb     string `json:"join_tb"`
	JoinPK     string `json:"join_pk"`
}

// Definition is an analysis as the client's wizard builds it. Other keys
// it keeps (source_type, measure_label) are stored, not read.
type Definition struct {
	SourceTb     string          `json:"source_tb"`
	CharField    string          `json:"char_field"`
	GroupPath    []Step          `json:"group_path"`
	GroupField   string          `json:"group_field"`
	Measure      string          `json:"measure"`
	MeasureField string          `json:"measure_field"`
	Filters      json.RawMessage `json:"filters"`
}

// Measures are the aggregates.
var measures = []string{"count", "sum", "count_distinct"}

var (
	ErrMissing      = errs.New(errs.Invalid, "parameter_missing", "the analysis needs source_tb, char_field and group_field")
	ErrInvalidField = errs.New(errs.Invalid, "invalid_field", "the analysis names a field it cannot use")
	ErrInvalidPath  = errs.New(errs.Invalid, "invalid_path", "the group path is not a chain of lookups")
	ErrMeasure      = errs.New(errs.Invalid, "invalid_measure", "the measure is count, sum or count_distinct")
	ErrFilters      = errs.New(errs.Invalid, "invalid_filter", "filters are a list of {field, op, value} or a filter object")
)

// MaxCells bounds the (group, characteristic) pairs of an answer.
const MaxCells = 10000

// flagOps take no value: the client sends "" with them.
var flagOps = map[string]bool{"_null": true, "_nnull": true, "_empty": true, "_nempty": true}

// FilterJSON is the definition's filters in the filter language: the
// wizard's list of {field, op, value} (rows without field or op skipped)
// ANDed, or a filter object as is; nil when there is none.
func FilterJSON(raw json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if s[0] == '{' {
		return raw, nil
	}
	var rows []map[string]any
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, ErrFilters.With("detail", "not a list of objects")
	}
	var and []map[string]any
	for _, r := range rows {
		field, _ := r["field"].(string)
		op, _ := r["op"].(string)
		if field == "" || op == "" {
			continue
		}
		var v any = r["value"]
		if flagOps[op] {
			v = true
		}
		and = append(and, map[string]any{field: map[string]any{op: v}})
	}
	if len(and) == 0 {
		return nil, nil
	}
	return json.Marshal(map[string]any{"_and": and})
}

// Scopes gives the caller's scope on a table of the path (its level and
// row subset); an unreadable table is an error.
type Scopes func(table string) (*records.Scope, error)

// Result is the pivot as the client reads it: groups (rows) and chars
// (columns) in order, data[group][char], labels of the groups that are
// records.
type Result struct {
	Groups      []string                      `json:"groups"`
	Chars       []string                      `json:"chars"`
	Data        map[string]map[string]float64 `json:"data"`
	GroupLabels map[string]string             `json:"group_labels"`
	GroupTb     string                        `json:"group_tb"`
	GroupField  string                        `json:"group_field"`
	Measure     string                        `json:"measure"`
	Truncated   bool                          `json:"truncated"`
}

// column checks that name is a column of t a pivot may read.
func column(t *schema.Table, name string) (*schema.Field, error) {
	if t.IsSystemColumn(name) {
		return &schema.Field{Name: name, Label: name, DBType: schema.DBInt}, nil
	}
	if f, ok := t.Field(name); ok {
		return f, nil
	}
	return nil, ErrInvalidField.With("field", name).With("table", t.Name)
}

// hop resolves step from table t: a lookup field of t, or a plugin
// table's id_link to its parent.
func hop(cat *schema.Catalog, t *schema.Table, s Step) (*schema.Table, error) {
	if s.JoinPK != "" && s.JoinPK != schema.ColID {
		return nil, ErrInvalidPath.With("detail", "join_pk must be id").With("field", s.LocalField)
	}
	target := ""
	switch {
	case t.IsPlugin && s.LocalField == schema.ColIDLink:
		target = t.PluginOf
	default:
		f, ok := t.Field(s.LocalField)
		if !ok {
			return nil, ErrInvalidPath.With("detail", "no field "+s.LocalField+" in "+t.Name).With("field", s.LocalField)
		}
		target = f.IDFromTb
	}
	if target == "" || (s.JoinTb != "" && s.JoinTb != target) {
		return nil, ErrInvalidPath.With("detail", t.Name+"."+s.LocalField+" is not a lookup of "+s.JoinTb).With("field", s.LocalField)
	}
	next, ok := cat.Table(target)
	if !ok {
		return nil, ErrInvalidPath.With("detail", "no table "+target)
	}
	return next, nil
}

// plan is a definition resolved against the catalog: the columns and the
// tables of the group path it names, each checked as a pivot may use it.
type plan struct {
	charF    *schema.Field
	measureF *schema.Field // nil for count
	path     []*schema.Table
	last     *schema.Table // the table group_field is read from
	groupF   *schema.Field
}

// resolve checks d (measure normalised) on source table src of cat: the
// one reading of a definition, for running it and for checking one kept
// from elsewhere.
func resolve(cat *schema.Catalog, src *schema.Table, d *Definition) (*plan, error) {
	d.Measure = strings.ToLower(strings.TrimSpace(d.Measure))
	if d.Measure == "" {
		d.Measure = "count"
	}
	if d.CharField == "" || d.GroupField == "" {
		return nil, ErrMissing
	}
	if len(d.GroupPath) > filter.MaxHops {
		return nil, ErrInvalidPath.With("detail", fmt.Sprintf("a group path crosses at most %d tables", filter.MaxHops))
	}
	p := &plan{}
	var err error
	if p.charF, err = column(src, d.CharField); err != nil {
		return nil, err
	}
	switch d.Measure {
	case "count":
	case "sum", "count_distinct":
		if d.MeasureField == "" {
			return nil, ErrMeasure.With("detail", d.Measure+" needs measure_field")
		}
		if p.measureF, err = column(src, d.MeasureField); err != nil {
			return nil, err
		}
		if d.Measure == "sum" && p.measureF.DBType != schema.DBInt && p.measureF.DBType != schema.DBFloat {
			return nil, ErrInvalidField.With("field", p.measureF.Name).With("detail", "sum needs a number field")
		}
	default:
		return nil, ErrMeasure.With("measure", d.Measure)
	}
	cur := src
	for _, s := range d.GroupPath {
		next, err := hop(cat, cur, s)
		if err != nil {
			return nil, err
		}
		p.path = append(p.path, next)
		cur = next
	}
	p.last = cur
	if p.groupF, err = column(cur, d.GroupField); err != nil {
		return nil, err
	}
	return p, nil
}

// Check reads def (a saved analysis's definition, as stored) and checks it
// against cat as saving it through the API would, without a caller: its
// source table, fields, group path, measure and filters. For analyses
// brought over from elsewhere (the BraDypUS major upgrade).
func Check(cat *schema.Catalog, def map[string]any) error {
	var d Definition
	if err := wire.Assign(def, &d, wire.Options{}); err != nil {
		return api.DecodeErr(err)
	}
	d.SourceTb = strings.TrimSpace(d.SourceTb)
	if d.SourceTb == "" {
		return ErrMissing.With("parameter", "source_tb")
	}
	src, ok := cat.Table(d.SourceTb)
	if !ok {
		return schema.ErrTableNotFound.With("table", d.SourceTb)
	}
	if _, err := resolve(cat, src, &d); err != nil {
		return err
	}
	fj, err := FilterJSON(d.Filters)
	if err != nil || fj == nil {
		return err
	}
	n, err := filter.ParseJSON(fj)
	if err != nil {
		return err
	}
	return filter.Validate(cat, src.Name, n, filter.Options{})
}

// Compute runs d over the rows of sc's table matching cond (and the
// caller's row subset) in one query. Every table the path reaches joins
// as its caller's row subset only, so a source row whose group row is
// hidden (or unset) falls in the empty group: it is counted, never named.
func Compute(ctx context.Context, sc *records.Scope, scopes Scopes, d *Definition, cond *records.Cond) (*Result, error) {
	p, err := resolve(sc.Catalog, sc.Table, d)
	if err != nil {
		return nil, err
	}
	db := sc.DB
	q := db.Engine.Quote
	src := db.Qualify(sc.Table.Name)
	var agg string
	switch d.Measure {
	case "count":
		agg = `COUNT(*)`
	case "count_distinct":
		agg = `COUNT(DISTINCT ` + src + `.` + q(p.measureF.Name) + `)`
	default:
		agg = `SUM(CAST(` + src + `.` + q(p.measureF.Name) + ` AS ` + floatType(db.Engine) + `))`
	}

	// The joins: each table of the path as the caller's rows of it.
	var joins strings.Builder
	var args []any
	join := func(t *schema.Table, alias, on string) error {
		js, err := scopes(t.Name)
		if err != nil {
			return err
		}
		inner := `SELECT * FROM ` + db.Qualify(t.Name)
		if js.Restrict != nil && js.Restrict.SQL != "" {
			inner += ` WHERE ` + js.Restrict.SQL
			args = append(args, js.Restrict.Args...)
		}
		joins.WriteString(` LEFT JOIN (` + inner + `) AS ` + alias + ` ON ` + alias + `.` + q(schema.ColID) + ` = ` + on)
		return nil
	}
	ref := src
	for i, s := range d.GroupPath {
		alias := q("j" + strconv.Itoa(i+1))
		if err := join(p.path[i], alias, ref+`.`+q(s.LocalField)); err != nil {
			return nil, err
		}
		ref = alias
	}
	cur, groupF, charF := p.last, p.groupF, p.charF
	group := ref + `.` + q(groupF.Name)
	// Labels: a group of ids names records, of the last table (id) or of
	// the table its lookup points at.
	label := ""
	switch {
	case groupF.Name == schema.ColID:
		label = ref + `.` + q(records.IDFieldOf(cur))
	case groupF.IDFromTb != "":
		if lt, ok := sc.Catalog.Table(groupF.IDFromTb); ok {
			alias := q("gl")
			if err := join(lt, alias, group); err != nil {
				return nil, err
			}
			label = alias + `.` + q(records.IDFieldOf(lt))
		}
	}
	labelCol := `NULL`
	if label != "" {
		labelCol = `MAX(CAST(` + label + ` AS TEXT))`
	}
	char := src + `.` + q(charF.Name)
	where, wargs := sc.Where(cond)
	args = append(args, wargs...)
	// Raw values, formatted here alike on both engines; no value (an
	// unset field, a hidden or missing row on the path) sorts first.
	query := `SELECT ` + group + `, ` + char + `, CAST(` + agg + ` AS ` + floatType(db.Engine) + `), ` + labelCol +
		` FROM ` + src + joins.String() + ` WHERE ` + where +
		` GROUP BY ` + group + `, ` + char + ` ORDER BY CASE WHEN ` + group + ` IS NULL THEN 0 ELSE 1 END, ` + group + `, ` + char + ` LIMIT ?`
	rows, err := db.Query(ctx, query, append(args, MaxCells+1)...)
	if err != nil {
		return nil, fmt.Errorf("assemblage of %s: %w", sc.Table.Name, err)
	}
	defer rows.Close()
	out := &Result{Groups: []string{}, Chars: []string{}, Data: map[string]map[string]float64{}, GroupLabels: map[string]string{},
		GroupTb: cur.Name, GroupField: groupF.Name, Measure: d.Measure}
	seenChar := map[string]bool{}
	n := 0
	for rows.Next() {
		if n++; n > MaxCells {
			out.Truncated = true
			break
		}
		var g, ch any
		var lbl *string
		var v *float64
		if err := rows.Scan(&g, &ch, &v, &lbl); err != nil {
			return nil, err
		}
		gk, ck := format(g), format(ch)
		if _, ok := out.Data[gk]; !ok {
			out.Groups = append(out.Groups, gk)
			out.Data[gk] = map[string]float64{}
		}
		if !seenChar[ck] {
			seenChar[ck] = true
			out.Chars = append(out.Chars, ck)
		}
		if v != nil {
			out.Data[gk][ck] = *v
		} else {
			out.Data[gk][ck] = 0
		}
		if lbl != nil && *lbl != "" {
			out.GroupLabels[gk] = *lbl
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out.Chars) // rows came ordered by group; columns by value
	return out, nil
}

// format is a group or characteristic value as the answer's key: numbers
// without a trailing ".0" (SQLite and PostgreSQL print them differently),
// dates as YYYY-MM-DD, booleans as 1 and 0, no value as "".
func format(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(v)
}

func floatType(e store.Engine) string {
	if e == store.Postgres {
		return "DOUBLE PRECISION"
	}
	return "REAL"
}
