package bradypus

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A BraDypUS folder comes from whoever ran the application: its stored
// names (bdus_files.ext, cfg/tables.json's table names) and its entries
// (links in files/ or template/) are data, and must never lead the
// upgrade to read anything outside the folder, such as <data-dir>/secret.key
// (which seals every application's secrets) or another tenant's app.db.
//
// So every read of the folder goes through a folder: an os.Root, which
// the operating system confines to the folder (an open that would leave
// it, through .. or a link, fails), and on top of it a stricter rule of
// our own: the name is relative, holds no .., no NUL and no empty part,
// every part of it is checked with Lstat and none may be a link (not
// even one that stays inside: a link's target can be changed after the
// check), the entry must be a regular file (or a folder where one is
// listed), and the file opened must be the one checked (os.SameFile), so
// an entry swapped for a link between the check and the open is refused.
// The folder itself may be a link: adopt places one in <data-dir>/bradypus
// by design, and the root is opened through it.

// Why an entry of the folder is refused (Refused.Reason).
const (
	ReasonInvalidName = "invalid_name"       // absolute, .., NUL, an empty part, or a slash where one name is expected
	ReasonSymlink     = "symlink"            // the entry or a folder on its way is a link
	ReasonNotRegular  = "not_a_regular_file" // a device, pipe, socket, or a folder where a file is expected
	ReasonOutside     = "outside_folder"     // the operating system refused the open as leaving the folder
	ReasonChanged     = "changed_while_read" // the entry opened is not the one checked
)

// Refused is an entry of the folder the upgrade did not read, and why;
// the answer and report.json list them, so nothing is left out silently.
type Refused struct {
	Path   string `json:"path"` // relative to the folder, as built from the stored name
	Reason string `json:"reason"`
}

// refusedError is a refused entry as an error.
type refusedError struct{ Refused }

func (e *refusedError) Error() string { return e.Path + ": refused (" + e.Reason + ")" }

func refuse(path, reason string) error { return &refusedError{Refused{Path: path, Reason: reason}} }

// asRefused reports whether err is a refused entry.
func asRefused(err error) (Refused, bool) {
	var r *refusedError
	if errors.As(err, &r) {
		return r.Refused, true
	}
	return Refused{}, false
}

// folderRoot reads one BraDypUS folder, confined to it.
type folderRoot struct {
	root *os.Root
	dir  string // the folder's real path (for SQLite, which opens by path)
}

// openFolder opens dir (through its link, if it is one) as a folderRoot.
func openFolder(dir string) (*folderRoot, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	return &folderRoot{root: root, dir: real}, nil
}

func (r *folderRoot) Close() error { return r.root.Close() }

// checkName refuses a name that is not a plain relative path.
func checkName(name string) error {
	if name == "" || strings.ContainsRune(name, 0) || strings.HasPrefix(name, "/") || filepath.IsAbs(name) {
		return refuse(name, ReasonInvalidName)
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return refuse(name, ReasonInvalidName)
		}
	}
	return nil
}

// checkBase refuses a name meant to be one entry of a folder (a stored
// file's <id>.<ext>) that holds a slash, besides checkName's rule.
func checkBase(dir, base string) error {
	if strings.ContainsAny(base, `/\`) || strings.ContainsRune(base, 0) || base == "" || base == "." || base == ".." {
		return refuse(dir+"/"+base, ReasonInvalidName)
	}
	return nil
}

// lstat checks every part of name (none a link) and returns the last
// one's information; fs.ErrNotExist passes through, wrapped.
func (r *folderRoot) lstat(name string) (fs.FileInfo, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	parts := strings.Split(name, "/")
	var info fs.FileInfo
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		st, err := r.root.Lstat(p)
		if err != nil {
			return nil, r.openError(name, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return nil, refuse(name, ReasonSymlink)
		}
		if i < len(parts)-1 && !st.IsDir() {
			return nil, refuse(name, ReasonNotRegular)
		}
		info = st
	}
	return info, nil
}

// openError tells an escape the root refused from other failures.
func (r *folderRoot) openError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	// os.Root answers "path escapes from parent" for .. or a link out.
	if strings.Contains(err.Error(), "escapes") {
		return refuse(name, ReasonOutside)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// stat is lstat, also requiring a regular file.
func (r *folderRoot) stat(name string) (fs.FileInfo, error) {
	st, err := r.lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, refuse(name, ReasonNotRegular)
	}
	return st, nil
}

// open opens the regular file name of the folder for reading.
func (r *folderRoot) open(name string) (*os.File, fs.FileInfo, error) {
	checked, err := r.stat(name)
	if err != nil {
		return nil, nil, err
	}
	f, err := r.root.Open(name)
	if err != nil {
		return nil, nil, r.openError(name, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !os.SameFile(st, checked) || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, refuse(name, ReasonChanged)
	}
	return f, st, nil
}

// readFile reads the regular file name of the folder.
func (r *folderRoot) readFile(name string) ([]byte, error) {
	f, _, err := r.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// readDir lists the folder name of the folder (itself no link).
func (r *folderRoot) readDir(name string) ([]fs.DirEntry, error) {
	st, err := r.lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, refuse(name, ReasonNotRegular)
	}
	d, err := r.root.Open(name)
	if err != nil {
		return nil, r.openError(name, err)
	}
	defer d.Close()
	return d.ReadDir(-1)
}

// sqlitePath is the path SQLite opens for the database file name of the
// folder, checked as open checks a file. SQLite opens by path, so this is
// the one read not made through the root: the check runs right before the
// open, and openChecked checks again once the file is open.
func (r *folderRoot) sqlitePath(name string) (string, fs.FileInfo, error) {
	st, err := r.stat(name)
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(r.dir, filepath.FromSlash(name)), st, nil
}

// sameAsChecked reports whether name is still the file checked before
// (after SQLite opened it by path).
func (r *folderRoot) sameAsChecked(name string, checked fs.FileInfo) error {
	st, err := r.stat(name)
	if err != nil {
		return err
	}
	if !os.SameFile(st, checked) {
		return refuse(name, ReasonChanged)
	}
	return nil
}
