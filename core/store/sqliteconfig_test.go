package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestStatementJournalsInMemory: SQLite took the setting (it refuses it
// once a connection is open), and a savepoint whose journal passes the
// default 64 KiB (it changes some 400 pages that existed before it)
// is undone exactly, leaving the transaction's earlier work, while one
// released keeps its work.
func TestStatementJournalsInMemory(t *testing.T) {
	if !stmtJournalsInMemory {
		t.Fatal("SQLite refused SQLITE_CONFIG_STMTJRNL_SPILL: a connection was opened before the store package was loaded")
	}
	db := groupTestDB(t, GroupOff)
	ctx := context.Background()
	pad := strings.Repeat("x", 3000) // about a page a row
	if err := db.Tx(ctx, func(tx *DB) error {
		for i := range 400 {
			if _, err := tx.Exec(ctx, `INSERT INTO t (v) VALUES (?)`, pad+string(rune('a'+i%26))+strings.Repeat("y", i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	undone := errors.New("undone")
	err := db.Tx(ctx, func(tx *DB) error {
		if _, err := tx.Exec(ctx, `INSERT INTO hooklog (v) VALUES ('kept')`); err != nil {
			return err
		}
		if err := tx.Savepoint(ctx, "big", func() error {
			if _, err := tx.Exec(ctx, `UPDATE t SET v = 'z' || v`); err != nil {
				return err
			}
			return undone
		}); !errors.Is(err, undone) {
			return err
		}
		return tx.Savepoint(ctx, "kept", func() error {
			_, err := tx.Exec(ctx, `UPDATE t SET v = 'k' || v WHERE id <= 10`)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var z, k, kept int
	if err := db.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM t WHERE v LIKE 'z%'), (SELECT COUNT(*) FROM t WHERE v LIKE 'k%'), (SELECT COUNT(*) FROM hooklog WHERE v = 'kept')`).Scan(&z, &k, &kept); err != nil {
		t.Fatal(err)
	}
	if z != 0 || k != 10 || kept != 1 {
		t.Fatalf("after the transaction: %d rows of the undone savepoint, %d of the kept one (want 10), %d of the transaction's own (want 1)", z, k, kept)
	}
}
