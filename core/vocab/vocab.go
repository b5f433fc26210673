// Package vocab is the app's controlled vocabularies (SPEC §2.9, §4.5;
// CONTRACT §10): named sets of items in order, which select fields name in
// vocabulary_set. Renaming an item rewrites the records that store it, and
// an item in use is not deleted unless its stored values are kept: a set
// never silently disagrees with the data.
package vocab

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Limits of names and items.
const (
	MaxNameLen = 64
	MaxItemLen = 500
)

var (
	ErrItemNotFound = errs.New(errs.NotFound, "error_def_erase", "no such vocabulary item")
	ErrItemExists   = errs.New(errs.Conflict, "vocabulary_item_exists", "the vocabulary already has this item")
	ErrItemInUse    = errs.New(errs.Conflict, "vocabulary_item_in_use", "records use this item; rename it, or delete it with keep_values=1 to leave their values as they are")
	ErrInvalid      = errs.New(errs.Invalid, "invalid_vocabulary", "the vocabulary or item is not valid")
)

// Item is one entry of a set.
type Item struct {
	ID   int64  `json:"id"`
	Def  string `json:"def"`
	Sort int64  `json:"sort"`
}

// Set is a named vocabulary with its items in order.
type Set struct {
	Name  string `json:"name"`
	Items []Item `json:"items"`
}

// Usage is a field that takes its values from a set.
type Usage struct {
	Table      string `json:"tb"`
	TableLabel string `json:"tb_label"`
	Field      string `json:"field"`
	FieldLabel string `json:"field_label"`
}

// List returns every set (by name) with its items in order; only is one
// set's name, or "" for all.
func List(ctx context.Context, db *store.DB, only string) ([]Set, error) {
	q := `SELECT id, voc, value, sort FROM ` + db.Sys("vocabularies")
	var args []any
	if only != "" {
		q += ` WHERE voc = ?`
		args = append(args, only)
	}
	rows, err := db.Query(ctx, q+` ORDER BY voc, sort, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list vocabularies: %w", err)
	}
	defer rows.Close()
	out := []Set{}
	for rows.Next() {
		var it Item
		var voc string
		if err := rows.Scan(&it.ID, &voc, &it.Def, &it.Sort); err != nil {
			return nil, fmt.Errorf("list vocabularies: %w", err)
		}
		if len(out) == 0 || out[len(out)-1].Name != voc {
			out = append(out, Set{Name: voc, Items: []Item{}})
		}
		out[len(out)-1].Items = append(out[len(out)-1].Items, it)
	}
	return out, rows.Err()
}

// Usages maps each set name to the fields of the catalog that use it.
func Usages(cat *schema.Catalog) map[string][]Usage {
	out := map[string][]Usage{}
	for _, t := range cat.Tables {
		for _, f := range t.Fields {
			if f.VocabularySet != "" {
				out[f.VocabularySet] = append(out[f.VocabularySet], Usage{Table: t.Name, TableLabel: t.Label, Field: f.Name, FieldLabel: f.Label})
			}
		}
	}
	return out
}

// clean trims s and checks it is a usable name or item: not empty, within
// max characters, no control characters.
func clean(what, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", ErrInvalid.With("detail", what+" is required")
	case utf8.RuneCountInString(s) > max:
		return "", ErrInvalid.With("detail", fmt.Sprintf("%s is longer than %d characters", what, max))
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", ErrInvalid.With("detail", what+" contains a control character")
	}
	return s, nil
}

// Add appends def to the set voc (made if new) and returns the item's id.
func Add(ctx context.Context, db *store.DB, voc, def string) (int64, error) {
	voc, err := clean("voc", voc, MaxNameLen)
	if err != nil {
		return 0, err
	}
	if def, err = clean("def", def, MaxItemLen); err != nil {
		return 0, err
	}
	var id int64
	err = db.Tx(ctx, func(tx *store.DB) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("vocabularies")+` WHERE voc = ? AND value = ?`, voc, def).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrItemExists.With("voc", voc).With("def", def)
		}
		return tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("vocabularies")+` (voc, value, sort)
			SELECT ?, ?, COALESCE(MAX(sort), 0) + 1 FROM `+tx.Sys("vocabularies")+` WHERE voc = ? RETURNING id`, voc, def, voc).Scan(&id)
	})
	return id, err
}

// item reads one item.
func item(ctx context.Context, db *store.DB, id int64) (voc, def string, err error) {
	err = db.QueryRow(ctx, `SELECT voc, value FROM `+db.Sys("vocabularies")+` WHERE id = ?`, id).Scan(&voc, &def)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", ErrItemNotFound.With("id", id)
	}
	return voc, def, err
}

// Editor is who renames or deletes, as the versions of the records the
// change rewrites record it.
type Editor struct {
	Catalog *schema.Catalog
	Scope   func(tx *store.DB, t *schema.Table) *records.Scope
}

// Rename changes item id to def and rewrites, in the same transaction, the
// stored value of every record that uses it (each record's previous state
// kept as a version). It returns how many records changed.
func Rename(ctx context.Context, db *store.DB, ed Editor, id int64, def string) (int, error) {
	def, err := clean("def", def, MaxItemLen)
	if err != nil {
		return 0, err
	}
	changed := 0
	err = db.Tx(ctx, func(tx *store.DB) error {
		voc, old, err := item(ctx, tx, id)
		if err != nil {
			return err
		}
		if old == def {
			return nil
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("vocabularies")+` WHERE voc = ? AND value = ?`, voc, def).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrItemExists.With("voc", voc).With("def", def)
		}
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("vocabularies")+` SET value = ? WHERE id = ?`, def, id); err != nil {
			return err
		}
		changed, err = rewrite(ctx, tx, ed, voc, old, &def)
		return err
	})
	return changed, err
}

// Delete removes item id. Records that store it refuse the deletion with
// their count, unless keepValues (their values then stay as they are).
func Delete(ctx context.Context, db *store.DB, ed Editor, id int64, keepValues bool) error {
	return db.Tx(ctx, func(tx *store.DB) error {
		voc, old, err := item(ctx, tx, id)
		if err != nil {
			return err
		}
		if !keepValues {
			n, err := uses(ctx, tx, ed.Catalog, voc, old)
			if err != nil {
				return err
			}
			if n > 0 {
				return ErrItemInUse.With("count", n)
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM `+tx.Sys("vocabularies")+` WHERE id = ?`, id)
		return err
	})
}

