package store

import (
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// Statement journals in memory (SQLite, process-wide).
//
// Inside a transaction SQLite keeps a statement journal for each
// savepoint and for each statement that may fail half-way: a copy of
// every page the savepoint or statement changes that existed before it,
// so that it can be undone alone. Group commit runs each save in a
// savepoint (groupcommit.go), so every save under load opens one. By
// default the journal lives in memory until it passes 64 KiB, then goes
// to a temporary file; the driver's allocator hands memory of that size
// from a fresh mapping and unmaps it when the savepoint ends, so each
// save paid for a mapping, its page faults and its unmapping while
// holding the app's only writer slot (10,000 such calls a second under
// 16 clients). With the threshold at -1 (SQLITE_CONFIG_STMTJRNL_SPILL)
// journals are kept in memory whatever their size, in small blocks the
// allocator reuses: creates and updates rose by 10–15% in interleaved
// runs (docs/performance.md).
//
// What a journal holds is bounded by the single statement or savepoint
// it serves: a save's few pages, a batch request's (at most 1,000
// operations), retention's batches of 1,000. A statement that rewrites rows of a whole
// table inside a transaction (renaming a vocabulary value in every
// record) holds at most that table's changed pages, once, until it ends:
// the price, against a temporary file, of that rare statement
// (docs/scaling.md).
//
// SQLite takes this setting only before its first connection opens, so
// it is set when this package is loaded.
var stmtJournalsInMemory = setStmtJournalSpill(-1)

// setStmtJournalSpill sets SQLITE_CONFIG_STMTJRNL_SPILL and reports
// whether SQLite took it (it refuses once a connection has been opened:
// then the default stays, and only speed differs).
func setStmtJournalSpill(bytes int32) bool {
	tls := libc.NewTLS()
	defer tls.Close()
	va := libc.Xmalloc(tls, types.Size_t(unsafe.Sizeof(uintptr(0))))
	if va == 0 {
		return false
	}
	defer libc.Xfree(tls, va)
	return sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_STMTJRNL_SPILL, libc.VaList(va, bytes)) == sqlite3.SQLITE_OK
}
