package records

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// HistoryLimit is how many recent records GET /history returns.
const HistoryLimit = 50

// touch records that the caller created or changed a record; it runs in
// the save's transaction. API keys have no history.
func (s *Scope) touch(ctx context.Context, id int64, action string) error {
	if s.Actor.UserID == 0 {
		return nil
	}
	_, err := s.DB.Exec(ctx, `INSERT INTO `+s.DB.Sys("history")+` (user_id, tb, record_id, action, at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, tb, record_id) DO UPDATE SET action = excluded.action, at = excluded.at`,
		s.Actor.UserID, s.Table.Name, id, action, s.now().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("record history: %w", err)
	}
	return nil
}

// HistoryEntry is one recent record of a user.
type HistoryEntry struct {
	Table      string    `json:"tb"`
	TableLabel string    `json:"tb_label"`
	ID         int64     `json:"id"`
	Label      string    `json:"label"`
	Action     string    `json:"action"`
	At         time.Time `json:"at"`
}

// History returns the user's most recently created or changed records that
// still exist and that the user may still read (access gives the user's
// level and row subset per table), newest first; labels cost one query per
// table.
func History(ctx context.Context, db *store.DB, cat *schema.Catalog, userID int64, access func(context.Context, *schema.Table) (TableAccess, error)) ([]HistoryEntry, error) {
	out := []HistoryEntry{}
	if userID == 0 {
		return out, nil
	}
	rows, err := db.Query(ctx, `SELECT tb, record_id, action, at FROM `+db.Sys("history")+` WHERE user_id = ? ORDER BY at DESC, record_id DESC LIMIT ?`, userID, HistoryLimit)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	var entries []HistoryEntry
	byTable := map[string][]int64{}
	for rows.Next() {
		var e HistoryEntry
		if err := rows.Scan(&e.Table, &e.ID, &e.Action, &e.At); err != nil {
			rows.Close()
			return nil, err
		}
		entries = append(entries, e)
		byTable[e.Table] = append(byTable[e.Table], e.ID)
	}
	rows.Close()
	tables := make([]string, 0, len(byTable))
	for tb := range byTable {
		tables = append(tables, tb)
	}
	sort.Strings(tables)
	labels := map[string]map[int64]string{}
	for _, tb := range tables {
		t, ok := cat.Table(tb)
		if !ok {
			continue
		}
		acc, err := access(ctx, t)
		if err != nil {
			return nil, err
		}
		if !acc.Readable() {
			continue
		}
		sc := &Scope{DB: db, Catalog: cat, Table: t, Level: acc.Level, Restrict: acc.Restrict, Access: access}
		l, err := sc.labels(ctx, t, byTable[tb])
		if err != nil {
			return nil, err
		}
		labels[tb] = l
	}
	for _, e := range entries {
		l, ok := labels[e.Table][e.ID]
		if !ok {
			continue // deleted since, or no longer readable
		}
		t, _ := cat.Table(e.Table)
		e.TableLabel, e.Label = t.Label, l
		out = append(out, e)
	}
	return out, nil
}
