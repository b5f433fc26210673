package geo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/paulmach/orb"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

var (
	// ErrNotGeoTable: the table does not keep geodata (its `geodata` flag).
	ErrNotGeoTable = errs.New(errs.Invalid, "geodata_not_enabled", "this table does not keep geodata (set its geodata flag)")
	// ErrFeatureNotFound: no feature has this id (or the caller may not see its record).
	ErrFeatureNotFound = errs.New(errs.NotFound, "geodata_not_found", "no such feature")
)

// Feature is a stored feature.
type Feature struct {
	ID       int64
	Table    string
	RecordID int64
	WKT      string
	GeoJSON  string
	Bound    orb.Bound
}

// row is a checked geometry in its three stored forms.
type row struct {
	wkt, geojson string
	b            orb.Bound
}

func rowOf(g orb.Geometry) row {
	return row{wkt: WKT(g), geojson: string(GeoJSON(g)), b: g.Bound()}
}

// ScopeOf is the caller's scope on a table (api.Host.RecordScope).
type ScopeOf func(table string) (*records.Scope, error)

// Writer changes features as one caller, all or nothing: each record
// whose features change must be editable by the caller (records'
// Editable: level and own-record rule, row subset) and gets a version
// first (records.SnapshotGeodata), once per record and transaction.
type Writer struct {
	DB      *store.DB
	ScopeOf ScopeOf
}

// Tx is a Writer inside its transaction (NewTx: in a transaction of the
// caller's, such as an import's).
type Tx struct {
	tx       *store.DB
	scopeOf  ScopeOf
	versions map[string]bool // "tb/id" already versioned
	ids      func() int64    // a dry run's feature ids (WithIDs); nil or 0: the sequence's
}

// WithIDs makes t give the features it inserts the ids next returns
// (records.Scope.DryRunID) instead of the sequence's, when not 0: a dry
// run is rolled back, and PostgreSQL never rolls a sequence back.
func (t *Tx) WithIDs(next func() int64) *Tx {
	t.ids = next
	return t
}

// NewTx is a writer working in the caller's transaction tx.
func NewTx(tx *store.DB, scopeOf ScopeOf) *Tx {
	return &Tx{tx: tx, scopeOf: scopeOf, versions: map[string]bool{}}
}

// Do runs fn in one transaction.
func (w Writer) Do(ctx context.Context, fn func(t *Tx) error) error {
	return w.DB.Tx(ctx, func(tx *store.DB) error {
		return fn(NewTx(tx, w.ScopeOf))
	})
}

// touch checks that the caller may change record id of table, and
// versions it once.
func (t *Tx) touch(ctx context.Context, table string, id int64) error {
	sc, err := t.scopeOf(table)
	if err != nil {
		return err
	}
	if !sc.Table.Geodata {
		return ErrNotGeoTable.With("table", table)
	}
	ts := *sc
	ts.DB = t.tx
	if err := ts.Editable(ctx, id); err != nil {
		return err
	}
	key := fmt.Sprintf("%s/%d", table, id)
	if t.versions[key] {
		return nil
	}
	t.versions[key] = true
	if err := records.SnapshotGeodata(ctx, &ts, id); err != nil {
		return err
	}
	return records.LogChange(ctx, &ts, id)
}

// Insert adds a feature to record id of table and returns its id.
func (t *Tx) Insert(ctx context.Context, table string, id int64, g orb.Geometry) (int64, error) {
	if err := t.touch(ctx, table, id); err != nil {
		return 0, err
	}
	r := rowOf(g)
	cols, marks := `tb, record_id, geometry, geojson, min_x, min_y, max_x, max_y`, `?, ?, ?, ?, ?, ?, ?, ?`
	args := []any{table, id, r.wkt, r.geojson, r.b.Min[0], r.b.Min[1], r.b.Max[0], r.b.Max[1]}
	if t.ids != nil {
		if fid := t.ids(); fid != 0 {
			cols, marks, args = cols+`, id`, marks+`, ?`, append(args, fid)
		}
	}
	var fid int64
	err := t.tx.QueryRow(ctx, `INSERT INTO `+t.tx.Sys("geodata")+` (`+cols+`) VALUES (`+marks+`) RETURNING id`, args...).Scan(&fid)
	if err != nil {
		return 0, fmt.Errorf("insert geodata: %w", err)
	}
	return fid, nil
}

// owner is the table and record of feature fid.
func (t *Tx) owner(ctx context.Context, fid int64) (string, int64, error) {
	var tb string
	var id int64
	err := t.tx.QueryRow(ctx, `SELECT tb, record_id FROM `+t.tx.Sys("geodata")+` WHERE id = ?`, fid).Scan(&tb, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, ErrFeatureNotFound.With("id", fid)
	}
	return tb, id, err
}

// Update replaces feature fid's geometry.
func (t *Tx) Update(ctx context.Context, fid int64, g orb.Geometry) error {
	tb, id, err := t.owner(ctx, fid)
	if err != nil {
		return err
	}
	if err := t.touch(ctx, tb, id); err != nil {
		return hideRecord(err, fid)
	}
	r := rowOf(g)
	_, err = t.tx.Exec(ctx, `UPDATE `+t.tx.Sys("geodata")+` SET geometry = ?, geojson = ?, min_x = ?, min_y = ?, max_x = ?, max_y = ? WHERE id = ?`,
		r.wkt, r.geojson, r.b.Min[0], r.b.Min[1], r.b.Max[0], r.b.Max[1], fid)
	return err
}

// Delete removes feature fid.
func (t *Tx) Delete(ctx context.Context, fid int64) error {
	tb, id, err := t.owner(ctx, fid)
	if err != nil {
		return err
	}
	if err := t.touch(ctx, tb, id); err != nil {
		return hideRecord(err, fid)
	}
	_, err = t.tx.Exec(ctx, `DELETE FROM `+t.tx.Sys("geodata")+` WHERE id = ?`, fid)
	return err
}

// ReplaceAll removes record id's features and adds gs (an import's
// "replace" mode), versioning the record once.
func (t *Tx) ReplaceAll(ctx context.Context, table string, id int64, gs []orb.Geometry, keep bool) error {
	if err := t.touch(ctx, table, id); err != nil {
		return err
	}
	if !keep {
		if _, err := t.tx.Exec(ctx, `DELETE FROM `+t.tx.Sys("geodata")+` WHERE tb = ? AND record_id = ?`, table, id); err != nil {
			return err
		}
	}
	for _, g := range gs {
		if _, err := t.Insert(ctx, table, id, g); err != nil {
			return err
		}
	}
	return nil
}

// hideRecord: a feature whose record the caller may not see is, to them,
// no feature at all.
func hideRecord(err error, fid int64) error {
	if errors.Is(err, records.ErrRecordNotFound) {
		return ErrFeatureNotFound.With("id", fid)
	}
	return err
}

// InsertKept writes a feature under the id it had elsewhere, without
// checking a caller or versioning the record: for bringing stored
// geodata over as it was (the BraDypUS major upgrade, which copies the
// records' versions too), inside that work's transaction.
func InsertKept(ctx context.Context, tx *store.DB, id int64, table string, recordID int64, g orb.Geometry) error {
	r := rowOf(g)
	_, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("geodata")+` (id, tb, record_id, geometry, geojson, min_x, min_y, max_x, max_y)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, table, recordID, r.wkt, r.geojson, r.b.Min[0], r.b.Min[1], r.b.Max[0], r.b.Max[1])
	if err != nil {
		return fmt.Errorf("insert geodata %d: %w", id, err)
	}
	return nil
}
