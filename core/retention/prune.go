package retention

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/store"
)

// Batch bounds the rows one statement deletes (and the versions one
// statement examines) on PostgreSQL, each in its own transaction: a job
// stopped half way has kept what it had done. PostgreSQL's saves do not
// wait for it (the rows deleted are old versions no save writes).
const Batch = 5000

// SQLiteBatch is Batch on SQLite, whose single writer makes every save
// wait for the batch under way: a batch of 1,000 versions took 52 ms
// (median; 312 ms at most) on the 2-core machine, one of 5,000 about
// 330 ms (docs/performance.md, "Retention (issue 35)").
const SQLiteBatch = 1000

// BatchFor is the batch of engine e.
func BatchFor(e store.Engine) int {
	if e == store.SQLite {
		return SQLiteBatch
	}
	return Batch
}

// upsertRows bounds the rows of one statement recording pruned versions
// (3 parameters each, far below either engine's limit).
const upsertRows = 500

// Result is what one application of the rules did.
type Result struct {
	Settings Settings `json:"settings"`
	// VersionsExamined are the versions looked at (those that existed
	// when the job began), VersionsDeleted those deleted.
	VersionsExamined int64 `json:"versions_examined"`
	VersionsDeleted  int64 `json:"versions_deleted"`
	// HistoryDeleted are the recent-records entries deleted.
	HistoryDeleted int64 `json:"history_deleted"`
	// LogDeleted are the application log entries deleted.
	LogDeleted int64 `json:"log_deleted"`
}

