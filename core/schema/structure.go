package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/strata-archaeo/strata/core/store"
)

// Setting describes one setting of a field definition (FieldDef) for
// clients that build their field editor from a description (BraDypUS's
// field structure): the input it takes, its allowed values, whether it is
// required and the pattern a value must match.
type Setting struct {
	Key      string `json:"-"`
	Type     string `json:"type"` // input, select, multi_select or boolean
	Values   []any  `json:"values,omitempty"`
	Help     string `json:"help"`
	Required bool   `json:"required"`
	Readonly bool   `json:"readonly,omitempty"` // fixed once the field exists (renamed by its own route)
	Pattern  string `json:"pattern,omitempty"`
}

// Structure is the field settings in the order an editor shows them; it
// encodes as one JSON object keyed by setting, in that order.
type Structure []Setting

// MarshalJSON writes {key: setting, ...} keeping the order.
func (s Structure) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, st := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(st.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Patterns of numeric settings, as a client checks them before sending.
const (
	positiveIntPattern = `^[0-9]+$`
	numberPattern      = `^-?[0-9]+(\.[0-9]+)?$`
)

// FieldStructure describes the settings AddField and UpdateField take,
// with the values allowed here and now: the field types and storage types,
// the app's vocabularies, the tables a lookup may point to, and the
// BraDypUS checks.
func FieldStructure(ctx context.Context, db *store.DB, cat *Catalog) (Structure, error) {
	vocs, err := vocabularyNames(ctx, db)
	if err != nil {
		return nil, err
	}
	tables := []any{}
	for _, t := range cat.Tables {
		if !t.IsPlugin {
			tables = append(tables, t.Name)
		}
	}
	types := make([]any, len(FieldTypes))
	for i, t := range FieldTypes {
		types[i] = string(t)
	}
	dbTypes := make([]any, len(DBTypes))
	for i, t := range DBTypes {
		dbTypes[i] = string(t)
	}
	checks := make([]any, len(Checks))
	for i, c := range Checks {
		checks[i] = c
	}
	input := func(key, help string) Setting { return Setting{Key: key, Type: "input", Help: help} }
	boolean := func(key, help string) Setting { return Setting{Key: key, Type: "boolean", Help: help} }
	sel := func(key, help string, values []any) Setting {
		return Setting{Key: key, Type: "select", Help: help, Values: values}
	}
	name := input("name", "Column name: a lower-case letter, then lower-case letters, digits or _ (at most 63). Change it with the rename action.")
	name.Required, name.Readonly, name.Pattern = true, true, `^[a-z][a-z0-9_]{0,62}$`
	typ := sel("type", "How the value is entered and shown. select, combo_select and multi_select take their values from vocabulary_set, get_values_from_tb or id_from_tb.", types)
	typ.Required = true
	maxLength := input("max_length", "Longest text accepted, in characters.")
	maxLength.Pattern = positiveIntPattern
	lo := input("min", "Smallest value accepted (a number; a date for date fields).")
	hi := input("max", "Largest value accepted (a number; a date for date fields).")
	return Structure{
		name,
		input("label", "Label shown to users (the name when empty)."),
		typ,
		sel("db_type", "Storage type. When empty it follows the type: int for lookups and sliders, bool for booleans, date for dates, text otherwise.", dbTypes),
		sel("vocabulary_set", "Vocabulary whose items are the allowed values (select types only).", vocs),
		boolean(SettingVocabFree, "Allow other values: a select or multi_select also takes values that are not in its vocabulary (a combo_select always does)."),
		input("get_values_from_tb", "table:field whose distinct values are offered (select types only)."),
		sel("id_from_tb", "Table whose records this field points to by id (a lookup; select types only).", tables),
		{Key: "check", Type: "multi_select", Values: checks, Help: "Validation: not_empty (required), no_dupl (unique), email, int, range (min and max), regex (pattern)."},
		boolean("required", "A value must be given."),
		boolean("unique", "No two records may hold the same value."),
		boolean("readonly", "Shown but not editable."),
		boolean("hide", "Left out of forms and lists."),
		input("def_value", "Value given to new records; %today% stands for the current date, %current_user% for the name of the user saving."),
		maxLength,
		lo,
		hi,
		input("pattern", "Regular expression the whole value must match."),
		input("help", "Help text shown next to the field."),
		input("widget", "Name of a widget that edits this field instead of the default input."),
	}, nil
}

// vocabularyNames lists the app's vocabularies by name.
func vocabularyNames(ctx context.Context, db *store.DB) ([]any, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT voc FROM `+db.Sys("vocabularies")+` ORDER BY voc`)
	if err != nil {
		return nil, fmt.Errorf("list vocabularies: %w", err)
	}
	defer rows.Close()
	out := []any{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
