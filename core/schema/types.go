package schema

import (
	"slices"
	"sync"
	"time"
)

// FieldType is how a field is edited and shown (SPEC §2.3).
type FieldType string

const (
	TypeText        FieldType = "text"
	TypeLongText    FieldType = "long_text"
	TypeMarkdown    FieldType = "md"
	TypeSelect      FieldType = "select"
	TypeComboSelect FieldType = "combo_select"
	TypeMultiSelect FieldType = "multi_select"
	TypeDate        FieldType = "date"
	TypeBoolean     FieldType = "boolean"
	TypeSlider      FieldType = "slider"
	TypeLinkTo      FieldType = "link_to"
	TypeLinkOut     FieldType = "link_out"
)

// FieldTypes lists every allowed field type.
var FieldTypes = []FieldType{TypeText, TypeLongText, TypeMarkdown, TypeSelect, TypeComboSelect,
	TypeMultiSelect, TypeDate, TypeBoolean, TypeSlider, TypeLinkTo, TypeLinkOut}

// IsSelect reports whether the type takes a value list (vocabulary_set,
// get_values_from_tb, id_from_tb).
func (t FieldType) IsSelect() bool {
	return t == TypeSelect || t == TypeComboSelect || t == TypeMultiSelect
}

// IsText reports whether quick search looks into fields of this type.
func (t FieldType) IsText() bool {
	switch t {
	case TypeText, TypeLongText, TypeMarkdown, TypeSelect, TypeComboSelect, TypeMultiSelect, TypeLinkOut:
		return true
	}
	return false
}

// DBType is how a field is stored.
type DBType string

const (
	DBText  DBType = "text"
	DBInt   DBType = "int"
	DBFloat DBType = "float"
	DBDate  DBType = "date" // ISO yyyy-mm-dd; PostgreSQL date, SQLite text
	DBBool  DBType = "bool"
)

// DBTypes lists every storage type.
var DBTypes = []DBType{DBText, DBInt, DBFloat, DBDate, DBBool}

// DefaultDBType is the storage of a field type when none is given.
func DefaultDBType(t FieldType, lookup bool) DBType {
	switch {
	case lookup:
		return DBInt // id_from_tb stores the id of the referenced record
	case t == TypeBoolean:
		return DBBool
	case t == TypeSlider:
		return DBInt
	case t == TypeDate:
		return DBDate
	}
	return DBText
}

// Physical columns every user table has besides its fields.
const (
	ColID      = "id"
	ColCreator = "creator" // normal tables: who created the row (nullable)
	ColIDLink  = "id_link" // plugin tables: the parent row
)

// Table is a user table of the catalog.
type Table struct {
	ID      int64
	Name    string
	Label   string
	Sort    int
	IDField string // "" when none configured
	Preview []string
	RS      bool
	// RSStrict refuses a stratigraphic relation that would close a cycle
	// of above/below (core/records.AddRelation): on for tables created
	// now, off for tables that existed before migration 0034 and for
	// those the BraDypUS upgrade adopts, until an admin turns it on.
	RSStrict          bool
	Geodata           bool
	RefMgr            bool
	ChronoDensityPath []string
	Backlinks         []string // "refTb:viaTb:fkCol"
	IsPlugin          bool
	PluginOf          string // parent table of a plugin table ("" while a BraDypUS client has not attached it yet)
	// SortField, RSField and Links are BraDypUS table settings (legacy
	// table config: "order", "rs" as a field name, "link").
	SortField string
	RSField   string
	Links     []TableLink
	Feature   string // the plugin feature that created this child table ("" otherwise)
	// Features are the plugin features ever activated on this table, by
	// name; inactive ones keep their columns and child table, hidden.
	Features  map[string]FeatureState
	CreatedAt time.Time
	UpdatedAt time.Time

	Fields []*Field // in display order
}

// TableLink is a declared link to another table (BraDypUS "link"): the
// pairs of this table's field and the other table's field that match.
type TableLink struct {
	OtherTb string          `json:"other_tb"`
	Fld     []TableLinkPair `json:"fld"`
}

// TableLinkPair is one matching pair of a TableLink.
type TableLinkPair struct {
	My    string `json:"my"`
	Other string `json:"other"`
}

// tableExtra is the stored form of the legacy settings (sys_tables.extra).
type tableExtra struct {
	SortField string      `json:"order,omitempty"`
	RSField   string      `json:"rs,omitempty"`
	Links     []TableLink `json:"link,omitempty"`
}

// Field is a column of a user table with its configuration.
type Field struct {
	ID              int64
	TableID         int64
	Name            string
	Label           string
	Type            FieldType
	DBType          DBType
	Sort            int
	Readonly        bool
	Hide            bool
	VocabularySet   string
	GetValuesFromTb string // "tb:field"
	IDFromTb        string // referenced table of a lookup
	Widget          string
	Required        bool
	Unique          bool
	Min             *float64
	Max             *float64
	MaxLength       *int
	Pattern         string
	DefValue        string // may hold %today% or %current_user%
	Help            string
	Extra           map[string]any // legacy or unknown parameters, kept
	Feature         string         // the plugin feature that added this column ("" otherwise)
	// SearchIndexed reports that the field's search index exists (read
	// from the database with the catalog; see search_index.go).
	SearchIndexed bool
}

// FeatureState is a plugin feature's activation on a table.
type FeatureState struct {
	Plugin     string
	Active     bool
	ChildTable string // the child table it created, if any
}

// Field returns the table's field called name.
func (t *Table) Field(name string) (*Field, bool) {
	for _, f := range t.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// HasCreator reports whether rows record their creator (not plugin tables).
func (t *Table) HasCreator() bool { return !t.IsPlugin }

// SystemColumns are the physical columns that are not fields.
func (t *Table) SystemColumns() []string {
	if t.IsPlugin {
		return []string{ColID, ColIDLink}
	}
	return []string{ColID, ColCreator}
}

// IsSystemColumn reports whether name is one of t's non-field columns.
func (t *Table) IsSystemColumn(name string) bool { return slices.Contains(t.SystemColumns(), name) }

// Catalog is the set of user tables of one application.
type Catalog struct {
	Version int64
	Tables  []*Table // in display order
	byName  map[string]*Table

	visibleOnce sync.Once
	visible     *Catalog
	memo        sync.Map // derived values: see Memo
}

// Memo is the value derived from this catalog under key, built once. A
// catalog is immutable and replaced whole when the schema changes, so what
// is derived from it (a table's schema as the API shows it, encoded) lives
// and dies with it.
func (c *Catalog) Memo(key any, build func() any) any {
	if v, ok := c.memo.Load(key); ok {
		return v
	}
	v, _ := c.memo.LoadOrStore(key, build())
	return v
}

// Table returns the table called name.
func (c *Catalog) Table(name string) (*Table, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// PluginTables returns the plugin tables whose parent is parent.
func (c *Catalog) PluginTables(parent string) []*Table {
	var out []*Table
	for _, t := range c.Tables {
		if t.IsPlugin && t.PluginOf == parent {
			out = append(out, t)
		}
	}
	return out
}

// NewCatalog returns a catalog of the given tables. The filter language
// renders against a catalog; the plugin host builds one for a plugin's
// system table, which is not a user table.
func NewCatalog(version int64, tables []*Table) *Catalog { return newCatalog(version, tables) }

func newCatalog(version int64, tables []*Table) *Catalog {
	c := &Catalog{Version: version, Tables: tables, byName: make(map[string]*Table, len(tables))}
	for _, t := range tables {
		c.byName[t.Name] = t
	}
	return c
}
