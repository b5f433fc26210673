// Package savedquery keeps named list definitions of one table (SPEC
// §4.6, CONTRACT §10): a filter, a quick search, sort and columns, its
// owner's and, when shared, every user's. Running one applies the
// runner's privileges and row subset, never the owner's: it is the
// records list with those parameters.
package savedquery

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
	ErrNotFound = errs.New(errs.NotFound, "saved_query_not_found", "no such saved query")
	ErrNotOwner = errs.New(errs.Forbidden, "not_enough_privilege", "only its owner or an admin may change a saved query")
)

// Query is a saved query as the API shows it.
type Query struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	Table      string         `json:"tb"`
	Owner      *int64         `json:"owner"`
	OwnerName  *string        `json:"owner_name"`
	Shared     bool           `json:"shared"`
	Definition map[string]any `json:"query"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

const columns = `q.id, q.name, q.tb, q.owner, COALESCE(NULLIF(u.name, ''), u.email), q.shared, q.definition, q.created_at, q.updated_at`

func from(db *store.DB) string {
	return db.Sys("saved_queries") + ` q LEFT JOIN ` + db.Sys("users") + ` u ON u.id = q.owner`
}

func scan(sc interface{ Scan(...any) error }) (*Query, error) {
	var q Query
	var def string
	if err := sc.Scan(&q.ID, &q.Name, &q.Table, &q.Owner, &q.OwnerName, &q.Shared, &def, &q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(def), &q.Definition); err != nil {
		return nil, fmt.Errorf("saved query %d: %w", q.ID, err)
	}
	return &q, nil
}

// List returns the queries user may see (own and shared), newest first.
func List(ctx context.Context, db *store.DB, user int64) ([]Query, error) {
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM `+from(db)+` WHERE q.owner = ? OR q.shared = ? ORDER BY q.id DESC`, user, true)
	if err != nil {
		return nil, fmt.Errorf("list saved queries: %w", err)
	}
	defer rows.Close()
	out := []Query{}
	for rows.Next() {
		q, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *q)
	}
	return out, rows.Err()
}

// Get returns query id if user may see it.
func Get(ctx context.Context, db *store.DB, id, user int64) (*Query, error) {
	q, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM `+from(db)+` WHERE q.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound.With("id", id)
	}
	if err != nil {
		return nil, err
	}
	if !q.Shared && (q.Owner == nil || *q.Owner != user) {
		return nil, ErrNotFound.With("id", id) // another's private query does not exist for you
	}
	return q, nil
}

// Create stores a query owned by user (0: an API key, no owner).
func Create(ctx context.Context, db *store.DB, name, table string, def map[string]any, user int64, now time.Time) (*Query, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var owner any
	if user != 0 {
		owner = user
	}
	var id int64
	if err := db.QueryRow(ctx, `INSERT INTO `+db.Sys("saved_queries")+` (name, tb, owner, shared, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		name, table, owner, false, string(b), now.UTC(), now.UTC()).Scan(&id); err != nil {
		return nil, fmt.Errorf("save query: %w", err)
	}
	return Get(ctx, db, id, user)
}

// editable loads query id for a change by user (its owner, or an admin).
func editable(ctx context.Context, db *store.DB, id, user int64, admin bool) (*Query, error) {
	q, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM `+from(db)+` WHERE q.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound.With("id", id)
	}
	if err != nil {
		return nil, err
	}
	if err := api.MayChange(q.Owner, q.Shared, user, admin, ErrNotFound.With("id", id), ErrNotOwner); err != nil {
		return nil, err
	}
	return q, nil
}

// SetShared shares or unshares query id.
func SetShared(ctx context.Context, db *store.DB, id, user int64, admin, shared bool, now time.Time) error {
	if _, err := editable(ctx, db, id, user, admin); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `UPDATE `+db.Sys("saved_queries")+` SET shared = ?, updated_at = ? WHERE id = ?`, shared, now.UTC(), id)
	return err
}

// Delete removes query id.
func Delete(ctx context.Context, db *store.DB, id, user int64, admin bool) error {
	if _, err := editable(ctx, db, id, user, admin); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("saved_queries")+` WHERE id = ?`, id)
	return err
}
