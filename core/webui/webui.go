// Package webui serves Strata's web application (the Vue sources in web/,
// built into dist/ and committed, so the binary carries it and `make run`
// needs no npm). Pages — `/`, `/oauth-callback`, `/<app>` and everything
// under it but `/<app>/api` — answer the one index.html and the client
// routes; hashed assets are under /static/. API paths are never answered
// here: /api and /<app>/api keep their JSON 404s.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/httpenc"
)

//go:embed all:dist
var embedded embed.FS

// StaticPrefix is where the built assets are served ("static" is a
// reserved application name).
const StaticPrefix = "/static/"

// ContentSecurityPolicy of the pages: scripts and styles from the service
// only (no inline script), no framing, no plugins; API calls to the same
// origin. Radiocarbon curves and the Harris matrix are inline SVG.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServiceWorker is the service worker's name under StaticPrefix: the
// offline web app (issue 32) registers /static/sw.js with scope "/".
const ServiceWorker = "sw.js"

// contentType is a file's media type by its extension; the web app
// manifest's is not in every system's MIME table.
func contentType(name string) string {
	if path.Ext(name) == ".webmanifest" {
		return "application/manifest+json"
	}
	return mime.TypeByExtension(path.Ext(name))
}

// Handler serves the web application.
type Handler struct {
	index  *file
	assets map[string]*file
}

// file is one file of the build with the compressed forms the build wrote
// beside it (name.br, name.gz; web/vite.config.js), read once at start:
// the build is embedded and under a megabyte with its compressed forms.
type file struct {
	name     string
	identity []byte
	br, gz   []byte
	// etag is the identity's entity tag; each coding's adds "-br"/"-gz",
	// so a cache never takes one encoding's bytes for another's.
	etag string
}

func (f *file) compressed() bool { return f.br != nil || f.gz != nil }

// New serves the embedded build.
func New() *Handler {
	sub, err := fs.Sub(embedded, "dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the folder
	}
	h, err := NewFS(sub)
	if err != nil {
		panic("webui: the embedded build has no index.html: run make web")
	}
	return h
}

// NewFS serves a build folder (index.html and assets/). The compressed
// forms name.br and name.gz are never answered by their own names.
func NewFS(files fs.FS) (*Handler, error) {
	index, err := readFile(files, "index.html")
	if err != nil {
		return nil, err
	}
	h := &Handler{index: index, assets: map[string]*file{}}
	err = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || name == "index.html" || isCompressedForm(files, name) {
			return err
		}
		f, err := readFile(files, name)
		if err == nil {
			h.assets[name] = f
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// isCompressedForm reports whether name is the .br or .gz of another
// file of the build.
func isCompressedForm(files fs.FS, name string) bool {
	base, ok := strings.CutSuffix(name, ".br")
	if !ok {
		base, ok = strings.CutSuffix(name, ".gz")
	}
	if !ok {
		return false
	}
	_, err := fs.Stat(files, base)
	return err == nil
}

func readFile(files fs.FS, name string) (*file, error) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	f := &file{name: name, identity: b, etag: hex.EncodeToString(sum[:12])}
	// A missing compressed form is normal (a small file): identity only.
	if br, err := fs.ReadFile(files, name+".br"); err == nil {
		f.br = br
	}
	if gz, err := fs.ReadFile(files, name+".gz"); err == nil {
		f.gz = gz
	}
	return f, nil
}

// send answers f in the coding the request prefers, through
// http.ServeContent (HEAD, conditional requests, 304s, Content-Length).
// A Range request gets the identity bytes: ranges then count in the
// file's own bytes, and If-Range compares with the identity's tag.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, f *file) {
	hd := w.Header()
	body, coding, etag := f.identity, "", f.etag
	if f.compressed() {
		hd.Add("Vary", "Accept-Encoding")
		if r.Header.Get("Range") == "" {
			var offers []string
			if f.br != nil {
				offers = append(offers, "br")
			}
			if f.gz != nil {
				offers = append(offers, "gzip")
			}
			switch httpenc.Negotiate(r.Header.Get("Accept-Encoding"), offers...) {
			case "br":
				body, coding, etag = f.br, "br", etag+"-br"
			case "gzip":
				body, coding, etag = f.gz, "gzip", etag+"-gz"
			}
		}
	}
	if coding != "" {
		hd.Set("Content-Encoding", coding)
		// ServeContent leaves Content-Length out when a coding is set (for
		// wrappers compressing after it); these bytes are final, so the
		// length is known. A 304 or an error drops it again.
		hd.Set("Content-Length", strconv.Itoa(len(body)))
	}
	hd.Set("ETag", `"`+etag+`"`)
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(body))
}

// Serve answers a GET or HEAD for a page or an asset and reports whether
// it did; anything else (another method, an API path, an unknown asset, a
// path no page has) is left to the caller's JSON 404.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	if strings.HasPrefix(p, StaticPrefix) {
		return h.asset(w, r, strings.TrimPrefix(p, StaticPrefix))
	}
	if !IsPage(p) {
		return false
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// Always revalidated, so a new release's asset names are seen at once.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	// Reset links and the OAuth landing page carry secrets in their query:
	// never send the address on to another site.
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.send(w, r, h.index)
	return true
}

// IsPage reports whether path is one of the web application's pages: the
// root, the OAuth landing page, or a path under an application's name
// (its API excepted).
func IsPage(p string) bool {
	if p == "/" || p == "/oauth-callback" {
		return true
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	name := segs[0]
	if apps.ValidateName(name) != nil {
		return false
	}
	return len(segs) < 2 || segs[1] != "api"
}

func (h *Handler) asset(w http.ResponseWriter, r *http.Request, name string) bool {
	if name == "" || name == "index.html" || strings.Contains(name, "..") || !fs.ValidPath(name) {
		return false
	}
	f, ok := h.assets[name]
	if !ok {
		return false
	}
	hd := w.Header()
	if ct := contentType(name); ct != "" {
		hd.Set("Content-Type", ct)
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	switch {
	case name == ServiceWorker:
		// The service worker (web/pwa.mjs) lists the build's files: always
		// revalidated, so a new release reaches the devices at their next
		// visit. It lives under /static/ with the assets but serves every
		// page, so its scope may be the whole site.
		hd.Set("Cache-Control", "no-cache")
		hd.Set("Service-Worker-Allowed", "/")
	case strings.HasPrefix(name, "assets/"):
		// Content-hashed names: a changed file gets a new name.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	default:
		hd.Set("Cache-Control", "public, max-age=3600")
	}
	h.send(w, r, f)
	return true
}
