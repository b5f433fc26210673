package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// sqliteDBFile is the database file inside an app's folder.
const sqliteDBFile = "app.db"

// creatingPrefix marks folders of apps still being created; they are
// renamed into place on success and swept away at start-up otherwise.
const creatingPrefix = ".creating-"

// SQLiteBackend keeps each app in <data-dir>/apps/<name>/app.db.
type SQLiteBackend struct {
	appsDir string
	mu      sync.Mutex // serialises create/drop within this process
}

// OpenSQLite prepares the apps folder under dataDir and removes folders
// left by creations that crashed half way.
func OpenSQLite(dataDir string) (*SQLiteBackend, error) {
	appsDir := filepath.Join(dataDir, "apps")
	// The data folder holds every app's secrets and users: only the
	// service's own account may enter it (0700), and folders made before
	// this rule are tightened.
	for _, dir := range []string{dataDir, appsDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("restrict %s: %w", dir, err)
		}
	}
	entries, err := os.ReadDir(appsDir)
	if err != nil {
		return nil, fmt.Errorf("read apps dir: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), creatingPrefix) {
			if err := os.RemoveAll(filepath.Join(appsDir, e.Name())); err != nil {
				return nil, fmt.Errorf("remove abandoned creation %s: %w", e.Name(), err)
			}
		}
	}
	return &SQLiteBackend{appsDir: appsDir}, nil
}

func (b *SQLiteBackend) Engine() Engine { return SQLite }

// DataDir is the data folder the backend was opened on: instance-wide
// files (the job queue's jobs.db) live there, beside apps/.
func (b *SQLiteBackend) DataDir() string { return filepath.Dir(b.appsDir) }

// AppDir returns the folder that holds the app's database (and, later, its
// files), whether or not the app exists.
func (b *SQLiteBackend) AppDir(name string) string { return filepath.Join(b.appsDir, name) }

func (b *SQLiteBackend) Exists(_ context.Context, name string) (bool, error) {
	_, err := os.Stat(filepath.Join(b.AppDir(name), sqliteDBFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (b *SQLiteBackend) List(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(b.appsDir)
	if err != nil {
		return nil, fmt.Errorf("list apps: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || !ValidIdent(e.Name()) {
			continue
		}
		if ok, err := b.Exists(ctx, e.Name()); err != nil {
			return nil, err
		} else if ok {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (b *SQLiteBackend) Open(ctx context.Context, name string) (*DB, error) {
	ok, err := b.Exists(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("open app %s: %w", name, err)
	}
	if !ok {
		return nil, ErrAppNotFound
	}
	if err := os.Chmod(b.AppDir(name), 0o700); err != nil { // made 0750 by older versions
		return nil, fmt.Errorf("restrict app folder %s: %w", name, err)
	}
	return openSQLiteFile(filepath.Join(b.AppDir(name), sqliteDBFile))
}

// Create builds the app in a hidden folder and renames it into place only
// after init succeeded, so a failed creation leaves no file behind and a
// half-made app is never visible.
func (b *SQLiteBackend) Create(ctx context.Context, name string, init func(context.Context, *DB) error) (err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok, err := b.Exists(ctx, name); err != nil {
		return err
	} else if ok {
		return ErrAppExists
	}
	final := b.AppDir(name)
	if _, err := os.Stat(final); err == nil {
		return ErrAppExists // a folder of that name is in the way
	}
	tmp, err := b.buildBeside(ctx, name, init)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	// rename(2) onto an existing non-empty folder fails, so a concurrent
	// creator in another process cannot be overwritten.
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(final); statErr == nil {
			return ErrAppExists
		}
		return fmt.Errorf("publish app dir: %w", err)
	}
	return nil
}

// buildBeside makes an app's database in a hidden folder of the apps
// folder and runs init on it; the folder is removed when anything fails.
func (b *SQLiteBackend) buildBeside(ctx context.Context, name string, init func(context.Context, *DB) error) (string, error) {
	tmp := filepath.Join(b.appsDir, creatingPrefix+name+"-"+randomHex(6))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return "", fmt.Errorf("create app dir: %w", err)
	}
	db, err := openSQLiteFile(filepath.Join(tmp, sqliteDBFile))
	if err != nil {
		_ = os.RemoveAll(tmp)
		return "", err
	}
	initErr := init(ctx, db)
	closeErr := db.Close() // checkpoints the WAL into the main file
	if initErr == nil && closeErr != nil {
		initErr = fmt.Errorf("close new app database: %w", closeErr)
	}
	if initErr != nil {
		_ = os.RemoveAll(tmp)
		return "", initErr
	}
	return tmp, nil
}

func (b *SQLiteBackend) Drop(ctx context.Context, name string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok, err := b.Exists(ctx, name); err != nil {
		return err
	} else if !ok {
		return ErrAppNotFound
	}
	// Move aside first so the app disappears atomically, then delete.
	trash := filepath.Join(b.appsDir, creatingPrefix+"drop-"+name+"-"+randomHex(6))
	if err := os.Rename(b.AppDir(name), trash); err != nil {
		return fmt.Errorf("drop app %s: %w", name, err)
	}
	return os.RemoveAll(trash)
}

func (b *SQLiteBackend) Close() error { return nil }

// sqliteBusyTimeout is how long a writer waits for another.
const sqliteBusyTimeout = 10 * time.Second

// sqliteDSN sets, per connection: a busy timeout so writers queue, WAL so
// readers never block the writer, enforced foreign keys, an 8 MiB page
// cache (SQLite's default is 2 MiB; a table of 100,000 records keeps its
// indexes in memory: reads and updates +7–16% in BenchmarkRecords, and the
// cache grows only as pages are used), and timestamps in SQLite's own
// sortable text form. Transactions are begun IMMEDIATE (_txlock): see DB.Tx.
func sqliteDSN(path string) string {
	return path + "?_pragma=busy_timeout(" + strconv.FormatInt(sqliteBusyTimeout.Milliseconds(), 10) + ")" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)" +
		"&_pragma=synchronous(NORMAL)" +
		"&_pragma=cache_size(-8192)" +
		"&_time_format=sqlite" +
		"&_txlock=immediate"
}

func openSQLiteFile(path string) (*DB, error) {
	if err := restrictFile(path); err != nil {
		return nil, err
	}
	pool, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// Readers' connections, and one more kept for writes (writerconn.go).
	conns := max(4, 2*runtime.NumCPU()) + 1
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)
	if err := pool.Ping(); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	mode, err := groupModeFromEnv()
	if err != nil {
		pool.Close()
		return nil, err
	}
	stmts := newStmtCache(pool)
	conn := &cachedPool{cachedConn{cache: stmts, pool: pool}}
	g, err := newGorm(sqliteDialector{conn: conn}, "")
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("gorm on sqlite: %w", err)
	}
	return &DB{Engine: SQLite, Gorm: g, SQL: conn, pool: pool, owned: true, gen: new(atomic.Uint64), stmts: stmts, writer: make(chan struct{}, 1), group: &groupCommit{mode: mode}, file: path}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// restrictFile makes the database file readable by the service's account
// only (0600) before SQLite opens it: created so when new (SQLite gives its
// -wal and -shm files the database file's mode), tightened when an older
// version left it 0644.
func restrictFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open sqlite %s: %w", path, err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("restrict sqlite %s: %w", path, err)
	}
	return nil
}
