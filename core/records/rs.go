package records

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Stratigraphic relation codes (CONTRACT §5): 1 is covered by, 2 is cut by,
// 3 carries, 4 is filled by, 5 covers, 6 cuts, 7 leans against, 8 fills,
// 9 is the same as, 10 is bound to.
var RelationNames = map[int]string{1: "is covered by", 2: "is cut by", 3: "carries", 4: "is filled by",
	5: "covers", 6: "cuts", 7: "leans against", 8: "fills", 9: "is the same as", 10: "is bound to"}

// InverseRelation returns the relation seen from the other record.
func InverseRelation(r int) int {
	switch {
	case r >= 1 && r <= 4:
		return r + 4
	case r >= 5 && r <= 8:
		return r - 4
	}
	return r // 9 and 10 are symmetric
}

var (
	ErrRSNotEnabled     = errs.New(errs.Invalid, "rs_not_enabled", "stratigraphic relations are not enabled on this table")
	ErrInvalidRelation  = errs.New(errs.Invalid, "invalid_relation", "relation is a code from 1 to 10")
	ErrSelfRelation     = errs.New(errs.Invalid, "self_relation", "a record cannot be related to itself")
	ErrRelationExists   = errs.New(errs.Conflict, "relation_already_exist", "these records are already related")
	ErrRelationNotFound = errs.New(errs.NotFound, "relation_not_found", "no such relation")
)

