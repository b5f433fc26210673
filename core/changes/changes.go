// Package changes is the app's change log (DESIGN §10): every committed
// change (a record's save or delete, a plugin row, a file link, geodata,
// the schema, a privilege) writes one row to sys_changes in the change's
// own transaction, with an id that only grows. Realtime delivery replays
// from it and learns of new rows through it; nothing reads "what changed"
// any other way.
//
// Entries are collected over the transaction and written last, just
// before COMMIT (store.BeforeCommit), one row per (table, record). On
// PostgreSQL the write first takes the app's change-log lock
// (pg_advisory_xact_lock, held until the commit), and only then draws its
// ids from the sequence: ids are therefore handed out in commit order, so
// a reader that has seen id n has seen every committed id below n. Without
// the lock two transactions could draw 10 and 11, 11 commit first, a
// reader move past 11 and never see 10. The lock is taken after every row
// lock of the transaction, in the same round trip as the COMMIT, so it is
// held for the commit only and a writer holding it never waits on a row.
// Once committed, the node tells the others, which LISTEN, with a
// notification sent after the commit (notify.go). On SQLite the app's
// single writer already commits in id order.
package changes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Op is what a change did.
type Op string

const (
	Create Op = "create"
	Update Op = "update" // the record's fields, plugin rows, files or geodata
	Delete Op = "delete"
	// Schema: the catalog changed (Table names the table, "" for many).
	Schema Op = "schema"
	// Privilege: a user's privileges changed (RecordID is the user;
	// Table is ""), or an API key's (Table is KeyTable, RecordID the key:
	// revoked or deleted).
	Privilege Op = "privilege"
)

// KeyTable is the Table of a Privilege change of an API key.
const KeyTable = "key"

// Entry is one change as a writer reports it.
type Entry struct {
	Table    string
	RecordID int64
	Op       Op
	// UserID is who made it (0: no user: an API key, a plugin, the
	// system); Actor names the others ("plugin:<name>", "key:<id>").
	UserID int64
	Actor  string
}

// Change is a row of the log.
type Change struct {
	ID       int64
	Table    string
	RecordID int64
	Op       Op
	Version  int64
	UserID   int64
	Actor    string
	At       time.Time
}

// NotifyChannel is the PostgreSQL channel on which a node tells the
// others of its commits to an app's log: "<schema>:<last id>".
const NotifyChannel = "strata_changes"

// lockClass is the first key of the change log's advisory lock (the
// second is the hash of the app's schema): a constant of our own so that
// it does not meet another advisory lock of the service.
const lockClass = 0x5354_4348 // "STCH"

// pending is what one transaction has recorded so far.
type pending struct {
	entries []Entry
	index   map[string]int // table \x00 record → position in entries
}

const txKey = "changes"

// Checkpoint lets a savepoint undo the entries recorded after it
// (store.Savepoint): a refused row leaves no entry behind.
func (p *pending) Checkpoint() (rewind func()) {
	entries := slices.Clone(p.entries)
	index := maps.Clone(p.index)
	return func() { p.entries, p.index = entries, index }
}

// Record notes e in db's transaction; it is written just before the
// commit. Outside a transaction it is written at once, in one of its own.
func Record(ctx context.Context, db *store.DB, e Entry) error {
	if !db.InTx() {
		return db.Tx(ctx, func(tx *store.DB) error { return Record(ctx, tx, e) })
	}
	p, ok := db.TxValue(txKey, func() any { return &pending{index: map[string]int{}} }).(*pending)
	if !ok {
		// A transaction not made by store's Tx (no commit hooks): the row
		// is written now, in it.
		return write(ctx, db, []Entry{e})
	}
	key := e.Table + "\x00" + strconv.FormatInt(e.RecordID, 10)
	if e.Op == Privilege {
		key = "\x01privilege\x00" + e.Table + "\x00" + strconv.FormatInt(e.RecordID, 10)
	}
	if i, ok := p.index[key]; ok {
		p.entries[i] = merge(p.entries[i], e)
	} else {
		p.index[key] = len(p.entries)
		p.entries = append(p.entries, e)
	}
	return db.BeforeCommit(ctx, txKey, func(ctx context.Context, tx *store.DB) error {
		return write(ctx, tx, p.entries)
	})
}

// merge is one transaction's two changes of a row as one: a row created
// then changed was created; a row deleted was deleted.
func merge(was, now Entry) Entry {
	switch {
	case now.Op == Delete:
		return now
	case was.Op == Create && now.Op == Update:
		return was
	}
	return now
}

