package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
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
	if len(ids) == 0 {
		return out, nil
	}
	acc, err := s.accessTo(ctx, t)
	if err != nil || !acc.Readable() {
		return out, err
	}
	col := labelColumn(t)
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	args := make([]any, len(ids), len(ids)+1)
	for i, id := range ids {
		args[i] = id
	}
	q := s.DB.Qualify(t.Name)
	where := q + `."id" IN (` + marks + `)`
	if acc.Restrict != nil && acc.Restrict.SQL != "" {
		where += ` AND (` + acc.Restrict.SQL + `)`
		args = append(args, acc.Restrict.Args...)
	}
	rows, err := s.DB.Query(ctx, `SELECT `+q+`."id", `+q+`.`+s.DB.Engine.Quote(col)+` FROM `+q+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("labels of %s: %w", t.Name, err)
	}
	defer rows.Close()
	dbt, _ := dbTypeOf(t, col)
	for rows.Next() {
		var id int64
		var v any
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		out[id] = labelText(fromDB(dbt, v))
	}
	return out, rows.Err()
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
