package schema

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Relation is a link from a column of one user table to a column of
// another (or the same) table. Recorded relations live in sys_relations;
// on PostgreSQL they are real constraints named fk_<id> wherever the
// engine can enforce them (to_col is id or a unique field). SQLite cannot
// add a constraint to an existing table without rebuilding it, which
// Strata never does, so there relations are recorded in the catalog only.
// A lookup field (id_from_tb) implies a relation to the id of its table:
// until it is recorded, it is listed with Lookup true and the negative of
// the field's id as its id.
type Relation struct {
	ID        int64  `json:"id"`
	FromTb    string `json:"from_tb"`
	FromCol   string `json:"from_col"`
	FromLabel string `json:"from_label"`
	ToTb      string `json:"to_tb"`
	ToCol     string `json:"to_col"`
	ToLabel   string `json:"to_label"`
	OnDelete  string `json:"on_delete"`
	OnUpdate  string `json:"on_update"`
	Lookup    bool   `json:"lookup"`
	Enforced  bool   `json:"enforced"`
	// NotEnforced says why the database does not enforce the relation
	// (one of the NotEnforced* values), empty when it does.
	NotEnforced string `json:"not_enforced,omitempty"`
}

// Reasons a relation is not a database constraint.
const (
	// NotEnforcedEngine: SQLite cannot add a constraint to an existing table.
	NotEnforcedEngine = "engine_cannot_add_constraint"
	// NotEnforcedNotUnique: PostgreSQL needs a unique index on to_col.
	NotEnforcedNotUnique = "to_col_not_unique"
	// NotEnforcedLookup: implied by a lookup field and not recorded; the
	// server checks its values when records are saved.
	NotEnforcedLookup = "lookup_not_recorded"
	// NotEnforcedMissing: the constraint could exist but does not (POST
	// /config/apply-constraints adds it when the data allows).
	NotEnforcedMissing = "constraint_missing"
)

// RelationInput is the body of POST and PUT /config/relations. On create
// from_tb, from_col, to_tb and to_col are required and the actions default
// to RESTRICT; on update an empty value keeps the stored one. A relation
// from a table to itself always has on_delete RESTRICT and on_update
// CASCADE (BraDypUS's rule).
type RelationInput struct {
	FromTb   string `json:"from_tb"`
	FromCol  string `json:"from_col"`
	ToTb     string `json:"to_tb"`
	ToCol    string `json:"to_col"`
	OnDelete string `json:"on_delete"`
	OnUpdate string `json:"on_update"`
}

// RelationActions lists the on_delete / on_update values, in the SQL
// spelling answers use. Input may be in any case, with a space or an
// underscore ("set_null", "Set Null"); the catalog stores the lower-case
// underscore form ("set_null").
var RelationActions = []string{"RESTRICT", "CASCADE", "SET NULL", "NO ACTION"}

const defaultAction = "RESTRICT"

// NormalizeAction returns the SQL spelling of a relation action written
// in any case, with spaces or underscores between its words; ok is false
// for anything else.
func NormalizeAction(s string) (sql string, ok bool) {
	sql = strings.Join(strings.Fields(strings.ToUpper(strings.ReplaceAll(s, "_", " "))), " ")
	return sql, slices.Contains(RelationActions, sql)
}

// storedAction is the catalog form of an action in the SQL spelling.
func storedAction(sql string) string {
	return strings.ToLower(strings.ReplaceAll(sql, " ", "_"))
}

// normalizeActions puts r's actions in the SQL spelling where they are
// known, leaving unknown values for checkRelation to refuse.
func normalizeActions(r *Relation) {
	for _, a := range []*string{&r.OnDelete, &r.OnUpdate} {
		if sql, ok := NormalizeAction(*a); ok {
			*a = sql
		}
	}
}

