package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestWriterConn: write transactions run on the one connection kept for
// them, whatever the readers hold, while reads never get it. A TEMP table
// lives on the connection that made it only: the first write makes one,
// and every later write, in each group mode, must find it; a read on the
// pool must not. Readers hold the pool's other connections meanwhile, so
// that a write on "any free connection" would land on a different one.
func TestWriterConn(t *testing.T) {
	for name, mode := range map[string]GroupMode{"off": GroupOff, "on": GroupOn, "force": GroupForced} {
		t.Run(name, func(t *testing.T) {
			db := groupTestDB(t, mode)
			ctx := context.Background()
			if err := db.Tx(ctx, func(tx *DB) error {
				_, err := tx.Exec(ctx, `CREATE TEMP TABLE writer_mark (n INTEGER)`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var readers sync.WaitGroup
			for range 3 {
				readers.Add(1)
				go func() {
					defer readers.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						var n int
						err := db.QueryRow(ctx, `SELECT COUNT(*) FROM temp.writer_mark`).Scan(&n)
						if err == nil || !strings.Contains(err.Error(), "no such table") {
							t.Errorf("a read ran on the writer's connection: %d, %v", n, err)
							return
						}
					}
				}()
			}
			const writers, each = 4, 25
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						if err := db.Tx(ctx, func(tx *DB) error {
							if _, err := tx.Exec(ctx, `INSERT INTO writer_mark (n) VALUES (1)`); err != nil {
								return fmt.Errorf("a write ran elsewhere than on the writer's connection: %w", err)
							}
							_, err := tx.Exec(ctx, `INSERT INTO t (v) VALUES (?)`, fmt.Sprintf("%d-%d", w, i))
							return err
						}); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(stop)
			readers.Wait()
			var n int
			if err := db.Tx(ctx, func(tx *DB) error {
				return tx.QueryRow(ctx, `SELECT COUNT(*) FROM writer_mark`).Scan(&n)
			}); err != nil || n != writers*each {
				t.Fatalf("%d writes marked (%v), want %d", n, err, writers*each)
			}
			// Grouped, several writes share a transaction.
			want := uint64(writers * each)
			if mode != GroupOff {
				want = 1
			}
			if got := db.WriterConnTxs(); got < want {
				t.Errorf("%d transactions on the writer's connection, want at least %d", got, want)
			}
		})
	}
}
