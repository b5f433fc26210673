package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// labelColumn is the column that names a record of t in links and lookups:
// its configured id_field, else id.
func labelColumn(t *schema.Table) string {
	if t.IDField != "" {
		if _, ok := t.Field(t.IDField); ok {
			return t.IDField
		}
	}
	return schema.ColID
}

// IDFieldOf is the id_field of t as clients see it (falls back to id).
func IDFieldOf(t *schema.Table) string { return labelColumn(t) }

// labels returns the display label of each id of table t, in one query,
// as far as the caller may read t: ids outside its privilege or row subset
// there (and ids that do not exist) have no label.
func (s *Scope) labels(ctx context.Context, t *schema.Table, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	p := s.DB.Pipeline()
	if err := s.queueLabels(ctx, p, t, ids, out); err != nil {
		return out, err
	}
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// queueLabels queues the query of labels: into gets the label of each id
// of t the caller may see.
func (s *Scope) queueLabels(ctx context.Context, p *store.Pipeline, t *schema.Table, ids []int64, into map[int64]string) error {
	if len(ids) == 0 {
		return nil
	}
	acc, err := s.accessTo(ctx, t)
	if err != nil || !acc.Readable() {
		return err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	args := make([]any, len(ids), len(ids)+1)
	for i, id := range ids {
		args[i] = id
	}
	s.queueLabelQuery(p, t, acc, s.DB.Qualify(t.Name)+`."id" IN (`+marks+`)`, args, into)
	return nil
}

// queueLabelQuery queues the labels of t's records matching where, within
// the caller's rows there (acc), into into.
func (s *Scope) queueLabelQuery(p *store.Pipeline, t *schema.Table, acc TableAccess, where string, args []any, into map[int64]string) {
	q, col := s.DB.Qualify(t.Name), labelColumn(t)
	if acc.Restrict != nil && acc.Restrict.SQL != "" {
		where += ` AND (` + acc.Restrict.SQL + `)`
		args = append(args, acc.Restrict.Args...)
	}
	dbt, _ := dbTypeOf(t, col)
	p.Query("labels of "+t.Name, `SELECT `+q+`."id", `+q+`.`+s.DB.Engine.Quote(col)+` FROM `+q+` WHERE `+where, args, func(rows store.Rows) error {
		for rows.Next() {
			var id int64
			var v any
			if err := rows.Scan(&id, &v); err != nil {
				return err
			}
			into[id] = labelText(fromDB(dbt, v))
		}
		return rows.Err()
	})
}

// queueLookupLabels queues the labels of the records of ref that record
// id of the scope's table points at through its lookup fields cols, in
// one query that finds the ids itself: it needs nothing read before, so
// it goes in the record's own round trip. Its answer is taken at its own
// snapshot, so the caller checks it against the ids the record showed
// (rowLookups.finish). Labels follow the caller's access to ref, as in
// labels.
func (s *Scope) queueLookupLabels(ctx context.Context, p *store.Pipeline, id int64, ref *schema.Table, cols []string, into map[int64]string) error {
	acc, err := s.accessTo(ctx, ref)
	if err != nil || !acc.Readable() {
		return err
	}
	q, own := s.DB.Qualify(ref.Name), s.DB.Qualify(s.Table.Name)
	// The record's table is aliased: it may be ref itself.
	ids := make([]string, len(cols))
	args := make([]any, 0, len(cols)+1)
	for i, c := range cols {
		ids[i] = `SELECT lk.` + s.DB.Engine.Quote(c) + ` FROM ` + own + ` AS lk WHERE lk."id" = ?`
		args = append(args, id)
	}
	s.queueLabelQuery(p, ref, acc, q+`."id" IN (`+strings.Join(ids, ` UNION ALL `)+`)`, args, into)
	return nil
}

// labelOf is the label of id in labels, or nil (JSON null) when the caller
// may not see it.
func labelOf(labels map[int64]string, id int64) any {
	if l, ok := labels[id]; ok {
		return l
	}
	return nil
}

func labelText(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// LookupLabelSQL is, for a lookup field f of the scope's table, an SQL
// expression giving, for the referenced id that the expression key
// yields, the referenced record's label as text (its table's id_field),
// as far as the caller may read that record — the label a read of the
// record shows — else NULL; args are its bound values, in order. It is a
// scalar subquery over the referenced table by its own name, so key must
// not name that table: a chart reads the keys from a derived table. ok is
// false for a field that is not a lookup, or one of a table the catalog
// no longer has.
func (s *Scope) LookupLabelSQL(ctx context.Context, f *schema.Field, key string) (expr string, args []any, ok bool, err error) {
	if f.IDFromTb == "" {
		return "", nil, false, nil
	}
	ref, found := s.Catalog.Table(f.IDFromTb)
	if !found {
		return "", nil, false, nil
	}
	acc, err := s.accessTo(ctx, ref)
	if err != nil {
		return "", nil, false, err
	}
	if !acc.Readable() {
		return "NULL", nil, true, nil
	}
	q := s.DB.Qualify(ref.Name)
	where := q + `."id" = ` + key
	if acc.Restrict != nil && acc.Restrict.SQL != "" {
		where += ` AND (` + acc.Restrict.SQL + `)`
		args = append(args, acc.Restrict.Args...)
	}
	return `(SELECT CAST(` + q + `.` + s.DB.Engine.Quote(labelColumn(ref)) + ` AS TEXT) FROM ` + q + ` WHERE ` + where + `)`, args, true, nil
}
