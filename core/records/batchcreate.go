package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// errRowByRow ends CreateMany's grouped attempt: something in the run
// (a validation failure, a refused insert) is answered by writing its
// creates one by one, as Save does, which names the request at fault.
var errRowByRow = errors.New("records: creates to be written one by one")

// Groupable reports whether in, a request of a batch on s's table, can be
// written by CreateMany together with its neighbours: a create with no
// plugin child rows (their id_link needs the parent's id first), outside
// a dry run (whose ids are handed out by the scope, row by row).
func Groupable(s *Scope, in *SaveInput) bool {
	return in.ID == 0 && len(in.Plugins) == 0 && !s.Table.IsPlugin && s.dry == nil
}

// CreateMany creates the records of ins (consecutive creates of one
// batch, each Groupable) with Save's rules and answers: ids[k] is the id
// of ins[k], fes[k] its validation failures; a failure that stops the
// batch is err, met at ins[failed]. hookErrs[k] are the field errors
// BeforeSaveMany gave for ins[k].
//
// The rows are validated first, then written with multi-row INSERTs (a
// few dozen rows per statement on SQLite, up to the parameter limit on
// PostgreSQL, where each statement is a round trip), which is what makes a
// batch of a thousand creates several times faster than one INSERT each:
// on SQLite, every statement on a table with a full-text index also
// flushes that index. The change log and history entries are the ones
// Save notes for each record.
//
// Whatever is not a clean run (a validation failure, a unique or foreign
// key violation, any error) is undone (a savepoint) and the creates are
// then written one by one with Save: the answer, errors included, is
// exactly the one-by-one answer; only the clean run takes the short way.
func (b *Batch) CreateMany(ctx context.Context, s *Scope, ins []*SaveInput, hookErrs [][]FieldError) (ids []int64, fes [][]FieldError, failed int, err error) {
	ids = make([]int64, len(ins))
	fes = make([][]FieldError, len(ins))
	if len(ins) > 1 && s.CanAdd() && !slices.ContainsFunc(hookErrs, func(e []FieldError) bool { return len(e) > 0 }) &&
		!slices.ContainsFunc(ins, func(in *SaveInput) bool { return !Groupable(s, in) }) {
		ts := b.scope(s)
		err := b.tx.Savepoint(ctx, "batch_creates", func() error { return ts.createRows(ctx, ins, ids) })
		switch {
		case err == nil:
			b.grouped += len(ids)
			for _, id := range ids {
				b.touch(ts, id, "create")
				b.written[lookupKey{table: s.Table.Name, id: fmt.Sprint(id)}] = true
			}
			return ids, fes, 0, nil
		case errors.Is(err, store.ErrSavepoint) || ctx.Err() != nil:
			// The transaction is lost: no row-by-row answer to give.
			return nil, nil, 0, err
		}
	}
	for k, in := range ins {
		id, f, err := b.Save(ctx, s, in, hookErrs[k])
		if err != nil {
			return nil, nil, k, err
		}
		ids[k], fes[k] = id, f
	}
	return ids, fes, 0, nil
}

// createRows is CreateMany's grouped attempt, inside its savepoint: it
// fills ids, or fails (errRowByRow when a row does not validate).
func (s *Scope) createRows(ctx context.Context, ins []*SaveInput, ids []int64) error {
	rows := make([]*prepared, len(ins))
	s.batch.uniqueLater = true
	for k, in := range ins {
		p, fes, err := prepareRow(ctx, s, s.Table, in.Core, in.forced, true, 0)
		if err != nil || len(fes) > 0 {
			s.batch.uniqueLater = false
			return errRowByRow
		}
		rows[k] = p
	}
	s.batch.uniqueLater = false
	if err := s.checkUnique(ctx, rows); err != nil {
		return err
	}
	if err := s.insertRows(ctx, s.Table, rows, ids); err != nil {
		return errors.Join(errRowByRow, err)
	}
	for k, in := range ins {
		if err := s.writeUnchecked(ctx, ids[k], in, nil); err != nil {
			return err
		}
		if err := s.logChange(ctx, ids[k], changes.Create); err != nil {
			return err
		}
	}
	return nil
}

