package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/nodelock"
)

// Store keeps backup archives by app and name: a folder of the data
// directory (Dir) or the S3 bucket of the files (Objects), so that every
// node sees the same backups.
type Store interface {
	// List returns app's backups, newest first (engine: the server's).
	List(ctx context.Context, app, engine string) ([]Entry, error)
	// Create writes a new backup through write; it appears only whole.
	Create(ctx context.Context, app, name string, write func(w io.Writer) error) error
	// Open opens a backup (ErrNotFound).
	Open(ctx context.Context, app, name string) (Archive, error)
	// Delete removes a backup (ErrNotFound).
	Delete(ctx context.Context, app, name string) error
	// Pending reports whether a backup of that name is being written
	// (where the store can tell).
	Pending(ctx context.Context, app, name string) bool
}

// Archive is an open backup.
type Archive interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// Dir is the folder backups live in: <root>/<app>/<file>.tar.gz, 0700
// folders and 0600 files (they hold password hashes and sealed secrets).
type Dir struct{ Root string }

var _ Store = Dir{}

// fileName is what a backup is called: the app, the UTC time, a random
// suffix. Only such names are ever opened, so no path can be reached.
var fileName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}_\d{8}_\d{6}_[0-9a-f]{6}\.tar\.gz$`)

// ValidName reports whether name can be a backup's file name.
func ValidName(name string) bool { return fileName.MatchString(name) }

// NewName makes the file name of a new backup of app.
func NewName(app string, now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return app + "_" + now.UTC().Format("20060102_150405") + "_" + hex.EncodeToString(b) + ".tar.gz"
}

// Path is where app's backup name lives (ErrNotFound for a name that
// cannot be a backup's).
func (d Dir) Path(app, name string) (string, error) {
	if apps.ValidateName(app) != nil || !ValidName(name) {
		return "", ErrNotFound
	}
	return filepath.Join(d.Root, app, name), nil
}

// Entry is a backup as lists show it.
type Entry struct {
	File          string    `json:"file"`
	App           string    `json:"app"`
	Engine        string    `json:"engine"`
	SourceEngine  string    `json:"source_engine"`
	StrataVersion string    `json:"strata_version"`
	Size          int64     `json:"size"`
	SizeMB        string    `json:"size_mb"`
	Date          time.Time `json:"date"`
	FormattedTime string    `json:"formatted_time"`
	Counts        Counts    `json:"counts"`
	URL           string    `json:"url,omitempty"` // the download, signed for the caller
}

// List returns app's backups, newest first. engine is the server's: an
// archive restores onto either engine, so that is the one it restores to.
func (d Dir) List(_ context.Context, app, engine string) ([]Entry, error) {
	dir := filepath.Join(d.Root, app)
	removeAbandoned(dir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("backups of %s: %w", app, err)
	}
	out := []Entry{}
	for _, e := range ents {
		if !ValidName(e.Name()) {
			continue // partial files and anything else
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		en := Entry{File: e.Name(), App: app, Engine: engine, Size: info.Size(),
			SizeMB: sizeMB(info.Size()), Date: info.ModTime().UTC()}
		if f, err := os.Open(filepath.Join(dir, e.Name())); err == nil {
			if m, err := ReadManifest(f); err == nil {
				en.SourceEngine, en.StrataVersion, en.Counts, en.Date = m.Engine, m.StrataVersion, m.Counts, m.CreatedAt
			}
			f.Close()
		}
		en.FormattedTime = en.Date.Format("2006-01-02 15:04:05")
		out = append(out, en)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File > out[j].File })
	return out, nil
}

// Create writes a new backup file through write: into a partial file,
// renamed into place only when write succeeded.
func (d Dir) Create(_ context.Context, app, name string, write func(w io.Writer) error) (err error) {
	p, err := d.Path(app, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("backup folder: %w", err)
	}
	partial := filepath.Join(filepath.Dir(p), "."+name+".partial")
	f, err := os.OpenFile(partial, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup file: %w", err)
	}
	// Locked while it is written: a partial file found unlocked was left
	// by a process that died writing it (removeAbandoned).
	if _, err := nodelock.TryLockFile(f); err != nil {
		f.Close()
		os.Remove(partial)
		return fmt.Errorf("backup file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(partial)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(partial, p)
}

// Open opens a backup for reading.
func (d Dir) Open(_ context.Context, app, name string) (Archive, error) {
	p, err := d.Path(app, name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return fileArchive{File: f, info: info}, nil
}

type fileArchive struct {
	*os.File
	info os.FileInfo
}

func (f fileArchive) Size() int64        { return f.info.Size() }
func (f fileArchive) ModTime() time.Time { return f.info.ModTime() }

// Delete removes a backup.
func (d Dir) Delete(_ context.Context, app, name string) error {
	p, err := d.Path(app, name)
	if err != nil {
		return err
	}
	err = os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

// Pending reports whether a backup of that name is being written.
func (d Dir) Pending(_ context.Context, app, name string) bool {
	p, err := d.Path(app, name)
	if err != nil {
		return false
	}
	return writing(filepath.Join(filepath.Dir(p), "."+name+".partial"))
}

// writing reports whether a partial file exists and its writer holds it.
func writing(partial string) bool {
	f, err := os.Open(partial)
	if err != nil {
		return false
	}
	defer f.Close()
	held, err := nodelock.TryLockFile(f)
	return err == nil && held
}

// removeAbandoned removes the partial files of dir whose writer is gone
// (a server killed while writing a backup): half an archive, password
// hashes included, that nothing would ever remove, and whose name DELETE
// would refuse as "in progress" for ever.
func removeAbandoned(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".partial") || !e.Type().IsRegular() {
			continue
		}
		// A writer locks its file the moment it made it; a young one may
		// be in that moment.
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < time.Minute {
			continue
		}
		if p := filepath.Join(dir, n); !writing(p) {
			_ = os.Remove(p)
		}
	}
}

// Upload stores an archive made elsewhere in st under a new name once it
// has been read whole and every part matched its checksum. Nothing of it
// is spooled (its parts are only hashed), and it is bounded as it
// streams: an archive of maxSize bytes may declare and inflate to no more
// than uploadMaxRatio times that, so a small gzip bomb is refused early.
func Upload(ctx context.Context, st Store, app string, r io.Reader, maxSize int64, now time.Time) (string, *Manifest, error) {
	name := NewName(app, now)
	var m *Manifest
	o := unpackOptions{maxRatio: uploadMaxRatio}
	if maxSize > 0 {
		o.maxInflated = uploadMaxRatio*maxSize + inflationGrace
	}
	err := st.Create(ctx, app, name, func(w io.Writer) error {
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			u, err := unpack(pr, o)
			if err == nil {
				m = u.Manifest
				// What follows the last entry (tar and gzip trailers).
				_, _ = io.Copy(io.Discard, pr)
			}
			pr.CloseWithError(err)
			done <- err
		}()
		_, err := io.Copy(io.MultiWriter(w, pw), r)
		pw.CloseWithError(err)
		if verr := <-done; verr != nil {
			return verr
		}
		return err
	})
	if err != nil {
		return "", nil, err
	}
	return name, m, nil
}

func sizeMB(n int64) string { return fmt.Sprintf("%.2f", float64(n)/(1<<20)) }
