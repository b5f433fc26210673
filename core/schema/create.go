package schema

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// TableDef is the input of CreateTable.
type TableDef struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	IsPlugin bool   `json:"is_plugin"`
	PluginOf string `json:"plugin_of"`
	// Feature marks a child table created by a plugin feature; only
	// ActivateFeature sets it, never a client.
	Feature string `json:"-"`
}

// CreateTable adds a table to the catalog and creates it, in one
// transaction. A plugin table gets id and id_link (to its parent, rows
// deleted with it); a normal table gets id and creator.
func CreateTable(ctx context.Context, db *store.DB, def TableDef, now time.Time) (*Table, error) {
	def.Name = strings.TrimSpace(def.Name)
	def.PluginOf = strings.TrimSpace(def.PluginOf)
	if def.Name == "" {
		return nil, ErrParameterMissing.With("parameter", "name")
	}
	if err := CheckTableName(def.Name); err != nil {
		return nil, err
	}
	if def.Label == "" {
		def.Label = def.Name
	}
	var out *Table
	err := db.Tx(ctx, func(tx *store.DB) error {
		cat, err := Load(ctx, tx)
		if err != nil {
			return err
		}
		if _, ok := cat.Table(def.Name); ok {
			return ErrTableExists
		}
		if exists, err := physicalTableExists(ctx, tx, def.Name); err != nil {
			return err
		} else if exists {
			return ErrTableExists.With("detail", "a table of that name exists outside the catalog")
		}
		var parent *Table
		if def.PluginOf != "" {
			p, ok := cat.Table(def.PluginOf)
			if !ok || p.IsPlugin {
				return ErrInvalidPluginOf
			}
			parent, def.IsPlugin = p, true
		}
		// A plugin table without plugin_of is created detached, as
		// BraDypUS clients do; PUT /config/table/{tb} with plugin_of
		// attaches it (AttachPluginTable).
		row := tableRow{Name: def.Name, Label: def.Label, Sort: len(cat.Tables), Preview: "[]", Extra: "{}",
			ChronoDensityPath: "[]", Backlinks: "[]", IsPlugin: def.IsPlugin, PluginOf: nullable(def.PluginOf),
			Feature: nullable(def.Feature), CreatedAt: now, UpdatedAt: now,
			// New tables check their relations (issue 33); the BraDypUS
			// upgrade turns it off for the tables it adopts.
			RSStrict: true, RSGen: rand.Int64()}
		if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("tables")).Create(&row).Error; err != nil {
			return fmt.Errorf("insert table %s: %w", def.Name, err)
		}
		out = row.toTable()
		for _, stmt := range createTableSQL(tx, out, parent) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("create table %s: %w", def.Name, err)
			}
		}
		return bumpVersion(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// physicalTableExists looks in the engine's own catalog, so a catalog row
// and a stray table can never be confused.
func physicalTableExists(ctx context.Context, db *store.DB, name string) (bool, error) {
	var n int
	var err error
	if db.Engine == store.Postgres {
		err = db.QueryRow(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?`, db.Schema(), name).Scan(&n)
	} else {
		err = db.QueryRow(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	}
	return n > 0, err
}

// FieldDef is the input of AddField (CONTRACT §6). Legacy parameters
// (disabled, force_default, active_link) are accepted; disabled:true is
// kept and reads as readonly, the others are ignored.
type FieldDef struct {
	Name            string `json:"name"`
	Label           string `json:"label"`
	Type            string `json:"type"`
	DBType          string `json:"db_type"`
	Readonly        bool   `json:"readonly"`
	Hide            bool   `json:"hide"`
	VocabularySet   string `json:"vocabulary_set"`
	GetValuesFromTb string `json:"get_values_from_tb"`
	IDFromTb        string `json:"id_from_tb"`
	Widget          string `json:"widget"`
	// CheckWidget asks that Widget name an installed widget (the config
	// API sets it; a schema copied from elsewhere, DBML or an upgrade,
	// keeps names whose widgets may be installed later).
	CheckWidget bool     `json:"-"`
	Required    bool     `json:"required"`
	Unique      bool     `json:"unique"`
	Min         *float64 `json:"min"`
	Max         *float64 `json:"max"`
	MaxLength   *int     `json:"max_length"`
	Pattern     string   `json:"pattern"`
	DefValue    string   `json:"def_value"`
	Help        string   `json:"help"`
	Disabled    bool     `json:"disabled"`
	// Check and Dic are BraDypUS's validation list and inline values
	// (legacy.go): read into the settings above, kept for reading back.
	Check wire.List `json:"check"`
	Dic   wire.List `json:"dic"`
	// LinkSchemes replaces DefaultLinkSchemes for a link_out field.
	LinkSchemes wire.List `json:"link_schemes"`
	// SearchIndex asks for a search index on a text field (true) or
	// refuses one (false); null or absent: the field has one while it is a
	// preview field (search_index.go).
	SearchIndex *bool `json:"search_index"`
	// VocabFree lets a select or multi_select field bound to a vocabulary
	// store values outside it ("allow other values"); without it a save
	// refuses them (rule "vocabulary"). combo_select is always free.
	VocabFree bool `json:"vocab_free"`
	// DateMin and DateMax bound a date field (min and max sent as dates).
	DateMin string `json:"-"`
	DateMax string `json:"-"`
	// Feature marks a column added by a plugin feature; only
	// ActivateFeature sets it, never a client.
	Feature string `json:"-"`
}

// reservedColumns may not be field names: they are the system columns.
var reservedColumns = []string{ColID, ColCreator, ColIDLink}

// checkFieldDef validates def against the catalog and fills defaults.
func checkFieldDef(cat *Catalog, t *Table, def *FieldDef) (*Field, error) {
	def.Name = strings.TrimSpace(def.Name)
	if err := def.normalizeLegacy(); err != nil {
		return nil, err
	}
	if def.Name == "" {
		return nil, ErrParameterMissing.With("parameter", "name")
	}
	if err := CheckFieldName(def.Name); err != nil {
		return nil, err
	}
	ft := FieldType(def.Type)
	if def.Type == "" {
		ft = TypeText
	}
	if !slices.Contains(FieldTypes, ft) {
		return nil, ErrInvalidFieldType.With("allowed", FieldTypes)
	}
	if !ft.IsSelect() {
		for param, v := range map[string]string{"vocabulary_set": def.VocabularySet, "get_values_from_tb": def.GetValuesFromTb, "id_from_tb": def.IDFromTb} {
			if v != "" {
				return nil, ErrInvalidParameter.With("parameter", param).With("detail", "only select, combo_select and multi_select take "+param)
			}
		}
	}
	if def.IDFromTb != "" {
		ref, ok := cat.Table(def.IDFromTb)
		if !ok || ref.IsPlugin {
			return nil, ErrInvalidParameter.With("parameter", "id_from_tb").With("detail", "id_from_tb names an existing, non-plugin table")
		}
		if def.GetValuesFromTb != "" || def.VocabularySet != "" {
			return nil, ErrInvalidParameter.With("parameter", "id_from_tb").With("detail", "a lookup takes its values from id_from_tb alone")
		}
	}
	if def.GetValuesFromTb != "" {
		tb, fld, ok := strings.Cut(def.GetValuesFromTb, ":")
		ref, tok := cat.Table(tb)
		if !ok || !tok {
			return nil, ErrInvalidParameter.With("parameter", "get_values_from_tb").With("detail", "get_values_from_tb is table:field of an existing field")
		}
		if _, fok := ref.Field(fld); !fok {
			return nil, ErrInvalidParameter.With("parameter", "get_values_from_tb").With("detail", "get_values_from_tb is table:field of an existing field")
		}
	}
	dbt := DefaultDBType(ft, def.IDFromTb != "")
	if def.DBType != "" {
		dbt = DBType(def.DBType)
		if !slices.Contains(DBTypes, dbt) {
			return nil, ErrInvalidDBType
		}
		if def.IDFromTb != "" && dbt != DBInt {
			return nil, ErrInvalidParameter.With("parameter", "db_type").With("detail", "a lookup stores an integer id")
		}
	}
	if def.Pattern != "" {
		if _, err := regexp.Compile(def.Pattern); err != nil {
			return nil, ErrInvalidParameter.With("parameter", "pattern").With("detail", err.Error())
		}
	}
	if def.Min != nil && def.Max != nil && *def.Min > *def.Max {
		return nil, ErrInvalidParameter.With("parameter", "min").With("detail", "min is greater than max")
	}
	if def.MaxLength != nil && *def.MaxLength <= 0 {
		return nil, ErrInvalidParameter.With("parameter", "max_length").With("detail", "max_length must be positive")
	}
	if _, exists := t.Field(def.Name); exists {
		return nil, ErrFieldExists
	}
	label := def.Label
	if label == "" {
		label = def.Name
	}
	extra := map[string]any{}
	if def.Disabled {
		extra["disabled"] = true
	}
	def.legacyExtra(extra)
	if err := def.applyDateBounds(dbt, extra); err != nil {
		return nil, err
	}
	if err := def.applyLinkSchemes(ft, extra); err != nil {
		return nil, err
	}
	def.applySearchIndex(extra)
	def.applyVocabFree(ft, extra)
	return &Field{
		TableID: t.ID, Name: def.Name, Label: label, Type: ft, DBType: dbt, Sort: len(t.Fields),
		Readonly: def.Readonly || def.Disabled, Hide: def.Hide, VocabularySet: def.VocabularySet,
		GetValuesFromTb: def.GetValuesFromTb, IDFromTb: def.IDFromTb, Widget: def.Widget,
		Required: def.Required, Unique: def.Unique, Min: def.Min, Max: def.Max, MaxLength: def.MaxLength,
		Pattern: def.Pattern, DefValue: def.DefValue, Help: def.Help, Extra: extra, Feature: def.Feature,
	}, nil
}

func fieldToRow(f *Field, now time.Time) *fieldRow {
	return &fieldRow{
		ID: f.ID, TableID: f.TableID, Name: f.Name, Label: f.Label, Type: string(f.Type), DBType: string(f.DBType),
		Sort: f.Sort, Readonly: f.Readonly, Hide: f.Hide, VocabularySet: nullable(f.VocabularySet),
		GetValuesFromTb: nullable(f.GetValuesFromTb), IDFromTb: nullable(f.IDFromTb), Widget: nullable(f.Widget),
		Required: f.Required, Unique: f.Unique, Min: f.Min, Max: f.Max, MaxLength: f.MaxLength,
		Pattern: nullable(f.Pattern), DefValue: nullable(f.DefValue), Help: nullable(f.Help),
		Extra: mustJSON(f.Extra), Feature: nullable(f.Feature), CreatedAt: now, UpdatedAt: now,
	}
}

// AddField adds a field to the catalog and its column to the table, in one
// transaction.
func AddField(ctx context.Context, db *store.DB, table string, def FieldDef, now time.Time) (*Field, error) {
	var out *Field
	err := db.Tx(ctx, func(tx *store.DB) error {
		cat, err := Load(ctx, tx)
		if err != nil {
			return err
		}
		t, ok := cat.Table(table)
		if !ok {
			return ErrTableNotFound
		}
		f, err := checkFieldDef(cat, t, &def)
		if err == nil && def.CheckWidget {
			err = checkWidget(ctx, tx, f.Widget)
		}
		if err != nil {
			return err
		}
		row := fieldToRow(f, now)
		if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("fields")).Create(row).Error; err != nil {
			return fmt.Errorf("insert field %s.%s: %w", table, f.Name, err)
		}
		f.ID = row.ID
		for _, stmt := range addFieldSQL(tx, t, f) {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("add column %s.%s: %w", table, f.Name, err)
			}
		}
		out = f
		return bumpVersion(ctx, tx)
	})
	if err == nil {
		err = markSearchIndexes(ctx, db, []*Table{{Fields: []*Field{out}}})
	}
	return out, err
}

// checkWidget refuses a widget parameter naming no installed widget. The
// widgets live in sys_widgets (core/widgets, which keeps the table; it
// sits above schema in the imports, so the one query is made here).
func checkWidget(ctx context.Context, tx *store.DB, name string) error {
	if name == "" {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Sys("widgets")+` WHERE name = ?`, name).Scan(&n); err != nil {
		return fmt.Errorf("check widget %s: %w", name, err)
	}
	if n == 0 {
		return ErrInvalidParameter.With("parameter", "widget").With("detail", "no widget of this name is installed (GET /widgets)")
	}
	return nil
}

// CheckFieldDef validates def as AddField would add it to t, with cat as
// the catalog it would see, and returns the field without writing
// anything: for previews of a change (a DBML import) whose tables may not
// exist yet, cat and t can be built in memory (NewCatalog).
func CheckFieldDef(cat *Catalog, t *Table, def FieldDef) (*Field, error) {
	return checkFieldDef(cat, t, &def)
}
