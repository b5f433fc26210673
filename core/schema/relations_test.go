package schema_test

import (
	"context"
	"testing"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

func TestRelations(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if fx.siteRel.Enforced != (e == store.Postgres) || fx.siteRel.ToCol != "id" || fx.siteRel.OnDelete != "RESTRICT" || fx.siteRel.OnUpdate != "RESTRICT" {
			t.Fatalf("relation with defaults %+v", fx.siteRel)
		}
		for _, f := range []schema.FieldDef{{Name: "site_code", DBType: "int"}, {Name: "orphan", DBType: "int"}, {Name: "note"}} {
			if _, err := schema.AddField(ctx, fx.db, "people", f, fx.now); err != nil {
				t.Fatal(err)
			}
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (name, site_code, orphan) VALUES ('Ann', 10, 77)`)
		rel, err := schema.AddRelation(ctx, fx.db, schema.RelationInput{FromTb: "people", FromCol: "site_code", ToTb: "sites", ToCol: "code",
			OnDelete: "set_null", OnUpdate: "cascade"}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		fx.consistent(t, "people") // on PostgreSQL: the constraint exists
		if e == store.Postgres {
			if _, err := fx.db.Exec(ctx, `INSERT INTO `+fx.db.Qualify("people")+` (site_code) VALUES (55)`); err == nil {
				t.Error("the relation is not enforced")
			}
			// ON UPDATE CASCADE follows the referenced code.
			fx.exec(t, `UPDATE `+fx.db.Qualify("sites")+` SET code = 11 WHERE code = 10`)
			if got := fx.values(t, "people", "site_code"); got[0] != "1|11" {
				t.Errorf("on update cascade: %v", got)
			}
		}

		cases := []struct {
			name, code string
			in         schema.RelationInput
		}{
			{"no from_tb", "parameter_missing", schema.RelationInput{FromCol: "x", ToTb: "sites", ToCol: "id"}},
			{"no from_col", "parameter_missing", schema.RelationInput{FromTb: "people", ToTb: "sites", ToCol: "id"}},
			{"no to_tb", "parameter_missing", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToCol: "id"}},
			{"no to_col", "parameter_missing", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites"}},
			{"unknown from_tb", "invalid_relation", schema.RelationInput{FromTb: "nowhere", FromCol: "x", ToTb: "sites", ToCol: "id"}},
			{"unknown to_tb", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "nowhere", ToCol: "id"}},
			{"from a plugin table", "invalid_relation", schema.RelationInput{FromTb: "finds_radiocarbon", FromCol: "lab", ToTb: "sites", ToCol: "id"}},
			{"to a plugin table", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "finds_radiocarbon", ToCol: "id"}},
			{"unknown from_col", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "nothing", ToTb: "sites", ToCol: "id"}},
			{"text to int", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "note", ToTb: "sites", ToCol: "id"}},
			{"int to text", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "region"}},
			{"to_col unknown", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "nothing"}},
			{"bad on_delete", "invalid_on_delete", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "id", OnDelete: "explode"}},
			{"bad on_update", "invalid_on_update", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "id", OnUpdate: "SET DEFAULT"}},
			{"duplicate", "relation_already_exists", schema.RelationInput{FromTb: "people", FromCol: "site_code", ToTb: "finds", ToCol: "id"}},
			{"a lookup elsewhere", "relation_already_exists", schema.RelationInput{FromTb: "finds", FromCol: "site", ToTb: "people", ToCol: "id"}},
			{"data violates it", "relation_violated", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "id"}},
		}
		for _, c := range cases {
			expectRefused(t, fx.db, "add: "+c.name, c.code, func() error {
				_, err := schema.AddRelation(ctx, fx.db, c.in, fx.now)
				return err
			})
		}
		for _, c := range []struct {
			name, code string
			id         int64
			in         schema.RelationInput
		}{
			{"unknown", "not_found", 9999, schema.RelationInput{OnDelete: "cascade"}},
			{"onto an existing from", "relation_already_exists", rel.ID, schema.RelationInput{FromTb: "finds", FromCol: "site_ref"}},
			{"bad action", "invalid_on_delete", rel.ID, schema.RelationInput{OnDelete: "explode"}},
			{"a lookup elsewhere", "invalid_relation", -fx.field(t, "finds", "site").ID, schema.RelationInput{ToTb: "people"}},
			{"data violates it", "relation_violated", rel.ID, schema.RelationInput{FromCol: "orphan", ToCol: "id"}},
		} {
			expectRefused(t, fx.db, "update: "+c.name, c.code, func() error {
				_, err := schema.UpdateRelation(ctx, fx.db, c.id, c.in, fx.now)
				return err
			})
		}
		expectRefused(t, fx.db, "delete unknown", "not_found", func() error { return schema.DeleteRelation(ctx, fx.db, 9999) })
		expectRefused(t, fx.db, "delete a lookup's", "relation_from_lookup", func() error {
			return schema.DeleteRelation(ctx, fx.db, -fx.field(t, "finds", "site").ID)
		})

		// Update keeps what is not sent and moves the constraint.
		fx.exec(t, `UPDATE `+fx.db.Qualify("people")+` SET orphan = 2`)
		up, err := schema.UpdateRelation(ctx, fx.db, rel.ID, schema.RelationInput{FromCol: "orphan", ToCol: "id", OnDelete: "cascade"}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		if up.FromTb != "people" || up.FromCol != "orphan" || up.ToCol != "id" || up.OnDelete != "CASCADE" || up.OnUpdate != "CASCADE" {
			t.Fatalf("updated relation %+v", up)
		}
		fx.consistent(t, "people")
		if e == store.Postgres {
			fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (site_code) VALUES (55)`) // the old constraint is gone
		}
		rels, _ := schema.ListRelations(ctx, fx.db)
		if len(rels) != 2 || rels[1].FromCol != "orphan" {
			t.Fatalf("relations %+v", rels)
		}
		if err := schema.DeleteRelation(ctx, fx.db, rel.ID); err != nil {
			t.Fatal(err)
		}
		if rels, _ := schema.ListRelations(ctx, fx.db); len(rels) != 1 {
			t.Fatalf("relations after delete %+v", rels)
		}
		fx.consistent(t, "people")
		if e == store.Postgres {
			fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (orphan) VALUES (4242)`) // no constraint any more
		}
	})
}

func TestIndexes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		ix, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"label", "weight"}}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		if ix.Name == "" || ix.Table != "finds" || ix.Unique {
			t.Fatalf("index %+v", ix)
		}
		uq, err := schema.CreateIndex(ctx, fx.db, "finds", schema.IndexInput{Columns: []string{"label"}, Unique: true}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		list, err := schema.ListIndexes(ctx, fx.db, "finds")
		if err != nil || len(list) != 2 || list[0].Name != ix.Name || !list[1].Unique {
			t.Fatalf("list %+v %v", list, err)
		}
		fx.consistent(t, "finds")
		if _, err := fx.db.Exec(ctx, `INSERT INTO `+fx.db.Qualify("finds")+` (label) VALUES ('bowl')`); err == nil {
			t.Error("the unique index does not hold")
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (name) VALUES ('Ann'), ('Ann')`)
		cases := []struct {
			name, table, code string
			in                schema.IndexInput
		}{
			{"unknown table", "nowhere", "table_not_found", schema.IndexInput{Columns: []string{"x"}}},
			{"no columns", "finds", "parameter_missing", schema.IndexInput{}},
			{"unknown column", "finds", "invalid_index", schema.IndexInput{Columns: []string{"nothing"}}},
			{"system column", "finds", "invalid_index", schema.IndexInput{Columns: []string{"creator"}}},
			{"repeated column", "finds", "invalid_index", schema.IndexInput{Columns: []string{"label", "label"}}},
			{"injection", "finds", "invalid_index", schema.IndexInput{Columns: []string{`label"); DROP TABLE sites; --`}}},
			{"too many", "finds", "invalid_index", schema.IndexInput{Columns: []string{"label", "site", "site_ref", "colour", "weight", "pieces", "found_on", "complete", "label"}}},
			{"same index", "finds", "index_already_exists", schema.IndexInput{Columns: []string{"label", "weight"}}},
			{"unique over duplicates", "people", "unique_violated", schema.IndexInput{Columns: []string{"name"}, Unique: true}},
		}
		for _, c := range cases {
			expectRefused(t, fx.db, c.name, c.code, func() error {
				_, err := schema.CreateIndex(ctx, fx.db, c.table, c.in, fx.now)
				return err
			})
		}
		expectRefused(t, fx.db, "delete unknown", "not_found", func() error { return schema.DeleteIndex(ctx, fx.db, "finds", "ix_nothing") })
		expectRefused(t, fx.db, "delete on another table", "not_found", func() error { return schema.DeleteIndex(ctx, fx.db, "sites", ix.Name) })
		expectRefused(t, fx.db, "delete on unknown table", "table_not_found", func() error { return schema.DeleteIndex(ctx, fx.db, "nowhere", ix.Name) })
		if _, err := schema.ListIndexes(ctx, fx.db, "nowhere"); err == nil {
			t.Error("indexes of a missing table")
		}
		if err := schema.DeleteIndex(ctx, fx.db, "finds", uq.Name); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds")+` (label) VALUES ('bowl')`)
		if list, _ := schema.ListIndexes(ctx, fx.db, "finds"); len(list) != 1 {
			t.Fatalf("after delete %+v", list)
		}
		fx.consistent(t, "finds")
	})
}

