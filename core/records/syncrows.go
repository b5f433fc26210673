package records

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// SyncRow is a record as an offline device keeps it (the sync pull,
// core/fieldsync): the values, lookup labels, plugin rows and files that
// GET /record/{tb}/{id} shows the caller, flat, without the read's
// presentation (labels of fields, schema, links).
type SyncRow struct {
	ID int64 `json:"id"`
	// Version is RecordVersion (the read's ETag).
	Version int64 `json:"version"`
	// Values are the record's fields and system columns (id, creator).
	Values map[string]any `json:"values"`
	// Labels are the display labels of its lookup fields (null where the
	// caller may not read the referenced record, or there is none).
	Labels  map[string]any              `json:"labels"`
	Plugins map[string][]map[string]any `json:"plugins"`
	Files   any                         `json:"files"`
	// RS are its stratigraphic relations as the record read's "rs" gives
	// them (tables with relations; nil otherwise).
	RS map[string]any `json:"rs,omitempty"`
}

// FilesBatcher is a FilesSource that reads the files of many records in
// one query (a sync page's); done gets each record's section as
// RecordFiles gives it, keyed by record (none: absent).
type FilesBatcher interface {
	QueueFilesOf(ctx context.Context, p *store.Pipeline, app, table string, ids []int64, done func(map[int64]any))
}

// SyncPage reads at most limit of the scope's rows matching where (may be
// nil) whose id is above after, in id order: the keyset paging of a first
// pull, which costs the same for every page and neither skips nor repeats
// a row when others are inserted or deleted meanwhile.
func SyncPage(ctx context.Context, s *Scope, where *Cond, after int64, limit int) ([]*SyncRow, error) {
	after64 := &Cond{SQL: s.column(schema.ColID) + " > ?", Args: []any{after}}
	return s.syncRows(ctx, joinConds(where, after64), limit)
}

// SyncRowsOf reads the scope's rows among ids that match where (may be
// nil), in id order: those the caller may not see, and those gone, are
// simply absent.
func SyncRowsOf(ctx context.Context, s *Scope, where *Cond, ids []int64) ([]*SyncRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return s.syncRows(ctx, joinConds(where, &Cond{SQL: s.column(schema.ColID) + " IN (" + marks(len(ids)) + ")", Args: int64Args(ids)}), len(ids))
}

// syncRows reads a page in a handful of queries whatever its size: the
// rows with their versions (one query, within the caller's subset), then,
// in one round trip on PostgreSQL, the page's plugin rows (one query per
// plugin table), files (one) and lookup labels (one per referenced table).
func (s *Scope) syncRows(ctx context.Context, cond *Cond, limit int) ([]*SyncRow, error) {
	rows, err := s.syncCore(ctx, cond, limit)
	if err != nil || len(rows) == 0 {
		return rows, err
	}
	ids := make([]int64, len(rows))
	byID := make(map[int64]*SyncRow, len(rows))
	for i, r := range rows {
		ids[i], byID[r.ID] = r.ID, r
	}
	p := s.DB.Pipeline()
	s.queueSyncPlugins(p, ids, byID)
	labels, err := s.queueSyncLabels(ctx, p, rows)
	if err != nil {
		return nil, err
	}
	files := s.queueSyncFiles(ctx, p, ids)
	rs := s.queueSyncRS(ctx, p, ids, byID)
	if err := p.Run(ctx); err != nil {
		return nil, err
	}
	rs()
	if err := files(ctx, byID); err != nil {
		return nil, err
	}
	for _, r := range rows {
		for _, f := range s.Table.Fields {
			if f.IDFromTb == "" {
				continue
			}
			var label any
			if n, ok := r.Values[f.Name].(int64); ok {
				label = labelOf(labels[f.IDFromTb], n)
			}
			r.Labels[f.Name] = label
		}
	}
	return rows, nil
}

