package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// Version is a stored snapshot of a record.
type Version struct {
	ID        int64     `json:"id"`
	Table     string    `json:"tb"`
	RecordID  int64     `json:"record_id"`
	UserID    *int64    `json:"userid"`
	Time      time.Time `json:"time"`
	Operation string    `json:"operation"`
	// Actor names who made the change when no user did: "plugin:<name>"
	// for a plugin's system save (Host.UpdateRecords, a revalidation).
	Actor string `json:"actor,omitempty"`
	// User names the author in the versions list, so a reader (who may
	// not list the accounts) sees who made each version: the account's
	// name, its email when it has none, or Actor for a plugin's save.
	// Empty (left out) for an account since deleted.
	User    string `json:"user,omitempty"`
	Content *State `json:"content,omitempty"`
}

var (
	ErrVersionNotFound = errs.New(errs.NotFound, "version_not_found", "no such version")
	ErrStale           = errs.New(errs.PreconditionFailed, "precondition_failed",
		"the record has changed since you read it: read it again, then save")
)

// RecordVersion is the version of a record: the id of its latest stored
// snapshot (0 before its first update). Every update, plugin-row delete,
// restore and delete stores a snapshot first, in the same transaction, and
// snapshot ids only grow, so the version changes with every change on both
// engines (the ETag of the record).
func RecordVersion(ctx context.Context, s *Scope, id int64) (int64, error) {
	var v int64
	p := s.DB.Pipeline()
	s.queueVersion(p, id, &v)
	if err := p.Run(ctx); err != nil {
		return 0, err
	}
	return v, nil
}

// visible reports whether the caller may see the history of record id:
// always without a row subset (the record may have been deleted: its
// history stays readable to those who may read the table); with one, only
// while the record exists within it, since a deleted row can no longer be
// matched against the subset.
func (s *Scope) visible(ctx context.Context, id int64) (bool, error) {
	if s.Restrict == nil || s.Restrict.SQL == "" {
		return true, nil
	}
	where, args := s.where(&Cond{SQL: s.column(schema.ColID) + " = ?", Args: []any{id}})
	var n int
	if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Qualify(s.Table.Name)+` WHERE `+where, args...).Scan(&n); err != nil {
		return false, fmt.Errorf("read %s %d: %w", s.Table.Name, id, err)
	}
	return n > 0, nil
}

// Versions lists one page of a record's versions, newest first, with
// their total (see visible for who may see them). The page is the list's:
// DefaultPerPage versions by default, at most MaxPerPage.
func Versions(ctx context.Context, s *Scope, id int64, page, perPage int) ([]Version, int64, error) {
	pg, err := PageOf(page, perPage, DefaultPerPage, MaxPerPage)
	if err != nil {
		return nil, 0, err
	}
	if ok, err := s.visible(ctx, id); err != nil || !ok {
		if err == nil {
			err = ErrRecordNotFound
		}
		return nil, 0, err
	}
	var total int64
	if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Sys("versions")+` WHERE tb = ? AND record_id = ?`,
		s.Table.Name, id).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("versions of %s %d: %w", s.Table.Name, id, err)
	}
	rows, err := s.DB.Query(ctx, `SELECT v.id, v.tb, v.record_id, v.userid, v.time, v.operation, COALESCE(v.actor, ''), COALESCE(u.name, ''), COALESCE(u.email, '') FROM `+
		s.DB.Sys("versions")+` v LEFT JOIN `+s.DB.Sys("users")+` u ON u.id = v.userid`+
		` WHERE v.tb = ? AND v.record_id = ? ORDER BY v.id DESC LIMIT ? OFFSET ?`, s.Table.Name, id, pg.Limit, pg.Offset)
	if err != nil {
		return nil, 0, fmt.Errorf("versions of %s %d: %w", s.Table.Name, id, err)
	}
	defer rows.Close()
	out := []Version{}
	for rows.Next() {
		var v Version
		var name, email string
		if err := rows.Scan(&v.ID, &v.Table, &v.RecordID, &v.UserID, &v.Time, &v.Operation, &v.Actor, &name, &email); err != nil {
			return nil, 0, err
		}
		switch {
		case v.Actor != "":
			v.User = v.Actor
		case name != "":
			v.User = name
		default:
			v.User = email
		}
		out = append(out, v)
	}
	return out, total, rows.Err()
}

