package charts

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
	ErrNotFound = errs.New(errs.NotFound, "chart_not_found", "no such chart")
	ErrNotOwner = errs.New(errs.Forbidden, "not_enough_privilege", "only its owner or an admin may change a chart")
)

// Chart is a saved chart as the API shows it (is_global 0 or 1, as
// BraDypUS's client reads it).
type Chart struct {
	ID         int64          `json:"id"`
	Name       string         `json:"name"`
	UserID     *int64         `json:"user_id"`
	IsGlobal   int            `json:"is_global"`
	Definition map[string]any `json:"definition"`
	CreatedAt  time.Time      `json:"created_at"`
}

const chartColumns = `id, name, userid, is_global, definition, created_at`

func scanChart(sc interface{ Scan(...any) error }) (*Chart, error) {
	var c Chart
	var def string
	if err := sc.Scan(&c.ID, &c.Name, &c.UserID, &c.IsGlobal, &def, &c.CreatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(def), &c.Definition); err != nil {
		return nil, fmt.Errorf("chart %d: %w", c.ID, err)
	}
	return &c, nil
}

// ListCharts returns user's charts and the global ones, newest first.
func ListCharts(ctx context.Context, db *store.DB, user int64) ([]Chart, error) {
	rows, err := db.Query(ctx, `SELECT `+chartColumns+` FROM `+db.Sys("charts")+` WHERE userid = ? OR is_global = 1 ORDER BY id DESC`, user)
	if err != nil {
		return nil, fmt.Errorf("list charts: %w", err)
	}
	defer rows.Close()
	out := []Chart{}
	for rows.Next() {
		c, err := scanChart(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, rows.Err()
}

// SaveChart stores a chart of user.
func SaveChart(ctx context.Context, db *store.DB, name string, def map[string]any, user int64, now time.Time) (*Chart, error) {
	b, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	var owner any
	if user != 0 {
		owner = user
	}
	c, err := scanChart(db.QueryRow(ctx, `INSERT INTO `+db.Sys("charts")+` (name, userid, is_global, definition, created_at) VALUES (?, ?, 0, ?, ?) RETURNING `+chartColumns,
		name, owner, string(b), now.UTC()))
	if err != nil {
		return nil, fmt.Errorf("save chart: %w", err)
	}
	return c, nil
}

// changeable loads chart id for a change by user (its owner, or an admin).
func changeable(ctx context.Context, db *store.DB, id, user int64, admin bool) error {
	c, err := scanChart(db.QueryRow(ctx, `SELECT `+chartColumns+` FROM `+db.Sys("charts")+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound.With("id", id)
	}
	if err != nil {
		return err
	}
	return api.MayChange(c.UserID, c.IsGlobal != 0, user, admin, ErrNotFound.With("id", id), ErrNotOwner)
}

// SetGlobal shares or unshares chart id.
func SetGlobal(ctx context.Context, db *store.DB, id, user int64, admin, global bool) error {
	if err := changeable(ctx, db, id, user, admin); err != nil {
		return err
	}
	v := 0
	if global {
		v = 1
	}
	_, err := db.Exec(ctx, `UPDATE `+db.Sys("charts")+` SET is_global = ? WHERE id = ?`, v, id)
	return err
}

// DeleteChart removes chart id.
func DeleteChart(ctx context.Context, db *store.DB, id, user int64, admin bool) error {
	if err := changeable(ctx, db, id, user, admin); err != nil {
		return err
	}
	_, err := db.Exec(ctx, `DELETE FROM `+db.Sys("charts")+` WHERE id = ?`, id)
	return err
}
