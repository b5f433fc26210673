// Package nodelock keeps a second Strata server off a SQLite data folder.
//
// SQLite is the one-node engine (DESIGN §8): a server keeps per-app
// writer queues, caches and a job system in its own memory, so two servers
// on one folder would interleave writes the other cannot see coming and
// run each other's jobs twice. `strata serve` on SQLite therefore holds an
// exclusive lock on <data-dir>/strata.lock while it runs. The lock is an
// advisory flock(2) lock, which the kernel drops when the process dies, so
// a crash never leaves a folder locked; the file's text only says who holds
// it, for the message the next server prints.
package nodelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileName is the lock file inside the data folder.
const FileName = "strata.lock"

// ErrHeld is wrapped by Acquire's error when another server holds the lock.
var ErrHeld = errors.New("the data folder is in use by another Strata server")

// Lock is a held lock; Release gives it up.
type Lock struct {
	f    *os.File
	path string
}

// Acquire takes the lock of dir (created if missing) without waiting.
// holder describes this server (its listen address, say) for the message
// a later server will print. When another process holds the lock the error
// wraps ErrHeld and tells what that process wrote.
func Acquire(dir, holder string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if held {
		who := readHolder(path)
		f.Close()
		return nil, fmt.Errorf("%w (%s, lock file %s): SQLite serves one node only; stop that server, "+
			"or move the applications to PostgreSQL (strata app export / strata app import) to run several nodes",
			ErrHeld, who, path)
	}
	host, _ := os.Hostname()
	text := fmt.Sprintf("pid %d on %s, %s, since %s\n", os.Getpid(), host, holder, time.Now().UTC().Format(time.RFC3339))
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(text), 0)
	}
	return &Lock{f: f, path: path}, nil
}

// Release gives the lock up. The file stays: removing it would race a
// server that has just opened it.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

func readHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "holder unknown"
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// TryLockFile takes an exclusive flock on f without waiting; held reports
// that another open file holds it. The lock goes with f's close or the
// process's death, so a file locked while it is written and found
// unlocked was left by a writer that is gone.
func TryLockFile(f *os.File) (held bool, err error) { return tryLock(f) }
