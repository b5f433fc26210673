package records

import (
	"context"
	"errors"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// The matrix check's reading and its one fix (issue 33, core/rscheck).
// They live here, beside AddRelation, because every read and write of a
// user table goes through the Scope: the check sees exactly the records
// the caller may read, and the fix takes AddRelation's locks and checks.

// CheckUnit is one record of the table as the matrix check sees it.
type CheckUnit struct {
	ID    int64
	Label string
	// ChronoFrom and ChronoTo are the chronology plugin's dating (signed
	// years, no year 0; nil: open or undated), when the feature is active.
	ChronoFrom, ChronoTo *int64
}

// CheckRelation is a row of the table's relations as stored (first,
// relation, second: not oriented).
type CheckRelation struct {
	ID, First, Second int64
	Relation          int
}

// CheckDangling is a relation one or both of whose records no longer
// exist; Missing are those.
type CheckDangling struct {
	CheckRelation
	Missing []int64
}

// CheckDate is a radiocarbon date of a unit: its 2σ calibrated range in
// cal BP (from ≤ to, so To is the older end).
type CheckDate struct {
	ID, Unit         int64
	LabCode          string
	Cal2From, Cal2To int64
}

// MatrixCheck is what the check reads of a table, as far as the caller
// may see it.
type MatrixCheck struct {
	Units []CheckUnit // ordered by id
	// Relations are those whose two records the caller may read.
	Relations []CheckRelation
	// Dangling are the relations to records that no longer exist whose
	// other record (if any) the caller may read; one both of whose records
	// are gone only when the caller sees the whole table (a row subset
	// cannot say whose it was).
	Dangling []CheckDangling
	// Dates are the radiocarbon dates of readable units with both 2σ bounds.
	Dates          []CheckDate
	HasChronology  bool
	HasRadiocarbon bool
}

// RadiocarbonFeature is the radiocarbon plugin's feature; its child table
// holds cal_2s_from and cal_2s_to.
const RadiocarbonFeature = "radiocarbon"

// ReadMatrixCheck reads the table's units, relations and dating for the
// matrix check. A relation to a record hidden from the caller (outside
// their row subset) is left out entirely, so the report reveals neither
// its label nor that it exists.
func ReadMatrixCheck(ctx context.Context, s *Scope) (*MatrixCheck, error) {
	if !s.Table.RS {
		return nil, ErrRSNotEnabled
	}
	out := &MatrixCheck{HasChronology: s.Table.Active(schema.ChronologyFeature)}
	where, args := s.where(nil)
	label := labelColumn(s.Table)
	dbt, _ := dbTypeOf(s.Table, label)
	cols := []string{`"id"`, s.DB.Engine.Quote(label)}
	var chrono []*schema.Field
	if out.HasChronology {
		for _, name := range []string{"chrono_from", "chrono_to"} {
			f, ok := s.Table.Field(name)
			if !ok {
				chrono = nil
				break
			}
			chrono = append(chrono, f)
		}
		for _, f := range chrono {
			cols = append(cols, s.DB.Engine.Quote(f.Name))
		}
		out.HasChronology = len(chrono) == 2
	}
	rows, err := s.DB.Query(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where+` ORDER BY "id"`, args...)
	if err != nil {
		return nil, err
	}
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
		u := CheckUnit{ID: fromDB(schema.DBInt, vals[0]).(int64), Label: labelText(fromDB(dbt, vals[1]))}
		if len(chrono) == 2 {
			u.ChronoFrom, u.ChronoTo = intOrNil(vals[2]), intOrNil(vals[3])
		}
		visible[u.ID] = true
		out.Units = append(out.Units, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Existence, not visibility, tells a dangling relation from one to a
	// hidden record: with a row subset the table's ids are read once,
	// never shown.
	exists := visible
	if s.Restrict != nil {
		exists = map[int64]bool{}
		ids, err := s.DB.Query(ctx, `SELECT "id" FROM `+s.DB.Qualify(s.Table.Name))
		if err != nil {
			return nil, err
		}
		for ids.Next() {
			var id int64
			if err := ids.Scan(&id); err != nil {
				ids.Close()
				return nil, err
			}
			exists[id] = true
		}
		ids.Close()
		if err := ids.Err(); err != nil {
			return nil, err
		}
	}
	rrows, err := s.DB.Query(ctx, `SELECT id, first, second, relation FROM `+s.DB.Sys("rs")+` WHERE tb = ? ORDER BY id`, s.Table.Name)
	if err != nil {
		return nil, err
	}
	for rrows.Next() {
		var r CheckRelation
		if err := rrows.Scan(&r.ID, &r.First, &r.Second, &r.Relation); err != nil {
			rrows.Close()
			return nil, err
		}
		if visible[r.First] && visible[r.Second] {
			out.Relations = append(out.Relations, r)
			continue
		}
		var missing []int64
		hidden, seen := false, false
		for _, end := range []int64{r.First, r.Second} {
			switch {
			case visible[end]:
				seen = true
			case exists[end]:
				hidden = true
			default:
				missing = append(missing, end)
			}
		}
		if !hidden && (seen || s.Restrict == nil) {
			out.Dangling = append(out.Dangling, CheckDangling{CheckRelation: r, Missing: missing})
		}
	}
	rrows.Close()
	if err := rrows.Err(); err != nil {
		return nil, err
	}
	if err := s.readCheckDates(ctx, out, visible); err != nil {
		return nil, err
	}
	return out, nil
}

// readCheckDates reads the radiocarbon dates of the visible units, when
// the feature is active and its child table has the calibrated ranges.
func (s *Scope) readCheckDates(ctx context.Context, out *MatrixCheck, visible map[int64]bool) error {
	if !s.Table.Active(RadiocarbonFeature) {
		return nil
	}
	child, ok := s.Catalog.Table(s.Table.Features[RadiocarbonFeature].ChildTable)
	if !ok {
		return nil
	}
	for _, name := range []string{"cal_2s_from", "cal_2s_to"} {
		if _, ok := child.Field(name); !ok {
			return nil
		}
	}
	out.HasRadiocarbon = true
	lab := "NULL"
	if _, ok := child.Field("lab_code"); ok {
		lab = s.DB.Engine.Quote("lab_code")
	}
	q := s.DB.Engine.Quote
	rows, err := s.DB.Query(ctx, `SELECT "id", `+q(schema.ColIDLink)+`, `+lab+`, `+q("cal_2s_from")+`, `+q("cal_2s_to")+
		` FROM `+s.DB.Qualify(child.Name)+` WHERE `+q("cal_2s_from")+` IS NOT NULL AND `+q("cal_2s_to")+` IS NOT NULL ORDER BY "id"`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, unit, from, to, labv any
		if err := rows.Scan(&id, &unit, &labv, &from, &to); err != nil {
			return err
		}
		d := CheckDate{ID: fromDB(schema.DBInt, id).(int64), LabCode: labelText(fromDB(schema.DBText, labv))}
		u, f, t := intOrNil(unit), intOrNil(from), intOrNil(to)
		if u == nil || f == nil || t == nil || !visible[*u] {
			continue // a date of a hidden unit says nothing to this caller
		}
		d.Unit, d.Cal2From, d.Cal2To = *u, min(*f, *t), max(*f, *t)
		out.Dates = append(out.Dates, d)
	}
	return rows.Err()
}

// intOrNil reads an integer column of either engine.
func intOrNil(v any) *int64 {
	if x, ok := fromDB(schema.DBInt, v).(int64); ok {
		return &x
	}
	return nil
}

// AddReciprocals adds, for each relation id of the table, the row of the
// other direction (second, inverse(relation), first) that a table adopted
// from BraDypUS keeps beside each relation: the matrix check's one fix.
// All or none, in one transaction, with AddRelation's locks and checks:
// both records must exist and be visible to the caller, who must be
// allowed to edit the new row's first record (the relation's second); a
// reciprocal already there is ErrRelationExists. A relation of another
// table, or one with a record the caller cannot see, is
// ErrRelationNotFound (which of its records is hidden is not said). It
// returns the new rows' ids, in the order given.
func AddReciprocals(ctx context.Context, s *Scope, ids []int64) ([]int64, error) {
	if !s.Table.RS {
		return nil, ErrRSNotEnabled
	}
	var out []int64
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		for _, id := range ids {
			var first, second int64
			var r int
			err := tx.QueryRow(ctx, `SELECT first, second, relation FROM `+tx.Sys("rs")+` WHERE id = ? AND tb = ?`, id, s.Table.Name).Scan(&first, &second, &r)
			if isNoRows(err) {
				return ErrRelationNotFound.With("id", id)
			}
			if err != nil {
				return err
			}
			creator, err := ts.lockRow(ctx, second) // the new row's first
			if errors.Is(err, ErrRecordNotFound) {
				return ErrRelationNotFound.With("id", id)
			}
			if err != nil {
				return err
			}
			if _, err := ts.lockRow(ctx, first); errors.Is(err, ErrRecordNotFound) {
				return ErrRelationNotFound.With("id", id)
			} else if err != nil {
				return err
			}
			if !ts.CanEdit(creator) {
				return ErrNotEnough.With("reason", "not_your_record")
			}
			a, b, inv := second, first, InverseRelation(r)
			var n int
			if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("rs")+` WHERE tb = ? AND first = ? AND second = ?`, s.Table.Name, a, b).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return ErrRelationExists.With("id", id)
			}
			var nid int64
			if err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("rs")+` (tb, first, second, relation, creator, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
				s.Table.Name, a, b, inv, ts.creatorValue(), ts.now()).Scan(&nid); err != nil {
				return err
			}
			out = append(out, nid)
			// The relation is in both records' rs sections: an update of each.
			if err := ts.logChange(ctx, a, changes.Update); err != nil {
				return err
			}
			if err := ts.logChange(ctx, b, changes.Update); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && containsAny(err.Error(), "UNIQUE constraint failed", "SQLSTATE 23505") {
		return nil, ErrRelationExists
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
