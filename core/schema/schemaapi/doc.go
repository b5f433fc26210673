// Package schemaapi is the HTTP face of the application's catalog (SPEC
// §4.5, CONTRACT §6): tables, fields, relations and indexes, each route a
// call of core/schema, answered in the shapes BraDypUS's clients read
// (table config with field_labels and link, fields by name, relations
// with their enforcement, indexes with tb and is_unique).
package schemaapi
