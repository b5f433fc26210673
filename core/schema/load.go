package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/store"
)

// tableRow and fieldRow are the stored forms of Table and Field: list and
// map settings are JSON text.
type tableRow struct {
	ID       int64 `gorm:"primaryKey"`
	Name     string
	Label    string
	Sort     int
	IDField  *string
	Preview  string
	RS       bool `gorm:"column:rs"`
	RSStrict bool `gorm:"column:rs_strict"`
	// RSGen is only written, at creation (a fresh random value: see
	// migration 0034); triggers move it and core/records reads it.
	RSGen             int64 `gorm:"column:rs_gen"`
	Geodata           bool
	RefMgr            bool `gorm:"column:refmgr"`
	ChronoDensityPath string
	Backlinks         string
	IsPlugin          bool
	PluginOf          *string
	Feature           *string
	Extra             string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

type fieldRow struct {
	ID              int64 `gorm:"primaryKey"`
	TableID         int64
	Name            string
	Label           string
	Type            string
	DBType          string `gorm:"column:db_type"`
	Sort            int
	Readonly        bool
	Hide            bool
	VocabularySet   *string
	GetValuesFromTb *string `gorm:"column:get_values_from_tb"`
	IDFromTb        *string `gorm:"column:id_from_tb"`
	Widget          *string
	Required        bool
	Unique          bool     `gorm:"column:is_unique"`
	Min             *float64 `gorm:"column:min_value"`
	Max             *float64 `gorm:"column:max_value"`
	MaxLength       *int
	Pattern         *string
	DefValue        *string
	Help            *string
	Extra           string
	Feature         *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func jsonList(s string) []string {
	var out []string
	if json.Unmarshal([]byte(s), &out) != nil || out == nil {
		return []string{}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only lists and maps of plain values reach here
	}
	return string(b)
}

func (r *tableRow) toTable() *Table {
	return (&Table{
		ID: r.ID, Name: r.Name, Label: r.Label, Sort: r.Sort, IDField: deref(r.IDField),
		Preview: jsonList(r.Preview), RS: r.RS, RSStrict: r.RSStrict, Geodata: r.Geodata, RefMgr: r.RefMgr,
		ChronoDensityPath: jsonList(r.ChronoDensityPath), Backlinks: jsonList(r.Backlinks),
		IsPlugin: r.IsPlugin, PluginOf: deref(r.PluginOf), Feature: deref(r.Feature),
		Features: map[string]FeatureState{}, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}).withExtra(r.Extra)
}

func (t *Table) withExtra(raw string) *Table {
	var x tableExtra
	if json.Unmarshal([]byte(raw), &x) == nil {
		t.SortField, t.RSField, t.Links = x.SortField, x.RSField, x.Links
	}
	return t
}

func (t *Table) extraJSON() string {
	return mustJSON(tableExtra{SortField: t.SortField, RSField: t.RSField, Links: t.Links})
}

func (r *fieldRow) toField() *Field {
	f := &Field{
		ID: r.ID, TableID: r.TableID, Name: r.Name, Label: r.Label, Type: FieldType(r.Type), DBType: DBType(r.DBType),
		Sort: r.Sort, Readonly: r.Readonly, Hide: r.Hide, VocabularySet: deref(r.VocabularySet),
		GetValuesFromTb: deref(r.GetValuesFromTb), IDFromTb: deref(r.IDFromTb), Widget: deref(r.Widget),
		Required: r.Required, Unique: r.Unique, Min: r.Min, Max: r.Max, MaxLength: r.MaxLength,
		Pattern: deref(r.Pattern), DefValue: deref(r.DefValue), Help: deref(r.Help), Extra: map[string]any{},
		Feature: deref(r.Feature),
	}
	_ = json.Unmarshal([]byte(r.Extra), &f.Extra)
	// A stored disabled:true reads as readonly (SPEC §2.3).
	if d, ok := f.Extra["disabled"].(bool); ok && d {
		f.Readonly = true
	}
	return f
}

// featureRow is a row of sys_table_features.
type featureRow struct {
	TableName  string
	Feature    string
	Plugin     string
	Active     bool
	ChildTable *string
	ChangedAt  time.Time
}

// settingCatalogVersion counts catalog changes; every process compares it
// to its cached copy, so a change made by another server node is seen on
// the next request.
const settingCatalogVersion = "catalog_version"

func catalogVersion(ctx context.Context, db *store.DB) (int64, error) {
	var v string
	err := db.QueryRow(ctx, `SELECT value FROM `+db.Sys("settings")+` WHERE key = ?`, settingCatalogVersion).Scan(&v)
	if err != nil {
		if isNoRows(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("read catalog version: %w", err)
	}
	return strconv.ParseInt(v, 10, 64)
}

// bumpVersion marks the catalog changed; called inside the transaction
// that changes it, at its end. It first brings the search indexes in step
// with the changed catalog (syncSearch).
func bumpVersion(ctx context.Context, tx *store.DB) error {
	if err := syncSearch(ctx, tx); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("settings")+` (key, value) VALUES (?, '1')
		ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(`+tx.Sys("settings")+`.value AS INTEGER) + 1 AS TEXT)`, settingCatalogVersion)
	if err != nil {
		return fmt.Errorf("bump catalog version: %w", err)
	}
	// Every catalog change comes here: the change log tells realtime
	// subscribers (a schema event).
	return changes.Record(ctx, tx, changes.Entry{Op: changes.Schema})
}

// Load reads the whole catalog (two queries).
func Load(ctx context.Context, db *store.DB) (*Catalog, error) { return load(ctx, db) }

// load is Load without the catalog columns named in omit (left at their
// zero value): Materialize reads a catalog restored at an archive's older
// migration step, before columns that shape no table were added.
func load(ctx context.Context, db *store.DB, omit ...string) (*Catalog, error) {
	version, err := catalogVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	var trows []tableRow
	q := db.Gorm.WithContext(ctx).Table(db.GormSys("tables"))
	if len(omit) > 0 {
		q = q.Omit(omit...)
	}
	if err := q.Order("sort, id").Find(&trows).Error; err != nil {
		return nil, fmt.Errorf("load tables: %w", err)
	}
	var frows []fieldRow
	if err := db.Gorm.WithContext(ctx).Table(db.GormSys("fields")).Order("sort, id").Find(&frows).Error; err != nil {
		return nil, fmt.Errorf("load fields: %w", err)
	}
	byID := make(map[int64]*Table, len(trows))
	tables := make([]*Table, 0, len(trows))
	for i := range trows {
		t := trows[i].toTable()
		byID[t.ID] = t
		tables = append(tables, t)
	}
	for i := range frows {
		if t := byID[frows[i].TableID]; t != nil {
			t.Fields = append(t.Fields, frows[i].toField())
		}
	}
	byName := make(map[string]*Table, len(tables))
	for _, t := range tables {
		byName[t.Name] = t
	}
	var feats []featureRow
	if err := db.Gorm.WithContext(ctx).Table(db.GormSys("table_features")).Find(&feats).Error; err != nil {
		return nil, fmt.Errorf("load features: %w", err)
	}
	for _, f := range feats {
		if t := byName[f.TableName]; t != nil {
			t.Features[f.Feature] = FeatureState{Plugin: f.Plugin, Active: f.Active, ChildTable: deref(f.ChildTable)}
		}
	}
	if err := markSearchIndexes(ctx, db, tables); err != nil {
		return nil, err
	}
	return newCatalog(version, tables), nil
}

// Cache keeps each application's catalog in memory and reloads it when
// the stored version moved (a change here or on another node).
type Cache struct {
	mu    sync.Mutex
	byApp map[string]*Catalog
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{byApp: map[string]*Catalog{}} }

// Get returns the current catalog of app: one small query when unchanged.
func (c *Cache) Get(ctx context.Context, app string, db *store.DB) (*Catalog, error) {
	version, err := catalogVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	return c.GetAt(ctx, app, db, version)
}

// SettingCatalogVersion is the sys_settings key of the catalog version,
// for callers that read it with other counters (store.DB.Counters) and
// then ask GetAt.
const SettingCatalogVersion = settingCatalogVersion

// GetAt is Get when the caller has just read the catalog version.
func (c *Cache) GetAt(ctx context.Context, app string, db *store.DB, version int64) (*Catalog, error) {
	c.mu.Lock()
	cached := c.byApp[app]
	c.mu.Unlock()
	if cached != nil && cached.Version == version {
		return cached, nil
	}
	cat, err := Load(ctx, db)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.byApp[app] = cat
	c.mu.Unlock()
	return cat, nil
}
