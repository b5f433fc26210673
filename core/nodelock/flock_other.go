//go:build !unix

package nodelock

import "os"

// Elsewhere the lock is not enforced: Strata's supported platforms are
// unix-like (README), where flock is.
func tryLock(*os.File) (bool, error) { return false, nil }

func unlock(*os.File) error { return nil }
