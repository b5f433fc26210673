package imports

import (
	"archive/zip"
	"io"
	"os"
	"sync/atomic"

	"github.com/strata-archaeo/strata/core/errs"
)

// A ZIP's headers say how big each entry is, but they are the sender's
// word: a few hundred kilobytes of zeros inflate to gigabytes, and entries
// may share their compressed bytes. So every byte is counted as it is
// inflated, against the upload cap per photo, a cap for the whole ZIP and
// a bound on how much it may grow.
const (
	// maxInflation bounds inflated bytes per compressed byte, for each
	// entry and for the whole ZIP. Photos barely compress (JPEG, PNG);
	// even uncompressed TIFF scans stay well under this.
	maxInflation = 100
	// inflationGrace is inflated before the ratio is looked at, so small
	// files (an index, a text note) that compress well are no bomb.
	inflationGrace = 1 << 20
)

var (
	errPhotoTooLarge = errs.New(errs.TooLarge, "import_photo_too_large", "a photo in the ZIP is larger than the upload limit")
	errZipTooLarge   = errs.New(errs.TooLarge, "import_zip_too_large", "the photos in the ZIP add up to more than allowed")
	errZipInflation  = errs.New(errs.Invalid, "import_zip_inflation", "the ZIP inflates far more than photos do (a ZIP bomb?)")
)

// zipLimits are what a ZIP of photos may inflate to.
type zipLimits struct {
	entry int64 // one photo (the upload limit)
	total int64 // all photos read from one ZIP
}

// photoZip is a ZIP on disk whose reads are counted, so inflated bytes
// can be weighed against the compressed bytes they came from.
type photoZip struct {
	*zip.Reader
	f        *os.File
	counter  *countingReaderAt
	size     int64 // the ZIP's own bytes
	limits   zipLimits
	inflated int64 // all entries opened so far
}

func openPhotoZip(path string, limits zipLimits) (*photoZip, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	c := &countingReaderAt{r: f}
	zr, err := zip.NewReader(c, info.Size())
	if err != nil {
		f.Close()
		return nil, errBadZip.Wrap(err)
	}
	return &photoZip{Reader: zr, f: f, counter: c, size: info.Size(), limits: limits}, nil
}

func (z *photoZip) Close() error { return z.f.Close() }

// open returns the entry's inflated bytes, failing with a coded error the
// moment any limit is passed (archive/zip checks the CRC at the end).
func (z *photoZip) open(zf *zip.File) (io.ReadCloser, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, errBadZip.With("file", zf.Name).Wrap(err)
	}
	return &cappedEntry{rc: rc, z: z, name: zf.Name, start: z.counter.n.Load()}, nil
}

// check reads every photo entry through the limits without keeping
// anything, so a preview refuses a bomb before it is stored.
func (z *photoZip) check(names map[string]*zip.File) error {
	for _, zf := range names {
		rc, err := z.open(zf)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			if _, ok := errs.As(err); ok {
				return err
			}
			return errBadZip.With("file", zf.Name).Wrap(err)
		}
	}
	return nil
}

type cappedEntry struct {
	rc    io.ReadCloser
	z     *photoZip
	name  string
	start int64 // the counter when the entry was opened
	n     int64 // inflated so far
}

func (e *cappedEntry) Read(p []byte) (int, error) {
	n, err := e.rc.Read(p)
	e.n += int64(n)
	e.z.inflated += int64(n)
	switch {
	case e.n > e.z.limits.entry:
		return n, errPhotoTooLarge.With("file", e.name).With("limit", e.z.limits.entry)
	case e.z.inflated > e.z.limits.total:
		return n, errZipTooLarge.With("limit", e.z.limits.total)
	case e.n > inflationGrace && e.n > maxInflation*(e.z.counter.n.Load()-e.start):
		return n, errZipInflation.With("file", e.name).With("max_ratio", maxInflation)
	case e.z.inflated > inflationGrace && e.z.inflated > maxInflation*e.z.size:
		return n, errZipInflation.With("max_ratio", maxInflation)
	}
	return n, err
}

func (e *cappedEntry) Close() error { return e.rc.Close() }

// countingReaderAt counts the bytes read from the ZIP file.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
