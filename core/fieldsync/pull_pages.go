package fieldsync

import (
	"context"

	"github.com/strata-archaeo/strata/core/changes"
	"github.com/strata-archaeo/strata/core/records"
)

// firstPullPage is the next page of a first pull: the caller's rows after
// cp.After, by id (keyset paging). Its last page hands over to the
// incremental pull from cp.Head, the log's head when the first page was
// read, so that a row changed while the pull paged (already sent, or
// moved) comes again, never skipped.
func firstPullPage(ctx context.Context, sc *records.Scope, where *records.Cond, cp checkpoint, limit int) (pullAnswer, error) {
	rows, err := records.SyncPage(ctx, sc, where, cp.After, limit)
	if err != nil {
		return pullAnswer{}, err
	}
	ans := pullAnswer{rows: rows, more: len(rows) == limit}
	ans.checkpoint = checkpoint{Head: cp.Head, Filter: cp.Filter}
	if ans.more {
		ans.checkpoint.Paging, ans.checkpoint.After = true, rows[len(rows)-1].ID
	}
	return ans, nil
}

// incrementalPage is a page of the log's rows of the table after cp.Head
// (at most limit of them, up to newest): the records they name that the
// caller may now see (rows), and those it could see at the checkpoint but
// no longer can (removed: deleted, moved out of its row subset or of the
// filter). A record changed again while the device pages has a higher log
// id and comes again in a later page.
func incrementalPage(ctx context.Context, sc *records.Scope, where *records.Cond, cp checkpoint, newest int64, limit int) (pullAnswer, error) {
	found, last, n, err := tableChanges(ctx, sc.DB, sc.Table.Name, cp.Head, newest, limit)
	if err != nil {
		return pullAnswer{}, err
	}
	ans := pullAnswer{more: n == limit}
	// Up to date: the checkpoint moves to the head even when no row of
	// the table changed, so that a table at rest does not fall behind
	// the log's window while others change.
	ans.checkpoint = checkpoint{Head: newest, Filter: cp.Filter}
	if ans.more {
		ans.checkpoint.Head = last
	}
	if len(found) == 0 {
		return ans, nil
	}
	ids := make([]int64, len(found))
	for i, ch := range found {
		ids[i] = ch.recordID
	}
	if ans.rows, err = records.SyncRowsOf(ctx, sc, where, ids); err != nil {
		return pullAnswer{}, err
	}
	ans.removed, err = removedSince(ctx, sc, where, found, ans.rows)
	return ans, err
}

// removedSince are the records of found that the caller cannot see now
// (not among rows) but could at the checkpoint, in log order. A record
// whose first change since is its creation did not exist then; the others
// are judged on the state their first change was made from (the version
// it stored), against the caller's row subset and the filter.
func removedSince(ctx context.Context, sc *records.Scope, where *records.Cond, found []changed, rows []*records.SyncRow) ([]int64, error) {
	visible := make(map[int64]bool, len(rows))
	for _, r := range rows {
		visible[r.ID] = true
	}
	snaps := map[int64]int64{}
	for _, ch := range found {
		if !visible[ch.recordID] && ch.first != changes.Create {
			snaps[ch.recordID] = ch.version
		}
	}
	if len(snaps) == 0 {
		return nil, nil
	}
	seen, err := records.SeenAt(ctx, sc, where, snaps)
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, ch := range found {
		if _, gone := snaps[ch.recordID]; gone && seen[ch.recordID] {
			out = append(out, ch.recordID)
		}
	}
	return out, nil
}
