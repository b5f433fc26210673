package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// snapshotAlias names the one-row stand-in for the table that SeenAt
// judges a past state with.
const snapshotAlias = "sync_snapshot"

// SeenAt tells, of records whose past state is stored in a version
// (snaps: record id → id of the version holding that state), those the
// caller could see in it: within the scope's row subset and where (the
// pull's filter, may be nil). The sync pull sends a record that left the
// caller's view as a removal only if the caller could see it at the
// checkpoint: a removal must not reveal that a row the caller never saw
// exists.
//
// The conditions are rendered for the snapshot standing in for the table
// (Cond.As) and judged by the database, the same SQL as on the table.
// Where that is not possible the record counts as seen (a removal is
// sent: it names an id, never values): a condition that reads more than
// the row (a nested condition on another table, a plugin's operator), a
// version that is gone, or a snapshot the table's current columns cannot
// hold (a field's type changed since).
func SeenAt(ctx context.Context, s *Scope, where *Cond, snaps map[int64]int64) (map[int64]bool, error) {
	seen := make(map[int64]bool, len(snaps))
	for id := range snaps {
		seen[id] = true
	}
	if len(snaps) == 0 {
		return seen, nil
	}
	var conds []*Cond
	for _, c := range []*Cond{s.Restrict, where} {
		if c == nil || c.SQL == "" {
			continue
		}
		if c.As == nil {
			return seen, nil // cannot be judged on a snapshot: all count as seen
		}
		as, err := c.As(ctx, snapshotAlias)
		if err != nil {
			return seen, nil
		}
		conds = append(conds, as)
	}
	if len(conds) == 0 {
		return seen, nil // every row of the table: each existed, so was seen
	}
	versions := make([]int64, 0, len(snaps))
	for _, v := range snaps {
		versions = append(versions, v)
	}
	stand, args := s.snapshotTable(versions)
	cond := joinConds(conds...)
	// Outside any transaction (the pull reads, it writes nothing): a
	// snapshot that cannot be converted to the table's columns fails this
	// statement alone.
	matched, err := s.matchedSnapshots(ctx, `WITH `+stand+` SELECT `+snapshotAlias+`."id" FROM `+snapshotAlias+` WHERE `+cond.SQL, append(args, cond.Args...))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("judge past states of %s: %w", s.Table.Name, err)
		}
		return seen, nil // not judged: all count as seen
	}
	for id, v := range snaps {
		if v > 0 { // no version: nothing to judge, counts as seen
			seen[id] = matched[id]
		}
	}
	return seen, nil
}

// matchedSnapshots runs query and gives the record ids it selects.
func (s *Scope) matchedSnapshots(ctx context.Context, query string, args []any) (map[int64]bool, error) {
	rs, err := s.DB.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[int64]bool{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rs.Err()
}

// snapshotTable is the CTE (without WITH) that stands in for the table:
// one row per version of versions, the record's columns as stored in the
// version's content (its core), named and typed as the table's.
func (s *Scope) snapshotTable(versions []int64) (string, []any) {
	in := `v."id" IN (` + marks(len(versions)) + `)`
	args := int64Args(versions)
	if s.DB.Engine == store.Postgres {
		// The table's own row type: every column converted as the table
		// would hold it.
		return snapshotAlias + ` AS (SELECT r.* FROM ` + s.DB.Sys("versions") + ` AS v CROSS JOIN LATERAL jsonb_populate_record(NULL::` +
			s.DB.Qualify(s.Table.Name) + `, (v.content::jsonb) -> 'core') AS r WHERE ` + in + `)`, args
	}
	names, _ := s.selectColumns(s.Table)
	cols := make([]string, len(names))
	exprs := make([]string, len(names))
	for i, n := range names {
		cols[i] = s.DB.Engine.Quote(n)
		// Field names are catalog identifiers (store.ValidIdent): safe in
		// a JSON path. SQLite stores booleans as 0/1, as json_extract
		// gives them.
		exprs[i] = `json_extract(v.content, '$.core.` + n + `')`
		if t, _ := dbTypeOf(s.Table, n); t == schema.DBBool {
			exprs[i] = `CAST(` + exprs[i] + ` AS INTEGER)`
		}
	}
	return snapshotAlias + ` (` + strings.Join(cols, ", ") + `) AS (SELECT ` + strings.Join(exprs, ", ") +
		` FROM ` + s.DB.Sys("versions") + ` AS v WHERE ` + in + `)`, args
}
