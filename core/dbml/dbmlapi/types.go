package dbmlapi

import (
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
)

// storage is what a DBML column type means for a field: its field type
// and storage type when no annotation says otherwise.
type storage struct {
	ft  schema.FieldType
	dbt schema.DBType
}

// dbmlTypes maps the DBML (SQL) type names people write to fields. Text is
// the text field; "text" is long text, as BraDypUS reads it.
var dbmlTypes = map[string]storage{}

func init() {
	add := func(s storage, names ...string) {
		for _, n := range names {
			dbmlTypes[n] = s
		}
	}
	add(storage{schema.TypeText, schema.DBText}, "varchar", "char", "character", "character varying", "nvarchar", "nchar",
		"string", "uuid", "citext", "tinytext")
	add(storage{schema.TypeLongText, schema.DBText}, "text", "mediumtext", "longtext", "clob")
	add(storage{schema.TypeText, schema.DBInt}, "integer", "int", "bigint", "smallint", "tinyint", "mediumint", "int2",
		"int4", "int8", "serial", "bigserial", "smallserial")
	add(storage{schema.TypeText, schema.DBFloat}, "float", "double", "double precision", "decimal", "numeric", "real",
		"float4", "float8", "number", "money")
	add(storage{schema.TypeDate, schema.DBDate}, "date", "datetime", "timestamp", "timestamptz",
		"timestamp with time zone", "timestamp without time zone")
	add(storage{schema.TypeBoolean, schema.DBBool}, "boolean", "bool")
}

// exportType is the DBML type written for a storage type.
func exportType(dbt schema.DBType) string {
	switch dbt {
	case schema.DBInt:
		return "integer"
	case schema.DBFloat:
		return "float"
	case schema.DBDate:
		return "date"
	case schema.DBBool:
		return "boolean"
	}
	return "varchar"
}

// fieldKind is what a column becomes: the DBML type read with the
// column's annotations. known is false for a type this mapping does not
// know (read as text, with a warning).
type fieldKind struct {
	ft    schema.FieldType
	dbt   schema.DBType
	known bool
}

// kindOf derives a field's type and storage from its DBML type (an enum of
// the file makes a select on that vocabulary) and the annotations type,
// db_type, voc and id_from_tb. BraDypUS stores everything as TEXT or
// INTEGER and says the field type in bdus:type, so an annotated type on
// such a column takes its own default storage (integer + boolean is a
// boolean stored as bool); bdus:db_type, when given, decides.
func kindOf(typeName string, isEnum, lookup bool, a annotations) fieldKind {
	base, known := dbmlTypes[strings.ToLower(strings.Join(strings.Fields(typeName), " "))]
	if isEnum {
		base, known = storage{schema.TypeSelect, schema.DBText}, true
	}
	if !known {
		base = storage{schema.TypeText, schema.DBText}
	}
	k := fieldKind{ft: base.ft, dbt: base.dbt, known: known}
	switch {
	case a.has("type"):
		k.ft = schema.FieldType(a.get("type"))
		if k.dbt == schema.DBText || k.dbt == schema.DBInt {
			k.dbt = schema.DefaultDBType(k.ft, lookup)
		}
	case lookup:
		k.ft, k.dbt = schema.TypeSelect, schema.DBInt
	case a.get("voc") != "":
		k.ft, k.dbt = schema.TypeSelect, schema.DBText
	}
	if a.has("db_type") {
		k.dbt = schema.DBType(a.get("db_type"))
	}
	return k
}