type relationRow struct {
	ID        int64 `gorm:"primaryKey"`
	FromTb    string
	FromCol   string
	ToTb      string
	ToCol     string
	OnDelete  string
	OnUpdate  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ListRelations returns the recorded relations, oldest first, each with
// whether the database enforces it.
func ListRelations(ctx context.Context, db *store.DB) ([]*Relation, error) {
	rels, err := listRecorded(ctx, db)
	if err != nil {
		return nil, err
	}
	cat, err := Load(ctx, db)
	if err != nil {
		return nil, err
	}
	return rels, markEnforcement(ctx, db, cat, rels)
}

// ListAllRelations returns what GET /config/relations lists: the recorded
// relations, oldest first, then the relations implied by lookup fields
// that are not recorded, in catalog order; with table labels and whether
// the database enforces each.
func ListAllRelations(ctx context.Context, db *store.DB) ([]*Relation, error) {
	rels, err := listRecorded(ctx, db)
	if err != nil {
		return nil, err
	}
	cat, err := Load(ctx, db)
	if err != nil {
		return nil, err
	}
	rels = append(rels, lookupRelations(cat, rels)...)
	for _, r := range rels {
		r.FromLabel, r.ToLabel = tableLabel(cat, r.FromTb), tableLabel(cat, r.ToTb)
	}
	return rels, markEnforcement(ctx, db, cat, rels)
}

func tableLabel(cat *Catalog, name string) string {
	if t, ok := cat.Table(name); ok && t.Label != "" {
		return t.Label
	}
	return name
}

// listRecorded reads sys_relations, oldest first.
func listRecorded(ctx context.Context, db *store.DB) ([]*Relation, error) {
	rows, err := db.Query(ctx, `SELECT id, from_tb, from_col, to_tb, to_col, on_delete, on_update FROM `+
		db.Sys("relations")+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list relations: %w", err)
	}
	defer rows.Close()
	out := []*Relation{}
	for rows.Next() {
		r := &Relation{}
		if err := rows.Scan(&r.ID, &r.FromTb, &r.FromCol, &r.ToTb, &r.ToCol, &r.OnDelete, &r.OnUpdate); err != nil {
			return nil, fmt.Errorf("list relations: %w", err)
		}
		normalizeActions(r)
		out = append(out, r)
	}
	return out, rows.Err()
}

// lookupRelations returns the relations implied by the lookup fields of
// cat that no recorded relation starts from.
func lookupRelations(cat *Catalog, recorded []*Relation) []*Relation {
	var out []*Relation
	for _, t := range cat.Tables {
		for _, f := range t.Fields {
			if f.IDFromTb == "" || recordedFrom(recorded, t.Name, f.Name) != nil {
				continue
			}
			out = append(out, lookupRelation(t, f))
		}
	}
	return out
}

func lookupRelation(t *Table, f *Field) *Relation {
	return &Relation{ID: -f.ID, FromTb: t.Name, FromCol: f.Name, ToTb: f.IDFromTb, ToCol: ColID,
		OnDelete: defaultAction, OnUpdate: "CASCADE", Lookup: true}
}

func recordedFrom(rels []*Relation, table, col string) *Relation {
	for _, r := range rels {
		if r.FromTb == table && r.FromCol == col {
			return r
		}
	}
	return nil
}

// lookupByRelationID finds the lookup field whose implied relation has id
// (the negative of the field's id).
func lookupByRelationID(cat *Catalog, id int64) (*Table, *Field, bool) {
	if id >= 0 {
		return nil, nil, false
	}
	for _, t := range cat.Tables {
		for _, f := range t.Fields {
			if f.ID == -id && f.IDFromTb != "" {
				return t, f, true
			}
		}
	}
	return nil, nil, false
}

// enforceable says whether the engine can make r a constraint: PostgreSQL,
// with to_col the id or a unique field.
func enforceable(db *store.DB, cat *Catalog, r *Relation) bool {
	return db.Engine == store.Postgres && notEnforceableReason(db, cat, r) == ""
}

func notEnforceableReason(db *store.DB, cat *Catalog, r *Relation) string {
	if db.Engine != store.Postgres {
		return NotEnforcedEngine
	}
	if r.ToCol == ColID {
		return ""
	}
	if t, ok := cat.Table(r.ToTb); ok {
		if f, ok := t.Field(r.ToCol); ok && f.Unique {
			return ""
		}
	}
	return NotEnforcedNotUnique
}

// markEnforcement sets Enforced and NotEnforced on rels from what the
// database holds.
func markEnforcement(ctx context.Context, db *store.DB, cat *Catalog, rels []*Relation) error {
	present, err := foreignKeyNames(ctx, db)
	if err != nil {
		return err
	}
	for _, r := range rels {
		r.Enforced, r.NotEnforced = false, ""
		switch {
		case r.Lookup:
			r.NotEnforced = NotEnforcedLookup
		case present[constraintName(r)]:
			r.Enforced = true
		case notEnforceableReason(db, cat, r) != "":
			r.NotEnforced = notEnforceableReason(db, cat, r)
		default:
			r.NotEnforced = NotEnforcedMissing
		}
	}
	return nil
}

// foreignKeyNames returns the names of the foreign keys in the app's
// schema (PostgreSQL; none on SQLite, see Relation).
func foreignKeyNames(ctx context.Context, db *store.DB) (map[string]bool, error) {
	out := map[string]bool{}
	if db.Engine != store.Postgres {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT constraint_name FROM information_schema.table_constraints
		WHERE table_schema = ? AND constraint_type = 'FOREIGN KEY'`, db.Schema())
	if err != nil {
		return nil, fmt.Errorf("foreign keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("foreign keys: %w", err)
		}
		out[n] = true
	}
	return out, rows.Err()
}

func (st *state) relation(id int64) (*Relation, bool) {
	for _, r := range st.relations {
		if r.ID == id {
			return r, true
		}
	}
	return nil, false
}

// AddRelation records a relation and, where the engine can enforce it
// (see Relation), adds its constraint. Existing rows that violate it
// refuse it on both engines (relation_violated), so the same request gets
// the same answer whatever the engine. Recording the relation a lookup
// field implies (same target) is allowed; any other relation from a
// lookup field is refused as already existing.
func AddRelation(ctx context.Context, db *store.DB, in RelationInput, now time.Time) (*Relation, error) {
	for _, p := range []struct{ name, v string }{{"from_tb", in.FromTb}, {"from_col", in.FromCol}, {"to_tb", in.ToTb}, {"to_col", in.ToCol}} {
		if strings.TrimSpace(p.v) == "" {
			return nil, ErrParameterMissing.With("parameter", p.name)
		}
	}
	r := &Relation{FromTb: strings.TrimSpace(in.FromTb), FromCol: strings.TrimSpace(in.FromCol), ToTb: strings.TrimSpace(in.ToTb),
		ToCol: strings.TrimSpace(in.ToCol), OnDelete: in.OnDelete, OnUpdate: in.OnUpdate}
	if strings.TrimSpace(r.OnDelete) == "" {
		r.OnDelete = defaultAction
	}
	if strings.TrimSpace(r.OnUpdate) == "" {
		r.OnUpdate = defaultAction
	}
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		if err := checkRelation(st, r, false); err != nil {
			return err
		}
		return saveRelation(ctx, tx, st, r, now)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// saveRelation checks r against the data, inserts it and adds its
// constraint where the engine can enforce it.
func saveRelation(ctx context.Context, tx *store.DB, st *state, r *Relation, now time.Time) error {
	if err := checkRelationData(ctx, tx, r); err != nil {
		return err
	}
	row := relationRow{FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol,
		OnDelete: storedAction(r.OnDelete), OnUpdate: storedAction(r.OnUpdate), CreatedAt: now, UpdatedAt: now}
	if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("relations")).Create(&row).Error; err != nil {
		return fmt.Errorf("insert relation: %w", err)
	}
	r.ID, r.Lookup = row.ID, false
	return enforce(ctx, tx, st, r)
}

// enforce adds r's constraint when the engine can, and says so in r.
func enforce(ctx context.Context, tx *store.DB, st *state, r *Relation) error {
	r.FromLabel, r.ToLabel = tableLabel(st.cat, r.FromTb), tableLabel(st.cat, r.ToTb)
	r.Enforced, r.NotEnforced = false, notEnforceableReason(tx, st.cat, r)
	if r.NotEnforced != "" {
		return nil
	}
	if err := addConstraint(ctx, tx, r); err != nil {
		return err
	}
	r.Enforced = true
	return nil
}

// UpdateRelation changes a relation; its constraint is dropped and added
// again in the same transaction. Updating the relation a lookup field
// implies (negative id) records it, with a new id.
func UpdateRelation(ctx context.Context, db *store.DB, id int64, in RelationInput, now time.Time) (*Relation, error) {
	var out *Relation
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		old, ok := st.relation(id)
		if !ok {
			t, f, ok := lookupByRelationID(st.cat, id)
			if !ok || recordedFrom(st.relations, t.Name, f.Name) != nil {
				return ErrRelationNotFound.With("id", id)
			}
			old = lookupRelation(t, f)
		}
		r := *old
		setIf(&r.FromTb, in.FromTb)
		setIf(&r.FromCol, in.FromCol)
		setIf(&r.ToTb, in.ToTb)
		setIf(&r.ToCol, in.ToCol)
		setIf(&r.OnDelete, in.OnDelete)
		setIf(&r.OnUpdate, in.OnUpdate)
		if err := checkRelation(st, &r, true); err != nil {
			return err
		}
		out = &r
		if old.Lookup {
			return saveRelation(ctx, tx, st, &r, now)
		}
		if err := checkRelationData(ctx, tx, &r); err != nil {
			return err
		}
		if err := dropConstraint(ctx, tx, old); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE `+tx.Sys("relations")+` SET from_tb = ?, from_col = ?, to_tb = ?, to_col = ?,
			on_delete = ?, on_update = ?, updated_at = ? WHERE id = ?`,
			r.FromTb, r.FromCol, r.ToTb, r.ToCol, storedAction(r.OnDelete), storedAction(r.OnUpdate), now, r.ID)
		if err != nil {
			return fmt.Errorf("update relation %d: %w", id, err)
		}
		return enforce(ctx, tx, st, &r)
	})
	return out, err
}