// Sort gives the items ids positions 1, 2, ... in that order. Every id must
// exist.
func Sort(ctx context.Context, db *store.DB, ids []int64) error {
	if len(ids) == 0 {
		return ErrInvalid.With("detail", "ids (the items in their new order) is required")
	}
	return db.Tx(ctx, func(tx *store.DB) error {
		for i, id := range ids {
			res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("vocabularies")+` SET sort = ? WHERE id = ?`, i+1, id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return ErrItemNotFound.With("id", id)
			}
		}
		return nil
	})
}

// fieldsOf are the (table, field) pairs using set voc.
func fieldsOf(cat *schema.Catalog, voc string) [][2]*schema.Table {
	var out [][2]*schema.Table
	for _, t := range cat.Tables {
		for _, f := range t.Fields {
			if f.VocabularySet == voc {
				out = append(out, [2]*schema.Table{t, {Name: f.Name, Fields: []*schema.Field{f}}})
			}
		}
	}
	return out
}

// uses counts the rows that store value of set voc.
func uses(ctx context.Context, tx *store.DB, cat *schema.Catalog, voc, value string) (int, error) {
	total := 0
	for _, tf := range fieldsOf(cat, voc) {
		t, f := tf[0], tf[1].Fields[0]
		ids, err := rowsWith(ctx, tx, t, f, value)
		if err != nil {
			return 0, err
		}
		total += len(ids)
	}
	return total, nil
}