// syncCore reads the page's rows and their versions in one query.
func (s *Scope) syncCore(ctx context.Context, cond *Cond, limit int) ([]*SyncRow, error) {
	names, types := s.selectColumns(s.Table)
	q := s.DB.Qualify(s.Table.Name)
	where, whereArgs := s.where(cond)
	// The version in the row's statement, at its snapshot: never newer
	// than the values sent with it (as Read).
	query := s.selectList(s.Table, q, names) +
		`, (SELECT COALESCE(MAX(v."id"), 0) FROM ` + s.DB.Sys("versions") + ` AS v WHERE v.tb = ? AND v.record_id = ` + q + `."id")` +
		` FROM ` + q + ` WHERE ` + where + ` ORDER BY ` + q + `."id" LIMIT ?`
	args := append(append([]any{s.Table.Name}, whereArgs...), limit)
	rs, err := s.DB.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s for sync: %w", s.Table.Name, err)
	}
	defer rs.Close()
	vals := make([]any, len(names))
	ptrs := make([]any, len(names)+1)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var version int64
	ptrs[len(names)] = &version
	var out []*SyncRow
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("read %s for sync: %w", s.Table.Name, err)
		}
		m := make(map[string]any, len(names))
		for i, n := range names {
			m[n] = fromDB(types[i], vals[i])
		}
		id, _ := m[schema.ColID].(int64)
		out = append(out, &SyncRow{ID: id, Version: version, Values: m, Labels: map[string]any{},
			Plugins: map[string][]map[string]any{}, Files: []map[string]any{}})
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read %s for sync: %w", s.Table.Name, err)
	}
	return out, nil
}

// queueSyncPlugins queues the page's plugin rows, one query per plugin
// table, each row as the read shows it: id and fields.
func (s *Scope) queueSyncPlugins(p *store.Pipeline, ids []int64, byID map[int64]*SyncRow) {
	for _, pt := range s.Catalog.PluginTables(s.Table.Name) {
		for _, r := range byID {
			r.Plugins[pt.Name] = []map[string]any{}
		}
		where := s.DB.Qualify(pt.Name) + `."id_link" IN (` + marks(len(ids)) + `)`
		s.queueRows(p, pt, where, int64Args(ids), nil, func(rows []map[string]any) error {
			for _, row := range rows {
				link, _ := row[schema.ColIDLink].(int64)
				r := byID[link]
				if r == nil {
					continue
				}
				delete(row, schema.ColIDLink)
				r.Plugins[pt.Name] = append(r.Plugins[pt.Name], row)
			}
			return nil
		})
	}
}

// queueSyncLabels queues the labels of the page's lookups: one query per
// referenced table, as far as the caller may read it (queueLabels).
func (s *Scope) queueSyncLabels(ctx context.Context, p *store.Pipeline, rows []*SyncRow) (map[string]map[int64]string, error) {
	byTable := map[string][]int64{}
	seen := map[string]map[int64]bool{}
	var tables []string
	for _, f := range s.Table.Fields {
		if f.IDFromTb == "" {
			continue
		}
		if seen[f.IDFromTb] == nil {
			seen[f.IDFromTb] = map[int64]bool{}
			tables = append(tables, f.IDFromTb)
		}
		for _, r := range rows {
			if n, ok := r.Values[f.Name].(int64); ok && !seen[f.IDFromTb][n] {
				seen[f.IDFromTb][n] = true
				byTable[f.IDFromTb] = append(byTable[f.IDFromTb], n)
			}
		}
	}
	labels := map[string]map[int64]string{}
	for _, tb := range tables {
		ref, ok := s.Catalog.Table(tb)
		if !ok {
			continue
		}
		labels[tb] = map[int64]string{}
		if err := s.queueLabels(ctx, p, ref, byTable[tb], labels[tb]); err != nil {
			return nil, err
		}
	}
	return labels, nil
}

// queueSyncFiles queues the page's files in one query when the files
// area can (FilesBatcher); the returned step puts them in place once the
// pipeline has run (reading them record by record where it cannot).
func (s *Scope) queueSyncFiles(ctx context.Context, p *store.Pipeline, ids []int64) func(context.Context, map[int64]*SyncRow) error {
	switch src := s.Files.(type) {
	case nil:
		return func(context.Context, map[int64]*SyncRow) error { return nil }
	case FilesBatcher:
		var got map[int64]any
		src.QueueFilesOf(ctx, p, s.App, s.Table.Name, ids, func(m map[int64]any) { got = m })
		return func(_ context.Context, byID map[int64]*SyncRow) error {
			for id, files := range got {
				if r := byID[id]; r != nil {
					r.Files = files
				}
			}
			return nil
		}
	default:
		return func(ctx context.Context, byID map[int64]*SyncRow) error {
			for id, r := range byID {
				files, err := src.RecordFiles(ctx, s.DB, s.App, s.Table.Name, id)
				if err != nil {
					return err
				}
				r.Files = files
			}
			return nil
		}
	}
}

// marks is n '?' markers, comma separated.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
