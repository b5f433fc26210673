// Package scratch is where Strata keeps temporary files: the ZIP of a
// photo preview, the tables of a backup being written or restored (which
// hold password hashes in clear), an upload being checked.
//
// Every temporary file and folder of the server is made through
// CreateTemp and MkdirTemp, in a folder of this process under the data
// folder (<data-dir>/tmp/<random>, 0700) rather than the system's temp
// folder, which other users of the machine may list and which outlives a
// killed process. The caller removes what it made when its job ends; what
// a killed process left behind is removed when the next one opens the
// folder. Each process holds a lock on its own subfolder (nodelock), so a
// starting node never removes the files of another node that shares the
// data folder and is still running.
package scratch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-archaeo/strata/core/nodelock"
)

// FolderName is the temporary folder inside the data folder.
const FolderName = "tmp"

// Dir is this process's temporary folder.
type Dir struct {
	path string
	lock *nodelock.Lock
}

// Open removes what processes that are gone left in <dataDir>/tmp and
// makes a folder of this process there (0700, locked while it lives).
func Open(dataDir string) (*Dir, error) {
	root := filepath.Join(dataDir, FolderName)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("temporary folder: %w", err)
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return nil, fmt.Errorf("temporary folder: %w", err)
	}
	if err := sweep(root); err != nil {
		return nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	path := filepath.Join(root, "p"+hex.EncodeToString(b))
	lock, err := nodelock.Acquire(path, "temporary files")
	if err != nil {
		return nil, fmt.Errorf("temporary folder: %w", err)
	}
	return &Dir{path: path, lock: lock}, nil
}

// sweep removes every entry of root that no running process holds: the
// folders of processes that died, and anything else left there.
func sweep(root string) error {
	entries, err := os.ReadDir(root)
	if err != nil {
		return fmt.Errorf("temporary folder: %w", err)
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if e.IsDir() {
			l, err := nodelock.Acquire(p, "removing a dead process's temporary files")
			if errors.Is(err, nodelock.ErrHeld) {
				continue // a live process's
			}
			if err == nil {
				_ = l.Release()
			}
		}
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("temporary folder: remove %s: %w", p, err)
		}
	}
	return nil
}

// Path is the folder; "" for a nil Dir (the system's temp folder).
func (d *Dir) Path() string {
	if d == nil {
		return ""
	}
	return d.path
}

// Close removes the folder and everything in it.
func (d *Dir) Close() error {
	if d == nil {
		return nil
	}
	err := os.RemoveAll(d.path)
	if lerr := d.lock.Release(); err == nil {
		err = lerr
	}
	return err
}

// CreateTemp is os.CreateTemp (0600), the one way Strata makes a
// temporary file: in dir, a scratch folder's Path or the folder of the
// file it will be renamed to ("" only where no data folder is known, such
// as tests and one-off commands: the system's).
func CreateTemp(dir, pattern string) (*os.File, error) {
	return os.CreateTemp(dir, pattern)
}

// MkdirTemp is os.MkdirTemp (0700), the one way Strata makes a temporary
// folder; dir as for CreateTemp.
func MkdirTemp(dir, pattern string) (string, error) {
	return os.MkdirTemp(dir, pattern)
}
