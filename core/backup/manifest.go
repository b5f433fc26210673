package backup

import (
	"time"

	"github.com/strata-archaeo/strata/core/errs"
)

// Format identifies Strata archives; FormatVersion is bumped when their
// layout changes incompatibly.
const (
	Format        = "strata-backup"
	FormatVersion = 1
	manifestName  = "manifest.json"
)

// Manifest describes an archive. It is its first entry.
type Manifest struct {
	Format        string    `json:"format"`
	FormatVersion int       `json:"format_version"`
	StrataVersion string    `json:"strata_version"`
	App           string    `json:"app"`
	Engine        string    `json:"engine"`
	Migration     int       `json:"migration"`
	CreatedAt     time.Time `json:"created_at"`
	Tables        []Table   `json:"tables"`
	Blobs         []Part    `json:"blobs"`
	Counts        Counts    `json:"counts"`
}

// Table is a table part: its columns with their kinds, and its rows.
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	Rows    int64    `json:"rows"`
	Part
}

// Column is a column and the kind its values are written as.
type Column struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
}

// Part is an entry of the archive with its size and SHA-256 (hex).
type Part struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Counts summarise an archive for lists and checks.
type Counts struct {
	Tables  int   `json:"tables"`
	Rows    int64 `json:"rows"`
	Records int64 `json:"records"`
	Users   int64 `json:"users"`
	Files   int64 `json:"files"`
	Bytes   int64 `json:"bytes"`
}

// Errors of archives and backups.
var (
	ErrInvalidArchive = errs.New(errs.Invalid, "backup_invalid", "the file is not a valid Strata backup")
	ErrChecksum       = errs.New(errs.Invalid, "backup_checksum_mismatch", "a part of the backup does not match its checksum: the file is damaged or was changed")
	ErrTooNew         = errs.New(errs.Invalid, "backup_too_new", "the backup was made by a newer Strata; upgrade this server first")
	ErrNotFound       = errs.New(errs.NotFound, "backup_not_found", "no backup with this name")
	ErrFileCorrupt    = errs.New(errs.Conflict, "file_corrupt", "a stored file does not match its checksum; the backup was not made")
)
