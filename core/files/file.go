package files

import (
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/strata-archaeo/strata/core/errs"
)

// File is the metadata of one stored file.
type File struct {
	ID          int64
	Filename    string // original name without its extension; metadata only
	Ext         string // lower-case extension without the dot ("" when none)
	Mime        string // sniffed from the content
	Size        int64
	SHA256      string // hex
	Description *string
	Keywords    *string
	Printable   bool
	BlobKey     string
	ThumbKey    string // "" when the file has no thumbnail
	CreatedAt   time.Time
	Creator     *int64
}

// Name is the file's original name with its extension.
func (f *File) Name() string {
	if f.Ext == "" {
		return f.Filename
	}
	return f.Filename + "." + f.Ext
}

// IsImage reports whether the file is a raster image a browser shows.
func (f *File) IsImage() bool { return rasterMimes[f.Mime] }

// Active reports whether a browser could run the file's content (HTML,
// SVG, XML, JavaScript): such files are served as attachments in a
// sandbox.
func (f *File) Active() bool {
	if activeExts[f.Ext] {
		return true
	}
	m := f.Mime
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = m[:i]
	}
	return activeMimes[strings.TrimSpace(m)] || strings.HasSuffix(m, "+xml")
}

var rasterMimes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/bmp": true}

var activeExts = map[string]bool{"html": true, "htm": true, "xhtml": true, "svg": true, "svgz": true, "xml": true,
	"js": true, "mjs": true, "xsl": true, "xslt": true}

var activeMimes = map[string]bool{"text/html": true, "text/xml": true, "application/xml": true, "image/svg+xml": true,
	"text/javascript": true, "application/javascript": true, "application/xhtml+xml": true}

// Errors of the files area.
var (
	ErrFileNotFound = errs.New(errs.NotFound, "record_not_found", "no such file")
	ErrLinkNotFound = errs.New(errs.NotFound, "record_not_found", "no such file link")
	ErrEmptyFile    = errs.New(errs.Invalid, "empty_file", "the uploaded file is empty")
	ErrNoThumbnail  = errs.New(errs.NotFound, "no_thumbnail", "this file has no thumbnail")
	ErrNoFile       = errs.New(errs.Invalid, "parameter_missing", "a file is required (multipart field \"file\")")
)

// maxNameLen caps a stored file name (in bytes, without the extension).
const maxNameLen = 200

// SplitName turns a client's file name into the stored name and extension:
// only the last path element counts (either slash), control characters and
// NUL are dropped, and what is left is never used as a path.
func SplitName(name string) (filename, ext string) {
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base("/" + name)
	name = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '/' {
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(name)
	name = strings.Trim(name, ".")
	if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
		e := strings.ToLower(name[i+1:])
		if len(e) <= 10 && isAlnum(e) {
			filename, ext = strings.TrimSpace(name[:i]), e
		}
	}
	if ext == "" {
		filename = name
	}
	if len(filename) > maxNameLen {
		cut := maxNameLen
		for cut > 0 && !utf8.RuneStart(filename[cut]) {
			cut--
		}
		filename = filename[:cut]
	}
	if filename == "" || filename == "/" {
		filename = "file"
	}
	return filename, ext
}

func isAlnum(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
