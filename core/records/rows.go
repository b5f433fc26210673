package records

import (
	"context"
	"fmt"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/schema"
)

// Holds reports whether the record exists within the caller's rows of the
// scope's table (areas outside records, such as files, ask it before
// showing what is attached to a record).
func (s *Scope) Holds(ctx context.Context, id int64) (bool, error) {
	if id <= 0 || !auth.Read.Allows(s.Level) {
		return false, nil
	}
	where, args := s.where(&Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}})
	var n int
	if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where, args...).Scan(&n); err != nil {
		return false, fmt.Errorf("read %s %d: %w", s.Table.Name, id, err)
	}
	return n > 0, nil
}

// Editable checks that the record exists within the caller's rows and that
// the caller may change it (edit level on the table; a self_writer only
// its own records): ErrRecordNotFound or ErrNotEnough otherwise.
func (s *Scope) Editable(ctx context.Context, id int64) error {
	if !auth.Edit.Allows(s.Level) {
		return ErrNotEnough.With("required", auth.Edit.String())
	}
	creator, err := s.lockRow(ctx, id)
	if err != nil {
		return err
	}
	if !s.CanEdit(creator) {
		return ErrNotEnough.With("reason", "not_your_record")
	}
	return nil
}

// RowsSQL is a subquery selecting the ids of the caller's rows of the
// scope's table (every row when it has no subset), with its arguments.
func (s *Scope) RowsSQL() (string, []any) {
	where, args := s.where(nil)
	return `SELECT ` + s.column(schema.ColID) + ` FROM ` + s.DB.Qualify(s.Table.Name) + ` WHERE ` + where, args
}