// VersionTable returns the table a version belongs to.
func VersionTable(ctx context.Context, db *store.DB, id int64) (string, error) {
	var tb string
	err := db.QueryRow(ctx, `SELECT tb FROM `+db.Sys("versions")+` WHERE id = ?`, id).Scan(&tb)
	if isNoRows(err) {
		return "", ErrVersionNotFound
	}
	return tb, err
}

// GetVersion returns a version with its content, and the record's current
// state (nil when the record no longer exists), for comparison.
func GetVersion(ctx context.Context, s *Scope, id int64) (*Version, *State, error) {
	var v Version
	var content string
	err := s.DB.QueryRow(ctx, `SELECT id, tb, record_id, userid, time, operation, content FROM `+s.DB.Sys("versions")+` WHERE id = ? AND tb = ?`,
		id, s.Table.Name).Scan(&v.ID, &v.Table, &v.RecordID, &v.UserID, &v.Time, &v.Operation, &content)
	if isNoRows(err) {
		return nil, nil, ErrVersionNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	if ok, err := s.visible(ctx, v.RecordID); err != nil || !ok {
		if err == nil {
			err = ErrVersionNotFound
		}
		return nil, nil, err
	}
	v.Content = &State{}
	if err := json.Unmarshal([]byte(content), v.Content); err != nil {
		return nil, nil, fmt.Errorf("version %d content: %w", id, err)
	}
	current, err := s.readState(ctx, v.RecordID)
	if errors.Is(err, ErrRecordNotFound) {
		return &v, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if v.Content.Files != nil {
		// A "files" version: compare the files too.
		if current.Files, err = s.fileRefs(ctx, v.RecordID); err != nil {
			return nil, nil, err
		}
	}
	if v.Content.Geodata != nil {
		if current.Geodata, err = s.geoFeatures(ctx, v.RecordID); err != nil {
			return nil, nil, err
		}
	}
	return &v, current, nil
}

// Change is one field whose value differs between a version and now.
type Change struct {
	Field   string `json:"field"`
	Table   string `json:"table,omitempty"` // plugin table, for child rows
	Version any    `json:"version"`
	Current any    `json:"current"`
}

// Diff lists what differs between a version and the current state (nil
// current: the record was deleted, so every field differs): core fields
// one by one, and plugin tables as whole row lists.
func Diff(v *State, current *State) []Change {
	out := []Change{}
	cur := &State{Core: map[string]any{}, Plugins: map[string][]map[string]any{}}
	if current != nil {
		cur = current
	}
	keys := make([]string, 0, len(v.Core))
	for k := range v.Core {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k == schema.ColCreator {
			continue
		}
		if !sameJSON(v.Core[k], cur.Core[k]) {
			out = append(out, Change{Field: k, Version: v.Core[k], Current: cur.Core[k]})
		}
	}
	tables := make([]string, 0, len(v.Plugins))
	for t := range v.Plugins {
		tables = append(tables, t)
	}
	slices.Sort(tables)
	for _, t := range tables {
		if !sameJSON(v.Plugins[t], cur.Plugins[t]) {
			out = append(out, Change{Table: t, Version: v.Plugins[t], Current: cur.Plugins[t]})
		}
	}
	// Files are compared when both sides know them (a "files" version and
	// a current state read with its files).
	if v.Files != nil && cur.Files != nil && !sameJSON(v.Files, cur.Files) {
		out = append(out, Change{Field: "files", Version: v.Files, Current: cur.Files})
	}
	if v.Geodata != nil && cur.Geodata != nil && !sameJSON(geoShapes(v.Geodata), geoShapes(cur.Geodata)) {
		out = append(out, Change{Field: "geodata", Version: geoShapes(v.Geodata), Current: geoShapes(cur.Geodata)})
	}
	return out
}

// sameJSON compares values by their JSON form: a snapshot decoded from
// JSON holds float64 where a fresh read holds int64.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// RestoreResult tells what a restore did.
type RestoreResult struct {
	ID      int64    `json:"id"`
	Created bool     `json:"created"` // the record had been deleted and was re-created with its id
	Skipped []string `json:"skipped"` // fields of the snapshot the table no longer has
}

// Restore brings a record back to a version: every field (or only fields,
// when given) and, for each table in restorePlugins, its plugin rows. A
// deleted record is re-created with its id and creator. The current state
// is stored as a version first, so a restore can itself be undone.
func Restore(ctx context.Context, s *Scope, versionID int64, fields, restorePlugins []string) (*RestoreResult, error) {
	res := &RestoreResult{Skipped: []string{}}
	err := s.DB.Tx(ctx, func(tx *store.DB) error {
		ts := *s
		ts.DB = tx
		v, current, err := GetVersion(ctx, &ts, versionID)
		if err != nil {
			return err
		}
		res.ID = v.RecordID
		for _, f := range fields {
			if f == "geodata" && v.Content.Geodata != nil {
				continue
			}
			if _, ok := v.Content.Core[f]; !ok {
				return ErrInvalidField.With("field", f).With("detail", "not in this version")
			}
		}
		for _, pt := range restorePlugins {
			if t, ok := s.Catalog.Table(pt); !ok || t.PluginOf != s.Table.Name {
				return ErrInvalidField.With("field", pt).With("detail", "not a plugin table of "+s.Table.Name)
			}
		}
		p := &prepared{}
		for _, f := range s.Table.Fields {
			val, inVersion := v.Content.Core[f.Name]
			if !inVersion || (len(fields) > 0 && !slices.Contains(fields, f.Name)) {
				continue
			}
			dbv, err := toDB(tx.Engine, f.DBType, val)
			if err != nil {
				return ErrValidation.With("errors", []FieldError{{Field: f.Name, Label: f.Label, Rule: "type", Message: err.Error()}})
			}
			p.cols, p.vals = append(p.cols, f.Name), append(p.vals, dbv)
		}
		for k := range v.Content.Core {
			if _, ok := s.Table.Field(k); !ok && !s.Table.IsSystemColumn(k) {
				res.Skipped = append(res.Skipped, k)
			}
		}
		slices.Sort(res.Skipped)
		if current == nil {
			res.Created = true
			if err := ts.recreate(ctx, v, p); err != nil {
				return err
			}
		} else {
			if err := ts.snapshot(ctx, v.RecordID, "restore"); err != nil {
				return err
			}
			if err := ts.updateRow(ctx, s.Table, v.RecordID, p); err != nil {
				return err
			}
		}
		for _, pt := range restorePlugins {
			if err := ts.restorePluginRows(ctx, pt, v); err != nil {
				return err
			}
		}
		// The features come back with a whole restore, or when named.
		if v.Content.Geodata != nil && (len(fields) == 0 || slices.Contains(fields, "geodata")) {
			if err := ts.restoreGeodata(ctx, v.RecordID, v.Content.Geodata); err != nil {
				return err
			}
		}
		op := changes.Update
		if res.Created {
			op = changes.Create
		}
		if err := ts.logChange(ctx, v.RecordID, op); err != nil {
			return err
		}
		return ts.touch(ctx, v.RecordID, "restore")
	})
	if err != nil {
		return nil, mapUniqueViolation(err)
	}
	return res, nil
}

// recreate inserts a deleted record again with its id and, if that user
// still exists, its creator.
func (s *Scope) recreate(ctx context.Context, v *Version, p *prepared) error {
	cols := append([]string{schema.ColID}, p.cols...)
	vals := append([]any{v.RecordID}, p.vals...)
	if s.Table.HasCreator() {
		if c, ok := v.Content.Core[schema.ColCreator].(float64); ok {
			var n int
			if err := s.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+s.DB.Sys("users")+` WHERE id = ?`, int64(c)).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				cols, vals = append(cols, schema.ColCreator), append(vals, int64(c))
			}
		}
	}
	quoted := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		quoted[i], marks[i] = s.DB.Engine.Quote(c), "?"
	}
	_, err := s.DB.Exec(ctx, `INSERT INTO `+s.DB.Qualify(s.Table.Name)+` (`+joinComma(quoted)+`) VALUES (`+joinComma(marks)+`)`, vals...)
	if err != nil {
		return fmt.Errorf("re-create %s %d: %w", s.Table.Name, v.RecordID, err)
	}
	return s.syncSequence(ctx, s.Table.Name)
}