func TestValidateTable(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		fx.consistent(t, "sites", "finds", "finds_radiocarbon", "people")
		if _, err := schema.ValidateTable(ctx, fx.db, "nowhere"); err == nil {
			t.Fatal("validation of a missing table")
		}
		// Changes made behind the catalog's back show up.
		fx.exec(t, `ALTER TABLE `+fx.db.Qualify("people")+` ADD COLUMN stray TEXT`)
		fx.exec(t, `ALTER TABLE `+fx.db.Qualify("people")+` DROP COLUMN name`)
		fx.exec(t, `DROP INDEX `+fx.db.Qualify(indexNameOf(t, fx, "sites", "code")))
		if e == store.Postgres {
			fx.exec(t, `ALTER TABLE `+fx.db.Qualify("finds")+` DROP CONSTRAINT fk_`+itoa(fx.siteRel.ID))
		}
		kinds := map[string]string{}
		for _, tb := range []string{"people", "sites", "finds"} {
			diffs, err := schema.ValidateTable(ctx, fx.db, tb)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diffs {
				kinds[tb] += d.Kind + ":" + d.Column + " "
			}
		}
		want := map[string]string{"people": "column_missing:name column_extra:stray ", "sites": "index_missing:code "}
		if e == store.Postgres {
			want["finds"] = "constraint_missing:site_ref "
		}
		for tb, w := range want {
			if kinds[tb] != w {
				t.Errorf("%s: %q, want %q", tb, kinds[tb], w)
			}
		}
		if len(kinds) != len(want) {
			t.Errorf("differences %v, want %v", kinds, want)
		}
		fx.exec(t, `DROP TABLE `+fx.db.Qualify("people"))
		diffs, _ := schema.ValidateTable(ctx, fx.db, "people")
		if len(diffs) != 1 || diffs[0].Kind != "table_missing" {
			t.Errorf("missing table: %+v", diffs)
		}
	})
}

