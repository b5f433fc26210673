package assemblage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

var (
	ErrNotFound = errs.New(errs.NotFound, "analysis_not_found", "no such assemblage analysis")
	ErrNotOwner = errs.New(errs.Forbidden, "not_enough_privilege", "only its owner or an admin may change an analysis")
)

// Analysis is a saved analysis as the API shows it. OwnedByMe is the
// reader's view (the client shows share and delete only then); IsGlobal
// is BraDypUS's name for shared.
type Analysis struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	Owner      *int64         `json:"owner"`
	OwnerName  *string        `json:"owner_name"`
	IsGlobal   bool           `json:"is_global"`
	OwnedByMe  bool           `json:"owned_by_me"`
	Definition map[string]any `json:"definition"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

const columns = `a.id, a.name, a.owner, COALESCE(NULLIF(u.name, ''), u.email), a.shared, a.definition, a.created_at, a.updated_at`

func from(db *store.DB) string {
	return db.Sys("assemblages") + ` a LEFT JOIN ` + db.Sys("users") + ` u ON u.id = a.owner`
}

func scan(sc interface{ Scan(...any) error }, reader int64) (*Analysis, error) {
	var a Analysis
	var def string
	if err := sc.Scan(&a.ID, &a.Name, &a.Owner, &a.OwnerName, &a.IsGlobal, &def, &a.CreatedAt, &a.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(def), &a.Definition); err != nil {
		return nil, fmt.Errorf("assemblage analysis %d: %w", a.ID, err)
	}
	a.OwnedByMe = a.Owner != nil && *a.Owner == reader
	return &a, nil
}

// List returns the analyses user may see (own and shared), newest first.
func List(ctx context.Context, db *store.DB, user int64) ([]Analysis, error) {
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM `+from(db)+` WHERE a.owner = ? OR a.shared = ? ORDER BY a.id DESC`, user, true)
	if err != nil {
		return nil, fmt.Errorf("list assemblage analyses: %w", err)
	}
	defer rows.Close()
	out := []Analysis{}
	for rows.Next() {
		a, err := scan(rows, user)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// load reads analysis id, whoever's it is.
func load(ctx context.Context, db *store.DB, id, reader int64) (*Analysis, error) {
	a, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM `+from(db)+` WHERE a.id = ?`, id), reader)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound.With("id", id)
	}
	return a, err
}

// Create stores an analysis owned by user (0: an API key, no owner).
func Create(ctx context.Context, db *store.DB, name string, def map[string]any, user int64, now time.Time) (*Analysis, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var owner any
	if user != 0 {
		owner = user
	}
	var id int64
	if err := db.QueryRow(ctx, `INSERT INTO `+db.Sys("assemblages")+` (name, owner, shared, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		name, owner, false, string(b), now.UTC(), now.UTC()).Scan(&id); err != nil {
		return nil, fmt.Errorf("save assemblage analysis: %w", err)
	}
	return load(ctx, db, id, user)
}

// editable checks that user may change analysis id: its owner, or an
// admin; a shared one of another's is read-only to them.
func editable(ctx context.Context, db *store.DB, id, user int64, admin bool) error {
	a, err := load(ctx, db, id, user)
	if err != nil {
		return err
	}
	return api.MayChange(a.Owner, a.IsGlobal, user, admin, ErrNotFound.With("id", id), ErrNotOwner)
}

// Update replaces the name and definition of analysis id.
func Update(ctx context.Context, db *store.DB, id int64, name string, def map[string]any, user int64, admin bool, now time.Time) (*Analysis, error) {
	if err := editable(ctx, db, id, user, admin); err != nil {
		return nil, err
	}
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(ctx, `UPDATE `+db.Sys("assemblages")+` SET name = ?, definition = ?, updated_at = ? WHERE id = ?`, name, string(b), now.UTC(), id); err != nil {
		return nil, fmt.Errorf("update assemblage analysis: %w", err)
	}
	return load(ctx, db, id, user)
}

// SetShared shares or unshares analysis id.
func SetShared(ctx context.Context, db *store.DB, id, user int64, admin, shared bool, now time.Time) error {
	if err := editable(ctx, db, id, user, admin); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `UPDATE `+db.Sys("assemblages")+` SET shared = ?, updated_at = ? WHERE id = ?`, shared, now.UTC(), id)
	return err
}

// Delete removes analysis id.
func Delete(ctx context.Context, db *store.DB, id, user int64, admin bool) error {
	if err := editable(ctx, db, id, user, admin); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("assemblages")+` WHERE id = ?`, id)
	return err
}

// InsertKept writes an analysis under the id, owner (nil: none), sharing
// and times it already has, without a caller's checks: for bringing saved
// analyses over from elsewhere (the BraDypUS major upgrade) inside that
// work's transaction. The caller checks the definition (Check) first; a
// definition must at least be an object, as List reads it back as one.
func InsertKept(ctx context.Context, tx *store.DB, a *Analysis) error {
	if a.ID <= 0 || a.Name == "" || a.Definition == nil {
		return fmt.Errorf("insert assemblage analysis: an id, a name and a definition object are needed")
	}
	b, err := json.Marshal(a.Definition)
	if err != nil {
		return fmt.Errorf("assemblage analysis %d: %w", a.ID, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+tx.Sys("assemblages")+` (id, name, owner, shared, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Name, a.Owner, a.IsGlobal, string(b), a.CreatedAt.UTC(), a.UpdatedAt.UTC()); err != nil {
		return fmt.Errorf("insert assemblage analysis %d: %w", a.ID, err)
	}
	return nil
}