func setIf(dst *string, v string) {
	if v = strings.TrimSpace(v); v != "" {
		*dst = v
	}
}

// DeleteRelation removes a recorded relation and its constraint. The
// relation a lookup field implies goes with the lookup only
// (relation_from_lookup); a recorded relation from a lookup field leaves
// the implied one listed again.
func DeleteRelation(ctx context.Context, db *store.DB, id int64) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		r, ok := st.relation(id)
		if !ok {
			if t, f, ok := lookupByRelationID(st.cat, id); ok && recordedFrom(st.relations, t.Name, f.Name) == nil {
				return ErrRelationOfLookup.With("id", id).With("from_tb", t.Name).With("from_col", f.Name)
			}
			return ErrRelationNotFound.With("id", id)
		}
		return removeRelation(ctx, tx, r)
	})
}

// removeRelation drops r's constraint and its catalog row.
func removeRelation(ctx context.Context, tx *store.DB, r *Relation) error {
	if err := dropConstraint(ctx, tx, r); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("relations")+` WHERE id = ?`, r.ID); err != nil {
		return fmt.Errorf("delete relation %d: %w", r.ID, err)
	}
	return nil
}

// checkRelation normalises r's actions and validates r against the
// catalog: known actions (a relation of a table to itself is forced to
// RESTRICT / CASCADE), both tables exist and are not plugin tables (SPEC
// §2.8), from_col is a field of from_tb, to_col is id or a field of to_tb
// with the same db_type, no other relation starts from the same column,
// and a lookup field's relation goes to the id of its id_from_tb table.
func checkRelation(st *state, r *Relation, update bool) error {
	var ok bool
	if r.OnDelete, ok = NormalizeAction(r.OnDelete); !ok {
		return ErrInvalidOnDelete.With("parameter", "on_delete").With("allowed", RelationActions)
	}
	if r.OnUpdate, ok = NormalizeAction(r.OnUpdate); !ok {
		return ErrInvalidOnUpdate.With("parameter", "on_update").With("allowed", RelationActions)
	}
	if r.FromTb == r.ToTb {
		r.OnDelete, r.OnUpdate = "RESTRICT", "CASCADE"
	}
	from, ok := st.cat.Table(r.FromTb)
	if !ok {
		return ErrInvalidRelation.With("parameter", "from_tb").With("detail", "from_tb names no table")
	}
	to, ok := st.cat.Table(r.ToTb)
	if !ok {
		return ErrInvalidRelation.With("parameter", "to_tb").With("detail", "to_tb names no table")
	}
	if from.IsPlugin || to.IsPlugin {
		return ErrInvalidRelation.With("detail", "a plugin table's only relation is id_link to its parent")
	}
	ff, ok := from.Field(r.FromCol)
	if !ok {
		return ErrInvalidRelation.With("parameter", "from_col").With("detail", "from_col must be a field of from_tb")
	}
	toType := DBInt
	if r.ToCol != ColID {
		tf, ok := to.Field(r.ToCol)
		if !ok {
			return ErrInvalidRelation.With("parameter", "to_col").With("detail", "to_col must be id or a field of to_tb")
		}
		toType = tf.DBType
	}
	for _, o := range st.relations {
		if o.ID != r.ID && o.FromTb == r.FromTb && o.FromCol == r.FromCol {
			return ErrRelationExists.With("id", o.ID)
		}
	}
	if ff.IDFromTb != "" && (r.ToTb != ff.IDFromTb || r.ToCol != ColID) {
		if !update && recordedFrom(st.relations, r.FromTb, r.FromCol) == nil {
			return ErrRelationExists.With("id", -ff.ID).With("detail", "from_col is a lookup of "+ff.IDFromTb+": its relation goes to "+ff.IDFromTb+".id")
		}
		return ErrInvalidRelation.With("parameter", "to_tb").With("detail", "from_col is a lookup of "+ff.IDFromTb+": its relation goes to "+ff.IDFromTb+".id")
	}
	if ff.DBType != toType {
		return ErrInvalidRelation.With("parameter", "to_col").
			With("detail", fmt.Sprintf("from_col has db_type %s and to_col %s: a relation joins columns of the same db_type", ff.DBType, toType))
	}
	return nil
}

