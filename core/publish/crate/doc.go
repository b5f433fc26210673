// Package crate writes the packaging layer of a published snapshot (issue
// 34): the RO-Crate 1.2 metadata document (ro-crate-metadata.json) that
// describes the crate as a whole and every file in it, and the Frictionless
// Data Package (datapackage.json plus one CSV per table) that carries the
// tables.
//
// It is pure: it knows nothing of the database, the snapshot job or the zip.
// The caller writes the record files, GeoJSON, IIIF and DataCite files,
// measures them (size, SHA-256), and hands their descriptions to
// WriteMetadata; it streams the tables through CSVWriter and hands the
// resulting Resources to WriteDataPackage.
//
// Everything written is deterministic: the same inputs give byte-identical
// output. Nothing reads the clock; dates are inputs. WriteMetadata streams
// its output and keeps only small per-file structs in memory, so a crate
// with one JSON-LD file per record (100,000 files and more) is fine.
//
// Choices worth knowing:
//
//   - RO-Crate 1.2, attached package: the root data entity is "./", every
//     directory holding a described file is a Dataset data entity whose
//     hasPart lists its direct children, and the root's hasPart lists the
//     top level. File @ids are relative IRI references with each path
//     segment percent-encoded where IRIs require it (space, %, #, ?, :,
//     controls); other non-ASCII characters are written as UTF-8, as the
//     specification prefers.
//   - The previous snapshot is linked with schema.org isBasedOn (in the
//     RO-Crate 1.2 context; schema.org has no Dataset-level previousVersion).
//   - Frictionless Data Package v2 (datapackage.org/profiles/2.0), written so
//     that it also validates against the v1 profiles: "$schema" on the
//     package, "type": "table" on resources, explicit foreign-key resource
//     names, hashes as "sha256:<hex>".
//   - CSV follows the Frictionless default dialect: RFC 4180, comma, double
//     quote, CRLF line ends, UTF-8 without BOM, a header row. Cells are data,
//     not spreadsheet formulas: a value starting with = + - @ is written as
//     it is, never prefixed with an apostrophe (that would change the data).
//   - A missing value (nil) is the empty cell, and so is the empty string:
//     Frictionless's default missingValues [""] cannot tell them apart.
//
// CheckPackage and CheckCrate read a written crate back and check it the way
// a consumer would, for tests (also end-to-end tests on whole snapshots).
package crate
