package schema

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Index is a user-defined index of a table (sys_indexes). The indexes that
// fields imply (unique, lookup) are not listed here: they follow the field.
type Index struct {
	ID      int64    `json:"id"`
	Table   string   `json:"table"`
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique"`
}

// IndexInput is the body of POST /config/table/{tb}/indexes.
type IndexInput struct {
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique"`
	// IsUnique is BraDypUS's name for Unique.
	IsUnique *bool `json:"is_unique"`
	// Name, when given, is the index's name (BraDypUS's clients name
	// their indexes); else one is made from stable ids.
	Name string `json:"name"`
}

// maxIndexColumns bounds a composite index; more is never useful here.
const maxIndexColumns = 8

type indexRow struct {
	ID        int64 `gorm:"primaryKey"`
	TableName string
	Name      string
	Columns   string
	IsUnique  bool
	CreatedAt time.Time
}

// ListIndexes returns the user indexes of table, oldest first.
func ListIndexes(ctx context.Context, db *store.DB, table string) ([]*Index, error) {
	cat, err := Load(ctx, db)
	if err != nil {
		return nil, err
	}
	if _, ok := cat.Table(table); !ok {
		return nil, ErrTableNotFound
	}
	return listIndexes(ctx, db, table)
}

// listIndexes returns the user indexes of table, or of every table when
// table is "".
func listIndexes(ctx context.Context, db *store.DB, table string) ([]*Index, error) {
	q := `SELECT id, table_name, name, columns, is_unique FROM ` + db.Sys("indexes")
	var args []any
	if table != "" {
		q += ` WHERE table_name = ?`
		args = append(args, table)
	}
	rows, err := db.Query(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	defer rows.Close()
	out := []*Index{}
	for rows.Next() {
		ix := &Index{}
		var cols string
		if err := rows.Scan(&ix.ID, &ix.Table, &ix.Name, &cols, &ix.Unique); err != nil {
			return nil, fmt.Errorf("list indexes: %w", err)
		}
		ix.Columns = jsonList(cols)
		out = append(out, ix)
	}
	return out, rows.Err()
}

// CreateIndex creates an index on fields of table, named ix_<tableid>_u<id>
// from stable ids so that renames leave it alone.
func CreateIndex(ctx context.Context, db *store.DB, table string, in IndexInput, now time.Time) (*Index, error) {
	var out *Index
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		t, ok := st.cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		if len(in.Columns) == 0 {
			return ErrParameterMissing.With("parameter", "columns")
		}
		if in.IsUnique != nil {
			in.Unique = *in.IsUnique
		}
		in.Name = strings.TrimSpace(in.Name)
		if in.Name != "" {
			if !store.ValidIdent(in.Name) || len(in.Name) > 60 || strings.HasPrefix(in.Name, store.SystemTablePrefix) || strings.HasPrefix(in.Name, "sqlite_") {
				return ErrInvalidIndex.With("detail", "name: letters, digits and _, starting with a letter, at most 60, not sys_ or sqlite_")
			}
			for _, ix := range st.indexes {
				if ix.Name == in.Name {
					return ErrIndexExists.With("name", ix.Name)
				}
			}
		}
		if len(in.Columns) > maxIndexColumns {
			return ErrInvalidIndex.With("detail", fmt.Sprintf("at most %d columns", maxIndexColumns))
		}
		for i, c := range in.Columns {
			if _, ok := t.Field(c); !ok {
				return ErrInvalidIndex.With("column", c).With("detail", "columns must be fields of the table")
			}
			if slices.Contains(in.Columns[:i], c) {
				return ErrInvalidIndex.With("column", c).With("detail", "a column is listed twice")
			}
		}
		for _, ix := range st.indexes {
			// Unnamed: one index per set of columns. Named: as many as the
			// client names.
			if in.Name == "" && ix.Table == table && ix.Unique == in.Unique && slices.Equal(ix.Columns, in.Columns) {
				return ErrIndexExists.With("name", ix.Name)
			}
		}
		// The name comes from the row id; the row is inserted under a
		// throw-away name first (the catalog is locked, nobody sees it).
		row := indexRow{TableName: table, Name: "pending_" + randomSuffix(), Columns: mustJSON(in.Columns),
			IsUnique: in.Unique, CreatedAt: now}
		if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("indexes")).Create(&row).Error; err != nil {
			return fmt.Errorf("insert index: %w", err)
		}
		ix := &Index{ID: row.ID, Table: table, Name: fmt.Sprintf("ix_%d_u%d", t.ID, row.ID), Columns: in.Columns, Unique: in.Unique}
		if in.Name != "" {
			ix.Name = in.Name
		}
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("indexes")+` SET name = ? WHERE id = ?`, ix.Name, ix.ID); err != nil {
			return fmt.Errorf("name index: %w", err)
		}
		if err := createIndex(ctx, tx, ix); err != nil {
			return err
		}
		out = ix
		return nil
	})
	return out, err
}

