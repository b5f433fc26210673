package schema_test

import (
	"context"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// searchHits returns the ids the search index of table.field names for a
// folded substring of at least three characters (SQLite), or the ids the
// index-using condition selects (PostgreSQL).
func searchHits(t *testing.T, fx *fixture, table, field, sub string) []string {
	t.Helper()
	f := fx.field(t, table, field)
	if fx.db.Engine == store.Postgres {
		return queryStrings(t, fx.db, `SELECT "id" FROM `+fx.db.Qualify(table)+` WHERE `+fx.db.FoldSQL(fx.db.Engine.Quote(field))+
			` LIKE ? ORDER BY "id"`, "%"+sub+"%")
	}
	return queryStrings(t, fx.db, `SELECT rowid FROM `+fx.db.Engine.Quote(schema.SearchIndexName(f))+` WHERE `+
		fx.db.Engine.Quote(schema.SearchIndexName(f))+` MATCH ? ORDER BY rowid`, `"`+sub+`"`)
}

func TestSearchIndexLifecycle(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		indexed := func(table, field string) bool {
			t.Helper()
			return fx.field(t, table, field).SearchIndexed
		}
		if indexed("finds", "label") {
			t.Fatal("a field outside the preview has no search index by default")
		}
		// The preview decides by default.
		if _, err := schema.PutTable(ctx, fx.db, "finds", schema.TableConfig{Preview: schema.Set([]string{"label", "pieces"})}, fx.now); err != nil {
			t.Fatal(err)
		}
		if !indexed("finds", "label") || indexed("finds", "pieces") {
			t.Fatalf("preview: label %v, pieces (int) %v", indexed("finds", "label"), indexed("finds", "pieces"))
		}
		fx.consistent(t, "finds")
		// Written rows are in it, through every path the database offers.
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds")+` (id, label) VALUES (10, 'Ämphora RIM'), (11, NULL)`)
		fx.exec(t, `UPDATE `+fx.db.Qualify("finds")+` SET label = 'Große Ämphora' WHERE id = 11`)
		if got := searchHits(t, fx, "finds", "label", "ämph"); len(got) != 2 || got[0] != "10" || got[1] != "11" {
			t.Fatalf("hits %v", got)
		}
		fx.exec(t, `UPDATE `+fx.db.Qualify("finds")+` SET label = 'bowl' WHERE id = 10`)
		fx.exec(t, `DELETE FROM `+fx.db.Qualify("finds")+` WHERE id = 11`)
		if got := searchHits(t, fx, "finds", "label", "ämph"); len(got) != 0 {
			t.Fatalf("hits after update and delete %v", got)
		}
		// Renames keep it working.
		if _, err := schema.RenameField(ctx, fx.db, "finds", "label", "title", fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.RenameTable(ctx, fx.db, "finds", "objects", fx.now); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("objects")+` (id, title) VALUES (12, 'Amphora')`)
		if got := searchHits(t, fx, "objects", "title", "amph"); len(got) != 1 || got[0] != "12" || !indexed("objects", "title") {
			t.Fatalf("after renames: %v", got)
		}
		fx.consistent(t, "objects")
		// The setting overrides the preview, both ways.
		if _, err := schema.PutField(ctx, fx.db, "objects", "title", schema.FieldUpdate{SearchIndex: schema.Set(ptr(false))}, fx.now); err != nil {
			t.Fatal(err)
		}
		if indexed("objects", "title") {
			t.Fatal("search_index false keeps the index")
		}
		f, err := schema.PutField(ctx, fx.db, "objects", "weight", schema.FieldUpdate{SearchIndex: schema.Set(ptr(true))}, fx.now)
		if err != nil || !f.SearchIndexed || !indexed("objects", "weight") {
			t.Fatalf("search_index true: %v %v", f, err)
		}
		if on, set := f.SearchIndexSetting(); !on || !set {
			t.Fatal("setting not stored")
		}
		fx.consistent(t, "objects")
		// A conversion away from text drops it; back to text builds it.
		if _, err := schema.PutField(ctx, fx.db, "objects", "weight", schema.FieldUpdate{DBType: schema.Set("float")}, fx.now); err != nil {
			t.Fatal(err)
		}
		if indexed("objects", "weight") {
			t.Fatal("a float field has a search index")
		}
		fx.consistent(t, "objects")
		if _, err := schema.PutField(ctx, fx.db, "objects", "weight", schema.FieldUpdate{DBType: schema.Set("text")}, fx.now); err != nil {
			t.Fatal(err)
		}
		if !indexed("objects", "weight") {
			t.Fatal("back to text: no search index")
		}
		// A new field may ask for one.
		if f, err := schema.AddField(ctx, fx.db, "objects", schema.FieldDef{Name: "notes", SearchIndex: ptr(true)}, fx.now); err != nil || !f.SearchIndexed {
			t.Fatalf("add field: %+v %v", f, err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("objects")+` (id, notes) VALUES (13, 'Rim sherd')`)
		if got := searchHits(t, fx, "objects", "notes", "rim"); len(got) != 1 {
			t.Fatalf("new field hits %v", got)
		}
		// Fields and tables take theirs with them.
		if _, err := schema.DeleteField(ctx, fx.db, "objects", "weight", true, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.consistent(t, "objects")
		if _, err := schema.DeleteTable(ctx, fx.db, "objects", true, fx.now); err != nil {
			t.Fatal(err)
		}
		var left []string
		if e == store.Postgres {
			left = queryStrings(t, fx.db, `SELECT indexname FROM pg_indexes WHERE schemaname = ? AND indexname LIKE 'sys_search%'`, fx.db.Schema())
		} else {
			left = queryStrings(t, fx.db, `SELECT name FROM sqlite_master WHERE name LIKE 'sys_search%'`)
		}
		if len(left) != 0 {
			t.Fatalf("left after the table went: %v", left)
		}
		// An application whose indexes are missing gets them on sync.
		if err := schema.SyncSearchIndexes(ctx, fx.db); err != nil {
			t.Fatal(err)
		}
	})
}