// syncSequence keeps PostgreSQL's id sequence ahead of ids inserted by
// hand (SQLite's AUTOINCREMENT follows the largest id by itself).
func (s *Scope) syncSequence(ctx context.Context, table string) error {
	if s.DB.Engine != store.Postgres {
		return nil
	}
	return s.syncSequenceOf(ctx, s.DB.Qualify(table), s.DB.Schema()+"."+table)
}

// syncSequenceOf moves the id sequence of the table (quoted, and as a
// name for pg_get_serial_sequence) past its largest id, never back: an id
// handed out once, even of a row deleted since, is never handed out again.
func (s *Scope) syncSequenceOf(ctx context.Context, quoted, name string) error {
	if s.DB.Engine != store.Postgres {
		return nil
	}
	_, err := s.DB.Exec(ctx, `SELECT setval(pg_get_serial_sequence(?, 'id'), GREATEST((SELECT COALESCE(MAX("id"), 0) FROM `+
		quoted+`), COALESCE(pg_sequence_last_value(pg_get_serial_sequence(?, 'id')::regclass), 0), 1))`, name, name)
	return err
}

// restorePluginRows replaces the record's rows of plugin table pt with the
// rows of the version, ids included.
func (s *Scope) restorePluginRows(ctx context.Context, pt string, v *Version) error {
	t, _ := s.Catalog.Table(pt)
	if _, err := s.DB.Exec(ctx, `DELETE FROM `+s.DB.Qualify(pt)+` WHERE "id_link" = ?`, v.RecordID); err != nil {
		return err
	}
	for _, row := range v.Content.Plugins[pt] {
		cols := []string{schema.ColID, schema.ColIDLink}
		id, _ := row[schema.ColID].(float64)
		vals := []any{int64(id), v.RecordID}
		for _, f := range t.Fields {
			val, ok := row[f.Name]
			if !ok {
				continue
			}
			dbv, err := toDB(s.DB.Engine, f.DBType, val)
			if err != nil {
				return ErrValidation.With("errors", []FieldError{{Field: f.Name, Label: f.Label, Rule: "type", Table: pt, Message: err.Error()}})
			}
			cols, vals = append(cols, f.Name), append(vals, dbv)
		}
		quoted := make([]string, len(cols))
		marks := make([]string, len(cols))
		for i, c := range cols {
			quoted[i], marks[i] = s.DB.Engine.Quote(c), "?"
		}
		if _, err := s.DB.Exec(ctx, `INSERT INTO `+s.DB.Qualify(pt)+` (`+joinComma(quoted)+`) VALUES (`+joinComma(marks)+`)`, vals...); err != nil {
			return fmt.Errorf("restore %s row: %w", pt, err)
		}
	}
	return s.syncSequence(ctx, pt)
}

