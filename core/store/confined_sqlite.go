package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// runConfinedSQLite runs a tenant's statement on a connection of its own
// (see ConfineOptions): the app's pool never carries the authorizer, and
// the connection is closed afterwards.
func (db *DB) runConfinedSQLite(ctx context.Context, query string, opt ConfineOptions, rows func(*sql.Rows) error) (int64, error) {
	if opt.Write && db.writer != nil {
		// The app's writers queue in this process (DB.Tx); a write here
		// takes its turn like any other.
		wait := time.NewTimer(sqliteBusyTimeout)
		defer wait.Stop()
		select {
		case db.writer <- struct{}{}:
			defer func() { <-db.writer }()
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-wait.C:
			return 0, ErrBusy
		}
	}
	pool, err := sql.Open("sqlite", sqliteDSN(db.file))
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	conn, err := pool.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()

	auth := &sqliteAuthorizer{write: opt.Write, hidden: map[string]bool{}}
	for _, h := range opt.Hidden {
		auth.hidden[SystemTablePrefix+h] = true
	}
	handle, err := rawSQLiteHandle(conn)
	if err != nil {
		return 0, err
	}
	// Limits hold whatever the statement says: no database can be
	// attached, no value grows past the budget, no text is huge.
	for _, l := range []struct{ id, val int }{
		{sqlite3.SQLITE_LIMIT_ATTACHED, 0},
		{sqlite3.SQLITE_LIMIT_LENGTH, opt.MaxValueBytes},
		{sqlite3.SQLITE_LIMIT_SQL_LENGTH, 1 << 20},
	} {
		if _, err := sqlite.Limit(conn, l.id, l.val); err != nil {
			return 0, err
		}
	}
	begin := "BEGIN"
	if opt.Write {
		begin = "BEGIN IMMEDIATE"
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		return 0, err
	}
	committed := false
	defer func() {
		if !committed {
			auth.armed.Store(false)
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	// The authorizer is armed for the tenant's statement alone (BEGIN and
	// COMMIT above and below are ours).
	id := installAuthorizer(handle, auth)
	defer removeAuthorizer(handle, id)
	auth.armed.Store(true)
	if err := oneStatement(handle, query); err != nil {
		return 0, confinedSQLiteError(err, auth)
	}
	var affected int64
	if opt.Write {
		res, err := conn.ExecContext(ctx, query)
		if err != nil {
			return 0, confinedSQLiteError(err, auth)
		}
		affected, _ = res.RowsAffected()
	} else {
		r, err := conn.QueryContext(ctx, query)
		if err != nil {
			return 0, confinedSQLiteError(err, auth)
		}
		err = rows(r)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = r.Err()
		}
		if err != nil {
			return 0, confinedSQLiteError(err, auth)
		}
	}
	auth.armed.Store(false)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return 0, err
	}
	committed = true
	return affected, nil
}

// confinedSQLiteError names what the authorizer refused, and a value past
// the length limit, with the errors the API answers.
func confinedSQLiteError(err error, auth *sqliteAuthorizer) error {
	if what := auth.refused(); what != "" {
		return ErrConfinedDenied.With("detail", "refused: "+what)
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "SQLITE_TOOBIG") || strings.Contains(msg, "too big"):
		return ErrConfinedTooLarge.Wrap(err)
	case strings.Contains(msg, "too many attached databases"):
		return ErrConfinedDenied.With("detail", "refused: ATTACH")
	}
	return err
}

// sqliteAuthorizer decides, while SQLite compiles the tenant's statement,
// each thing it would touch.
type sqliteAuthorizer struct {
	write  bool
	hidden map[string]bool
	armed  atomic.Bool
	mu     sync.Mutex
	denied string // the first thing refused, for the answer
}

func (a *sqliteAuthorizer) refused() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.denied
}

// fileFunctions read or write files, load code or reach past SQL.
var fileFunctions = map[string]bool{
	"load_extension": true, "readfile": true, "writefile": true, "edit": true,
	"fts3_tokenizer": true, "zipfile": true, "sqlar_compress": true, "sqlar_uncompress": true,
}

// decide answers SQLITE_OK or SQLITE_DENY for one action (see
// sqlite3_set_authorizer): arg1..arg3 are the action's names, inner the
// trigger or view that does it ("" for the statement itself).
func (a *sqliteAuthorizer) decide(action int32, arg1, arg2, arg3, inner string) int32 {
	if !a.armed.Load() {
		return sqlite3.SQLITE_OK
	}
	deny := func(what string) int32 {
		a.mu.Lock()
		if a.denied == "" {
			a.denied = what
		}
		a.mu.Unlock()
		return sqlite3.SQLITE_DENY
	}
	table := strings.ToLower(arg1)
	ownTable := func() bool {
		return arg3 == "main" && !strings.HasPrefix(table, "sqlite_") && !strings.HasPrefix(table, "pragma_") &&
			table != "dbstat" && !a.hidden[table]
	}
	switch action {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_RECURSIVE:
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_READ:
		if ownTable() || (arg3 == "" && !a.hidden[table]) {
			// No database: a common table expression or subquery.
			return sqlite3.SQLITE_OK
		}
		if a.hidden[table] && arg2 == "id" && arg3 == "main" {
			// A foreign key's parent key (records name their creator by
			// sys_users.id): what the API shows the app's admins anyway.
			return sqlite3.SQLITE_OK
		}
		return deny("reading " + arg1)
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE:
		if inner != "" && a.write {
			return sqlite3.SQLITE_OK // the schema's own triggers keep their tables
		}
		if a.write && ownTable() && !strings.HasPrefix(table, SystemTablePrefix) {
			return sqlite3.SQLITE_OK
		}
		return deny("changing " + arg1)
	case sqlite3.SQLITE_FUNCTION:
		if fileFunctions[strings.ToLower(arg2)] {
			return deny("the function " + arg2)
		}
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_PRAGMA:
		return deny("PRAGMA " + arg1)
	case sqlite3.SQLITE_ATTACH:
		return deny("ATTACH")
	case sqlite3.SQLITE_DETACH:
		return deny("DETACH")
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		return deny("transaction control")
	}
	return deny(fmt.Sprintf("a statement of kind %d (schema changes are not run)", action))
}

