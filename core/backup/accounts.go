package backup

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Accounts say what a restore did with the live app's accounts.
const (
	AccountsKept     = "kept"     // the live accounts stayed as they were
	AccountsRestored = "restored" // the archive's accounts came back
)

// accountTables hold who may enter an app and with what power: accounts
// (passwords, privileges, token versions), API keys, per-table overrides
// and sign-in lockouts. A restore is about the research data; bringing
// these back from an older archive would revive a demoted super admin or
// a revoked credential, so by default they are kept as they are live.
var accountTables = []string{"sys_users", "sys_api_keys", "sys_table_privileges", "sys_login_attempts"}

// liveTable is one account table read from the live app, rows in archive
// form (what dumpTable writes), so decodeValue binds them on either engine.
type liveTable struct {
	cols []Column
	rows []map[string]any
}

// readAccounts reads the live app's account tables from one snapshot.
func readAccounts(ctx context.Context, live *store.DB) (map[string]*liveTable, error) {
	out := map[string]*liveTable{}
	err := snapshot(ctx, live, func(q queryer) error {
		for _, name := range accountTables {
			cols, err := columnsOf(ctx, q, live.Engine, live.Schema(), name)
			if err != nil {
				return err
			}
			t := &liveTable{cols: cols}
			out[name] = t
			if len(cols) == 0 {
				continue
			}
			names := make([]string, len(cols))
			for i, c := range cols {
				names[i] = live.Engine.Quote(c.Name)
			}
			rows, err := q.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+live.Qualify(name))
			if err != nil {
				return fmt.Errorf("restore: live %s: %w", name, err)
			}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return fmt.Errorf("restore: live %s: %w", name, err)
				}
				obj := make(map[string]any, len(cols))
				for i, c := range cols {
					if obj[c.Name], err = encodeValue(c.Kind, vals[i]); err != nil {
						rows.Close()
						return fmt.Errorf("restore: live %s.%s: %w", name, c.Name, err)
					}
				}
				// Through JSON, as an archive's rows come: numbers become
				// json.Number, which is what decodeValue reads.
				raw, err := json.Marshal(obj)
				if err != nil {
					rows.Close()
					return err
				}
				dec := json.NewDecoder(strings.NewReader(string(raw)))
				dec.UseNumber()
				var back map[string]any
				if err := dec.Decode(&back); err != nil {
					rows.Close()
					return err
				}
				t.rows = append(t.rows, back)
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return fmt.Errorf("restore: live %s: %w", name, err)
			}
		}
		return nil
	})
	return out, err
}

// keepAccounts makes the restored app's accounts those of the live app
// (both databases at the same migration step). An account the archive has
// and the live app no longer has is deleted as a live delete would
// (its history goes, what it created loses its creator); accounts both
// have keep their id, so records, versions and saved queries still name
// them.
func keepAccounts(ctx context.Context, tx *store.DB, live map[string]*liveTable) error {
	users := live["sys_users"]
	liveUsers := map[int64]map[string]any{}
	for _, row := range users.rows {
		id, err := rowID(row)
		if err != nil {
			return err
		}
		liveUsers[id] = row
	}
	have, err := idsOf(ctx, tx, "sys_users")
	if err != nil {
		return err
	}
	// Dependent account tables first: their rows are replaced whole.
	for _, name := range []string{"sys_api_keys", "sys_table_privileges", "sys_login_attempts"} {
		if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Qualify(name)); err != nil {
			return fmt.Errorf("restore: empty %s: %w", name, err)
		}
	}
	for id := range have {
		if _, ok := liveUsers[id]; !ok {
			if _, err := tx.Exec(ctx, `DELETE FROM `+tx.Sys("users")+` WHERE id = ?`, id); err != nil {
				return fmt.Errorf("restore: drop account %d: %w", id, err)
			}
		}
	}
	// Emails and OAuth identities are unique: two accounts may have traded
	// them since the backup, so the ones staying are cleared before the
	// live values are written.
	if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("users")+` SET email = '~restoring~' || CAST(id AS TEXT), oauth_provider = NULL, oauth_sub = NULL`); err != nil {
		return fmt.Errorf("restore: accounts: %w", err)
	}
	target, err := columnsOf(ctx, tx.SQL, tx.Engine, tx.Schema(), "sys_users")
	if err != nil {
		return err
	}
	for id, row := range liveUsers {
		if have[id] {
			err = updateRow(ctx, tx, "sys_users", users.cols, target, row, id)
		} else {
			err = insertRow(ctx, tx, "sys_users", users.cols, target, row)
		}
		if err != nil {
			return err
		}
	}
	var seq []Table
	for _, name := range accountTables {
		t := live[name]
		seq = append(seq, Table{Name: name, Columns: t.cols})
		if name == "sys_users" || len(t.cols) == 0 {
			continue
		}
		target, err := columnsOf(ctx, tx.SQL, tx.Engine, tx.Schema(), name)
		if err != nil {
			return err
		}
		for _, row := range t.rows {
			if err := insertRow(ctx, tx, name, t.cols, target, row); err != nil {
				return err
			}
		}
	}
	return resetSequences(ctx, tx, seq)
}

