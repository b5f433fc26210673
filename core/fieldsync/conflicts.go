package fieldsync

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/store"
)

// MaxConflictsListed bounds one answer of GET /sync/conflicts (the oldest
// first: they have waited longest).
const MaxConflictsListed = 1000

var (
	errConflictNotFound = errs.New(errs.NotFound, "sync_conflict_not_found", "no such conflict")
	errConflictResolved = errs.New(errs.Conflict, "sync_conflict_resolved", "this conflict has already been resolved")
	errConflictStatus   = errs.New(errs.Invalid, "invalid_parameter", "status is open, resolved or all")
	errResolveValue     = errs.New(errs.Invalid, "invalid_parameter", `the body is {"value": <the value to keep>}`)
)

const conflictColumns = `c.id, c.tb, c.record_id, c.field, c.base, c.mine, c.theirs, c.reason, COALESCE(c.user_id, 0), COALESCE(c.key_id, 0),` +
	` c.mutation_id, c.device_id, c.created_at, c.status, c.resolved_value, COALESCE(c.resolved_by, 0), COALESCE(c.resolved_at, 0),` +
	` COALESCE(u.name, ''), COALESCE(u.email, '')`

func scanConflict(scan func(...any) error) (*conflictRow, error) {
	var c conflictRow
	var base, mine, theirs, resolved *string
	err := scan(&c.ID, &c.Table, &c.RecordID, &c.Field, &base, &mine, &theirs, &c.Reason, &c.UserID, &c.KeyID,
		&c.MutationID, &c.Device, &c.CreatedAt, &c.Status, &resolved, &c.ResolvedBy, &c.ResolvedAt, &c.userName, &c.userEmail)
	if err != nil {
		return nil, err
	}
	c.Base, c.Mine, c.Theirs, c.ResolvedValue = jsonValue(base), jsonValue(mine), jsonValue(theirs), jsonValue(resolved)
	c.hasResolution = resolved != nil
	return &c, nil
}

