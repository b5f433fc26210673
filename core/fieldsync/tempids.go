package fieldsync

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/store"
)

// actorKey names who pushes, for the keys of the sync tables: a device's
// order, mutations and temporary ids belong to one account (or API key),
// so another account naming the same device reaches none of them.
func actorKey(a *auth.Actor) string {
	if a.KeyID != 0 {
		return "key:" + strconv.FormatInt(a.KeyID, 10)
	}
	return "user:" + strconv.FormatInt(a.UserID, 10)
}

// lookupTempID is the record that actor's device created for tempID (ok
// false while none was).
func lookupTempID(ctx context.Context, db *store.DB, actor, device, tempID string) (table string, id int64, ok bool, err error) {
	err = db.QueryRow(ctx, `SELECT tb, record_id FROM `+db.Sys("sync_temp_ids")+
		` WHERE actor = ? AND device_id = ? AND temp_id = ?`, actor, device, tempID).Scan(&table, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	if err != nil {
		return "", 0, false, fmt.Errorf("read temporary id: %w", err)
	}
	return table, id, true, nil
}

// rememberTempID maps actor's device's tempID to the record it created,
// in db's transaction (the create's own).
func rememberTempID(ctx context.Context, db *store.DB, actor, device, tempID, table string, id, nowUnixMilli int64) error {
	_, err := db.Exec(ctx, `INSERT INTO `+db.Sys("sync_temp_ids")+
		` (actor, device_id, temp_id, tb, record_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		actor, device, tempID, table, id, nowUnixMilli)
	if err != nil {
		return fmt.Errorf("remember temporary id: %w", err)
	}
	return nil
}
