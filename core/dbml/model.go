// Package dbml reads and writes the subset of DBML (the Database Markup
// Language of dbdiagram.io) that BraDypUS exports and imports: Table blocks
// with columns, types, column settings (pk, increment, not null, unique,
// default, note, inline ref), table notes and indexes; Ref lines and Ref
// blocks; Enum blocks; line and block comments; quoted names. Project and
// TableGroup blocks are read and left out of the model (with a warning).
//
// Parse gives a Schema or an *Error naming the line and column of the first
// problem; Print writes a Schema back as DBML such that parsing the result
// gives the same Schema (positions aside). The meaning of a schema for an
// application (BraDypUS's bdus:* annotations in notes) is core/dbml/dbmlapp's.
//
// Why not an existing Go parser: the one Go DBML parser in use
// (github.com/duythinht/dbml-go) has had no release since 2022, reports
// errors without columns and drops comments, and BraDypUS marks the enums
// that are vocabularies with a comment (// bdus:vocabulary).
package dbml

// Pos is a place in the source: 1-based line and column (in characters).
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Schema is a parsed DBML text.
type Schema struct {
	Enums  []*Enum
	Tables []*Table
	Refs   []*Ref
	// Warnings name what was read but is not part of the model (a
	// Project block, an unknown setting); they are not errors.
	Warnings []Diag
}

// Diag is a positioned message.
type Diag struct {
	Pos
	Message string
}

// Table is a Table block.
type Table struct {
	Pos
	Schema  string // "" unless written schema.table
	Name    string
	Alias   string
	Note    string
	Columns []*Column
	Indexes []*Index
}

// Column is a column of a Table.
type Column struct {
	Pos
	Name      string
	Type      TypeRef
	PK        bool
	Increment bool
	NotNull   bool
	Unique    bool
	Default   *Value
	Note      string
	Ref       *InlineRef
}

// TypeRef is a column's type: a name (maybe schema-qualified, maybe an
// Enum of the file) and its arguments, as in varchar(255).
type TypeRef struct {
	Schema string
	Name   string
	Args   []string
}

// Value kinds of a setting's value.
const (
	KindString = "string"
	KindNumber = "number"
	KindExpr   = "expr" // `now()`
	KindBool   = "bool"
	KindNull   = "null"
)

// Value is a default value: Text is the string, the number as written,
// the expression without backticks, true/false or null.
type Value struct {
	Kind string
	Text string
}

// InlineRef is a column's ref setting: [ref: > table.col].
type InlineRef struct {
	Pos
	Rel string // ">", "<", "-" or "<>"
	To  Endpoint
}

// Endpoint is one side of a relation: [schema.]table.column, or several
// columns for a composite relation.
type Endpoint struct {
	Schema  string
	Table   string
	Columns []string
}

// Index is an entry of a table's indexes block.
type Index struct {
	Pos
	Columns []IndexColumn
	PK      bool
	Unique  bool
	Name    string
	Type    string
	Note    string
}

// IndexColumn is a column name or an expression (`lower(name)`).
type IndexColumn struct {
	Name string
	Expr bool
}

// Enum is an Enum block. Vocabulary is set by a // bdus:vocabulary
// comment inside it, BraDypUS's mark of an enum that is a vocabulary.
type Enum struct {
	Pos
	Schema     string
	Name       string
	Values     []*EnumValue
	Note       string
	Vocabulary bool
}

// EnumValue is one value of an Enum.
type EnumValue struct {
	Pos
	Name string
	Note string
}

// Ref is a Ref line or block.
type Ref struct {
	Pos
	Name     string
	From     Endpoint
	Rel      string
	To       Endpoint
	OnDelete string // "", "cascade", "restrict", "set null", "set default", "no action"
	OnUpdate string
}

// RefActions are the values of a Ref's delete and update settings.
var RefActions = []string{"cascade", "restrict", "set null", "set default", "no action"}

// Table returns the table called name.
func (s *Schema) Table(name string) *Table {
	for _, t := range s.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Enum returns the enum called name.
func (s *Schema) Enum(name string) *Enum {
	for _, e := range s.Enums {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// ColumnNamed returns the table's column called name.
func (t *Table) ColumnNamed(name string) *Column {
	for _, c := range t.Columns {
		if c.Name == name {
			return c
		}
	}
	return nil
}
