package schema_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
	"github.com/strata-archaeo/strata/core/widgets"
)

func TestPutFieldSettings(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if _, err := schema.PutField(ctx, fx.db, "finds", "label", schema.FieldUpdate{Widget: schema.Set("w"), CheckWidget: true}, fx.now); !errors.Is(err, schema.ErrInvalidParameter) {
			t.Fatalf("a widget not installed: %v", err)
		}
		if _, _, err := widgets.Save(ctx, fx.db, "w", []byte("export default {}"), fx.now); err != nil {
			t.Fatal(err)
		}
		f, err := schema.PutField(ctx, fx.db, "finds", "label", schema.FieldUpdate{
			Label: schema.Set("Label"), Readonly: schema.Set(true), Hide: schema.Set(true), Widget: schema.Set("w"), CheckWidget: true,
			Help: schema.Set("h"), Required: schema.Set(true), Min: schema.Set(ptr(1.0)), Max: schema.Set(ptr(9.0)),
			MaxLength: schema.Set(ptr(40)), Pattern: schema.Set("^[a-z]+$"), DefValue: schema.Set("%today%"), Unique: schema.Set(true),
			Type: schema.Set("long_text"),
		}, fx.now)
		if err != nil {
			t.Fatal(err)
		}
		got := fx.field(t, "finds", "label")
		if got.Label != "Label" || !got.Readonly || !got.Hide || got.Widget != "w" || got.Help != "h" || !got.Required ||
			*got.Min != 1 || *got.Max != 9 || *got.MaxLength != 40 || got.Pattern != "^[a-z]+$" || got.DefValue != "%today%" ||
			!got.Unique || got.Type != schema.TypeLongText || got.DBType != schema.DBText || got.Sort != f.Sort || got.ID != f.ID {
			t.Fatalf("settings not stored: %+v", got)
		}
		fx.consistent(t, "finds") // the unique index exists
		// null clears; absent keys stay; unique off drops the index.
		if _, err := schema.PutField(ctx, fx.db, "finds", "label", schema.FieldUpdate{Min: schema.Set[*float64](nil), Unique: schema.Set(false)}, fx.now); err != nil {
			t.Fatal(err)
		}
		got = fx.field(t, "finds", "label")
		if got.Min != nil || got.Max == nil || got.Unique || got.Label != "Label" {
			t.Fatalf("partial update: %+v", got)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("finds")+` (label) VALUES ('bowl')`) // no unique index any more
		fx.consistent(t, "finds")

		// A lookup gets a plain index, which goes when it stops being one.
		if _, err := schema.PutField(ctx, fx.db, "finds", "pieces", schema.FieldUpdate{Type: schema.Set("select"), IDFromTb: schema.Set("people")}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.consistent(t, "finds")
		if _, err := schema.PutField(ctx, fx.db, "finds", "pieces", schema.FieldUpdate{Type: schema.Set("text"), IDFromTb: schema.Set("")}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutField(ctx, fx.db, "finds", "pieces", schema.FieldUpdate{Unique: schema.Set(true)}, fx.now); err != nil {
			t.Fatal(err) // would collide with a left-over lookup index
		}
		fx.consistent(t, "finds")

		// A select that becomes text drops its value source.
		if _, err := schema.PutField(ctx, fx.db, "finds", "colour", schema.FieldUpdate{Type: schema.Set("text")}, fx.now); err != nil {
			t.Fatal(err)
		}
		if c := fx.field(t, "finds", "colour"); c.GetValuesFromTb != "" || c.OptionsSource() != nil {
			t.Errorf("text field kept its source: %+v", c)
		}
		expectRefused(t, fx.db, "text with a source", "invalid_field_parameter", func() error {
			_, err := schema.PutField(ctx, fx.db, "finds", "colour", schema.FieldUpdate{VocabularySet: schema.Set("colours")}, fx.now)
			return err
		})

		// A legacy disabled field reads as readonly until made editable.
		if _, err := schema.PutField(ctx, fx.db, "finds", "weight", schema.FieldUpdate{Disabled: schema.Set(true)}, fx.now); err != nil {
			t.Fatal(err)
		}
		if !fx.field(t, "finds", "weight").Readonly {
			t.Error("disabled:true must read as readonly")
		}
		if _, err := schema.PutField(ctx, fx.db, "finds", "weight", schema.FieldUpdate{Readonly: schema.Set(false)}, fx.now); err != nil {
			t.Fatal(err)
		}
		if w := fx.field(t, "finds", "weight"); w.Readonly || w.Extra["disabled"] != nil {
			t.Errorf("readonly:false left %+v", w)
		}
	})
}