// Apply prunes db's versions and recent-records list by s at now, in
// batches; progress (may be nil) is told the rows done of the rows to go
// through. With no rule set it deletes nothing and reads nothing.
func Apply(ctx context.Context, db *store.DB, s Settings, now time.Time, progress func(done, total int64)) (Result, error) {
	res := Result{Settings: s}
	if err := s.Validate(); err != nil {
		return res, err
	}
	if progress == nil {
		progress = func(int64, int64) {}
	}
	now = now.UTC()
	batch := BatchFor(db.Engine)
	var p plan
	if err := p.count(ctx, db, s, now); err != nil {
		return res, err
	}
	total := p.versions + p.history + p.log
	progress(0, total)
	if s.VersionsKeep > 0 || s.VersionsDays > 0 {
		lo := int64(0)
		for lo < p.maxID {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			hi, n, err := nextChunk(ctx, db, lo, p.maxID, batch)
			if err != nil {
				return res, err
			}
			if n == 0 {
				break
			}
			deleted, err := pruneVersions(ctx, db, s, now, lo, hi)
			if err != nil {
				return res, err
			}
			res.VersionsExamined += n
			res.VersionsDeleted += deleted
			progress(res.VersionsExamined, total)
			lo = hi
		}
	}
	if s.HistoryDays > 0 {
		cutoff := now.Add(-days(s.HistoryDays))
		users, err := historyUsers(ctx, db, cutoff)
		if err != nil {
			return res, err
		}
		for _, u := range users {
			for {
				if err := ctx.Err(); err != nil {
					return res, err
				}
				n, err := pruneHistory(ctx, db, u, cutoff, batch)
				if err != nil {
					return res, err
				}
				res.HistoryDeleted += n
				progress(min(res.VersionsExamined+res.HistoryDeleted, total), total)
				if n < int64(batch) {
					break
				}
			}
		}
	}
	if s.LogDays > 0 {
		cutoff := now.Add(-days(s.LogDays))
		for {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			n, err := pruneLog(ctx, db, cutoff, batch)
			if err != nil {
				return res, err
			}
			res.LogDeleted += n
			progress(min(res.VersionsExamined+res.HistoryDeleted+res.LogDeleted, total), total)
			if n < int64(batch) {
				break
			}
		}
	}
	progress(total, total)
	return res, nil
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

// plan is what a run goes through, counted when it begins: the versions
// up to the newest id then (newer ones are each record's newest, kept),
// and the history and log entries older than their cutoffs.
type plan struct {
	maxID, versions, history, log int64
}

func (p *plan) count(ctx context.Context, db *store.DB, s Settings, now time.Time) error {
	if s.VersionsKeep > 0 || s.VersionsDays > 0 {
		if err := db.QueryRow(ctx, `SELECT COALESCE(MAX(id), 0), COUNT(*) FROM `+db.Sys("versions")).Scan(&p.maxID, &p.versions); err != nil {
			return fmt.Errorf("count versions: %w", err)
		}
	}
	if s.HistoryDays > 0 {
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("history")+` WHERE at < ?`,
			now.Add(-days(s.HistoryDays))).Scan(&p.history); err != nil {
			return fmt.Errorf("count history: %w", err)
		}
	}
	if s.LogDays > 0 {
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM `+db.Sys("app_log")+` WHERE time < ?`,
			now.Add(-days(s.LogDays))).Scan(&p.log); err != nil {
			return fmt.Errorf("count log: %w", err)
		}
	}
	return nil
}

// nextChunk is the id range (lo, hi] of the next batch versions up to
// maxID, and how many it holds.
func nextChunk(ctx context.Context, db *store.DB, lo, maxID int64, batch int) (hi, n int64, err error) {
	var top sql.NullInt64
	err = db.QueryRow(ctx, `SELECT MAX(id), COUNT(*) FROM (SELECT id FROM `+db.Sys("versions")+
		` WHERE id > ? AND id <= ? ORDER BY id LIMIT ?) chunk`, lo, maxID, batch).Scan(&top, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("versions after %d: %w", lo, err)
	}
	return top.Int64, n, nil
}

// pruneVersions deletes, among the versions with ids in (lo, hi], those
// the rules drop, never a record's newest, and records per record the
// highest id deleted (sys_versions_pruned), in one transaction.
func pruneVersions(ctx context.Context, db *store.DB, s Settings, now time.Time, lo, hi int64) (int64, error) {
	vt := db.Sys("versions")
	// What decides, once per record of the chunk rather than per
	// version: its newest id (kept whatever the rules say: the record's
	// ETag) and, for versions_keep, its N-th newest (NULL when it has
	// fewer: all kept). Each is a seek on (tb, record_id, id).
	cols := `(SELECT MAX(w.id) FROM ` + vt + ` w WHERE w.tb = c.tb AND w.record_id = c.record_id) AS latest`
	var args []any
	var rules []string
	if s.VersionsKeep > 0 {
		cols += `, (SELECT w.id FROM ` + vt + ` w WHERE w.tb = c.tb AND w.record_id = c.record_id ORDER BY w.id DESC LIMIT 1 OFFSET ?) AS keep_from`
		args = append(args, s.VersionsKeep-1)
		rules = append(rules, `v.id < cut.keep_from`)
	}
	args = append(args, lo, hi, lo, hi)
	if s.VersionsDays > 0 {
		rules = append(rules, `v.time < ?`)
		args = append(args, now.Add(-days(s.VersionsDays)))
	}
	query := `WITH cut AS MATERIALIZED (SELECT c.tb, c.record_id, ` + cols + ` FROM (SELECT DISTINCT tb, record_id FROM ` + vt +
		` WHERE id > ? AND id <= ?) c) DELETE FROM ` + vt + ` AS v WHERE v.id > ? AND v.id <= ? AND EXISTS (SELECT 1 FROM cut WHERE cut.tb = v.tb AND cut.record_id = v.record_id AND v.id < cut.latest AND (` +
		strings.Join(rules, " OR ") + `)) RETURNING tb, record_id, id`
	var deleted int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		// The ids come back from the DELETE itself: what is recorded as
		// pruned is exactly what went, whatever committed meanwhile.
		rows, err := tx.Query(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("prune versions (%d, %d]: %w", lo, hi, err)
		}
		upto := map[recordKey]int64{}
		for rows.Next() {
			var k recordKey
			var id int64
			if err := rows.Scan(&k.tb, &k.id, &id); err != nil {
				rows.Close()
				return err
			}
			deleted++
			upto[k] = max(upto[k], id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("prune versions (%d, %d]: %w", lo, hi, err)
		}
		return markPruned(ctx, tx, upto)
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

type recordKey struct {
	tb string
	id int64
}

// markPruned raises each record's highest pruned version id to upto's.
func markPruned(ctx context.Context, tx *store.DB, upto map[recordKey]int64) error {
	keys := make([]recordKey, 0, len(upto))
	for k := range upto {
		keys = append(keys, k)
	}
	// A fixed order: two runs at once lock the rows in the same order.
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].tb != keys[j].tb {
			return keys[i].tb < keys[j].tb
		}
		return keys[i].id < keys[j].id
	})
	pt := tx.Sys("versions_pruned")
	for len(keys) > 0 {
		n := min(len(keys), upsertRows)
		part := keys[:n]
		keys = keys[n:]
		marks := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(part)), ", ")
		args := make([]any, 0, 3*len(part))
		for _, k := range part {
			args = append(args, k.tb, k.id, upto[k])
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+pt+` AS p (tb, record_id, upto) VALUES `+marks+
			` ON CONFLICT (tb, record_id) DO UPDATE SET upto = CASE WHEN excluded.upto > p.upto THEN excluded.upto ELSE p.upto END`, args...); err != nil {
			return fmt.Errorf("record pruned versions: %w", err)
		}
	}
	return nil
}

// historyUsers are the users with recent-records entries older than
// cutoff: the deletion goes user by user, along the (user_id, at) index.
func historyUsers(ctx context.Context, db *store.DB, cutoff time.Time) ([]int64, error) {
	rows, err := db.Query(ctx, `SELECT DISTINCT user_id FROM `+db.Sys("history")+` WHERE at < ? ORDER BY user_id`, cutoff)
	if err != nil {
		return nil, fmt.Errorf("history to prune: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// pruneHistory deletes at most batch of user's entries older than cutoff.
func pruneHistory(ctx context.Context, db *store.DB, user int64, cutoff time.Time, batch int) (int64, error) {
	var n int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		ht := tx.Sys("history")
		res, err := tx.Exec(ctx, `DELETE FROM `+ht+` WHERE user_id = ? AND (tb, record_id) IN (SELECT tb, record_id FROM `+ht+
			` WHERE user_id = ? AND at < ? ORDER BY at LIMIT ?)`, user, user, cutoff, batch)
		if err != nil {
			return fmt.Errorf("prune history of user %d: %w", user, err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// pruneLog deletes at most batch application log entries older than
// cutoff, the oldest first (along the log's time index).
func pruneLog(ctx context.Context, db *store.DB, cutoff time.Time, batch int) (int64, error) {
	var n int64
	err := db.Tx(ctx, func(tx *store.DB) error {
		lt := tx.Sys("app_log")
		res, err := tx.Exec(ctx, `DELETE FROM `+lt+` WHERE id IN (SELECT id FROM `+lt+` WHERE time < ? ORDER BY time LIMIT ?)`, cutoff, batch)
		if err != nil {
			return fmt.Errorf("prune log: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
