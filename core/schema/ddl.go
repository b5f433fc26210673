package schema

import (
	"fmt"
	"strconv"

	"github.com/strata-archaeo/strata/core/store"
)

// sqlType is the column type of a storage type on an engine.
func sqlType(e store.Engine, t DBType) string {
	if e == store.Postgres {
		switch t {
		case DBInt:
			return "bigint"
		case DBFloat:
			return "double precision"
		case DBDate:
			return "date"
		case DBBool:
			return "boolean"
		}
		return "text"
	}
	switch t {
	case DBInt, DBBool:
		return "INTEGER"
	case DBFloat:
		return "REAL"
	}
	return "TEXT" // text, and dates as ISO yyyy-mm-dd
}

// createTableSQL returns the statements that create t with its system
// columns and their indexes (fields are added one by one afterwards).
func createTableSQL(db *store.DB, t *Table, parent *Table) []string {
	q := db.Qualify(t.Name)
	id := `"id" INTEGER PRIMARY KEY AUTOINCREMENT`
	ref := `INTEGER`
	if db.Engine == store.Postgres {
		id, ref = `"id" bigserial PRIMARY KEY`, `bigint`
	}
	if t.IsPlugin {
		link := `"id_link" ` + ref + ` NOT NULL`
		if parent != nil {
			link += ` REFERENCES ` + db.Qualify(parent.Name) + ` ("id") ON DELETE CASCADE`
		}
		return []string{
			`CREATE TABLE ` + q + ` (` + id + `, ` + link + `)`,
			`CREATE INDEX ` + indexName(db, t, "link") + ` ON ` + q + ` ("id_link")`,
		}
	}
	return []string{
		`CREATE TABLE ` + q + ` (` + id + `, "creator" ` + ref + ` NULL REFERENCES ` +
			db.Sys("users") + ` ("id") ON DELETE SET NULL)`,
		`CREATE INDEX ` + indexName(db, t, "creator") + ` ON ` + q + ` ("creator")`,
	}
}

// addFieldSQL returns the statements that add f's column to t, with a
// unique index when asked and a plain index on lookups (filters follow them).
func addFieldSQL(db *store.DB, t *Table, f *Field) []string {
	q := db.Qualify(t.Name)
	col := db.Engine.Quote(f.Name)
	stmts := []string{`ALTER TABLE ` + q + ` ADD COLUMN ` + col + ` ` + sqlType(db.Engine, f.DBType)}
	switch {
	case f.Unique:
		stmts = append(stmts, `CREATE UNIQUE INDEX `+fieldIndexName(db, f)+` ON `+q+` (`+col+`)`)
	case f.IDFromTb != "":
		stmts = append(stmts, `CREATE INDEX `+fieldIndexName(db, f)+` ON `+q+` (`+indexKeys(db.Engine, []string{f.Name}, false)+`)`)
	}
	return stmts
}

// Index names are built from stable ids, so they stay short (PostgreSQL
// truncates past 63 bytes) and survive renames. PostgreSQL indexes live in
// the table's schema, so the name is written unqualified there.
func indexName(db *store.DB, t *Table, what string) string {
	return db.Engine.Quote("ix_" + strconv.FormatInt(t.ID, 10) + "_" + what)
}

func fieldIndexName(db *store.DB, f *Field) string {
	return db.Engine.Quote(fmt.Sprintf("ix_%d_f%d", f.TableID, f.ID))
}

// attachPluginSQL makes a detached plugin table's id_link reference its
// new parent. PostgreSQL adds the constraint; SQLite cannot add one
// without rebuilding the table, and records delete plugin rows with their
// parent themselves (records.Delete), so nothing is needed there.
func attachPluginSQL(db *store.DB, t, parent *Table) []string {
	if db.Engine != store.Postgres {
		return nil
	}
	return []string{`ALTER TABLE ` + db.Qualify(t.Name) + ` ADD CONSTRAINT ` +
		db.Engine.Quote("fk_"+strconv.FormatInt(t.ID, 10)+"_link") + ` FOREIGN KEY ("id_link") REFERENCES ` +
		db.Qualify(parent.Name) + ` ("id") ON DELETE CASCADE`}
}
