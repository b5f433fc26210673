package records

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
)

// State is a record as stored: its fields and its plugin child rows. It is
// what a version snapshot keeps ({core, plugins}).
type State struct {
	Core    map[string]any              `json:"core"`
	Plugins map[string][]map[string]any `json:"plugins"`
	// Files are the record's linked files, kept by the versions written
	// before a file change (operation "files"); nil elsewhere.
	Files   []FileRef `json:"files"`
	Creator *int64    `json:"-"`
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
	names, types := s.selectColumns(t)
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = s.DB.Qualify(t.Name) + "." + s.DB.Engine.Quote(n)
	}
	rows, err := s.DB.Query(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM `+s.DB.Qualify(t.Name)+
		` WHERE `+where+` ORDER BY `+s.DB.Qualify(t.Name)+`."id"`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", t.Name, err)
	}
	defer rows.Close()
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	out := []map[string]any{}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s: %w", t.Name, err)
		}
		m := make(map[string]any, len(names))
		for i, n := range names {
			m[n] = fromDB(types[i], vals[i])
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// readState reads a record (within the caller's restriction) and its
// plugin rows: one query for the record, one per plugin table.
func (s *Scope) readState(ctx context.Context, id int64) (*State, error) {
	where, args := s.where(&Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}})
	rows, err := s.readRows(ctx, s.Table, where, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrRecordNotFound
	}
	st := &State{Core: rows[0], Plugins: map[string][]map[string]any{}}
	if c, ok := st.Core[schema.ColCreator].(int64); ok {
		st.Creator = &c
	}
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		prow, err := s.readRows(ctx, pt, s.DB.Qualify(pt.Name)+`."id_link" = ?`, id)
		if err != nil {
			return nil, err
		}
		st.Plugins[pt.Name] = prow
	}
	return st, nil
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
	if more != nil {
		if err := more(st); err != nil {
			return err
		}
	}
	content, err := json.Marshal(st)
	if err != nil {
		return err
	}
	var user any
	if s.Actor.UserID != 0 {
		user = s.Actor.UserID
	}
	_, err = s.DB.Exec(ctx, `INSERT INTO `+s.DB.Sys("versions")+` (tb, record_id, userid, time, operation, content) VALUES (?, ?, ?, ?, ?, ?)`,
		s.Table.Name, id, user, s.now().Truncate(time.Microsecond), operation, string(content))
	if err != nil {
		return fmt.Errorf("store version of %s %d: %w", s.Table.Name, id, err)
	}
	return nil
}
