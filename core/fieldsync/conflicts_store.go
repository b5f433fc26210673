package fieldsync

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// Conflict statuses (sys_sync_conflicts.status).
const (
	conflictOpen     = "open"
	conflictResolved = "resolved"
)

// conflictRow is a row of sys_sync_conflicts (migration 0031).
type conflictRow struct {
	ID                  int64
	Table               string
	RecordID            int64
	Field               string // "" for a mutation applied out of its device's order
	Base, Mine, Theirs  any
	Reason              string
	UserID, KeyID       int64
	MutationID, Device  string
	CreatedAt           int64
	Status              string
	ResolvedValue       any
	ResolvedBy          int64
	ResolvedAt          int64
	hasResolution       bool
	userName, userEmail string
}

// The reasons a conflict gives.
const (
	reasonField  = "changed on the device and on the server since the device's base version; the server value was kept"
	reasonLate   = "arrived after later mutations of its device had been applied; it was applied over them"
	reasonUnheld = "its device's previous mutation had not arrived after the wait (STRATA_SYNC_HOLD); it was applied without it"
)

// fieldConflict is the conflict row of a field the merge could not
// decide.
func (a *applier) fieldConflict(m *mutation, table string, id int64, c records.FieldConflict) conflictRow {
	return a.conflict(m, conflictRow{Table: table, RecordID: id, Field: c.Field, Base: c.Base, Mine: c.Mine,
		Theirs: c.Theirs, Reason: reasonField})
}

// orderConflict marks a mutation applied out of its device's order: it
// was applied whole, so the row has no values, only why.
func (a *applier) orderConflict(m *mutation, r result, how order, now int64) conflictRow {
	reason := reasonLate
	if how == unheld {
		reason = reasonUnheld
	}
	return a.conflict(m, conflictRow{Table: m.Table, RecordID: r.ID, Reason: reason, CreatedAt: now})
}

func (a *applier) conflict(m *mutation, c conflictRow) conflictRow {
	c.UserID, c.KeyID = a.who.UserID, a.who.KeyID
	c.MutationID, c.Device = m.MutationID, m.DeviceID
	c.CreatedAt, c.Status = a.now().UnixMilli(), conflictOpen
	return c
}

// insertConflict stores c in tx and returns its id.
func insertConflict(ctx context.Context, tx *store.DB, c conflictRow) (int64, error) {
	vals := make([]any, 3)
	for i, v := range []any{c.Base, c.Mine, c.Theirs} {
		if c.Field == "" {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return 0, err
		}
		vals[i] = string(b)
	}
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO `+tx.Sys("sync_conflicts")+
		` (tb, record_id, field, base, mine, theirs, reason, user_id, key_id, mutation_id, device_id, created_at, status)`+
		` VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		c.Table, c.RecordID, c.Field, vals[0], vals[1], vals[2], c.Reason, nullID(c.UserID), nullID(c.KeyID),
		c.MutationID, c.Device, c.CreatedAt, c.Status).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store sync conflict: %w", err)
	}
	return id, nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}
