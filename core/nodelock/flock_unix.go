//go:build unix

package nodelock

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock without blocking; held reports that
// another open file description has it (flock locks belong to the open
// file, so even a second Acquire in one process is refused).
func tryLock(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
