// Package demo generates an excavation dataset for a new installation
// (make run) and, at a larger size, for the benchmarks: sites, trenches,
// stratigraphic units with relations, finds looking up their unit, and a
// vocabulary of materials. The catalog is built through the schema API and
// the data is generated from a seed, so every run produces the same data.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Size sets how much data Seed generates.
type Size struct {
	Sites           int
	TrenchesPerSite int
	UnitsPerTrench  int
	FindsPerUnit    int
	Relations       bool // stratigraphic relations between consecutive units
}

// Small is the dataset of a new installation: 3 sites, 6 trenches,
// 48 units, 288 finds.
var Small = Size{Sites: 3, TrenchesPerSite: 2, UnitsPerTrench: 8, FindsPerUnit: 6, Relations: true}

// Bench is the benchmark dataset: 2,000 units and 100,000 finds.
var Bench = Size{Sites: 10, TrenchesPerSite: 10, UnitsPerTrench: 20, FindsPerUnit: 50}

// Materials is the demo vocabulary of find materials.
var Materials = []string{"pottery", "bone", "bronze", "iron", "glass", "flint", "charcoal", "shell"}

var unitTypes = []string{"layer", "cut", "fill", "wall", "floor"}

// Catalog creates the demo tables and fields.
func Catalog(ctx context.Context, db *store.DB, now time.Time) error {
	type fdef = schema.FieldDef
	zero := 0.0
	tables := []struct {
		def    schema.TableDef
		fields []fdef
		config schema.TableConfig
	}{
		{schema.TableDef{Name: "sites", Label: "Sites"}, []fdef{
			{Name: "name", Label: "Name", Required: true, Unique: true},
			{Name: "region", Label: "Region"},
			{Name: "description", Label: "Description", Type: "md"},
		}, schema.TableConfig{IDField: schema.Set("name")}},
		{schema.TableDef{Name: "trenches", Label: "Trenches"}, []fdef{
			{Name: "code", Label: "Code", Required: true, Unique: true},
			{Name: "site", Label: "Site", Type: "select", IDFromTb: "sites", Required: true},
			{Name: "opened_on", Label: "Opened on", Type: "date"},
		}, schema.TableConfig{IDField: schema.Set("code")}},
		{schema.TableDef{Name: "units", Label: "Stratigraphic units"}, []fdef{
			{Name: "code", Label: "Code", Required: true, Unique: true},
			{Name: "trench", Label: "Trench", Type: "select", IDFromTb: "trenches", Required: true},
			{Name: "type", Label: "Type", Type: "select"},
			{Name: "description", Label: "Description", Type: "long_text"},
		}, schema.TableConfig{IDField: schema.Set("code"), RS: schema.RSOn(true)}},
		{schema.TableDef{Name: "finds", Label: "Finds"}, []fdef{
			{Name: "label", Label: "Inventory number", Required: true, Unique: true},
			{Name: "unit", Label: "Unit", Type: "select", IDFromTb: "units", Required: true},
			{Name: "material", Label: "Material", Type: "select", VocabularySet: "materials"},
			{Name: "description", Label: "Description", Type: "text"},
			{Name: "weight", Label: "Weight (g)", DBType: "float", Min: &zero},
			{Name: "found_on", Label: "Found on", Type: "date"},
			{Name: "complete", Label: "Complete", Type: "boolean"},
		}, schema.TableConfig{IDField: schema.Set("label"),
			Preview: schema.Set([]string{"label", "unit", "material", "weight", "found_on"})}},
	}
	for _, t := range tables {
		if _, err := schema.CreateTable(ctx, db, t.def, now); err != nil {
			return fmt.Errorf("demo table %s: %w", t.def.Name, err)
		}
		for _, f := range t.fields {
			if _, err := schema.AddField(ctx, db, t.def.Name, f, now); err != nil {
				return fmt.Errorf("demo field %s.%s: %w", t.def.Name, f.Name, err)
			}
		}
		if _, err := schema.PutTable(ctx, db, t.def.Name, t.config, now); err != nil {
			return fmt.Errorf("demo table %s settings: %w", t.def.Name, err)
		}
	}
	for i, m := range Materials {
		if _, err := db.Exec(ctx, `INSERT INTO `+db.Sys("vocabularies")+` (voc, value, sort) VALUES (?, ?, ?)`, "materials", m, i); err != nil {
			return fmt.Errorf("demo vocabulary: %w", err)
		}
	}
	return nil
}