func joinComma(xs []string) string { return strings.Join(xs, ", ") }

// Deleted lists records of the table that were deleted and not restored:
// the latest delete version of each, newest first.
func Deleted(ctx context.Context, s *Scope) ([]Version, error) {
	rows, err := s.DB.Query(ctx, `SELECT v.id, v.tb, v.record_id, v.userid, v.time, v.operation FROM `+s.DB.Sys("versions")+` v
		WHERE v.tb = ? AND v.operation = 'delete'
		  AND v.id = (SELECT MAX(w.id) FROM `+s.DB.Sys("versions")+` w WHERE w.tb = v.tb AND w.record_id = v.record_id AND w.operation = 'delete')
		  AND NOT EXISTS (SELECT 1 FROM `+s.DB.Qualify(s.Table.Name)+` r WHERE r."id" = v.record_id)
		ORDER BY v.id DESC`, s.Table.Name)
	if err != nil {
		return nil, fmt.Errorf("deleted records of %s: %w", s.Table.Name, err)
	}
	defer rows.Close()
	out := []Version{}
	for rows.Next() {
		var v Version
		if err := rows.Scan(&v.ID, &v.Table, &v.RecordID, &v.UserID, &v.Time, &v.Operation); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// geoShapes are features as a comparison shows them: id and WKT.
func geoShapes(fs []GeoFeature) []map[string]any {
	out := make([]map[string]any, len(fs))
	for i, f := range fs {
		out[i] = map[string]any{"id": f.ID, "geometry": f.Geometry}
	}
	return out
}