// guardRestoredAccounts is for a restore that brings the archive's
// accounts back: it still lets no revoked credential in. An account the
// live app has keeps the higher of both token versions; one it no longer
// has (deleted since the backup, which ended its sessions) moves one
// past the archive's; an API key the live app does not hold unrevoked is
// revoked.
func guardRestoredAccounts(ctx context.Context, tx *store.DB, live map[string]*liveTable, now time.Time) error {
	liveVersion := map[int64]int64{}
	for _, row := range live["sys_users"].rows {
		id, err := rowID(row)
		if err != nil {
			return err
		}
		if n, ok := row["token_version"].(json.Number); ok {
			liveVersion[id], _ = n.Int64()
		}
	}
	rows, err := tx.Query(ctx, `SELECT id, token_version FROM `+tx.Sys("users"))
	if err != nil {
		return fmt.Errorf("restore: accounts: %w", err)
	}
	next := map[int64]int64{}
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			rows.Close()
			return err
		}
		lv, ok := liveVersion[id]
		switch {
		case !ok:
			next[id] = v + 1
		case lv > v:
			next[id] = lv
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return err
	}
	for id, v := range next {
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("users")+` SET token_version = ? WHERE id = ?`, v, id); err != nil {
			return fmt.Errorf("restore: token version of %d: %w", id, err)
		}
	}
	valid := map[string]bool{}
	for _, row := range live["sys_api_keys"].rows {
		if h, ok := row["key_hash"].(string); ok && row["revoked_at"] == nil {
			valid[h] = true
		}
	}
	rows, err = tx.Query(ctx, `SELECT id, key_hash FROM `+tx.Sys("api_keys")+` WHERE revoked_at IS NULL`)
	if err != nil {
		return fmt.Errorf("restore: api keys: %w", err)
	}
	var revoke []int64
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return err
		}
		if !valid[h] {
			revoke = append(revoke, id)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return err
	}
	for _, id := range revoke {
		if _, err := tx.Exec(ctx, `UPDATE `+tx.Sys("api_keys")+` SET revoked_at = ? WHERE id = ?`, now.UTC(), id); err != nil {
			return fmt.Errorf("restore: revoke api key %d: %w", id, err)
		}
	}
	return nil
}

func rowID(row map[string]any) (int64, error) {
	n, ok := row["id"].(json.Number)
	if !ok {
		return 0, fmt.Errorf("restore: a live account without id")
	}
	return n.Int64()
}

func idsOf(ctx context.Context, tx *store.DB, table string) (map[int64]bool, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM `+tx.Qualify(table))
	if err != nil {
		return nil, fmt.Errorf("restore: ids of %s: %w", table, err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// boundValues decodes row's values of cols for the columns target has.
func boundValues(tx *store.DB, table string, cols, target []Column, row map[string]any, skipID bool) ([]string, []any, error) {
	kinds := map[string]Kind{}
	for _, c := range target {
		kinds[c.Name] = c.Kind
	}
	var names []string
	var args []any
	for _, c := range cols {
		if skipID && c.Name == "id" {
			continue
		}
		to, ok := kinds[c.Name]
		if !ok {
			return nil, nil, fmt.Errorf("restore: live column %s.%s has no place in the restored app", table, c.Name)
		}
		v, err := decodeValue(tx.Engine, c.Kind, to, row[c.Name])
		if err != nil {
			return nil, nil, fmt.Errorf("restore: live %s.%s: %w", table, c.Name, err)
		}
		names = append(names, tx.Engine.Quote(c.Name))
		args = append(args, v)
	}
	return names, args, nil
}

func insertRow(ctx context.Context, tx *store.DB, table string, cols, target []Column, row map[string]any) error {
	names, args, err := boundValues(tx, table, cols, target, row, false)
	if err != nil {
		return err
	}
	q := `INSERT INTO ` + tx.Qualify(table) + ` (` + strings.Join(names, ", ") + `) VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + `)`
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("restore: keep %s: %w", table, err)
	}
	return nil
}

func updateRow(ctx context.Context, tx *store.DB, table string, cols, target []Column, row map[string]any, id int64) error {
	names, args, err := boundValues(tx, table, cols, target, row, true)
	if err != nil {
		return err
	}
	for i := range names {
		names[i] += " = ?"
	}
	q := `UPDATE ` + tx.Qualify(table) + ` SET ` + strings.Join(names, ", ") + ` WHERE id = ?`
	if _, err := tx.Exec(ctx, q, append(args, id)...); err != nil {
		return fmt.Errorf("restore: keep %s %d: %w", table, id, err)
	}
	return nil
}
