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
			{"no from_tb", "parameter_missing", schema.RelationInput{FromCol: "x", ToTb: "sites"}},
			{"no from_col", "parameter_missing", schema.RelationInput{FromTb: "people", ToTb: "sites"}},
			{"no to_tb", "parameter_missing", schema.RelationInput{FromTb: "people", FromCol: "orphan"}},
			{"unknown from_tb", "invalid_relation", schema.RelationInput{FromTb: "nowhere", FromCol: "x", ToTb: "sites"}},
			{"unknown to_tb", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "nowhere"}},
			{"from a plugin table", "invalid_relation", schema.RelationInput{FromTb: "finds_radiocarbon", FromCol: "lab", ToTb: "sites"}},
			{"to a plugin table", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "finds_radiocarbon"}},
			{"unknown from_col", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "nothing", ToTb: "sites"}},
			{"text from_col", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "note", ToTb: "sites"}},
			{"to_col not unique", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "region"}},
			{"to_col unknown", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", ToCol: "nothing"}},
			{"bad on_delete", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", OnDelete: "explode"}},
			{"bad on_update", "invalid_relation", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites", OnUpdate: "SET DEFAULT"}},
			{"duplicate", "relation_already_exist", schema.RelationInput{FromTb: "people", FromCol: "site_code", ToTb: "finds"}},
			{"data violates it", "relation_violated", schema.RelationInput{FromTb: "people", FromCol: "orphan", ToTb: "sites"}},
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
			{"unknown", "relation_not_found", 9999, schema.RelationInput{OnDelete: "cascade"}},
			{"onto an existing from", "relation_already_exist", rel.ID, schema.RelationInput{FromTb: "finds", FromCol: "site_ref"}},
			{"bad action", "invalid_relation", rel.ID, schema.RelationInput{OnDelete: "explode"}},
			{"data violates it", "relation_violated", rel.ID, schema.RelationInput{FromCol: "orphan", ToCol: "id"}},
		} {
			expectRefused(t, fx.db, "update: "+c.name, c.code, func() error {
				_, err := schema.UpdateRelation(ctx, fx.db, c.id, c.in, fx.now)
				return err
			})
		}
		expectRefused(t, fx.db, "delete unknown", "relation_not_found", func() error { return schema.DeleteRelation(ctx, fx.db, 9999) })

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
		expectRefused(t, fx.db, "delete unknown", "index_not_found", func() error { return schema.DeleteIndex(ctx, fx.db, "finds", "ix_nothing") })
		expectRefused(t, fx.db, "delete on another table", "index_not_found", func() error { return schema.DeleteIndex(ctx, fx.db, "sites", ix.Name) })
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
