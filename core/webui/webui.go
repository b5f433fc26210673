// Package webui serves Strata's web application (the Vue sources in web/,
// built into dist/ and committed, so the binary carries it and `make run`
// needs no npm). Pages — `/`, `/oauth-callback`, `/<app>` and everything
// under it but `/<app>/api` — answer the one index.html and the client
// routes; hashed assets are under /static/. API paths are never answered
// here: /api and /<app>/api keep their JSON 404s.
package webui

import (
	"bytes"
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/strata-archaeo/strata/core/apps"
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

// Handler serves the web application.
type Handler struct {
	files fs.FS
	index []byte
}

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

// NewFS serves a build folder (index.html and assets/).
func NewFS(files fs.FS) (*Handler, error) {
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		return nil, err
	}
	return &Handler{files: files, index: index}, nil
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
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(h.index))
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
	b, err := fs.ReadFile(h.files, name)
	if err != nil {
		return false
	}
	hd := w.Header()
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		hd.Set("Content-Type", ct)
	}
	hd.Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(name, "assets/") {
		// Content-hashed names: a changed file gets a new name.
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "public, max-age=3600")
	}
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	return true
}
