package schema

import "github.com/strata-archaeo/strata/core/errs"

// Errors of catalog changes.
var (
	ErrTableExists      = errs.New(errs.Conflict, "table_already_exists", "a table with this name already exists")
	ErrTableNotFound    = errs.New(errs.NotFound, "table_not_found", "no such table")
	ErrInvalidTableName = errs.New(errs.Invalid, "invalid_table_name", "table names are a lower-case letter, then lower-case letters, digits or underscores (at most 63), not starting with sys_, sqlite_ or pg_")
	ErrFieldExists      = errs.New(errs.Conflict, "fld_already_available", "the table already has a field with this name")
	ErrFieldNotFound    = errs.New(errs.NotFound, "field_not_found", "no such field")
	ErrInvalidFieldName = errs.New(errs.Invalid, "invalid_field_name", "field names are a lower-case letter, then lower-case letters, digits or underscores (at most 63), not starting with sys_, sqlite_ or pg_, and not id, creator or id_link")
	ErrInvalidFieldType = errs.New(errs.Invalid, "invalid_field_type", "unknown field type")
	ErrInvalidDBType    = errs.New(errs.Invalid, "invalid_db_type", "db_type is one of text, int, float, date, bool")
	ErrInvalidParameter = errs.New(errs.Invalid, "invalid_field_parameter", "a field parameter is not valid here")
	ErrInvalidPluginOf  = errs.New(errs.Invalid, "invalid_plugin_parent", "a plugin table needs an existing, non-plugin parent table")
	ErrParameterMissing = errs.New(errs.Invalid, "parameter_missing", "a required parameter is missing")
)
