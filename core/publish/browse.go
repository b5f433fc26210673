package publish

import (
	"archive/zip"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
)

// A crate is browsable: any file of a version is answered from its zip
// (GET /<app>/data/snapshot/{version}/files/{path}), and the IIIF
// resources, whose URIs are stable, from the latest version's
// (GET /<app>/data/iiif/{path}), so that IIIF viewers and Linked Data
// clients dereference what the documents name. A zip's central directory
// is read once per process and kept (a few, bounded); each answer then
// reads just its entry's bytes.

// ErrFileNotFound answers a path the crate does not hold.
var ErrFileNotFound = errs.New(errs.NotFound, "file_not_published", "this version's crate has no such file")

// crateEntry is where one file's bytes are in the zip.
type crateEntry struct {
	offset, compressed, size int64
	method                   uint16
	crc                      uint32
}

// maxIndexes bounds the central directories kept (one per crate).
const maxIndexes = 4

type indexCache struct {
	mu    sync.Mutex
	order []string // blob keys, least recently used first
	byKey map[string]map[string]crateEntry
}

var crateIndexes = &indexCache{byKey: map[string]map[string]crateEntry{}}

// index is the central directory of the crate stored under key.
func (c *indexCache) index(ctx context.Context, st files.Storage, app, key string) (map[string]crateEntry, error) {
	cacheKey := app + "/" + key
	c.mu.Lock()
	if idx, ok := c.byKey[cacheKey]; ok {
		c.touch(cacheKey)
		c.mu.Unlock()
		return idx, nil
	}
	c.mu.Unlock()
	blob, err := st.Get(ctx, app, key)
	if err != nil {
		return nil, err
	}
	defer blob.Close()
	zr, err := zip.NewReader(&readerAt{r: blob}, blob.Info().Size)
	if err != nil {
		return nil, fmt.Errorf("publish: crate %s: %w", key, err)
	}
	idx := make(map[string]crateEntry, len(zr.File))
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			return nil, err
		}
		idx[f.Name] = crateEntry{offset: off, compressed: int64(f.CompressedSize64), size: int64(f.UncompressedSize64), method: f.Method, crc: f.CRC32}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[cacheKey]; !ok {
		c.byKey[cacheKey] = idx
		c.order = append(c.order, cacheKey)
		for len(c.order) > maxIndexes {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
	}
	return idx, nil
}

func (c *indexCache) touch(key string) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

// readerAt reads a seekable blob at offsets (zip's central directory).
type readerAt struct {
	mu sync.Mutex
	r  io.ReadSeeker
}

func (ra *readerAt) ReadAt(p []byte, off int64) (int, error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if _, err := ra.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(ra.r, p)
}

// contentTypes of the crate's files, by extension.
var contentTypes = map[string]string{".json": "application/ld+json", ".jsonld": "application/ld+json", ".csv": "text/csv; charset=utf-8",
	".geojson": "application/geo+json", ".xml": "application/xml", ".jpg": "image/jpeg", ".svg": "image/svg+xml"}

// GET /<app>/data/snapshot/{version}/files/{path}.
func (h handlers) siteFile(c *gin.Context) {
	s, ok := h.versionParam(c)
	if ok {
		h.sendEntry(c, s, strings.TrimPrefix(c.Param("path"), "/"))
	}
}

// GET /<app>/data/iiif/{path} — from the latest version.
func (h handlers) siteIIIF(c *gin.Context) {
	s, ok := latestOf(c)
	if !ok {
		return
	}
	h.sendEntry(c, s, "iiif/"+strings.TrimPrefix(c.Param("path"), "/"))
}

// sendEntry answers one file of s's crate. Paths are looked up in the
// zip's directory, never on a file system, so nothing outside the crate
// can be named.
func (h handlers) sendEntry(c *gin.Context, s *Snapshot, name string) {
	if s.blobKey == nil {
		api.Fail(c, ErrNotDone)
		return
	}
	app := api.AppOf(c)
	idx, err := crateIndexes.index(c.Request.Context(), h.d.Files, app.Name, *s.blobKey)
	if err != nil {
		api.Fail(c, err)
		return
	}
	e, ok := idx[name]
	if !ok || strings.HasSuffix(name, "/") {
		api.Fail(c, ErrFileNotFound.With("path", name))
		return
	}
	etag := `"` + strconv.FormatUint(uint64(e.crc), 16) + "-" + strconv.FormatInt(e.size, 10) + `"`
	c.Header("ETag", etag)
	c.Header("Cache-Control", "public, max-age=3600")
	// Published data is for anyone: IIIF viewers and Linked Data clients
	// run on other origins.
	c.Header("Access-Control-Allow-Origin", "*")
	c.Header("X-Content-Type-Options", "nosniff")
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	blob, err := h.d.Files.Get(c.Request.Context(), app.Name, *s.blobKey)
	if err != nil {
		api.Fail(c, err)
		return
	}
	defer blob.Close()
	if _, err := blob.Seek(e.offset, io.SeekStart); err != nil {
		api.Fail(c, err)
		return
	}
	var body io.Reader = io.LimitReader(blob, e.compressed)
	switch e.method {
	case zip.Store:
	case zip.Deflate:
		fr := flate.NewReader(body)
		defer fr.Close()
		body = fr
	default:
		api.Fail(c, fmt.Errorf("publish: %s: compression method %d", name, e.method))
		return
	}
	ct := contentTypes[path.Ext(name)]
	if ct == "" {
		ct = "application/octet-stream"
	}
	c.Header("Content-Type", ct)
	c.Header("Content-Length", strconv.FormatInt(e.size, 10))
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(c.Writer, io.LimitReader(body, e.size))
}
