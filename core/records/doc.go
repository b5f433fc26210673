// Package records reads and writes the rows of user tables: the list with
// filters, the full record, save with validation and plugin child rows,
// delete (bulk, with the self_writer rule), duplicate and version
// snapshots. SQL is built by hand from catalog identifiers (quoted by the
// store) with every value bound. It knows nothing of HTTP.
package records