// rowsWith lists the ids (for a plugin table: of the parent records) of
// the rows of t whose field f stores value, alone or, for multi_select,
// among its values.
func rowsWith(ctx context.Context, tx *store.DB, t *schema.Table, f *schema.Field, value string) ([]int64, error) {
	col := tx.Engine.Quote(f.Name)
	idCol := tx.Engine.Quote(schema.ColID)
	if t.IsPlugin {
		idCol = tx.Engine.Quote("id_link")
	}
	where, args := col+` = ?`, []any{value}
	if f.Type == schema.TypeMultiSelect {
		// A list is stored as JSON text (a lone value as itself): a
		// textual pre-filter, checked exactly below.
		where = `(` + col + ` = ? OR ` + col + ` LIKE ? ESCAPE '\')`
		args = []any{value, "%" + likeEscape(mustJSON(value)) + "%"}
	}
	rows, err := tx.Query(ctx, `SELECT `+idCol+`, `+col+` FROM `+tx.Qualify(t.Name)+` WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("rows of %s using %s: %w", t.Name, f.Name, err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		var stored sql.NullString
		if err := rows.Scan(&id, &stored); err != nil {
			return nil, err
		}
		if f.Type == schema.TypeMultiSelect && stored.String != value && !slices.Contains(listOf(stored.String), value) {
			continue
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// rewrite replaces old by *repl in every field using voc, versioning each
// record first, and returns how many records changed.
func rewrite(ctx context.Context, tx *store.DB, ed Editor, voc, old string, repl *string) (int, error) {
	versioned := map[string]map[int64]bool{}
	for _, tf := range fieldsOf(ed.Catalog, voc) {
		t, f := tf[0], tf[1].Fields[0]
		ids, err := rowsWith(ctx, tx, t, f, old)
		if err != nil {
			return 0, err
		}
		owner := t
		if t.IsPlugin {
			if p, ok := ed.Catalog.Table(t.PluginOf); ok {
				owner = p
			}
		}
		for _, id := range ids {
			if versioned[owner.Name] == nil {
				versioned[owner.Name] = map[int64]bool{}
			}
			if !versioned[owner.Name][id] {
				if err := records.Snapshot(ctx, ed.Scope(tx, owner), id); err != nil {
					return 0, err
				}
				versioned[owner.Name][id] = true
			}
		}
		if len(ids) == 0 {
			continue
		}
		col := tx.Engine.Quote(f.Name)
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Qualify(t.Name)+` SET `+col+` = ? WHERE `+col+` = ?`, *repl, old); err != nil {
			return 0, err
		}
		if f.Type == schema.TypeMultiSelect {
			if err := rewriteLists(ctx, tx, t, f, old, *repl); err != nil {
				return 0, err
			}
		}
	}
	n := 0
	for _, ids := range versioned {
		n += len(ids)
	}
	return n, nil
}

// rewriteLists replaces old by repl inside the JSON lists of a
// multi_select field, row by row.
func rewriteLists(ctx context.Context, tx *store.DB, t *schema.Table, f *schema.Field, old, repl string) error {
	col := tx.Engine.Quote(f.Name)
	rows, err := tx.Query(ctx, `SELECT `+tx.Engine.Quote(schema.ColID)+`, `+col+` FROM `+tx.Qualify(t.Name)+` WHERE `+col+` LIKE ? ESCAPE '\'`,
		"%"+likeEscape(mustJSON(old))+"%")
	if err != nil {
		return err
	}
	type change struct {
		id  int64
		val string
	}
	var changes []change
	for rows.Next() {
		var id int64
		var stored sql.NullString
		if err := rows.Scan(&id, &stored); err != nil {
			rows.Close()
			return err
		}
		list := listOf(stored.String)
		if !slices.Contains(list, old) {
			continue
		}
		for i, v := range list {
			if v == old {
				list[i] = repl
			}
		}
		changes = append(changes, change{id, mustJSON(list)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range changes {
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Qualify(t.Name)+` SET `+col+` = ? WHERE `+tx.Engine.Quote(schema.ColID)+` = ?`, c.val, c.id); err != nil {
			return err
		}
	}
	return nil
}

func listOf(stored string) []string {
	var list []string
	if json.Unmarshal([]byte(stored), &list) != nil {
		return nil
	}
	return list
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// likeEscape escapes LIKE's wildcards and its escape character.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