// checkRelationData counts rows whose from_col names no row of to_tb.
func checkRelationData(ctx context.Context, tx *store.DB, r *Relation) error {
	fc, tc := tx.Engine.Quote(r.FromCol), tx.Engine.Quote(r.ToCol)
	var n int64
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+tx.Qualify(r.FromTb)+` f WHERE f.`+fc+` IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM `+tx.Qualify(r.ToTb)+` t WHERE t.`+tc+` = f.`+fc+`)`).Scan(&n)
	if err != nil {
		return fmt.Errorf("check relation data: %w", err)
	}
	if n > 0 {
		return ErrRelationViolated.With("count", n)
	}
	return nil
}

func constraintName(r *Relation) string { return "fk_" + strconv.FormatInt(r.ID, 10) }

// addConstraint adds r's foreign key on PostgreSQL (see Relation).
func addConstraint(ctx context.Context, tx *store.DB, r *Relation) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	// The actions are written into the statement: only the known ones.
	if !slices.Contains(RelationActions, r.OnDelete) || !slices.Contains(RelationActions, r.OnUpdate) {
		return fmt.Errorf("relation %d: unknown action %q / %q", r.ID, r.OnDelete, r.OnUpdate)
	}
	_, err := tx.Exec(ctx, `ALTER TABLE `+tx.Qualify(r.FromTb)+` ADD CONSTRAINT `+tx.Engine.Quote(constraintName(r))+
		` FOREIGN KEY (`+tx.Engine.Quote(r.FromCol)+`) REFERENCES `+tx.Qualify(r.ToTb)+` (`+tx.Engine.Quote(r.ToCol)+
		`) ON DELETE `+r.OnDelete+` ON UPDATE `+r.OnUpdate)
	if isForeignKeyViolation(err) {
		return ErrRelationViolated.Wrap(err)
	}
	if err != nil {
		return fmt.Errorf("add constraint %s: %w", constraintName(r), err)
	}
	return nil
}

// dropConstraint removes r's foreign key on PostgreSQL, if present.
func dropConstraint(ctx context.Context, tx *store.DB, r *Relation) error {
	if tx.Engine != store.Postgres {
		return nil
	}
	_, err := tx.Exec(ctx, `ALTER TABLE `+tx.Qualify(r.FromTb)+` DROP CONSTRAINT IF EXISTS `+tx.Engine.Quote(constraintName(r)))
	if err != nil {
		return fmt.Errorf("drop constraint %s: %w", constraintName(r), err)
	}
	return nil
}

// relationsOf returns the relations touching any table of names.
func relationsOf(st *state, names []string) []*Relation {
	var out []*Relation
	for _, r := range st.relations {
		if slices.Contains(names, r.FromTb) || slices.Contains(names, r.ToTb) {
			out = append(out, r)
		}
	}
	return out
}
