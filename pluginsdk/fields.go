package pluginsdk

import "slices"

// FieldType is how a column is edited and shown (Column.Type). The
// constants are every type the server accepts; an untyped string constant
// ("text") still works where a FieldType goes.
type FieldType string

// The field types (the server's schema field types).
const (
	FieldText        FieldType = "text"
	FieldLongText    FieldType = "long_text"
	FieldMarkdown    FieldType = "md"
	FieldSelect      FieldType = "select"
	FieldComboSelect FieldType = "combo_select"
	FieldMultiSelect FieldType = "multi_select"
	FieldDate        FieldType = "date"
	FieldBoolean     FieldType = "boolean"
	FieldSlider      FieldType = "slider"
	FieldLinkTo      FieldType = "link_to"
	FieldLinkOut     FieldType = "link_out"
)

// DBType is how a column is stored (Column.DBType). A DBType where a
// FieldType belongs (or the reverse) does not compile.
type DBType string

// The storage types.
const (
	DBText  DBType = "text"
	DBInt   DBType = "int"
	DBFloat DBType = "float"
	DBDate  DBType = "date" // ISO yyyy-mm-dd
	DBBool  DBType = "bool"
)

// FieldTypes and DBTypes list every allowed value, in the server's order.
var (
	FieldTypes = []FieldType{FieldText, FieldLongText, FieldMarkdown, FieldSelect, FieldComboSelect,
		FieldMultiSelect, FieldDate, FieldBoolean, FieldSlider, FieldLinkTo, FieldLinkOut}
	DBTypes = []DBType{DBText, DBInt, DBFloat, DBDate, DBBool}
)

// storageOf lists the storage types that make sense for a field type:
// Validate refuses the others, which would store values the field's editor
// never sends (a checkbox into a date, a long text into a number). Types
// not listed take any storage.
var storageOf = map[FieldType][]DBType{
	FieldLongText:    {DBText},
	FieldMarkdown:    {DBText},
	FieldMultiSelect: {DBText},
	FieldLinkOut:     {DBText},
	FieldDate:        {DBDate, DBText},
	FieldBoolean:     {DBBool, DBInt},
	FieldSlider:      {DBInt, DBFloat},
}

// fits reports whether a column of type t may be stored as d, and the
// storage types t takes when it may not.
func fits(t FieldType, d DBType) (bool, []DBType) {
	allowed, ok := storageOf[t]
	return !ok || slices.Contains(allowed, d), allowed
}

// TextField is a one-line text column stored as text.
func TextField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldText, DBType: DBText}
}

// LongTextField is a multi-line text column stored as text.
func LongTextField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldLongText, DBType: DBText}
}

// IntField is a whole number, typed in a text input and stored as an
// integer: the server refuses what does not parse as one.
func IntField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldText, DBType: DBInt}
}

// FloatField is a number with decimals, stored as a float.
func FloatField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldText, DBType: DBFloat}
}

// DateField is a date (yyyy-mm-dd) with a date picker, stored as a date.
func DateField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldDate, DBType: DBDate}
}

// BoolField is a checkbox stored as a boolean.
func BoolField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldBoolean, DBType: DBBool}
}

// LinkOutField is a URL shown as a link, stored as text.
func LinkOutField(name, label string) Column {
	return Column{Name: name, Label: label, Type: FieldLinkOut, DBType: DBText}
}

// WithHelp returns c with its help text set.
func (c Column) WithHelp(help string) Column {
	c.Help = help
	return c
}

// AsReadonly returns c read-only to clients (see Column.Readonly: a column
// the plugin computes belongs in Feature.Computed instead).
func (c Column) AsReadonly() Column {
	c.Readonly = true
	return c
}
