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

// Relation is a foreign key between two user tables (sys_relations). On
// PostgreSQL it is a real constraint named fk_<id>; SQLite cannot add a
// constraint to an existing table without rebuilding it, so there the
// relation is recorded in the catalog only (Enforced false).
type Relation struct {
	ID       int64  `json:"id"`
	FromTb   string `json:"from_tb"`
	FromCol  string `json:"from_col"`
	ToTb     string `json:"to_tb"`
	ToCol    string `json:"to_col"`
	OnDelete string `json:"on_delete"`
	OnUpdate string `json:"on_update"`
	Enforced bool   `json:"enforced"`
}

// RelationInput is the body of POST and PUT /config/relations. On create,
// to_col defaults to id and the actions to restrict; on update an empty
// value keeps the stored one.
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

// ListRelations returns every relation, oldest first.
func ListRelations(ctx context.Context, db *store.DB) ([]*Relation, error) {
	rows, err := db.Query(ctx, `SELECT id, from_tb, from_col, to_tb, to_col, on_delete, on_update FROM `+
		db.Sys("relations")+` ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list relations: %w", err)
	}
	defer rows.Close()
	out := []*Relation{}
	for rows.Next() {
		r := &Relation{Enforced: db.Engine == store.Postgres}
		if err := rows.Scan(&r.ID, &r.FromTb, &r.FromCol, &r.ToTb, &r.ToCol, &r.OnDelete, &r.OnUpdate); err != nil {
			return nil, fmt.Errorf("list relations: %w", err)
		}
		normalizeActions(r)
		out = append(out, r)
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

// AddRelation records a relation and, on PostgreSQL, adds its constraint.
// Existing rows that violate it refuse it on both engines (relation_violated),
// so the same request gets the same answer whatever the engine.
func AddRelation(ctx context.Context, db *store.DB, in RelationInput, now time.Time) (*Relation, error) {
	r := &Relation{FromTb: in.FromTb, FromCol: in.FromCol, ToTb: in.ToTb, ToCol: in.ToCol,
		OnDelete: in.OnDelete, OnUpdate: in.OnUpdate, Enforced: db.Engine == store.Postgres}
	if r.ToCol == "" {
		r.ToCol = ColID
	}
	if r.OnDelete == "" {
		r.OnDelete = defaultAction
	}
	if r.OnUpdate == "" {
		r.OnUpdate = defaultAction
	}
	normalizeActions(r)
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		if err := checkRelation(st, r); err != nil {
			return err
		}
		if err := checkRelationData(ctx, tx, r); err != nil {
			return err
		}
		row := relationRow{FromTb: r.FromTb, FromCol: r.FromCol, ToTb: r.ToTb, ToCol: r.ToCol,
			OnDelete: storedAction(r.OnDelete), OnUpdate: storedAction(r.OnUpdate), CreatedAt: now, UpdatedAt: now}
		if err := tx.Gorm.WithContext(ctx).Table(tx.GormSys("relations")).Create(&row).Error; err != nil {
			return fmt.Errorf("insert relation: %w", err)
		}
		r.ID = row.ID
		return addConstraint(ctx, tx, r)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateRelation changes a relation; on PostgreSQL its constraint is
// dropped and added again in the same transaction.
func UpdateRelation(ctx context.Context, db *store.DB, id int64, in RelationInput, now time.Time) (*Relation, error) {
	var out *Relation
	err := change(ctx, db, func(tx *store.DB, st *state) error {
		old, ok := st.relation(id)
		if !ok {
			return ErrRelationNotFound
		}
		r := *old
		setIf(&r.FromTb, in.FromTb)
		setIf(&r.FromCol, in.FromCol)
		setIf(&r.ToTb, in.ToTb)
		setIf(&r.ToCol, in.ToCol)
		setIf(&r.OnDelete, in.OnDelete)
		setIf(&r.OnUpdate, in.OnUpdate)
		normalizeActions(&r)
		if err := checkRelation(st, &r); err != nil {
			return err
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
		out = &r
		return addConstraint(ctx, tx, &r)
	})
	return out, err
}

func setIf(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}

// DeleteRelation removes a relation and its constraint.
func DeleteRelation(ctx context.Context, db *store.DB, id int64) error {
	return change(ctx, db, func(tx *store.DB, st *state) error {
		r, ok := st.relation(id)
		if !ok {
			return ErrRelationNotFound
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

// checkRelation validates r against the catalog: both tables exist and are
// not plugin tables (SPEC §2.8), from_col is an int field, to_col is id or
// a unique int field, the actions are known, and no other relation starts
// from the same column.
func checkRelation(st *state, r *Relation) error {
	for _, p := range []struct{ name, v string }{{"from_tb", r.FromTb}, {"from_col", r.FromCol}, {"to_tb", r.ToTb}} {
		if p.v == "" {
			return ErrParameterMissing.With("parameter", p.name)
		}
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
	if f, ok := from.Field(r.FromCol); !ok || f.DBType != DBInt {
		return ErrInvalidRelation.With("parameter", "from_col").With("detail", "from_col must be a field of from_tb with db_type int")
	}
	if r.ToCol != ColID {
		if f, ok := to.Field(r.ToCol); !ok || !f.Unique || f.DBType != DBInt {
			return ErrInvalidRelation.With("parameter", "to_col").With("detail", "to_col must be id or a unique field of to_tb with db_type int")
		}
	}
	for _, p := range []struct{ name, v string }{{"on_delete", r.OnDelete}, {"on_update", r.OnUpdate}} {
		if !slices.Contains(RelationActions, p.v) {
			return ErrInvalidRelation.With("parameter", p.name).With("allowed", RelationActions)
		}
	}
	for _, o := range st.relations {
		if o.ID != r.ID && o.FromTb == r.FromTb && o.FromCol == r.FromCol {
			return ErrRelationExists.With("id", o.ID)
		}
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
