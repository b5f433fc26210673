// Package filter is the records filter language (SPEC §4.4, CONTRACT §5):
// parse → AST → validate against the catalog → SQL per dialect with bound
// values.
//
// Three inputs give the same AST: the GET bracket form
// (filter[label][_icontains]=amph), a filter=<JSON> query parameter, and a
// JSON object (the POST body's filter). ParseWhere adds a fourth, a
// restricted SQL WHERE grammar for the row subsets a super_admin may write.
// Parsing checks syntax and the caps; Render (or Validate) checks every name
// against the catalog and the operand types, resolves nested conditions to
// subqueries (lookup field, plugin table, backlink, at most two hops), and
// writes a WHERE fragment whose identifiers come from the catalog only and
// whose values are all bound.
//
// docs/filter.md is the reference for users of the API.
package filter
