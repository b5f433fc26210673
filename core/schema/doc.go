// Package schema is the catalog of user tables and fields (sys_tables,
// sys_fields) and the DDL that keeps the physical tables in step with it.
// Catalog rows and DDL change in one transaction on both engines, so the
// catalog never describes a column that does not exist, or the reverse.
//
// Every identifier that reaches SQL here was validated by store.ValidIdent
// and is quoted by the store; values are always bound.
package schema
