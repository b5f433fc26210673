package records

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// State is a record as stored: its fields and its plugin child rows. It is
// what a version snapshot keeps ({core, plugins}).
type State struct {
	Core    map[string]any              `json:"core"`
	Plugins map[string][]map[string]any `json:"plugins"`
	// Files are the record's linked files, kept by the versions written
	// before a file change (operation "files"); nil elsewhere.
	Files []FileRef `json:"files"`
	// Geodata are the record's features, kept by every version of a
	// geo-enabled table's record (null: the version predates them, or the
	// table is not geo-enabled).
	Geodata []GeoFeature `json:"geodata"`
	Creator *int64       `json:"-"`
}

// FileRef is a linked file as a version remembers it.
type FileRef struct {
	ID       int64  `json:"id"`
	Filename string `json:"filename"`
	Ext      string `json:"ext"`
}

// selectColumns lists t's columns (system columns first) for a SELECT.
func (s *Scope) selectColumns(t *schema.Table) ([]string, []schema.DBType) {
	names := append([]string{}, t.SystemColumns()...)
	types := make([]schema.DBType, 0, len(names)+len(t.Fields))
	for range names {
		types = append(types, schema.DBInt)
	}
	for _, f := range t.Fields {
		names = append(names, f.Name)
		types = append(types, f.DBType)
	}
	return names, types
}

// readRows reads rows of t matching where, each as a map of JSON values.
func (s *Scope) readRows(ctx context.Context, t *schema.Table, where string, args ...any) ([]map[string]any, error) {
	var out []map[string]any
	p := s.DB.Pipeline()
	s.queueRows(p, t, where, args, nil, func(rows []map[string]any) error { out = rows; return nil })
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// rowExtras are more values a row query selects after the row's columns
// (scalar subqueries: the record's version, its lookup labels), with
// their bound values and scan destinations (one row's worth).
type rowExtras struct {
	cols []string
	args []any
	dest []any
	// lock: the row is read to be changed; in a PostgreSQL transaction
	// it is locked (FOR UPDATE) until the commit. SQLite's write
	// transaction already excludes other writers.
	lock bool
}

// add selects expr (with its bound values) into dest.
func (x *rowExtras) add(expr string, dest any, args ...any) {
	x.cols = append(x.cols, expr)
	x.args = append(x.args, args...)
	x.dest = append(x.dest, dest)
}

// queueRows queues the read of t's rows matching where, in id order;
// done gets them. extra (may be nil) adds selected values, scanned into
// its destinations (meant for a query of one row).
func (s *Scope) queueRows(p *store.Pipeline, t *schema.Table, where string, args []any, extra *rowExtras, done func([]map[string]any) error) {
	names, types := s.selectColumns(t)
	q := s.DB.Qualify(t.Name)
	var b strings.Builder
	b.WriteString(s.selectList(t, q, names))
	if extra != nil && len(extra.cols) > 0 {
		// The extras' markers come before the WHERE's in the text.
		for _, c := range extra.cols {
			b.WriteString(", " + c)
		}
		args = append(slices.Clip(extra.args), args...)
	}
	b.WriteString(" FROM " + q + " WHERE " + where + " ORDER BY " + q + `."id"`)
	if extra != nil && extra.lock {
		b.WriteString(s.forUpdate(t.Name))
	}
	p.Query("read "+t.Name, b.String(), args, func(rows store.Rows) error {
		vals := make([]any, len(names))
		ptrs := make([]any, len(names))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if extra != nil {
			ptrs = append(ptrs, extra.dest...)
		}
		out := []map[string]any{}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			m := make(map[string]any, len(names))
			for i, n := range names {
				m[n] = fromDB(types[i], vals[i])
			}
			out = append(out, m)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return done(out)
	})
}

// selectList is "SELECT" and t's qualified columns (names), built once
// per catalog: every read of a record starts with it.
func (s *Scope) selectList(t *schema.Table, q string, names []string) string {
	build := func() any {
		var b strings.Builder
		b.WriteString("SELECT ")
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(q + "." + s.DB.Engine.Quote(n))
		}
		return b.String()
	}
	if s.Catalog == nil {
		return build().(string)
	}
	// Keyed by the table itself (not its name): a scope may hold a table
	// its catalog does not.
	return s.Catalog.Memo(selectListKey{t, q}, build).(string)
}

type selectListKey struct {
	t *schema.Table
	q string
}

// readState reads a record (within the caller's restriction) and its
// plugin rows: one query for the record, one per plugin table, in one
// round trip on PostgreSQL.
func (s *Scope) readState(ctx context.Context, id int64) (*State, error) {
	var st *State
	p := s.DB.Pipeline()
	s.queueState(p, id, nil, func(got *State) error { st = got; return nil })
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, ErrRecordNotFound
	}
	return st, nil
}