func TestPutFieldRefusals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "code_ref", DBType: "int"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.AddRelation(ctx, fx.db, schema.RelationInput{FromTb: "people", FromCol: "code_ref", ToTb: "sites", ToCol: "code"}, fx.now); err != nil {
			t.Fatal(err)
		}
		if _, err := schema.PutTable(ctx, fx.db, "sites", schema.TableConfig{Backlinks: schema.Set([]string{"finds:finds:site"})}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (name) VALUES ('Ann'), ('Ann')`)
		cases := []struct {
			name, table, field, code string
			in                       schema.FieldUpdate
		}{
			{"unknown table", "nowhere", "label", "table_not_found", schema.FieldUpdate{Label: schema.Set("x")}},
			{"unknown field", "finds", "nothing", "field_not_found", schema.FieldUpdate{Label: schema.Set("x")}},
			{"unknown type", "finds", "label", "invalid_field_type", schema.FieldUpdate{Type: schema.Set("blob")}},
			{"unknown db_type", "finds", "label", "invalid_db_type", schema.FieldUpdate{DBType: schema.Set("blob")}},
			{"vocabulary on text", "finds", "label", "invalid_field_parameter", schema.FieldUpdate{VocabularySet: schema.Set("v")}},
			{"values from a missing field", "finds", "colour", "invalid_field_parameter", schema.FieldUpdate{GetValuesFromTb: schema.Set("sites:nothing")}},
			{"lookup stored as text", "finds", "label", "invalid_field_parameter", schema.FieldUpdate{Type: schema.Set("select"), IDFromTb: schema.Set("sites")}},
			{"lookup to a plugin table", "finds", "pieces", "invalid_field_parameter", schema.FieldUpdate{Type: schema.Set("select"), IDFromTb: schema.Set("finds_radiocarbon")}},
			{"bad pattern", "finds", "label", "invalid_field_parameter", schema.FieldUpdate{Pattern: schema.Set("(")}},
			{"min above max", "finds", "pieces", "invalid_field_parameter", schema.FieldUpdate{Min: schema.Set(ptr(5.0)), Max: schema.Set(ptr(1.0))}},
			{"unique over duplicates", "people", "name", "unique_violated", schema.FieldUpdate{Unique: schema.Set(true)}},
			{"type of a relation column", "finds", "site_ref", "field_in_use", schema.FieldUpdate{DBType: schema.Set("text")}},
			{"unique off under a relation", "sites", "code", "field_in_use", schema.FieldUpdate{Unique: schema.Set(false)}},
			{"lookup a backlink follows", "finds", "site", "field_in_use", schema.FieldUpdate{IDFromTb: schema.Set("people")}},
			{"unconvertible data", "finds", "label", "conversion_failed", schema.FieldUpdate{DBType: schema.Set("int")}},
		}
		for _, c := range cases {
			expectRefused(t, fx.db, c.name, c.code, func() error {
				_, err := schema.PutField(ctx, fx.db, c.table, c.field, c.in, fx.now)
				return err
			})
		}
	})
}

// conversion is one db_type change over some stored values.
type conversion struct {
	from, to   schema.DBType
	values     []any    // stored before, ids 1..n
	want       []string // "id|text form" after; nil when refused
	wantSQLite []string // when SQLite's text form differs
	badIDs     []int64  // ids named by a refusal
}

func TestPutFieldConvertsData(t *testing.T) {
	row := func(vals ...string) []string {
		out := make([]string, len(vals))
		for i, v := range vals {
			out[i] = fmt.Sprintf("%d|%s", i+1, v)
		}
		return out
	}
	cases := []conversion{
		{from: "text", to: "int", values: []any{"12", " 7 ", "", nil, "-3", "+4", "007"}, want: row("12", "7", "∅", "∅", "-3", "4", "7")},
		{from: "text", to: "int", values: []any{"12", "abc", "1.5", "99999999999999999999"}, badIDs: []int64{2, 3, 4}},
		{from: "text", to: "float", values: []any{"1.5", " 2 ", "1e3", ".5"}, want: row("1.5", "2", "1000", "0.5"), wantSQLite: row("1.5", "2.0", "1000.0", "0.5")},
		{from: "text", to: "float", values: []any{"NaN", "0x10", "Inf", "1"}, badIDs: []int64{1, 2, 3}},
		{from: "text", to: "date", values: []any{"2020-01-31", " 1999-12-01 ", ""}, want: row("2020-01-31", "1999-12-01", "∅")},
		{from: "text", to: "date", values: []any{"2020-02-30", "31/01/2020", "2020-01-01"}, badIDs: []int64{1, 2}},
		{from: "text", to: "bool", values: []any{"yes", "No", "1", "f", ""}, want: row("true", "false", "true", "false", "∅"), wantSQLite: row("1", "0", "1", "0", "∅")},
		{from: "text", to: "bool", values: []any{"maybe", "true"}, badIDs: []int64{1}},
		{from: "int", to: "text", values: []any{int64(5), int64(-2), nil}, want: row("5", "-2", "∅")},
		{from: "int", to: "float", values: []any{int64(5)}, want: row("5"), wantSQLite: row("5.0")},
		{from: "int", to: "bool", values: []any{int64(0), int64(1)}, want: row("false", "true"), wantSQLite: row("0", "1")},
		{from: "int", to: "bool", values: []any{int64(2), int64(1)}, badIDs: []int64{1}},
		{from: "int", to: "date", values: []any{nil}, want: row("∅")},
		{from: "int", to: "date", values: []any{int64(5)}, badIDs: []int64{1}},
		{from: "float", to: "int", values: []any{3.0, -2.0}, want: row("3", "-2")},
		{from: "float", to: "int", values: []any{2.5, 1.0}, badIDs: []int64{1}},
		{from: "float", to: "text", values: []any{1.5, 3.0}, want: row("1.5", "3")},
		{from: "float", to: "bool", values: []any{1.0, 0.0}, want: row("true", "false"), wantSQLite: row("1", "0")},
		{from: "bool", to: "text", values: []any{true, false}, want: row("true", "false")},
		{from: "bool", to: "int", values: []any{true, false}, want: row("1", "0")},
		{from: "bool", to: "float", values: []any{true}, want: row("1"), wantSQLite: row("1.0")},
		{from: "date", to: "text", values: []any{"2020-01-31"}, want: row("2020-01-31")},
		{from: "date", to: "int", values: []any{"2020-01-31"}, badIDs: []int64{1}},
	}
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		ctx := context.Background()
		fx := newFixture(t, e)
		for i, c := range cases {
			name := fmt.Sprintf("c%d", i)
			label := fmt.Sprintf("%s → %s %v", c.from, c.to, c.values)
			if _, err := schema.CreateTable(ctx, fx.db, schema.TableDef{Name: name}, fx.now); err != nil {
				t.Fatal(err)
			}
			if _, err := schema.AddField(ctx, fx.db, name, schema.FieldDef{Name: "v", DBType: string(c.from)}, fx.now); err != nil {
				t.Fatal(err)
			}
			// A user index on the column: SQLite must drop and rebuild it
			// around the column swap.
			if _, err := schema.CreateIndex(ctx, fx.db, name, schema.IndexInput{Columns: []string{"v"}}, fx.now); err != nil {
				t.Fatal(err)
			}
			for j, v := range c.values {
				fx.exec(t, `INSERT INTO `+fx.db.Qualify(name)+` (id, v) VALUES (?, ?)`, j+1, v)
			}
			before := fx.values(t, name, "v")
			update := schema.FieldUpdate{DBType: schema.Set(string(c.to))}
			if c.want == nil {
				var err error
				expectRefused(t, fx.db, label, "conversion_failed", func() error {
					_, err = schema.PutField(ctx, fx.db, name, "v", update, fx.now)
					return err
				})
				if got := fx.values(t, name, "v"); !slices.Equal(got, before) {
					t.Errorf("%s: values changed to %v", label, got)
				}
				if e, ok := errs.As(err); ok && fmt.Sprint(e.Extra["ids"]) != fmt.Sprint(c.badIDs) {
					t.Errorf("%s: ids %v, want %v", label, e.Extra["ids"], c.badIDs)
				}
				continue
			}
			if _, err := schema.PutField(ctx, fx.db, name, "v", update, fx.now); err != nil {
				t.Errorf("%s: %v", label, err)
				continue
			}
			want := c.want
			if e == store.SQLite && c.wantSQLite != nil {
				want = c.wantSQLite
			}
			if got := fx.values(t, name, "v"); !slices.Equal(got, want) {
				t.Errorf("%s: values %v, want %v", label, got, want)
			}
			if f := fx.field(t, name, "v"); f.DBType != c.to {
				t.Errorf("%s: db_type %s", label, f.DBType)
			}
			fx.consistent(t, name)
		}
		// A unique field whose converted values collide: nothing changes.
		if _, err := schema.AddField(ctx, fx.db, "people", schema.FieldDef{Name: "num", Unique: true}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.exec(t, `INSERT INTO `+fx.db.Qualify("people")+` (num) VALUES ('1'), (' 1')`)
		expectRefused(t, fx.db, "collision", "unique_violated", func() error {
			_, err := schema.PutField(ctx, fx.db, "people", "num", schema.FieldUpdate{DBType: schema.Set("int")}, fx.now)
			return err
		})
		// A unique field converts and keeps its unique index.
		fx.exec(t, `DELETE FROM `+fx.db.Qualify("people")+` WHERE num = ' 1'`)
		if _, err := schema.PutField(ctx, fx.db, "people", "num", schema.FieldUpdate{DBType: schema.Set("int")}, fx.now); err != nil {
			t.Fatal(err)
		}
		fx.consistent(t, "people")
		if _, err := fx.db.Exec(ctx, `INSERT INTO `+fx.db.Qualify("people")+` (num) VALUES (1)`); err == nil {
			t.Error("the unique index did not survive the conversion")
		}
	})
}