// indexNameOf is the name of the index a field implies.
func indexNameOf(t *testing.T, fx *fixture, table, field string) string {
	f := fx.field(t, table, field)
	return "ix_" + itoa(f.TableID) + "_f" + itoa(f.ID)
}

// Relations between columns of the same storage type (text to text, to a
// non-unique column, of a table to itself) are accepted; what the engine
// cannot enforce is recorded and says why. Lookup fields imply relations.
func TestRelationsNotEnforcedAndLookups(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		pg := e == store.Postgres
		for _, f := range []schema.FieldDef{{Name: "site_name"}, {Name: "site_code", DBType: "int"}} {
			if _, err := schema.AddField(ctx, fx.db, "people", f, fx.now); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := schema.AddField(ctx, fx.db, "sites", schema.FieldDef{Name: "parent"}, fx.now); err != nil {
			t.Fatal(err)
		}
		notUnique := map[bool]string{true: schema.NotEnforcedNotUnique, false: schema.NotEnforcedEngine}[pg]
		enforcedReason := map[bool]string{true: "", false: schema.NotEnforcedEngine}[pg]
		for _, c := range []struct {
			name               string
			in                 schema.RelationInput
			onDelete, onUpdate string
			reason             string
		}{
			{"text to non-unique text", schema.RelationInput{FromTb: "people", FromCol: "site_name", ToTb: "sites", ToCol: "name", OnDelete: "cascade"},
				"CASCADE", "RESTRICT", notUnique},
			{"self-referential", schema.RelationInput{FromTb: "sites", FromCol: "parent", ToTb: "sites", ToCol: "name", OnDelete: "CASCADE", OnUpdate: "NO ACTION"},
				"RESTRICT", "CASCADE", notUnique},
			{"int to unique int", schema.RelationInput{FromTb: "people", FromCol: "site_code", ToTb: "sites", ToCol: "code"},
				"RESTRICT", "RESTRICT", enforcedReason},
		} {
			r, err := schema.AddRelation(ctx, fx.db, c.in, fx.now)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if r.ID <= 0 || r.OnDelete != c.onDelete || r.OnUpdate != c.onUpdate || r.NotEnforced != c.reason || r.Enforced != (c.reason == "") {
				t.Errorf("%s: %+v", c.name, r)
			}
		}
		fx.consistent(t, "people", "sites")

		// The list: recorded relations, then the lookup finds.site, with labels.
		site := fx.field(t, "finds", "site")
		all, err := schema.ListAllRelations(ctx, fx.db)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 5 {
			t.Fatalf("%d relations: %+v", len(all), all)
		}
		lk := all[4]
		if lk.ID != -site.ID || !lk.Lookup || lk.FromTb != "finds" || lk.FromCol != "site" || lk.ToTb != "sites" || lk.ToCol != "id" ||
			lk.ToLabel != "Sites" || lk.FromLabel != "finds" || lk.Enforced || lk.NotEnforced != schema.NotEnforcedLookup {
			t.Errorf("lookup relation %+v", lk)
		}
		if rec, _ := schema.ListRelations(ctx, fx.db); len(rec) != 4 {
			t.Errorf("recorded relations %+v", rec)
		}

		// Applying constraints: nothing to add, the rest reported.
		rep, err := schema.ApplyConstraints(ctx, fx.db)
		if err != nil {
			t.Fatal(err)
		}
		wantNot := map[bool]int{true: 3, false: 5}[pg] // PG: two not unique + the lookup
		if rep.Applied != 0 || rep.Skipped != 0 || len(rep.Errors) != 0 || len(rep.NotEnforced) != wantNot ||
			rep.AlreadyEnforced != map[bool]int{true: 2, false: 0}[pg] {
			t.Errorf("apply: %+v", rep)
		}

		// Recording the lookup's relation (PUT on its negative id) gives it
		// a real id and, on PostgreSQL, a constraint.
		up, err := schema.UpdateRelation(ctx, fx.db, lk.ID, schema.RelationInput{OnDelete: "set null"}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		if up.ID <= 0 || up.Lookup || up.OnDelete != "SET NULL" || up.Enforced != pg {
			t.Fatalf("recorded lookup relation %+v", up)
		}
		fx.consistent(t, "finds")
		expectRefused(t, fx.db, "the lookup's negative id, once recorded", "not_found", func() error {
			_, err := schema.UpdateRelation(ctx, fx.db, lk.ID, schema.RelationInput{}, fx.now)
			return err
		})
		if err := schema.DeleteRelation(ctx, fx.db, up.ID); err != nil {
			t.Fatal(err)
		}
		if all, _ := schema.ListAllRelations(ctx, fx.db); len(all) != 5 || all[4].ID != lk.ID {
			t.Errorf("after deleting the recorded lookup relation: %+v", all)
		}

		if pg {
			// A constraint dropped behind the catalog's back is put back
			// when the data allows, and reported when it does not.
			fx.exec(t, `ALTER TABLE `+fx.db.Qualify("finds")+` DROP CONSTRAINT fk_`+itoa(fx.siteRel.ID))
			fx.exec(t, `ALTER TABLE `+fx.db.Qualify("people")+` DROP CONSTRAINT fk_`+itoa(all[3].ID))
			fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (site_code) VALUES (99), (98)`)
			rep, err := schema.ApplyConstraints(ctx, fx.db)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Applied != 1 || rep.Skipped != 1 || len(rep.Errors) != 1 || rep.Errors[0].Reason != schema.ApplyOrphans ||
				rep.Errors[0].Orphans != 2 || rep.Errors[0].FromCol != "site_code" {
				t.Errorf("apply after drops: %+v", rep)
			}
			fx.consistent(t, "finds")
		}
	})
}