// write inserts the transaction's entries (store.BeforeCommit).
func write(ctx context.Context, tx *store.DB, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	var rows []string
	var args []any
	offsets := make([]int, 0, len(entries)+1) // where each row's args start
	for _, e := range entries {
		offsets = append(offsets, len(args))
		args = append(args, e.Table, e.RecordID, string(e.Op))
		version := "0"
		if e.Op == Create || e.Op == Update || e.Op == Delete {
			// The record's version as RecordVersion reads it: its latest
			// snapshot, written earlier in this transaction.
			version = `(SELECT COALESCE(MAX(v.id), 0) FROM ` + tx.Sys("versions") + ` v WHERE v.tb = ? AND v.record_id = ?)`
			args = append(args, e.Table, e.RecordID)
		}
		var user, actor any
		if e.UserID != 0 {
			user = e.UserID
		}
		if e.Actor != "" {
			actor = e.Actor
		}
		rows = append(rows, `(?, ?, ?, `+version+`, ?, ?, ?)`)
		args = append(args, user, actor, at)
	}
	offsets = append(offsets, len(args))
	if tx.Engine == store.Postgres {
		// One statement: PostgreSQL binds in linear time, and its notify
		// carries the last id.
		insert := `INSERT INTO ` + tx.Sys("changes") + ` (tb, record_id, op, version, user_id, actor, at) VALUES ` + strings.Join(rows, ", ")
		if err := tx.ExecLater(ctx, "change log lock", `SELECT pg_advisory_xact_lock(?, hashtext(?))`, lockClass, tx.Key()); err != nil {
			return err
		}
		// The last id, for the notification: read once the statement has
		// run, with the COMMIT.
		var last int64
		if err := tx.QueryRowLater(ctx, "change log", `WITH ins AS (`+insert+` RETURNING id) SELECT MAX(id) FROM ins`, args, &last); err != nil {
			return err
		}
		tx.AfterCommit(func(base *store.DB) {
			committed(base, last)
			tellNodes(base, last)
		})
		return nil
	}
	// Cut in statements of RowsPerStatement rows: SQLite's driver binds a
	// value at a cost that grows with its statement's values.
	per := tx.Engine.RowsPerStatement(paramsPerEntry)
	var last int64
	for start := 0; start < len(rows); start += per {
		end := min(start+per, len(rows))
		q := `INSERT INTO ` + tx.Sys("changes") + ` (tb, record_id, op, version, user_id, actor, at) VALUES ` + strings.Join(rows[start:end], ", ")
		res, err := tx.Exec(ctx, q, args[offsets[start]:offsets[end]]...)
		if err != nil {
			return fmt.Errorf("change log: %w", err)
		}
		last, _ = res.LastInsertId()
	}
	tx.AfterCommit(func(base *store.DB) { committed(base, last) })
	return nil
}

// paramsPerEntry is the most values one change-log row binds.
const paramsPerEntry = 8

// Since reads the log after id, oldest first, at most limit rows.
func Since(ctx context.Context, db *store.DB, after int64, limit int) ([]Change, error) {
	rows, err := db.Query(ctx, `SELECT id, tb, record_id, op, version, user_id, actor, at FROM `+db.Sys("changes")+
		` WHERE id > ? ORDER BY id LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read change log: %w", err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var op string
		var user *int64
		var actor *string
		if err := rows.Scan(&c.ID, &c.Table, &c.RecordID, &op, &c.Version, &user, &actor, &c.At); err != nil {
			return nil, fmt.Errorf("read change log: %w", err)
		}
		c.Op = Op(op)
		if user != nil {
			c.UserID = *user
		}
		if actor != nil {
			c.Actor = *actor
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Bounds are the oldest and newest ids the log holds (0, 0 when empty).
func Bounds(ctx context.Context, db *store.DB) (oldest, newest int64, err error) {
	var lo, hi *int64
	if err := db.QueryRow(ctx, `SELECT MIN(id), MAX(id) FROM `+db.Sys("changes")).Scan(&lo, &hi); err != nil {
		return 0, 0, fmt.Errorf("read change log: %w", err)
	}
	if lo != nil {
		oldest, newest = *lo, *hi
	}
	return oldest, newest, nil
}

// Missed reports whether a reader that last saw id after can no longer
// resume from the log: rows it has not seen were trimmed (Trim always
// keeps the newest row and deletes only below a kept one, so every id
// below oldest-1 that existed is gone), or it names an id the log never
// reached (another database, a restore).
func Missed(after, oldest, newest int64) bool {
	if newest == 0 {
		return after > 0
	}
	return after < oldest-1 || after > newest
}

// watchers wake the readers of an app's log in this process.
var watchers = struct {
	sync.Mutex
	m map[string]map[chan struct{}]bool
}{m: map[string]map[chan struct{}]bool{}}

// Watch returns a channel that receives (coalesced, never blocking the
// writer) after every commit that wrote to the log of the app whose DB key
// is key (store.DB.Key), in this process or, through Wake, another node.
// stop ends it.
func Watch(key string) (ch <-chan struct{}, stop func()) {
	c := make(chan struct{}, 1)
	watchers.Lock()
	if watchers.m[key] == nil {
		watchers.m[key] = map[chan struct{}]bool{}
	}
	watchers.m[key][c] = true
	watchers.Unlock()
	return c, func() {
		watchers.Lock()
		delete(watchers.m[key], c)
		if len(watchers.m[key]) == 0 {
			delete(watchers.m, key)
		}
		watchers.Unlock()
	}
}

// Wake tells the watchers of key that the log has grown.
func Wake(key string) {
	watchers.Lock()
	defer watchers.Unlock()
	for c := range watchers.m[key] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// committed runs after a commit that wrote to the log.
func committed(base *store.DB, _ int64) {
	Wake(base.Key())
	maybeTrim(base)
}

// WakeAll wakes every watcher of the process (a listener that lost its
// connection may have missed notifications).
func WakeAll() {
	watchers.Lock()
	defer watchers.Unlock()
	for _, cs := range watchers.m {
		for c := range cs {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
}

// AccessChanged reports whether the log holds, after id after, a change of
// the catalog or of user's privileges: what a scope built for user before
// then may no longer be (realtime shares one between a user's streams only
// while it is not).
func AccessChanged(ctx context.Context, db *store.DB, after, user int64) (bool, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM `+db.Sys("changes")+
		` WHERE id > ? AND (op = ? OR (op = ? AND record_id = ?)) LIMIT 1) x`, after, string(Schema), string(Privilege), user).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read change log: %w", err)
	}
	return n > 0, nil
}
