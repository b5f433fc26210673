package backup

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/strata-archaeo/strata/core/store"
)

var blobPath = regexp.MustCompile(`^blobs/[0-9a-f]{32}$`)

// ReadManifest reads the manifest at the head of an archive (a list shows
// it without reading the rest).
func ReadManifest(r io.Reader) (*Manifest, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, ErrInvalidArchive.Wrap(err)
	}
	defer gz.Close()
	return readManifest(tar.NewReader(gz))
}

func readManifest(tr *tar.Reader) (*Manifest, error) {
	h, err := tr.Next()
	if err != nil || h.Name != manifestName || h.Size > 64<<20 {
		return nil, ErrInvalidArchive.With("detail", "manifest.json must be the first entry")
	}
	var m Manifest
	dec := json.NewDecoder(io.LimitReader(tr, h.Size))
	if err := dec.Decode(&m); err != nil {
		return nil, ErrInvalidArchive.With("detail", "manifest.json is not valid JSON")
	}
	if m.Format != Format {
		return nil, ErrInvalidArchive.With("detail", "not a Strata backup")
	}
	if m.FormatVersion > FormatVersion {
		return nil, ErrTooNew.With("format_version", m.FormatVersion)
	}
	for _, t := range m.Tables {
		if !store.ValidIdent(t.Name) || t.Path != "tables/"+t.Name+".ndjson" {
			return nil, ErrInvalidArchive.With("detail", "bad table part "+t.Path)
		}
		for _, c := range t.Columns {
			if !store.ValidIdent(c.Name) {
				return nil, ErrInvalidArchive.With("detail", "bad column name in "+t.Name)
			}
		}
	}
	for _, b := range m.Blobs {
		if !blobPath.MatchString(b.Path) {
			return nil, ErrInvalidArchive.With("detail", "bad file part "+b.Path)
		}
	}
	return &m, nil
}

// Unpacked is an archive checked part by part: its tables spooled to a
// folder, its blobs handed to the caller as they stream by.
type Unpacked struct {
	Manifest *Manifest
	dir      string
}

// TablePath is where a table's rows were spooled.
func (u *Unpacked) TablePath(t string) string { return filepath.Join(u.dir, t+".ndjson") }

// Close removes the spooled tables.
func (u *Unpacked) Close() error { return os.RemoveAll(u.dir) }

// Unpack reads a whole archive, checking every part against the manifest
// (name, size, SHA-256, nothing missing, nothing extra). Tables are
// spooled under tmpDir; each blob is passed to blob as it streams (a
// failing checksum is reported after blob returned, so the caller undoes
// what it kept of it when Unpack fails). Any failure removes what was
// spooled.
func Unpack(r io.Reader, tmpDir string, blob func(key string, r io.Reader) error, progress Progress) (_ *Unpacked, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, ErrInvalidArchive.Wrap(err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	m, err := readManifest(tr)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tmpDir, "strata-restore-")
	if err != nil {
		return nil, err
	}
	u := &Unpacked{Manifest: m, dir: dir}
	defer func() {
		if err != nil {
			u.Close()
		}
	}()
	want := map[string]Part{}
	tables := map[string]string{}
	for _, t := range m.Tables {
		want[t.Path] = t.Part
		tables[t.Path] = t.Name
	}
	for _, b := range m.Blobs {
		want[b.Path] = b
	}
	total := int64(len(want))
	var done int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, ErrInvalidArchive.With("detail", "the archive is truncated or damaged").Wrap(err)
		}
		p, ok := want[h.Name]
		if !ok {
			return nil, ErrInvalidArchive.With("detail", "unexpected entry "+h.Name)
		}
		delete(want, h.Name)
		if h.Size != p.Size {
			return nil, ErrChecksum.With("part", h.Name)
		}
		hs := sha256.New()
		src := io.TeeReader(io.LimitReader(tr, h.Size), hs)
		if name, isTable := tables[h.Name]; isTable {
			f, err := os.OpenFile(u.TablePath(name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(f, src)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, ErrInvalidArchive.With("detail", "the archive is truncated or damaged").Wrap(err)
			}
		} else if err := blob(strings.TrimPrefix(h.Name, "blobs/"), src); err != nil {
			return nil, err
		}
		// Whatever the consumer left unread still counts.
		if _, err := io.Copy(io.Discard, src); err != nil {
			return nil, ErrInvalidArchive.With("detail", "the archive is truncated or damaged").Wrap(err)
		}
		if hex.EncodeToString(hs.Sum(nil)) != p.SHA256 {
			return nil, ErrChecksum.With("part", h.Name)
		}
		done++
		if progress != nil {
			progress(done, total)
		}
	}
	if len(want) > 0 {
		for name := range want {
			return nil, ErrInvalidArchive.With("detail", "missing part "+name+": the archive is truncated")
		}
	}
	return u, nil
}
