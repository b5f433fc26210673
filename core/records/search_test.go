package records_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/testenv"
)

// restricted builds sites and finds (with a samples plugin table) and
// returns the scope of a reader on finds whose row restriction keeps the
// finds with keep = 'yes', and a function giving the same reader's scope
// on another table (restricted to sites with keep = 'yes' too).
func restricted(t *testing.T, e store.Engine) (*records.Scope, func(string) (*records.Scope, error)) {
	t.Helper()
	a := testenv.NewApp(t, testenv.NewRegistry(t, e), "dig")
	ctx, now, db := context.Background(), time.Now().UTC(), a.DB
	for _, td := range []struct {
		def    schema.TableDef
		fields []schema.FieldDef
	}{
		{schema.TableDef{Name: "sites", Label: "Sites"}, []schema.FieldDef{{Name: "name", Label: "Name"}, {Name: "keep", Label: "Keep"}}},
		{schema.TableDef{Name: "finds", Label: "Finds"}, []schema.FieldDef{{Name: "label", Label: "Label"}, {Name: "keep", Label: "Keep"},
			{Name: "weight", Label: "Weight", DBType: "float"}, {Name: "site", Label: "Site", Type: "select", IDFromTb: "sites"},
			{Name: "site_name", Label: "Site name", Type: "select", GetValuesFromTb: "sites:name"}}},
		{schema.TableDef{Name: "finds_samples", Label: "Samples", PluginOf: "finds"}, []schema.FieldDef{{Name: "lab", Label: "Lab"}}},
	} {
		if _, err := schema.CreateTable(ctx, db, td.def, now); err != nil {
			t.Fatal(err)
		}
		for _, fd := range td.fields {
			if _, err := schema.AddField(ctx, db, td.def.Name, fd, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := schema.PutTable(ctx, db, "sites", schema.TableConfig{IDField: schema.Patch[string]{Set: true, Value: "name"}}, now); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, n := range []string{"Visible site", "Hidden site"} {
		exec(`INSERT INTO `+db.Qualify("sites")+` (id, name, keep) VALUES (?, ?, ?)`, i+1, n, map[bool]string{true: "yes", false: "no"}[i == 0])
	}
	// 40 finds: every third hidden; labels repeat, some missing.
	for i := 1; i <= 40; i++ {
		var label, weight any
		if i%5 != 0 {
			label = fmt.Sprintf("L%d", i%4)
		}
		if i%7 != 0 {
			weight = float64(i % 3)
		}
		keep := "yes"
		if i%3 == 0 {
			keep = "no"
			label = "secret"
		}
		exec(`INSERT INTO `+db.Qualify("finds")+` (id, label, keep, weight, site) VALUES (?, ?, ?, ?, ?)`, i, label, keep, weight, 1+i%2)
		exec(`INSERT INTO `+db.Qualify("finds_samples")+` (id_link, lab) VALUES (?, ?)`, i, fmt.Sprintf("lab %s %d", keep, i%2))
	}
	cat, err := schema.Load(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	scope := func(table string) (*records.Scope, error) {
		tb, ok := cat.Table(table)
		if !ok {
			return nil, schema.ErrTableNotFound
		}
		return &records.Scope{DB: db, Catalog: cat, Table: tb, Actor: &auth.Actor{UserID: 99, Privilege: auth.Reader}, Level: auth.Reader,
			Restrict: &records.Cond{SQL: db.Qualify(table) + `."keep" = ?`, Args: []any{"yes"}}}, nil
	}
	s, _ := scope("finds")
	return s, scope
}

// collect is a RowWriter that keeps what it is given.
type collect struct {
	header   []records.FieldRef
	rows     [][]any
	finished bool
}

func (c *collect) Header(cols []records.FieldRef) error { c.header = cols; return nil }
func (c *collect) Row(vals []any) error                 { c.rows = append(c.rows, vals); return nil }
func (c *collect) Finish() error                        { c.finished = true; return nil }
func (c *collect) Close() error                         { return nil }

func TestSearchHelpersKeepTheRowRestriction(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		s, scopeOf := restricted(t, e)
		ctx := context.Background()

		vals, err := records.Values(ctx, s, records.ValuesQuery{Field: "label"})
		if err != nil || fmt.Sprint(vals) != "[L0 L1 L2 L3]" {
			t.Errorf("values of the visible rows: %v %v", vals, err)
		}
		vals, err = records.Values(ctx, s, records.ValuesQuery{Field: "finds_samples:lab"})
		if err != nil || fmt.Sprint(vals) != "[lab yes 0 lab yes 1]" {
			t.Errorf("plugin values of the visible rows: %v %v", vals, err)
		}
		cands, err := records.LinkCandidates(ctx, s, "3", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cands {
			if c.ID%3 == 0 {
				t.Errorf("a hidden record is a candidate: %v", c)
			}
		}
		if len(cands) == 0 {
			t.Error("no candidates")
		}
		for fld, want := range map[string]string{"site": "id_from_tb [{1 Visible site}]", "site_name": "db [{Visible site Visible site}]"} {
			src, opts, err := records.FieldOptions(ctx, s, records.FieldOptionsQuery{Field: fld}, scopeOf)
			if got := fmt.Sprint(src, " ", opts); err != nil || got != want {
				t.Errorf("options of %s: %s %v, want %s", fld, got, err, want)
			}
		}
		// Uniqueness is table-wide: a save would clash with a hidden row.
		if u, err := records.CheckUnique(ctx, s, "label", "secret", 0); err != nil || u {
			t.Errorf("check-unique of a hidden row's value: %v %v", u, err)
		}
		if u, err := records.CheckUnique(ctx, s, "weight", "1.0", 1); err != nil || u {
			t.Errorf("check-unique of a number: %v %v", u, err)
		}
		// A caller who may not read the source table gets no options.
		lowered := func(table string) (*records.Scope, error) {
			sc, err := scopeOf(table)
			if sc != nil {
				sc.Level = auth.Pending
			}
			return sc, err
		}
		if _, _, err := records.FieldOptions(ctx, s, records.FieldOptionsQuery{Field: "site"}, lowered); !errors.Is(err, auth.ErrNotEnoughPrivilege) {
			t.Errorf("options from an unreadable table: %v", err)
		}
	})
}

// TestExportKeysetMatchesList runs exports in batches of 3 rows, so that
// ties and NULLs of every order straddle batch boundaries, and checks them
// row for row against the list under the same restriction and condition.
func TestExportKeysetMatchesList(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		s, _ := restricted(t, e)
		ctx := context.Background()
		afterFour := &records.Cond{SQL: s.DB.Qualify("finds") + `."id" > ?`, Args: []any{4}}
		for _, c := range []struct {
			name string
			q    records.ExportQuery
		}{
			{"by id", records.ExportQuery{}},
			{"by id desc", records.ExportQuery{SortDir: "desc"}},
			{"text with ties and NULLs", records.ExportQuery{SortField: "label", Columns: []string{"label", "weight"}}},
			{"text desc", records.ExportQuery{SortField: "label", SortDir: "desc", Columns: []string{"label"}}},
			{"number with a condition", records.ExportQuery{SortField: "weight", Columns: []string{"weight", "label"}, Where: afterFour}},
			{"number desc", records.ExportQuery{SortField: "weight", SortDir: "DESC", Columns: []string{"weight"}}},
			{"lookup ids, system column", records.ExportQuery{SortField: "site", Columns: []string{"site", "creator"}}},
		} {
			q := c.q
			t.Run(c.name, func(t *testing.T) {
				list, err := records.List(ctx, s, records.ListQuery{PerPage: records.MaxPerPage, SortField: q.SortField, SortDir: q.SortDir, Columns: q.Columns, Where: q.Where})
				if err != nil {
					t.Fatal(err)
				}
				for _, batch := range []int{1, 3, 1000} {
					q.Batch = batch
					exp, err := records.NewExport(s, q)
					if err != nil {
						t.Fatal(err)
					}
					var w collect
					n, err := exp.Run(ctx, &w)
					if err != nil || !w.finished || n != int64(len(list.Data)) {
						t.Fatalf("batch %d: %d rows, finished %v, %v; the list has %d", batch, n, w.finished, err, len(list.Data))
					}
					if !reflect.DeepEqual(w.header, list.Fields) {
						t.Errorf("header %v, want %v", w.header, list.Fields)
					}
					for i, row := range w.rows {
						for j, f := range list.Fields {
							if !reflect.DeepEqual(row[j], list.Data[i][f.Name]) {
								t.Fatalf("batch %d row %d %s: %#v, want %#v", batch, i, f.Name, row[j], list.Data[i][f.Name])
							}
						}
					}
				}
			})
		}
	})
}

func TestExportChecksBeforeWriting(t *testing.T) {
	testenv.Each(t, func(t *testing.T, e store.Engine) {
		t.Parallel()
		s, _ := restricted(t, e)
		for _, q := range []records.ExportQuery{{Columns: []string{"nope"}}, {SortField: "nope"}, {SortDir: "sideways"}} {
			if _, err := records.NewExport(s, q); err == nil {
				t.Errorf("%+v was accepted", q)
			}
		}
		// A query that fails fails before the header: nothing was written.
		exp, err := records.NewExport(s, records.ExportQuery{Where: &records.Cond{SQL: `no_such_function(1) = 1`}})
		if err != nil {
			t.Fatal(err)
		}
		var w collect
		if _, err := exp.Run(context.Background(), &w); err == nil || w.header != nil || w.finished {
			t.Errorf("failing query: err %v, header %v", err, w.header)
		}
		for name, code := range map[string]string{"": "parameter_missing", "pdf": "invalid_parameter"} {
			if _, err := records.ExportFormatOf(name); errs.CodeOf(err) != code {
				t.Errorf("format %q: %v", name, err)
			}
		}
	})
}
