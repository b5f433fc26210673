package records

import (
	"context"
	"strconv"

	"github.com/strata-archaeo/strata/core/store"
)

// queueSyncRS queues the stratigraphic relations of a sync page's rows
// (tables with relations only): one query for the page's relations, then
// one for the labels of their other ends; each row's RS is then the
// record read's "rs" section (queueRS), oriented from the row.
func (s *Scope) queueSyncRS(ctx context.Context, p *store.Pipeline, ids []int64, byID map[int64]*SyncRow) func() {
	if !s.Table.RS {
		return func() {}
	}
	type rel struct{ id, first, second, r int64 }
	var rels []rel
	labels := map[int64]string{}
	in := marks(len(ids))
	args := append(append([]any{s.Table.Name}, int64Args(ids)...), int64Args(ids)...)
	p.Query("relations of a sync page of "+s.Table.Name, `SELECT id, first, second, relation FROM `+s.DB.Sys("rs")+
		` WHERE tb = ? AND (first IN (`+in+`) OR second IN (`+in+`)) ORDER BY id`, args, func(rows store.Rows) error {
		var ends []int64
		seen := map[int64]bool{}
		for rows.Next() {
			var x rel
			if err := rows.Scan(&x.id, &x.first, &x.second, &x.r); err != nil {
				return err
			}
			rels = append(rels, x)
			for _, e := range []int64{x.first, x.second} {
				if !seen[e] {
					seen[e] = true
					ends = append(ends, e)
				}
			}
		}
		if err := rows.Err(); err != nil || len(rels) == 0 {
			return err
		}
		return s.queueLabels(ctx, p, s.Table, ends, labels)
	})
	return func() {
		for _, r := range byID {
			r.RS = obj{}
		}
		for _, x := range rels {
			for _, from := range []int64{x.first, x.second} {
				row := byID[from]
				if row == nil {
					continue
				}
				first, second, code := x.first, x.second, x.r
				if second == from { // oriented from this row, as the read
					first, second, code = second, first, int64(InverseRelation(int(code)))
				}
				row.RS[strconv.FormatInt(x.id, 10)] = obj{"id": x.id, "first": first, "second": second, "relation": code,
					"relation_label": RelationNames[int(code)], "first_label": labelOf(labels, first), "second_label": labelOf(labels, second)}
			}
		}
	}
}
