package records

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
