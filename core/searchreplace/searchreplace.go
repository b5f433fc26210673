// Package searchreplace finds and replaces text in one field of one table
// (SPEC §4.5, CONTRACT §10): a preview that counts and shows samples and
// writes nothing, and an apply that changes every matching record the
// caller may see in one transaction, each record's previous state kept as
// a version. The replacement is literal and case-sensitive, as SQL's
// REPLACE() in BraDypUS; lookups and other non-text fields are not
// touched.
package searchreplace

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// MaxSamples is how many changes a preview shows.
const MaxSamples = 10

// Editable reports whether f is a field search-replace may change: text
// stored as text, not a lookup.
func Editable(f *schema.Field) bool {
	return f.DBType == schema.DBText && f.IDFromTb == "" && !f.Readonly
}

// Sample is one record's value before and after.
type Sample struct {
	ID     int64  `json:"id"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Result of a preview or an apply.
type Result struct {
	Count   int      `json:"count"`
	Samples []Sample `json:"samples,omitempty"`
}

// Run replaces search by repl in field f of the scope's table, in the rows
// the scope sees (its row subset); with preview it only counts and
// samples.
func Run(ctx context.Context, sc *records.Scope, f *schema.Field, search, repl string, preview bool) (*Result, error) {
	res := &Result{Samples: []Sample{}}
	err := sc.DB.Tx(ctx, func(tx *store.DB) error {
		changes, err := matches(ctx, tx, sc, f, search)
		if err != nil {
			return err
		}
		res.Count = len(changes)
		for i, ch := range changes {
			after := strings.ReplaceAll(ch.before, search, repl)
			if i < MaxSamples {
				res.Samples = append(res.Samples, Sample{ID: ch.id, Before: ch.before, After: after})
			}
			if preview {
				continue
			}
			v := *sc
			v.DB = tx
			if err := records.Snapshot(ctx, &v, ch.id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE `+tx.Qualify(sc.Table.Name)+` SET `+tx.Engine.Quote(f.Name)+` = ? WHERE `+tx.Engine.Quote(schema.ColID)+` = ?`, after, ch.id); err != nil {
				return fmt.Errorf("search-replace %s.%s: %w", sc.Table.Name, f.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !preview {
		res.Samples = nil
	}
	return res, nil
}

type match struct {
	id     int64
	before string
}

// matches are the rows whose value contains search exactly (LIKE narrows
// them; it ignores ASCII case on SQLite, so each is checked in Go).
func matches(ctx context.Context, tx *store.DB, sc *records.Scope, f *schema.Field, search string) ([]match, error) {
	col := tx.Qualify(sc.Table.Name) + "." + tx.Engine.Quote(f.Name)
	where := col + ` LIKE ? ESCAPE '\'`
	args := []any{"%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(search) + "%"}
	if sc.Restrict != nil && sc.Restrict.SQL != "" {
		where += ` AND (` + sc.Restrict.SQL + `)`
		args = append(args, sc.Restrict.Args...)
	}
	rows, err := tx.Query(ctx, `SELECT `+tx.Qualify(sc.Table.Name)+`.`+tx.Engine.Quote(schema.ColID)+`, `+col+` FROM `+tx.Qualify(sc.Table.Name)+
		` WHERE `+where+` ORDER BY 1`, args...)
	if err != nil {
		return nil, fmt.Errorf("search-replace %s.%s: %w", sc.Table.Name, f.Name, err)
	}
	defer rows.Close()
	var out []match
	for rows.Next() {
		var m match
		var v sql.NullString
		if err := rows.Scan(&m.id, &v); err != nil {
			return nil, err
		}
		if v.Valid && strings.Contains(v.String, search) {
			m.before = v.String
			out = append(out, m)
		}
	}
	return out, rows.Err()
}
