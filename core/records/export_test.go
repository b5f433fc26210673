package records

import "time"

// SetDeepPaging sets where deep paging starts and how far order windows
// reach (window.go) for a test, and returns the restore.
func SetDeepPaging(deep, window int64) (restore func()) {
	d, w := deepPage, windowMax
	deepPage, windowMax = deep, window
	return func() { deepPage, windowMax = d, w }
}

// GroupedRows is how many rows b wrote with multi-row statements
// (CreateMany's short way), not one by one.
func GroupedRows(b *Batch) int { return b.grouped }

// HoldCounts makes the request that counts a list's total wait, before
// counting, until n-1 others wait for its count (at most 10 s), for a
// test; it returns the restore.
func HoldCounts(n int) (restore func()) {
	countHold = func(c *countCall) {
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			counting.Lock()
			w := c.waiters
			counting.Unlock()
			if w >= n-1 {
				return
			}
		}
	}
	return func() { countHold = nil }
}

// CountsRun is how many counts this process has run.
func CountsRun() int64 { return countsRun.Load() }