// queueState queues the reads of a record (within the caller's
// restriction) and of its plugin rows, all in one round. found is called
// with the state once the record's row is read (not at all when the
// caller may not see it, or it does not exist); its plugin rows are put
// in before the round ends. extra (may be nil) is selected with the
// record's row.
func (s *Scope) queueState(p *store.Pipeline, id int64, extra *rowExtras, found func(*State) error) {
	var st *State
	where, args := s.where(&Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}})
	s.queueRows(p, s.Table, where, args, extra, func(rows []map[string]any) error {
		if len(rows) == 0 {
			return nil
		}
		st = &State{Core: rows[0], Plugins: map[string][]map[string]any{}}
		if c, ok := st.Core[schema.ColCreator].(int64); ok {
			st.Creator = &c
		}
		return found(st)
	})
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		s.queueRows(p, pt, s.DB.Qualify(pt.Name)+`."id_link" = ?`, []any{id}, nil, func(rows []map[string]any) error {
			if st != nil {
				st.Plugins[pt.Name] = rows
			}
			return nil
		})
	}
}

// Snapshot stores record id's current state as a version (operation
// "update"), in the caller's transaction, before a change made outside
// the record save path (a vocabulary item renamed, a search-replace).
func Snapshot(ctx context.Context, s *Scope, id int64) error { return s.snapshot(ctx, id, "update") }

// SnapshotFiles stores record id's state with its linked files as a
// version (operation "files"), in the caller's transaction, before its
// files change (a file linked, unlinked, replaced or deleted): the
// record's history shows who changed its files and when, and what they
// were.
func SnapshotFiles(ctx context.Context, s *Scope, id int64) error {
	return s.snapshotWith(ctx, id, "files", func(st *State) (err error) {
		st.Files, err = s.fileRefs(ctx, id)
		return err
	})
}

// fileRefs are the files linked to record id, in their order ([] when
// the scope knows no files).
func (s *Scope) fileRefs(ctx context.Context, id int64) ([]FileRef, error) {
	out := []FileRef{}
	if s.Files == nil {
		return out, nil
	}
	list, err := s.Files.RecordFiles(ctx, s.DB, s.App, s.Table.Name, id)
	if err != nil {
		return nil, err
	}
	entries, _ := list.([]map[string]any)
	for _, e := range entries {
		ref := FileRef{}
		ref.ID, _ = e["id"].(int64)
		ref.Filename, _ = e["filename"].(string)
		ref.Ext, _ = e["ext"].(string)
		out = append(out, ref)
	}
	return out, nil
}

// snapshot stores the record's current state as a version before an
// update or delete; it runs in the same transaction as the change.
func (s *Scope) snapshot(ctx context.Context, id int64, operation string) error {
	return s.snapshotWith(ctx, id, operation, nil)
}

// snapshotWith is snapshot with more put into the state first.
func (s *Scope) snapshotWith(ctx context.Context, id int64, operation string, more func(*State) error) error {
	st, err := s.readState(ctx, id)
	if err != nil {
		return err
	}
	if s.Table.Geodata {
		if st.Geodata, err = s.geoFeatures(ctx, id); err != nil {
			return err
		}
	}
	if more != nil {
		if err := more(st); err != nil {
			return err
		}
	}
	_, err = s.storeSnapshot(ctx, id, operation, st, nil)
	return err
}

// storeSnapshot stores st, record id's state read in the transaction, as
// a version. The new version's id is the record's version (ids only grow);
// when version is not nil it gets it, and set says so: at once on SQLite
// (the row's id), and on PostgreSQL once the insert has run (its
// RETURNING), which is not waited for: it goes with the transaction's next
// statement or its commit, so version is read after the transaction. A dry
// run's version, whose id is given, is not set.
func (s *Scope) storeSnapshot(ctx context.Context, id int64, operation string, st *State, version *int64) (set bool, err error) {
	content, err := json.Marshal(st)
	if err != nil {
		return false, err
	}
	var user any
	if s.Actor.UserID != 0 {
		user = s.Actor.UserID
	}
	var by any
	if s.SystemActor != "" {
		by = s.SystemActor
	}
	cols, marks := `tb, record_id, userid, time, operation, content, actor`, `?, ?, ?, ?, ?, ?, ?`
	args := []any{s.Table.Name, id, user, s.now().Truncate(time.Microsecond), operation, string(content), by}
	vid := s.explicitID()
	if vid != 0 { // a dry run's (dryrun.go)
		cols, marks, args = cols+`, id`, marks+`, ?`, append(args, vid)
	}
	what := fmt.Sprintf("store version of %s %d", s.Table.Name, id)
	query := `INSERT INTO ` + s.DB.Sys("versions") + ` (` + cols + `) VALUES (` + marks + `)`
	set = version != nil && vid == 0
	if s.DB.Engine != store.SQLite {
		if !set {
			return false, s.DB.ExecLater(ctx, what, query, args...)
		}
		return true, s.DB.QueryRowLater(ctx, what, query+` RETURNING id`, args, version)
	}
	res, err := s.DB.Exec(ctx, query, args...)
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	if set {
		if *version, err = res.LastInsertId(); err != nil {
			return false, fmt.Errorf("%s: %w", what, err)
		}
	}
	return set, nil
}