// jsonValue is a stored JSON value, exact numbers kept (nil: none).
func jsonValue(s *string) any {
	if s == nil {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(*s))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// answer is the conflict as the API shows it (docs/sync.md).
func (c *conflictRow) answer() gin.H {
	who := gin.H{"user_id": nil, "name": c.userName}
	if c.UserID != 0 {
		who["user_id"] = c.UserID
	}
	if c.userName == "" {
		who["name"] = c.userEmail
	}
	out := gin.H{"id": c.ID, "table": c.Table, "record_id": c.RecordID, "field": c.Field, "reason": c.Reason,
		"base": c.Base, "mine": c.Mine, "theirs": c.Theirs, "who": who, "when": time.UnixMilli(c.CreatedAt).UTC(),
		"mutation_id": c.MutationID, "device_id": c.Device, "status": c.Status}
	if c.Status == conflictResolved {
		out["resolved_value"] = c.ResolvedValue
		out["resolved_by"] = c.ResolvedBy
		out["resolved_at"] = time.UnixMilli(c.ResolvedAt).UTC()
	}
	return out
}

// GET /sync/conflicts?table=&status= — the conflicts of records the
// caller may read now (through the records gate), whoever pushed them.
func (h *handlers) handleConflicts(c *gin.Context) {
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	status := c.DefaultQuery("status", conflictOpen)
	if status != conflictOpen && status != conflictResolved && status != "all" {
		api.Fail(c, errConflictStatus.With("parameter", "status"))
		return
	}
	table := c.Query("table")
	if table != "" {
		// A table named is checked first: one the caller may not read is
		// refused as a list of it would be.
		if _, err := h.Host.RecordScope(c, table); err != nil {
			api.Fail(c, err)
			return
		}
	}
	q := `SELECT ` + conflictColumns + ` FROM ` + db.Sys("sync_conflicts") + ` c LEFT JOIN ` + db.Sys("users") +
		` u ON u.id = c.user_id WHERE 1 = 1`
	var args []any
	if status != "all" {
		q += ` AND c.status = ?`
		args = append(args, status)
	}
	if table != "" {
		q += ` AND c.tb = ?`
		args = append(args, table)
	}
	rows, err := db.Query(ctx, q+` ORDER BY c.id LIMIT ?`, append(args, MaxConflictsListed)...)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var all []*conflictRow
	for rows.Next() {
		row, err := scanConflict(rows.Scan)
		if err != nil {
			rows.Close()
			api.Fail(c, err)
			return
		}
		all = append(all, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		api.Fail(c, err)
		return
	}
	visible, err := h.readable(c, all)
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := []map[string]any{}
	for _, row := range all {
		if visible[recordKey{row.Table, row.RecordID}] {
			out = append(out, row.answer())
		}
	}
	api.Success(c, http.StatusOK, gin.H{"conflicts": out})
}

type recordKey struct {
	table string
	id    int64
}

// readable is which records of the conflicts the caller may read now
// (its scope's privilege and row subset) and whose field it may see (a
// field of the table as the caller's catalog shows it).
func (h *handlers) readable(c *gin.Context, list []*conflictRow) (map[recordKey]bool, error) {
	out := map[recordKey]bool{}
	byTable := map[string][]*conflictRow{}
	for _, row := range list {
		byTable[row.Table] = append(byTable[row.Table], row)
	}
	for table, rows := range byTable {
		sc, err := h.Host.RecordScope(c, table)
		if err != nil {
			if isRefusal(err) {
				continue // a table the caller cannot read (or gone): none of it
			}
			return nil, err
		}
		for _, row := range rows {
			if row.Field != "" {
				if _, ok := sc.Table.Field(row.Field); !ok {
					continue
				}
			}
			k := recordKey{table, row.RecordID}
			if _, done := out[k]; done {
				continue
			}
			ok, err := canRead(c.Request.Context(), sc, row.RecordID)
			if err != nil {
				return nil, err
			}
			out[k] = ok
		}
	}
	return out, nil
}

// canRead reports whether record id is among the caller's rows.
func canRead(ctx context.Context, sc *records.Scope, id int64) (bool, error) {
	_, err := records.StateAt(ctx, sc, id, 0)
	if errors.Is(err, records.ErrRecordNotFound) {
		return false, nil
	}
	return err == nil, err
}

// POST /sync/conflicts/:id/resolve {"value": v} — saves v in the field as
// the caller (the edit rules apply, and the save keeps the value it
// replaces as a version) and ends the conflict, recording who and when.
// A conflict of a record the caller cannot see answers as a missing one.
// An order conflict (field "") has nothing to save: value is ignored.
func (h *handlers) handleResolve(c *gin.Context) {
	id, ok := api.PathID(c, "id", errConflictNotFound)
	if !ok {
		return
	}
	var body map[string]any
	if err := api.BindExact(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	value, given := body["value"]
	ctx, db := c.Request.Context(), api.AppOf(c).DB
	row, err := scanConflict(db.QueryRow(ctx, `SELECT `+conflictColumns+` FROM `+db.Sys("sync_conflicts")+
		` c LEFT JOIN `+db.Sys("users")+` u ON u.id = c.user_id WHERE c.id = ?`, id).Scan)
	if errors.Is(err, sql.ErrNoRows) {
		api.Fail(c, errConflictNotFound.With("id", id))
		return
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	sc, err := h.Host.RecordScope(c, row.Table)
	if err == nil {
		var seen bool
		if seen, err = canRead(ctx, sc, row.RecordID); err == nil && !seen {
			err = errConflictNotFound.With("id", id)
		}
	}
	if err != nil {
		if isRefusal(err) {
			err = errConflictNotFound.With("id", id)
		}
		api.Fail(c, err)
		return
	}
	if row.Field != "" && !given {
		api.Fail(c, errResolveValue)
		return
	}
	actor := api.ActorOf(c)
	now := h.Now().UnixMilli()
	var version int64
	err = db.Tx(ctx, func(tx *store.DB) error {
		// Claimed first, under the row's lock: of two resolutions at once
		// one saves, the other is told it is done.
		var stored any
		if row.Field != "" {
			b, err := json.Marshal(value)
			if err != nil {
				return err
			}
			stored = string(b)
		}
		res, err := tx.Exec(ctx, `UPDATE `+tx.Sys("sync_conflicts")+` SET status = ?, resolved_value = ?, resolved_by = ?, resolved_at = ?`+
			` WHERE id = ? AND status = ?`, conflictResolved, stored, nullID(actor.UserID), now, id, conflictOpen)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = errConflictResolved.With("id", id)
			}
			return err
		}
		if row.Field == "" {
			return nil
		}
		ts := *sc
		ts.DB = tx
		saved, err := records.SaveVersioned(ctx, &ts, records.SaveInput{ID: row.RecordID, Core: map[string]any{row.Field: value}})
		version = saved.Version
		return err
	})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "sync_conflict_resolved", "id": id, "table": row.Table,
		"record_id": row.RecordID, "version": version})
}
