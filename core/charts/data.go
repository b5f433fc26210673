// Package charts computes chart data (SPEC §4.6, CONTRACT §10): one SQL
// aggregate over the caller's rows of a table, grouped by one or two
// fields (dates by year, month or day), and keeps saved chart definitions.
package charts

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Definition is a chart as clients send it (BraDypUS's ChartDefinition,
// plus COUNT_DISTINCT, x2_field and date buckets). Style and other keys
// clients keep with it are stored, not read.
type Definition struct {
	Table     string          `json:"tb"`
	Type      string          `json:"type"`
	Field     string          `json:"field"`
	Function  string          `json:"function"`
	XField    string          `json:"x_field"`
	XBucket   string          `json:"x_bucket"` // year, month, day (date fields)
	X2Field   string          `json:"x2_field"`
	YField    string          `json:"y_field"`
	YFunction string          `json:"y_function"`
	Filter    json.RawMessage `json:"filter"`
	Search    string          `json:"search"`
}

// Chart types.
var types = []string{"metric", "bar", "line", "pie", "doughnut"}

// Functions are the aggregates.
var functions = []string{"COUNT", "COUNT_DISTINCT", "SUM", "AVG", "MIN", "MAX"}

var (
	ErrInvalid      = errs.New(errs.Invalid, "invalid_chart", "the chart definition is not valid")
	ErrInvalidField = errs.New(errs.Invalid, "invalid_field", "the chart names a field it cannot use")
)

// MaxGroups bounds the groups of an answer.
const MaxGroups = 1000

// Series is one line of a two-field grouping.
type Series struct {
	Label string    `json:"label"`
	Data  []float64 `json:"data"`
}

// Data is what a chart shows.
type Data struct {
	Type      string    `json:"type"`
	Value     *float64  `json:"value,omitempty"` // metric
	Label     string    `json:"label,omitempty"` // metric
	Labels    []string  `json:"labels,omitempty"`
	Data      []float64 `json:"data,omitempty"`
	Series    []Series  `json:"series,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
}

// Validate checks the definition's type and function names (fields are
// checked against the catalog by Compute).
func (d *Definition) Validate() error {
	d.Type = strings.ToLower(strings.TrimSpace(d.Type))
	if d.Type == "" {
		d.Type = "bar"
	}
	if !slices.Contains(types, d.Type) {
		return ErrInvalid.With("parameter", "type").With("detail", "one of "+strings.Join(types, ", "))
	}
	fn := &d.YFunction
	if d.Type == "metric" {
		fn = &d.Function
	}
	*fn = strings.ToUpper(strings.TrimSpace(*fn))
	if *fn == "" {
		*fn = "COUNT"
	}
	if !slices.Contains(functions, *fn) {
		return ErrInvalid.With("parameter", "function").With("detail", "one of "+strings.Join(functions, ", "))
	}
	if d.Type != "metric" && strings.TrimSpace(d.XField) == "" {
		return ErrInvalid.With("parameter", "x_field").With("detail", "a chart other than a metric groups by x_field")
	}
	switch d.XBucket {
	case "", "year", "month", "day":
	default:
		return ErrInvalid.With("parameter", "x_bucket").With("detail", "year, month or day")
	}
	return nil
}

// column is a field of sc's table the chart may read (id included).
func column(sc *records.Scope, name string) (*schema.Field, error) {
	if name == "" || name == schema.ColID {
		return &schema.Field{Name: schema.ColID, Label: "ID", DBType: schema.DBInt}, nil
	}
	f, ok := sc.Table.Field(name)
	if !ok {
		return nil, ErrInvalidField.With("field", name)
	}
	return f, nil
}

// Compute runs the chart over the rows of sc's table matching cond and
// the caller's row subset, in one query.
func Compute(ctx context.Context, sc *records.Scope, d *Definition, cond *records.Cond) (*Data, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	db := sc.DB
	tb := db.Qualify(sc.Table.Name)
	col := func(f *schema.Field) string { return tb + "." + db.Engine.Quote(f.Name) }
	fnName, yName := d.YFunction, d.YField
	if d.Type == "metric" {
		fnName, yName = d.Function, d.Field
	}
	yf, err := column(sc, yName)
	if err != nil {
		return nil, err
	}
	numeric := yf.DBType == schema.DBInt || yf.DBType == schema.DBFloat
	if (fnName == "SUM" || fnName == "AVG") && !numeric {
		return nil, ErrInvalidField.With("field", yf.Name).With("detail", fnName+" needs a number field")
	}
	if !numeric && fnName != "COUNT" && fnName != "COUNT_DISTINCT" {
		return nil, ErrInvalidField.With("field", yf.Name).With("detail", fnName+" needs a number field")
	}
	aggOf := func(v string) string {
		switch fnName {
		case "COUNT":
			return `COUNT(` + v + `)`
		case "COUNT_DISTINCT":
			return `COUNT(DISTINCT ` + v + `)`
		}
		return fnName + `(CAST(` + v + ` AS ` + floatType(db.Engine) + `))`
	}
	agg := aggOf(col(yf))
	where, args := sc.Where(cond)
	out := &Data{Type: d.Type}
	if d.Type == "metric" {
		var v *float64
		if err := db.QueryRow(ctx, `SELECT CAST(`+agg+` AS `+floatType(db.Engine)+`) FROM `+tb+` WHERE `+where, args...).Scan(&v); err != nil {
			return nil, fmt.Errorf("chart %s: %w", sc.Table.Name, err)
		}
		zero := 0.0
		if v == nil {
			v = &zero
		}
		out.Value, out.Label = v, fnName+" "+yf.Label
		return out, nil
	}
	xf, err := column(sc, d.XField)
	if err != nil {
		return nil, err
	}
	groupFields, buckets := []*schema.Field{xf}, []string{d.XBucket}
	if d.X2Field != "" {
		x2, err := column(sc, d.X2Field)
		if err != nil {
			return nil, err
		}
		groupFields, buckets = append(groupFields, x2), append(buckets, "")
	}
	// A lookup groups by the referenced record's label. The label is a
	// scalar subquery over the referenced table (records.LookupLabelSQL),
	// which may be this very table: the rows are read first in a derived
	// table (c), so the subquery's table name shadows nothing of them, and
	// grouped by their labels around it (g) — still one statement.
	keys, labels := make([]string, len(groupFields)), make([]string, len(groupFields))
	var labelArgs []any
	lookups := false
	for i, gf := range groupFields {
		k := fmt.Sprintf("k%d", i)
		keys[i] = groupExpr(db.Engine, col(gf), gf, buckets[i]) + ` AS ` + k
		labels[i] = `c.` + k + ` AS g` + strconv.Itoa(i)
		expr, largs, ok, err := sc.LookupLabelSQL(ctx, gf, `c.`+k)
		if err != nil {
			return nil, err
		}
		if ok {
			lookups = true
			keys[i] = col(gf) + ` AS ` + k
			labels[i] = `COALESCE(` + expr + `, CAST(c.` + k + ` AS TEXT)) AS g` + strconv.Itoa(i)
			labelArgs = append(labelArgs, largs...)
		}
	}
	var q string
	if lookups {
		gs := make([]string, len(groupFields))
		for i := range gs {
			gs[i] = `g.g` + strconv.Itoa(i)
		}
		group := strings.Join(gs, ", ")
		q = `SELECT ` + group + `, CAST(` + aggOf(`g.v`) + ` AS ` + floatType(db.Engine) + `) FROM (SELECT ` + strings.Join(labels, ", ") + `, c.v FROM (SELECT ` +
			strings.Join(keys, ", ") + `, ` + col(yf) + ` AS v FROM ` + tb + ` WHERE ` + where + `) AS c) AS g GROUP BY ` + group + ` ORDER BY ` + nullsFirst(gs) + ` LIMIT ?`
		args = append(labelArgs, args...)
	} else {
		groups := make([]string, len(groupFields))
		for i, gf := range groupFields {
			groups[i] = groupExpr(db.Engine, col(gf), gf, buckets[i])
		}
		group := strings.Join(groups, ", ")
		q = `SELECT ` + group + `, CAST(` + agg + ` AS ` + floatType(db.Engine) + `) FROM ` + tb + ` WHERE ` + where +
			` GROUP BY ` + group + ` ORDER BY ` + nullsFirst(groups) + ` LIMIT ?`
	}
	rows, err := db.Query(ctx, q, append(args, MaxGroups+1)...)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", sc.Table.Name, err)
	}
	defer rows.Close()
	out.Labels, out.Data = []string{}, []float64{}
	idx := map[string]int{}
	series := map[string]*Series{}
	var order []string
	n := 0
	for rows.Next() {
		if n++; n > MaxGroups {
			out.Truncated = true
			break
		}
		var x, x2 *string
		var v *float64
		dest := []any{&x, &v}
		if d.X2Field != "" {
			dest = []any{&x, &x2, &v}
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		label, val := text(x), 0.0
		if v != nil {
			val = *v
		}
		if d.X2Field == "" {
			out.Labels, out.Data = append(out.Labels, label), append(out.Data, val)
			continue
		}
		i, ok := idx[label]
		if !ok {
			i = len(out.Labels)
			idx[label] = i
			out.Labels = append(out.Labels, label)
			for _, s := range series {
				s.Data = append(s.Data, 0)
			}
		}
		sl := text(x2)
		s, ok := series[sl]
		if !ok {
			s = &Series{Label: sl, Data: make([]float64, len(out.Labels))}
			series[sl] = s
			order = append(order, sl)
		}
		for len(s.Data) < len(out.Labels) {
			s.Data = append(s.Data, 0)
		}
		s.Data[i] = val
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if d.X2Field != "" {
		out.Data = nil
		out.Series = []Series{}
		for _, l := range order {
			s := series[l]
			for len(s.Data) < len(out.Labels) {
				s.Data = append(s.Data, 0)
			}
			out.Series = append(out.Series, *s)
		}
	}
	return out, nil
}

// nullsFirst orders by the groups with the empty group first on both
// engines (PostgreSQL sorts NULL last by default, SQLite first).
func nullsFirst(groups []string) string {
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g + ` NULLS FIRST`
	}
	return strings.Join(out, ", ")
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func floatType(e store.Engine) string {
	if e == store.Postgres {
		return "DOUBLE PRECISION"
	}
	return "REAL"
}

// groupExpr is a grouping column as text; dates bucketed.
func groupExpr(e store.Engine, col string, f *schema.Field, bucket string) string {
	if f.DBType == schema.DBDate && bucket != "" {
		if e == store.Postgres {
			format := map[string]string{"year": "YYYY", "month": "YYYY-MM", "day": "YYYY-MM-DD"}[bucket]
			return `to_char(` + col + `, '` + format + `')`
		}
		format := map[string]string{"year": "%Y", "month": "%Y-%m", "day": "%Y-%m-%d"}[bucket]
		return `strftime('` + format + `', ` + col + `)`
	}
	return `CAST(` + col + ` AS TEXT)`
}
