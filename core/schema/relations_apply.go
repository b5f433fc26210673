package schema

import (
	"context"
	"errors"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// ConstraintReport is what ApplyConstraints did. Applied counts the
// constraints added now, AlreadyEnforced those already present; Skipped
// counts the relations the engine could enforce but whose constraint could
// not be added (Errors says why: orphan rows or the database's refusal).
// NotEnforced lists the relations the engine cannot enforce at all, with
// the reason (see the NotEnforced* values).
type ConstraintReport struct {
	Applied         int              `json:"applied"`
	AlreadyEnforced int              `json:"already_enforced"`
	Skipped         int              `json:"skipped"`
	Errors          []ConstraintNote `json:"errors"`
	NotEnforced     []ConstraintNote `json:"not_enforced"`
}

// ConstraintNote names one relation that is not a constraint, and why.
type ConstraintNote struct {
	ID      int64  `json:"id"`
	FromTb  string `json:"from_tb"`
	FromCol string `json:"from_col"`
	ToTb    string `json:"to_tb"`
	ToCol   string `json:"to_col"`
	Reason  string `json:"reason"`
	Orphans int64  `json:"orphans,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Reasons of ConstraintReport.Errors.
const (
	ApplyOrphans = "orphans_found"
	ApplyRefused = "database_refused"
)

// ApplyConstraints adds the missing constraints of the recorded relations
// (POST /config/apply-constraints), each in its own transaction so that
// one refusal does not undo the others. A relation with rows whose from_col
// names no row of to_tb is skipped with the number of such rows. Relations
// the engine cannot enforce (SQLite; to_col without a unique index; lookups
// not recorded) are listed in NotEnforced and left as they are.
func ApplyConstraints(ctx context.Context, db *store.DB) (*ConstraintReport, error) {
	rels, err := ListAllRelations(ctx, db)
	if err != nil {
		return nil, err
	}
	rep := &ConstraintReport{Errors: []ConstraintNote{}, NotEnforced: []ConstraintNote{}}
	for _, r := range rels {
		switch r.NotEnforced {
		case "":
			rep.AlreadyEnforced++
			continue
		case NotEnforcedMissing:
		default:
			rep.NotEnforced = append(rep.NotEnforced, noteOf(r, r.NotEnforced))
			continue
		}
		err := change(ctx, db, func(tx *store.DB, st *state) error {
			cur, ok := st.relation(r.ID)
			if !ok { // removed meanwhile
				return nil
			}
			if err := checkRelationData(ctx, tx, cur); err != nil {
				return err
			}
			return enforce(ctx, tx, st, cur)
		})
		var e *errs.Error
		switch {
		case err == nil:
			rep.Applied++
		case errors.Is(err, ErrRelationViolated):
			note := noteOf(r, ApplyOrphans)
			if errors.As(err, &e) {
				note.Orphans, _ = e.Extra["count"].(int64)
			}
			rep.Skipped++
			rep.Errors = append(rep.Errors, note)
		case ctx.Err() != nil:
			return nil, err
		default:
			note := noteOf(r, ApplyRefused)
			note.Detail = err.Error()
			rep.Skipped++
			rep.Errors = append(rep.Errors, note)
		}
	}
	return rep, nil
}

func noteOf(r *Relation, reason string) ConstraintNote {
	return ConstraintNote{ID: r.ID, FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol, Reason: reason}
}
