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

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/scratch"
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
func (u *Unpacked) Close() error {
	if u.dir == "" {
		return nil
	}
	return os.RemoveAll(u.dir)
}

// Unpack reads a whole archive, checking every part against the manifest
// (name, size, SHA-256, nothing missing, nothing extra). Tables are
// spooled under tmpDir; each blob is passed to blob as it streams (a
// failing checksum is reported after blob returned, so the caller undoes
// what it kept of it when Unpack fails). Any failure removes what was
// spooled.
func Unpack(r io.Reader, tmpDir string, blob func(key string, r io.Reader) error, progress Progress) (*Unpacked, error) {
	return unpack(r, unpackOptions{tmpDir: tmpDir, spool: true, blob: blob, progress: progress})
}

// unpackOptions tune unpack. An archive from elsewhere (an upload) is only
// checked, never spooled, and bounded: its declared sizes and what it
// inflates to as it streams.
type unpackOptions struct {
	tmpDir   string
	spool    bool // keep the tables (a restore); else only check them
	blob     func(key string, r io.Reader) error
	progress Progress
	// maxInflated bounds the sum of the manifest's part sizes (0: no bound).
	maxInflated int64
	// maxRatio bounds what the archive inflates to per compressed byte
	// read, past the first inflationGrace bytes (0: no bound).
	maxRatio int64
}

// An upload's bounds. gzip can inflate about 1000:1; backups, mostly
// NDJSON and photos, stay far below 200:1.
const (
	uploadMaxRatio = 200
	inflationGrace = 16 << 20
)

// ErrInflation: an archive inflates more than backups do (a gzip bomb).
var ErrInflation = errs.New(errs.Invalid, "backup_inflation", "the archive inflates far more than a backup does")

func unpack(r io.Reader, o unpackOptions) (_ *Unpacked, err error) {
	packed := &countReader{r: r}
	gz, err := gzip.NewReader(packed)
	if err != nil {
		return nil, ErrInvalidArchive.Wrap(err)
	}
	defer gz.Close()
	inflated := &countReader{r: gz}
	if o.maxRatio > 0 {
		inflated.check = func() error {
			if inflated.n > inflationGrace && inflated.n > o.maxRatio*packed.n {
				return ErrInflation.With("max_ratio", o.maxRatio)
			}
			return nil
		}
	}
	tr := tar.NewReader(inflated)
	m, err := readManifest(tr)
	if err != nil {
		return nil, err
	}
	if o.maxInflated > 0 {
		var declared int64
		for _, p := range m.Tables {
			declared += max(p.Size, 0)
		}
		for _, p := range m.Blobs {
			declared += max(p.Size, 0)
		}
		if declared > o.maxInflated {
			return nil, ErrInflation.With("detail", "the manifest declares more than an archive of this size may hold").With("limit", o.maxInflated)
		}
	}
	u := &Unpacked{Manifest: m}
	if o.spool {
		if u.dir, err = scratch.MkdirTemp(o.tmpDir, "strata-restore-"); err != nil {
			return nil, err
		}
	}
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
			return nil, damaged(err)
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
		if name, isTable := tables[h.Name]; isTable && o.spool {
			f, err := os.OpenFile(u.TablePath(name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(f, src)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, damaged(err)
			}
		} else if !isTable && o.blob != nil {
			if err := o.blob(strings.TrimPrefix(h.Name, "blobs/"), src); err != nil {
				return nil, err
			}
		}
		// Whatever the consumer left unread still counts.
		if _, err := io.Copy(io.Discard, src); err != nil {
			return nil, damaged(err)
		}
		if hex.EncodeToString(hs.Sum(nil)) != p.SHA256 {
			return nil, ErrChecksum.With("part", h.Name)
		}
		done++
		if o.progress != nil {
			o.progress(done, total)
		}
	}
	if len(want) > 0 {
		for name := range want {
			return nil, ErrInvalidArchive.With("detail", "missing part "+name+": the archive is truncated")
		}
	}
	return u, nil
}

// countReader counts what is read through it; check, when set, may stop
// the read after each chunk.
type countReader struct {
	r     io.Reader
	n     int64
	check func() error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if c.check != nil {
		if cerr := c.check(); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

// damaged is the error of a read that failed mid-archive: a bound it
// passed (coded), else a truncated or damaged archive.
func damaged(err error) error {
	if e, ok := errs.As(err); ok {
		return e
	}
	return ErrInvalidArchive.With("detail", "the archive is truncated or damaged").Wrap(err)
}