// authorizers maps the pArg SQLite hands back to the Go decision.
var authorizers sync.Map // uintptr id → *sqliteAuthorizer

var authorizerIDs atomic.Uintptr

// authTrampoline is the C-side authorizer (modernc's calling convention):
// it finds the connection's decision by pArg.
func authTrampoline(tls *libc.TLS, pArg uintptr, action int32, z1, z2, z3, z4 uintptr) int32 {
	v, ok := authorizers.Load(pArg)
	if !ok {
		return sqlite3.SQLITE_DENY
	}
	return v.(*sqliteAuthorizer).decide(action, libc.GoString(z1), libc.GoString(z2), libc.GoString(z3), libc.GoString(z4))
}

// cFunc turns a Go function into the pointer modernc's C code calls, the
// representation its own hooks use (golang.org/s/go11func).
func cFunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

func installAuthorizer(h sqliteHandle, a *sqliteAuthorizer) uintptr {
	id := authorizerIDs.Add(1)
	authorizers.Store(id, a)
	tls := libc.NewTLS()
	defer tls.Close()
	sqlite3.Xsqlite3_set_authorizer(tls, h.db, cFunc(authTrampoline), id)
	return id
}

func removeAuthorizer(h sqliteHandle, id uintptr) {
	tls := libc.NewTLS()
	defer tls.Close()
	sqlite3.Xsqlite3_set_authorizer(tls, h.db, 0, 0)
	authorizers.Delete(id)
}

// sqliteHandle is the sqlite3* of a connection of ours.
type sqliteHandle struct{ db uintptr }

// rawSQLiteHandle reads the sqlite3* out of modernc's driver connection,
// which keeps it unexported. The test suite's confinement tests fail if a
// driver upgrade moves it.
func rawSQLiteHandle(conn *sql.Conn) (sqliteHandle, error) {
	var h sqliteHandle
	err := conn.Raw(func(dc any) error {
		v := reflect.ValueOf(dc)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("store: unexpected sqlite driver connection %T", dc)
		}
		f := v.Elem().FieldByName("db")
		if !f.IsValid() || f.Kind() != reflect.Uintptr || f.Uint() == 0 {
			return fmt.Errorf("store: sqlite driver connection %T has no handle", dc)
		}
		h.db = uintptr(f.Uint())
		return nil
	})
	return h, err
}

// oneStatement compiles query with SQLite's own parser and refuses it
// unless it is exactly one statement: what follows the first must compile
// to nothing (blanks, comments, semicolons). Compiling also runs the
// authorizer over the statement.
func oneStatement(h sqliteHandle, query string) error {
	tls := libc.NewTLS()
	defer tls.Close()
	if strings.IndexByte(query, 0) >= 0 {
		// C strings end at NUL: what follows would never be checked.
		return ErrConfinedOneStatement.With("detail", "a NUL byte in the statement")
	}
	zSQL, err := libc.CString(query)
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, zSQL)
	// SQLite writes the statement and the tail's address into out. It must
	// not move while SQLite holds its address: Go moves stacks, never heap
	// objects, and reflect.New always allocates on the heap.
	out := reflect.New(reflect.TypeFor[[2]uintptr]()).Interface().(*[2]uintptr)
	defer runtime.KeepAlive(out)
	pStmt, pTail := uintptr(unsafe.Pointer(&out[0])), uintptr(unsafe.Pointer(&out[1]))
	end := zSQL + uintptr(len(query))
	statements := 0
	for at := zSQL; at < end; {
		rc := sqlite3.Xsqlite3_prepare_v2(tls, h.db, at, int32(end-at), pStmt, pTail)
		if stmt := out[0]; stmt != 0 {
			sqlite3.Xsqlite3_finalize(tls, stmt)
			statements++
		}
		if rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("%s", libc.GoString(sqlite3.Xsqlite3_errmsg(tls, h.db)))
		}
		if statements > 1 {
			return ErrConfinedOneStatement
		}
		next := out[1]
		if next <= at {
			break
		}
		at = next
	}
	if statements == 0 {
		return ErrConfinedOneStatement.With("detail", "no statement")
	}
	return nil
}