// insertRows inserts rows into t as insertRow would one by one (with the
// caller as their creator) and puts their ids in ids, in rows' order.
// Consecutive rows with the same columns share a multi-row INSERT,
// chunked by RowsPerStatement.
func (s *Scope) insertRows(ctx context.Context, t *schema.Table, rows []*prepared, ids []int64) error {
	system := map[string]any{schema.ColCreator: s.creatorValue()}
	sysCols, sysVals := systemValues(t, system)
	for start := 0; start < len(rows); {
		cols := rows[start].cols
		if len(cols)+len(sysCols) == 0 {
			// DEFAULT VALUES has no multi-row form.
			id, err := s.insertRow(ctx, t, rows[start], system)
			if err != nil {
				return err
			}
			ids[start] = id
			start++
			continue
		}
		per := s.DB.Engine.RowsPerStatement(len(cols) + len(sysCols))
		end := start + 1
		for end < len(rows) && end-start < per && slices.Equal(rows[end].cols, cols) {
			end++
		}
		quoted := make([]string, 0, len(cols)+len(sysCols))
		for _, c := range cols {
			quoted = append(quoted, s.DB.Engine.Quote(c))
		}
		for _, c := range sysCols {
			quoted = append(quoted, s.DB.Engine.Quote(c))
		}
		mark := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(quoted)), ", ") + ")"
		args := make([]any, 0, (end-start)*len(quoted))
		for _, p := range rows[start:end] {
			args = append(append(args, p.vals...), sysVals...)
		}
		q := `INSERT INTO ` + s.DB.Qualify(t.Name) + ` (` + strings.Join(quoted, ", ") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(mark+", ", end-start), ", ") + ` RETURNING "id"`
		if err := s.insertChunk(ctx, q, args, ids[start:end]); err != nil {
			return fmt.Errorf("insert %d rows into %s: %w", end-start, t.Name, err)
		}
		start = end
	}
	return nil
}

// insertChunk runs q, a multi-row INSERT ... RETURNING "id", and puts the
// ids it answers in ids. It is a plain query, not a pipeline: on
// PostgreSQL a pipeline's failure is the transaction's for good, while a
// query's failure (a unique violation) can be rolled back to CreateMany's
// savepoint.
func (s *Scope) insertChunk(ctx context.Context, q string, args []any, ids []int64) error {
	rows, err := s.DB.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	got := make([]int64, 0, len(ids))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		got = append(got, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(got) != len(ids) {
		return fmt.Errorf("%d ids for %d rows", len(got), len(ids))
	}
	// Neither engine promises RETURNING's order, but both take the ids of
	// one statement's rows from the table's sequence in the order of its
	// VALUES: sorted, they are the rows' ids in order.
	slices.Sort(got)
	copy(ids, got)
	return nil
}

// checkUnique is checkInDB's unique rule for the rows of CreateMany, one
// query per unique field and statement-sized chunk rather than one per
// row (a round trip each on PostgreSQL): errRowByRow when a value is
// taken by a stored record or by two of the rows, and then the rows are
// written one by one, which answers which request broke the rule. Values
// are compared as stored (toDB), and empty ones are skipped, as checkInDB
// does.
func (s *Scope) checkUnique(ctx context.Context, rows []*prepared) error {
	for _, f := range s.Table.Fields {
		if !f.Unique {
			continue
		}
		var vals []any
		seen := map[any]bool{}
		for _, p := range rows {
			i := slices.Index(p.cols, f.Name)
			if i < 0 || p.vals[i] == nil || p.vals[i] == "" {
				continue
			}
			v := p.vals[i]
			switch v.(type) {
			case string, int64, float64, bool: // what toDB answers
			default:
				return errRowByRow // not a map key for sure: the careful way
			}
			if seen[v] {
				return errRowByRow
			}
			seen[v] = true
			vals = append(vals, v)
		}
		per := s.DB.Engine.RowsPerStatement(1)
		for start := 0; start < len(vals); start += per {
			chunk := vals[start:min(start+per, len(vals))]
			var n int
			err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+s.DB.Engine.Quote(f.Name)+
				` IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+`)`, chunk...).Scan(&n)
			if err != nil {
				return fmt.Errorf("check unique %s: %w", f.Name, err)
			}
			if n > 0 {
				return errRowByRow
			}
		}
	}
	return nil
}
