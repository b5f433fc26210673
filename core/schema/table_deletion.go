package schema

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

// DeletionPreview is what DeleteTable would do to a table, counted before
// an admin confirms: the tables dropped with their rows, the data of other
// system tables that goes with them, what stays, and the references to it
// that only a cascade removes.
type DeletionPreview struct {
	Table   string           `json:"table"`
	Dropped []string         `json:"dropped"` // the table and its plugin tables, children first
	Records map[string]int64 `json:"records"` // rows of each dropped table
	// Removed with the table.
	RS          int64 `json:"rs"`           // stratigraphic relations between its records
	ManualLinks int64 `json:"manual_links"` // manual links from or to its records
	Versions    int64 `json:"versions"`     // stored record versions
	Geodata     int64 `json:"geodata"`      // geographic features of its records
	FileLinks   int64 `json:"file_links"`   // links from files to its records
	Relations   int64 `json:"relations"`    // configured relations from or to it (not referenced by a usage below)
	// Kept: the files linked to its records stay in the file library.
	Files int64 `json:"files"`
	// Usages are the references to the dropped tables from elsewhere
	// (lookups, value sources, relations, plugin tables, backlinks,
	// chronology paths): the deletion needs cascade=1 while there are
	// any, and then removes them (lookups and value sources are cleared,
	// their fields and data stay).
	Usages       []Usage `json:"usages"`
	NeedsCascade bool    `json:"needs_cascade"`
}

// PreviewTableDeletion counts what deleting table would remove and keep,
// writing nothing.
func PreviewTableDeletion(ctx context.Context, db *store.DB, table string) (*DeletionPreview, error) {
	st, err := loadState(ctx, db)
	if err != nil {
		return nil, err
	}
	gone, uses, err := deletionPlan(st, table)
	if err != nil {
		return nil, err
	}
	out := &DeletionPreview{Table: table, Dropped: gone, Records: map[string]int64{}, Usages: []Usage{}, NeedsCascade: len(uses) > 0}
	if len(uses) > 0 {
		out.Usages = uses
	}
	for _, name := range gone {
		n, err := count(ctx, db, `SELECT COUNT(*) FROM `+db.Qualify(name))
		if err != nil {
			return nil, fmt.Errorf("count %s: %w", name, err)
		}
		out.Records[name] = n
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(gone)), ", ")
	args := make([]any, len(gone))
	for i, g := range gone {
		args[i] = g
	}
	for _, c := range []struct {
		dst  *int64
		sql  string
		args []any
	}{
		{&out.RS, `SELECT COUNT(*) FROM ` + db.Sys("rs") + ` WHERE tb IN (` + marks + `)`, args},
		{&out.ManualLinks, `SELECT COUNT(*) FROM ` + db.Sys("manual_links") + ` WHERE tb_one IN (` + marks + `) OR tb_two IN (` + marks + `)`, append(append([]any{}, args...), args...)},
		{&out.Versions, `SELECT COUNT(*) FROM ` + db.Sys("versions") + ` WHERE tb IN (` + marks + `)`, args},
		{&out.Geodata, `SELECT COUNT(*) FROM ` + db.Sys("geodata") + ` WHERE tb IN (` + marks + `)`, args},
		{&out.FileLinks, `SELECT COUNT(*) FROM ` + db.Sys("file_links") + ` WHERE tb IN (` + marks + `)`, args},
		{&out.Files, `SELECT COUNT(DISTINCT file_id) FROM ` + db.Sys("file_links") + ` WHERE tb IN (` + marks + `)`, args},
	} {
		n, err := count(ctx, db, c.sql, c.args...)
		if err != nil {
			return nil, fmt.Errorf("preview deletion of %s: %w", table, err)
		}
		*c.dst = n
	}
	for _, r := range relationsOf(st, gone) {
		used := false
		for _, u := range uses {
			used = used || u.Relation == r.ID
		}
		if !used {
			out.Relations++
		}
	}
	return out, nil
}

func count(ctx context.Context, db *store.DB, q string, args ...any) (int64, error) {
	var n int64
	err := db.QueryRow(ctx, q, args...).Scan(&n)
	return n, err
}