// Seed creates the demo catalog in app and fills it. Rows are inserted in
// batches inside one transaction per table; relations go through the
// records API, which checks them.
func Seed(ctx context.Context, app *apps.App, size Size, seed uint64, now time.Time) error {
	db := app.DB
	if err := Catalog(ctx, db, now); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	regions := []string{"Campania", "Lazio", "Sicilia", "Toscana", "Puglia"}
	var siteRows, trenchRows, unitRows, findRows [][]any
	for s := 1; s <= size.Sites; s++ {
		siteRows = append(siteRows, []any{s, fmt.Sprintf("Site %02d", s), regions[rng.IntN(len(regions))],
			fmt.Sprintf("Excavated since **%d**.", 1950+rng.IntN(70))})
		for tr := 1; tr <= size.TrenchesPerSite; tr++ {
			tid := (s-1)*size.TrenchesPerSite + tr
			trenchRows = append(trenchRows, []any{tid, fmt.Sprintf("S%02d-T%02d", s, tr), s,
				now.AddDate(0, 0, -rng.IntN(3000)).Format("2006-01-02")})
			for u := 1; u <= size.UnitsPerTrench; u++ {
				uid := (tid-1)*size.UnitsPerTrench + u
				unitRows = append(unitRows, []any{uid, fmt.Sprintf("US %d", uid), tid, unitTypes[rng.IntN(len(unitTypes))],
					fmt.Sprintf("Unit %d of trench %d", u, tid)})
				for f := 1; f <= size.FindsPerUnit; f++ {
					fid := (uid-1)*size.FindsPerUnit + f
					findRows = append(findRows, []any{fid, fmt.Sprintf("INV-%06d", fid), uid, Materials[rng.IntN(len(Materials))],
						fmt.Sprintf("Find %d of unit %d", f, uid), float64(rng.IntN(50000)) / 10,
						now.AddDate(0, 0, -rng.IntN(3000)).Format("2006-01-02"), rng.IntN(4) == 0})
				}
			}
		}
	}
	for _, batch := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"sites", []string{"id", "name", "region", "description"}, siteRows},
		{"trenches", []string{"id", "code", "site", "opened_on"}, trenchRows},
		{"units", []string{"id", "code", "trench", "type", "description"}, unitRows},
		{"finds", []string{"id", "label", "unit", "material", "description", "weight", "found_on", "complete"}, findRows},
	} {
		if err := insertRows(ctx, db, batch.table, batch.cols, batch.rows); err != nil {
			return err
		}
		if db.Engine == store.Postgres {
			// Fresh statistics after a bulk load, or the planner guesses
			// (and walks the primary key instead of the lookup's index).
			if _, err := db.Exec(ctx, `ANALYZE `+db.Qualify(batch.table)); err != nil {
				return fmt.Errorf("analyze %s: %w", batch.table, err)
			}
		}
	}
	if !size.Relations {
		return nil
	}
	return seedRelations(ctx, app, size, now)
}

// insertRows writes rows in multi-row INSERTs of up to 200 rows, in one
// transaction, then moves PostgreSQL's id sequence past the ids given.
func insertRows(ctx context.Context, db *store.DB, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = db.Engine.Quote(c)
	}
	marks := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	return db.Tx(ctx, func(tx *store.DB) error {
		for start := 0; start < len(rows); start += 200 {
			end := min(start+200, len(rows))
			args := make([]any, 0, (end-start)*len(cols))
			for _, r := range rows[start:end] {
				for _, v := range r {
					if b, ok := v.(bool); ok && tx.Engine == store.SQLite {
						v = map[bool]int{false: 0, true: 1}[b]
					}
					args = append(args, v)
				}
			}
			q := `INSERT INTO ` + tx.Qualify(table) + ` (` + strings.Join(quoted, ", ") + `) VALUES ` +
				strings.TrimSuffix(strings.Repeat(marks+", ", end-start), ", ")
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return fmt.Errorf("demo rows of %s: %w", table, err)
			}
		}
		if tx.Engine == store.Postgres {
			_, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence(?, 'id'), (SELECT MAX("id") FROM `+tx.Qualify(table)+`))`, tx.Schema()+"."+table)
			return err
		}
		return nil
	})
}

// seedRelations gives each trench a sequence: every unit covers the next
// one, and every fourth unit is cut by the one after it.
func seedRelations(ctx context.Context, app *apps.App, size Size, now time.Time) error {
	cat, err := schema.Load(ctx, app.DB)
	if err != nil {
		return err
	}
	units, _ := cat.Table("units")
	sc := &records.Scope{DB: app.DB, Catalog: cat, Table: units, Level: auth.SuperAdmin,
		Actor: &auth.Actor{Privilege: auth.SuperAdmin}, Now: func() time.Time { return now }}
	trenches := size.Sites * size.TrenchesPerSite
	for tid := 1; tid <= trenches; tid++ {
		for u := 1; u < size.UnitsPerTrench; u++ {
			uid := int64((tid-1)*size.UnitsPerTrench + u)
			relation := int64(5) // covers
			if u%4 == 0 {
				relation = 2 // is cut by
			}
			if _, err := records.AddRelation(ctx, sc, uid, relation, uid+1); err != nil {
				return fmt.Errorf("demo relation %d-%d: %w", uid, uid+1, err)
			}
		}
	}
	return nil
}
