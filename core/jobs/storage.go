package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/strata-archaeo/strata/core/store"
)

// SQLiteFile is the queue's file in the data folder with SQLite.
const SQLiteFile = "jobs.db"

// SchemaName is the service name of the queue's PostgreSQL schema
// (store.PostgresBackend.ServiceSchema: <namespace>__jobs).
const SchemaName = "jobs"

// queue is what the System uses of a river client; river.Client[pgx.Tx]
// and river.Client[*sql.Tx] both have it.
type queue interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobUpdate(ctx context.Context, id int64, params *river.JobUpdateParams) (*rivertype.JobRow, error)
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	ID() string
}

// storage is the queue's database on one engine.
type storage struct {
	client queue
	// db reads river's job table for what river's API lacks (a count and
	// an offset page of one app's jobs): read-only, river writes it.
	db    *sql.DB
	table string // river_job, schema-qualified on PostgreSQL
	nodes string // strata_job_node (nodes.go), likewise
	arg   func(n int) string
	close func()
	// exec ends the jobs of vanished nodes (nodes.go) as river's own
	// completer would; schema is river's ("" on SQLite).
	exec   riverdriver.Executor
	schema string
	single bool // SQLite: one node per data folder
}

// openStorage opens the queue's database beside the backend's apps,
// makes river's tables and builds a client with cfg.
func openStorage(ctx context.Context, b store.Backend, dir string, maxConns int, cfg *river.Config) (*storage, error) {
	switch be := b.(type) {
	case *store.PostgresBackend:
		return openPostgres(ctx, be, maxConns, cfg)
	case *store.SQLiteBackend:
		if dir == "" {
			dir = be.DataDir()
		}
		return openSQLite(ctx, filepath.Join(dir, SQLiteFile), cfg)
	}
	return nil, fmt.Errorf("jobs: no queue for a %T backend", b)
}

// openPostgres uses a pgx pool of its own (river's pgx driver listens for
// insert and cancel notifications) in schema <namespace>__jobs.
func openPostgres(ctx context.Context, b *store.PostgresBackend, maxConns int, cfg *river.Config) (*storage, error) {
	schema := b.ServiceSchema(SchemaName)
	pc, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("jobs: pool config: %w", err)
	}
	pc.ConnConfig = b.ConnConfig()
	pc.MaxConns = int32(maxConns)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("jobs: connect: %w", err)
	}
	fail := func(err error) (*storage, error) {
		pool.Close()
		return nil, err
	}
	driver := riverpgxv5.New(pool)
	if err := migratePostgres(ctx, pool, driver, schema, cfg); err != nil {
		return fail(fmt.Errorf("jobs: migrate schema %s: %w", schema, err))
	}
	cfg.Schema = schema
	client, err := newClient(driver, cfg)
	if err != nil {
		return fail(err)
	}
	st := &storage{
		client: client, db: stdlib.OpenDBFromPool(pool),
		table: pgx.Identifier{schema, "river_job"}.Sanitize(),
		nodes: pgx.Identifier{schema, nodeTable}.Sanitize(),
		arg:   func(n int) string { return "$" + strconv.Itoa(n) },
		close: pool.Close,
		exec:  driver.GetExecutor(), schema: schema,
	}
	if err := st.createNodeTable(ctx); err != nil {
		return fail(err)
	}
	return st, nil
}

// openSQLite keeps the queue in one file, made 0600 before SQLite opens
// it (its -wal and -shm files take its mode). River's SQLite driver asks
// for one connection (SQLite runs one writer at a time and river works
// concurrently); WAL and a busy timeout let another process's System share
// the file.
func openSQLite(ctx context.Context, path string, cfg *river.Config) (*storage, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("jobs: open %s: %w", path, err)
	}
	f.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("jobs: restrict %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("jobs: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	fail := func(err error) (*storage, error) {
		db.Close()
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		return fail(fmt.Errorf("jobs: open %s: %w", path, err))
	}
	driver := riversqlite.New(db)
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: cfg.Logger})
	if err != nil {
		return fail(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fail(fmt.Errorf("jobs: migrate %s: %w", path, err))
	}
	client, err := newClient(driver, cfg)
	if err != nil {
		return fail(err)
	}
	st := &storage{
		client: client, db: db, table: "river_job", nodes: nodeTable,
		arg:   func(int) string { return "?" },
		close: func() { db.Close() },
		exec:  driver.GetExecutor(), single: true,
	}
	if err := st.createNodeTable(ctx); err != nil {
		return fail(err)
	}
	return st, nil
}

// migratePostgres creates the schema and runs river's migrations (each in
// its own transaction: one adds an enum value a later one uses). Nodes
// starting together take turns on a session advisory lock.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, driver *riverpgxv5.Driver, schema string, cfg *river.Config) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	key := "strata-jobs:" + schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, key); err != nil {
		return err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, key)
	}()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: cfg.Logger})
	if err != nil {
		return err
	}
	_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	return err
}

func newClient[TTx any](driver riverdriver.Driver[TTx], cfg *river.Config) (queue, error) {
	c, err := river.NewClient(driver, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: river client: %w", err)
	}
	return c, nil
}

// page is one page of an app's jobs, newest first, and how many it has.
func (st *storage) page(ctx context.Context, app string, limit, offset int) (ids []int64, total int64, err error) {
	where := ` FROM ` + st.table + ` WHERE kind = ` + st.arg(1) + ` AND args ->> 'app' = ` + st.arg(2)
	if err := st.db.QueryRowContext(ctx, `SELECT count(*)`+where, taskKind, app).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("jobs: count: %w", err)
	}
	rows, err := st.db.QueryContext(ctx, `SELECT id`+where+` ORDER BY id DESC LIMIT `+st.arg(3)+` OFFSET `+st.arg(4), taskKind, app, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("jobs: list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, total, rows.Err()
}

// countByState counts the jobs of the whole instance by river state.
func (st *storage) countByState(ctx context.Context) (map[rivertype.JobState]int64, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT state, count(*) FROM `+st.table+` WHERE kind = `+st.arg(1)+` GROUP BY state`, taskKind)
	if err != nil {
		return nil, fmt.Errorf("jobs: count by state: %w", err)
	}
	defer rows.Close()
	out := map[rivertype.JobState]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[rivertype.JobState(s)] += n
	}
	return out, rows.Err()
}
