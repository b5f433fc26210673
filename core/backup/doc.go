// Package backup writes an application into one portable archive and
// restores an archive onto either engine.
//
// An archive is a gzip-compressed tar stream: manifest.json first (format
// version, Strata version, source engine, migration step, counts, and the
// SHA-256 and size of every other part), then one NDJSON file per table
// (tables/<name>.ndjson: every row as a JSON object of its columns, values
// written by column kind so that SQLite and PostgreSQL read them back
// alike), then the stored bytes of every file and thumbnail
// (blobs/<key>). The manifest comes first so a reader can check every
// part as it streams by; parts are written to temporary files first to
// know their checksums, except blobs, whose checksum sys_files already
// holds (and which is verified again while the archive is written).
//
// A backup reads every table in one read-only snapshot, so the archive is
// consistent and writers are never blocked. A restore builds the new
// database beside the live one (system tables at the archive's migration
// step, its rows, the user tables the catalog describes, their rows, the
// search indexes, then the remaining migrations) and swaps it in
// atomically (apps.Registry.Replace); an archive whose parts fail their
// checksums is refused before anything is built.
//
// Secret settings stay sealed in the archive as they are at rest; a
// restore opens them with the instance key and seals them for the target
// app. An archive from another instance whose secrets cannot be opened is
// restored without them (listed in the result's warnings), with a new
// token-signing secret.
package backup
