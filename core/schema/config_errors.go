package schema

import "github.com/strata-archaeo/strata/core/errs"

// Errors of configuration changes (tables, fields, relations, indexes).
// Refusals that depend on what exists (in use, duplicates) are conflicts;
// refusals that depend on the data already stored are bad input, since
// the caller can fix the data and ask again.
var (
	ErrInvalidTableConfig = errs.New(errs.Invalid, "invalid_table_config", "a table setting is not valid")
	ErrInvalidChronoPath  = errs.New(errs.Invalid, "invalid_chrono_density_path", "the chronology density path is not valid")
	ErrInvalidSort        = errs.New(errs.Invalid, "invalid_sort", "sort must list every name exactly once")
	ErrTableInUse         = errs.New(errs.Conflict, "table_in_use", "the table is referenced elsewhere; remove the references or ask for cascade")
	ErrFieldInUse         = errs.New(errs.Conflict, "field_in_use", "the field is referenced elsewhere; remove the references or ask for cascade")
	ErrConversionFailed   = errs.New(errs.Invalid, "conversion_failed", "existing values cannot be converted to the new type; nothing was changed")
	ErrUniqueViolated     = errs.New(errs.Invalid, "unique_violated", "existing values are not unique; nothing was changed")
	ErrInvalidRelation    = errs.New(errs.Invalid, "invalid_relation", "the relation is not valid")
	ErrRelationExists     = errs.New(errs.Conflict, "relation_already_exists", "a relation from this column already exists")
	ErrRelationNotFound   = errs.New(errs.NotFound, "not_found", "no such relation")
	ErrRelationOfLookup   = errs.New(errs.Conflict, "relation_from_lookup", "this relation is implied by a lookup field; change the field's id_from_tb or delete the field to remove it")
	ErrInvalidOnDelete    = errs.New(errs.Invalid, "invalid_on_delete", "on_delete is not a known action")
	ErrInvalidOnUpdate    = errs.New(errs.Invalid, "invalid_on_update", "on_update is not a known action")
	ErrRelationViolated   = errs.New(errs.Invalid, "relation_violated", "existing data violates the relation; nothing was changed")
	ErrInvalidIndex       = errs.New(errs.Invalid, "invalid_index", "the index is not valid")
	ErrIndexNotFound      = errs.New(errs.NotFound, "not_found", "no such index") // BraDypUS's code (CONTRACT §1 allows it)
	ErrIndexExists        = errs.New(errs.Conflict, "index_already_exists", "an index on these columns already exists")
)