// DeleteIndex drops a user index of table.
func DeleteIndex(ctx context.Context, db *store.DB, table, name string) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		if _, ok := st.cat.Table(table); !ok {
			return ErrTableNotFound
		}
		for _, ix := range st.indexes {
			// By name, or by id as BraDypUS's clients delete.
			if ix.Table == table && (ix.Name == name || strconv.FormatInt(ix.ID, 10) == name) {
				return removeIndex(ctx, tx, ix)
			}
		}
		return ErrIndexNotFound
	})
}

// removeIndex drops ix and its catalog row.
func removeIndex(ctx context.Context, tx *store.DB, ix *Index) error {
	if err := execAll(ctx, tx, "drop index "+ix.Name, dropIndexSQL(tx, ix.Name)); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("indexes")+` WHERE id = ?`, ix.ID); err != nil {
		return fmt.Errorf("delete index %s: %w", ix.Name, err)
	}
	return nil
}

// createIndex builds ix; duplicates under a unique index are unique_violated.
func createIndex(ctx context.Context, tx *store.DB, ix *Index) error {
	kind := "INDEX"
	if ix.Unique {
		kind = "UNIQUE INDEX"
	}
	_, err := tx.Exec(ctx, `CREATE `+kind+` `+tx.Engine.Quote(ix.Name)+` ON `+tx.Qualify(ix.Table)+` (`+indexKeys(tx.Engine, ix.Columns, ix.Unique)+`)`)
	if isUniqueViolation(err) {
		return ErrUniqueViolated.With("columns", ix.Columns).Wrap(err)
	}
	if err != nil {
		return fmt.Errorf("create index %s: %w", ix.Name, err)
	}
	return nil
}

// keyColumns are the key columns an index on cols is built with. On
// PostgreSQL a non-unique index ends with id, as every SQLite index does
// implicitly (its rowid): a list filtered by equality on the columns and
// ordered by id (the default order, and every sort's tiebreak) then reads
// its page off the index, in order, instead of fetching and sorting every
// match, so its cost does not grow with the table. A unique index keeps
// its columns: id would make every row unique.
func keyColumns(e store.Engine, cols []string, unique bool) []string {
	if e != store.Postgres || unique || slices.Contains(cols, ColID) {
		return cols
	}
	return append(slices.Clip(cols), ColID)
}

// indexKeys is the quoted key list of an index on cols (keyColumns).
func indexKeys(e store.Engine, cols []string, unique bool) string {
	keys := keyColumns(e, cols, unique)
	quoted := make([]string, len(keys))
	for i, k := range keys {
		quoted[i] = e.Quote(k)
	}
	return strings.Join(quoted, ", ")
}

// dropIndexSQL drops an index by name; PostgreSQL needs it schema-qualified
// (connections run with an empty search path).
func dropIndexSQL(db *store.DB, name string) string {
	return `DROP INDEX IF EXISTS ` + db.Qualify(name)
}

func randomSuffix() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
