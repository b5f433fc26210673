package records

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/schema"
)

// logChange notes a change of record id of the scope's table in the app's
// change log (core/changes), written in the transaction's commit: every
// write path of this package calls it once per record it changed. A dry
// run's transaction rolls back, and its entry with it.
func (s *Scope) logChange(ctx context.Context, id int64, op changes.Op) error {
	return changes.Record(ctx, s.DB, changes.Entry{Table: s.Table.Name, RecordID: id, Op: op,
		UserID: s.actorUserID(), Actor: s.actorName()})
}

func (s *Scope) actorUserID() int64 {
	if s.Actor == nil {
		return 0
	}
	return s.Actor.UserID
}

// actorName names who made a change when no user did: a plugin's system
// save, or an API key.
func (s *Scope) actorName() string {
	switch {
	case s.SystemActor != "":
		return s.SystemActor
	case s.Actor != nil && s.Actor.KeyID != 0:
		return "key:" + strconv.FormatInt(s.Actor.KeyID, 10)
	}
	return ""
}

// LogChange notes, in tx's transaction, a change of record id of table
// made by actor outside this package's save paths (a file link, geodata
// saved on its own): it is an update of the record.
func LogChange(ctx context.Context, s *Scope, id int64) error {
	return s.logChange(ctx, id, changes.Update)
}

// Matches reports whether record id is one of the scope's rows matching
// cond (nil: any of its rows): whether a list of the table as the scope's
// caller, with that filter, would show it. Realtime decides with it
// whether a change moved a row into or out of a subscription.
func Matches(ctx context.Context, s *Scope, id int64, cond *Cond) (bool, error) {
	where, args := s.where(andID(s, id, cond))
	var n int
	err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where, args...).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("match %s %d: %w", s.Table.Name, id, err)
	}
	return n > 0, nil
}

// MatchingIDs lists up to limit ids of the scope's rows matching cond, and
// whether there were more.
func MatchingIDs(ctx context.Context, s *Scope, cond *Cond, limit int) (ids []int64, more bool, err error) {
	where, args := s.where(cond)
	rows, err := s.DB.Query(ctx, `SELECT `+s.column(schema.ColID)+` FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where+` LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, false, err
		}
		ids = append(ids, id)
	}
	if len(ids) > limit {
		return ids[:limit], true, rows.Err()
	}
	return ids, false, rows.Err()
}

// andID is cond restricted to record id.
func andID(s *Scope, id int64, cond *Cond) *Cond {
	c := &Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}}
	if cond != nil && cond.SQL != "" {
		c.SQL += " AND (" + cond.SQL + ")"
		c.Args = append(c.Args, cond.Args...)
	}
	return c
}

// MatchesEach is Matches for many conditions at once, in one statement:
// for each of conds (nil: every row), whether record id is among the
// scope's rows matching it. Realtime asks it for every filter a
// subscriber's streams hold, once per change.
func MatchesEach(ctx context.Context, s *Scope, id int64, conds []*Cond) ([]bool, error) {
	out := make([]bool, len(conds))
	if len(conds) == 0 {
		return out, nil
	}
	cols := make([]string, len(conds))
	var args []any
	for i, c := range conds {
		if c == nil || c.SQL == "" {
			cols[i] = "1"
			continue
		}
		// A condition that is NULL for the row does not match, as in WHERE.
		cols[i] = "CASE WHEN (" + c.SQL + ") THEN 1 ELSE 0 END"
		args = append(args, c.Args...)
	}
	where, wargs := s.where(andID(s, id, nil))
	rows, err := s.DB.Query(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where, append(args, wargs...)...)
	if err != nil {
		return nil, fmt.Errorf("match %s %d: %w", s.Table.Name, id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return out, rows.Err() // not among the scope's rows: no condition matches
	}
	vals := make([]int64, len(conds))
	ptrs := make([]any, len(conds))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("match %s %d: %w", s.Table.Name, id, err)
	}
	for i, v := range vals {
		out[i] = v != 0
	}
	return out, rows.Err()
}