// AddRelation stores (first, relation, second) on the table. The pair is
// kept once, normalised so first < second, which makes a relation in either
// direction a duplicate. Both records must exist and be visible to the
// caller, who must be allowed to edit the first. On a strict table a
// relation that would close a cycle of above/below is refused
// (ErrRSCycle, with the path).
func AddRelation(ctx context.Context, s *Scope, first, relation, second int64) (int64, error) {
	if !s.Table.RS {
		return 0, ErrRSNotEnabled
	}
	if relation < 1 || relation > 10 {
		return 0, ErrInvalidRelation
	}
	if first == second {
		return 0, ErrSelfRelation
	}
	var id int64
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		// The two rows are locked in id order: two saves of one pair
		// from either side (on PostgreSQL, FOR UPDATE) would otherwise
		// wait on each other's first lock.
		creators, lockErrs := map[int64]*int64{}, map[int64]error{}
		for _, id := range []int64{min(first, second), max(first, second)} {
			creator, err := ts.lockRow(ctx, id)
			var e *errs.Error
			if err != nil && !errors.As(err, &e) {
				return err
			}
			creators[id], lockErrs[id] = creator, err
		}
		if err := lockErrs[first]; err != nil {
			return err.(*errs.Error).With("id", first)
		}
		if !ts.CanEdit(creators[first]) {
			return ErrNotEnough.With("reason", "not_your_record")
		}
		if err := lockErrs[second]; err != nil {
			return err.(*errs.Error).With("id", second)
		}
		a, b, r := first, second, int(relation)
		if a > b {
			a, b, r = b, a, InverseRelation(r)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("rs")+` WHERE tb = ? AND first = ? AND second = ?`, s.Table.Name, a, b).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrRelationExists
		}
		// On a strict table the relation must not close a cycle: checked
		// under the table's relation lock, taken after the rows' locks
		// (the order every relation write takes them in: its trigger
		// updates the same catalog row last).
		var wrote func() error
		if s.Table.RSStrict {
			w, err := ts.strictCheck(ctx, tx, a, r, b)
			if err != nil {
				return err
			}
			wrote = w
		}
		if err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("rs")+` (tb, first, second, relation, creator, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			s.Table.Name, a, b, r, ts.creatorValue(), ts.now()).Scan(&id); err != nil {
			return err
		}
		if wrote != nil {
			if err := wrote(); err != nil {
				return err
			}
		}
		// The relation is in both records' rs sections: an update of each.
		if err := ts.logChange(ctx, first, changes.Update); err != nil {
			return err
		}
		return ts.logChange(ctx, second, changes.Update)
	})
	if err != nil && containsAny(err.Error(), "UNIQUE constraint failed", "SQLSTATE 23505") {
		return 0, ErrRelationExists
	}
	return id, err
}

// DeleteRelation removes a relation of table tb by id; the caller must be
// allowed to edit one of its two records.
func DeleteRelation(ctx context.Context, s *Scope, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.DB) error {
		var first, second int64
		err := tx.QueryRow(ctx, `SELECT first, second FROM `+tx.Sys("rs")+` WHERE id = ? AND tb = ?`, id, s.Table.Name).Scan(&first, &second)
		if isNoRows(err) {
			return ErrRelationNotFound
		}
		if err != nil {
			return err
		}
		ts := *s
		ts.DB = tx
		allowed := false
		for _, rec := range []int64{first, second} {
			if creator, err := ts.lockRow(ctx, rec); err == nil && ts.CanEdit(creator) {
				allowed = true
			} else if err != nil && !errors.Is(err, ErrRecordNotFound) {
				return err
			}
		}
		if !allowed {
			return ErrNotEnough.With("reason", "not_your_record")
		}
		if _, err = tx.Exec(ctx, `DELETE FROM `+tx.Sys("rs")+` WHERE id = ?`, id); err != nil {
			return err
		}
		// An update of both records (their rs sections), also of one
		// outside the caller's rows: others may see it. (One deleted gives
		// nothing: its subscribers were told of the delete.)
		for _, rec := range []int64{first, second} {
			if err := ts.logChange(ctx, rec, changes.Update); err != nil {
				return err
			}
		}
		return nil
	})
}

// RelationTable returns the table a relation id belongs to.
func RelationTable(ctx context.Context, db *store.DB, id int64) (string, error) {
	var tb string
	err := db.QueryRow(ctx, `SELECT tb FROM `+db.Sys("rs")+` WHERE id = ?`, id).Scan(&tb)
	if isNoRows(err) {
		return "", ErrRelationNotFound
	}
	return tb, err
}

// queueRS queues the record's relations, each oriented from this record
// (first = the record), with both labels, in two queries (two rounds);
// finish gives the section once the pipeline has run.
func (s *Scope) queueRS(ctx context.Context, p *store.Pipeline, id int64) (finish func() obj) {
	type rel struct{ id, first, second, r int64 }
	var rels []rel
	labels := map[int64]string{}
	p.Query(fmt.Sprintf("relations of %s %d", s.Table.Name, id), `SELECT id, first, second, relation FROM `+s.DB.Sys("rs")+
		` WHERE tb = ? AND (first = ? OR second = ?) ORDER BY id`, []any{s.Table.Name, id, id}, func(rows store.Rows) error {
		ids := []int64{id}
		for rows.Next() {
			var x rel
			if err := rows.Scan(&x.id, &x.first, &x.second, &x.r); err != nil {
				return err
			}
			if x.second == id { // orient from this record
				x.first, x.second, x.r = x.second, x.first, int64(InverseRelation(int(x.r)))
			}
			rels = append(rels, x)
			ids = append(ids, x.second)
		}
		if err := rows.Err(); err != nil || len(rels) == 0 {
			return err
		}
		return s.queueLabels(ctx, p, s.Table, ids, labels)
	})
	return func() obj {
		out := obj{}
		for _, x := range rels {
			out[strconv.FormatInt(x.id, 10)] = obj{"id": x.id, "first": x.first, "second": x.second, "relation": x.r,
				"relation_label": RelationNames[int(x.r)], "first_label": labelOf(labels, x.first), "second_label": labelOf(labels, x.second)}
		}
		return out
	}
}

// Matrix returns the nodes and relations of a table's stratigraphy, for
// building a Harris matrix on the client: every record of the table the
// caller may read is a node (as BraDypUS answers: a unit without
// relations yet is still part of the matrix), with its dating
// (chrono_from, chrono_to, chrono_label) where chronology is active.
func Matrix(ctx context.Context, s *Scope) (obj, error) {
	if !s.Table.RS {
		return nil, ErrRSNotEnabled
	}
	where, args := s.where(nil)
	label := labelColumn(s.Table)
	dbt, _ := dbTypeOf(s.Table, label)
	cols := []string{`"id"`, s.DB.Engine.Quote(label)}
	var chrono []*schema.Field
	if s.Table.Active(schema.ChronologyFeature) {
		for _, name := range []string{"chrono_from", "chrono_to", "chrono_label"} {
			if f, ok := s.Table.Field(name); ok {
				chrono = append(chrono, f)
				cols = append(cols, s.DB.Engine.Quote(f.Name))
			}
		}
	}
	rows, err := s.DB.Query(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where+
		` ORDER BY "id"`, args...)
	if err != nil {
		return nil, err
	}
	nodes := []obj{}
	visible := map[int64]bool{}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return nil, err
		}
		id := fromDB(schema.DBInt, vals[0]).(int64)
		visible[id] = true
		node := obj{"id": id, "label": labelText(fromDB(dbt, vals[1]))}
		for i, f := range chrono {
			node[f.Name] = fromDB(f.DBType, vals[2+i])
		}
		nodes = append(nodes, node)
	}
	rows.Close()
	rrows, err := s.DB.Query(ctx, `SELECT id, first, second, relation FROM `+s.DB.Sys("rs")+` WHERE tb = ? ORDER BY id`, s.Table.Name)
	if err != nil {
		return nil, err
	}
	defer rrows.Close()
	relations := []obj{}
	for rrows.Next() {
		var id, a, b, r int64
		if err := rrows.Scan(&id, &a, &b, &r); err != nil {
			return nil, err
		}
		if visible[a] && visible[b] { // never reveal rows outside the caller's subset
			relations = append(relations, obj{"id": id, "first": a, "second": b, "relation": r})
		}
	}
	if err := rrows.Err(); err != nil {
		return nil, err
	}
	// has_chronology: whether the chronology feature is active on the
	// table, so a client can offer dating next to the matrix.
	return obj{"nodes": nodes, "relations": relations, "has_chronology": s.Table.Active(schema.ChronologyFeature)}, nil
}
