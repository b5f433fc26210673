package geo

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/files"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/wire"
)

// The map's layers (BraDypUS's GeoFace configuration): base layers (XYZ
// tiles, WMS, a MapLibre style) and overlays, vector files among them.
// The list is an app setting; the vector files sit in sys_geofiles.

// Layer is one configured layer, as BraDypUS's client edits it.
type Layer struct {
	Label     string `json:"label"`
	Type      string `json:"type"`      // tiles, wms, local, maplibre_style
	LayerType string `json:"layertype"` // base, overlay
	Path      string `json:"path"`      // URL, or a geofile's name (local)
	WMSLayers string `json:"wmslayers,omitempty"`
	// Attribution is shown on the map for the layer's source.
	Attribution string   `json:"attribution,omitempty"`
	Opacity     *float64 `json:"opacity,omitempty"`
	MinZoom     *float64 `json:"minzoom,omitempty"`
	MaxZoom     *float64 `json:"maxzoom,omitempty"`
	// Style paints a vector layer: colors as CSS hex, widths in pixels.
	Style *Style `json:"style,omitempty"`
}

// Style of a vector layer.
type Style struct {
	Color       string   `json:"color,omitempty"`
	Weight      *float64 `json:"weight,omitempty"`
	FillColor   string   `json:"fillColor,omitempty"`
	FillOpacity *float64 `json:"fillOpacity,omitempty"`
}

// Limits of the configuration.
const (
	MaxLayers      = 50
	MaxGeofileSize = 16 << 20
	settingLayers  = "geoface_layers"
)

var (
	errInvalidLayer = errs.New(errs.Invalid, "invalid_layer", "a map layer is not valid")
	errGeofile      = errs.New(errs.Invalid, "invalid_geofile", "the file is not GeoJSON, KML or GPX")
	errGeofileName  = errs.New(errs.Invalid, "invalid_geofile", "a geofile's name is letters, digits, '.', '_' or '-', ending .geojson, .json, .kml or .gpx")
	errNoGeofile    = errs.New(errs.NotFound, "geofile_not_found", "no such geofile")
	layerTypes      = map[string]bool{"tiles": true, "wms": true, "local": true, "maplibre_style": true}
	hexColor        = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$`)
	geofileName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	geofileTypes    = map[string]string{".geojson": "application/geo+json", ".json": "application/geo+json",
		".kml": "application/vnd.google-earth.kml+xml", ".gpx": "application/gpx+xml"}
)

// validate checks one layer (index i); files are the uploaded geofiles.
func (l *Layer) validate(i int, files map[string]bool) error {
	bad := func(detail string) error { return errInvalidLayer.With("index", i).With("detail", detail) }
	l.Label, l.Type, l.Path = strings.TrimSpace(l.Label), strings.TrimSpace(l.Type), strings.TrimSpace(l.Path)
	l.LayerType = strings.TrimSpace(l.LayerType)
	switch {
	case l.Label == "" || len(l.Label) > 200:
		return bad("label: 1 to 200 characters")
	case !layerTypes[l.Type]:
		return bad("type: tiles, wms, local or maplibre_style")
	}
	switch l.LayerType {
	case "":
		l.LayerType = "overlay"
	case "base", "overlay":
	default:
		return bad("layertype: base or overlay")
	}
	switch l.Type {
	case "local":
		if !files[l.Path] {
			return bad("path: the name of an uploaded geofile")
		}
	case "tiles":
		if err := checkURL(l.Path); err != nil {
			return bad("path: " + err.Error())
		}
		for _, p := range []string{"{z}", "{x}", "{y}"} {
			if !strings.Contains(l.Path, p) {
				return bad("path: an XYZ tile URL has {z}, {x} and {y}")
			}
		}
	case "wms":
		if err := checkURL(l.Path); err != nil {
			return bad("path: " + err.Error())
		}
		if strings.TrimSpace(l.WMSLayers) == "" {
			return bad("wmslayers: the WMS layers to show")
		}
	case "maplibre_style":
		if err := checkURL(l.Path); err != nil {
			return bad("path: " + err.Error())
		}
	}
	if len(l.Attribution) > 500 {
		return bad("attribution: at most 500 characters")
	}
	for name, v := range map[string]*float64{"opacity": l.Opacity} {
		if v != nil && (*v < 0 || *v > 1) {
			return bad(name + ": 0 to 1")
		}
	}
	for name, v := range map[string]*float64{"minzoom": l.MinZoom, "maxzoom": l.MaxZoom} {
		if v != nil && (*v < 0 || *v > 24) {
			return bad(name + ": 0 to 24")
		}
	}
	if s := l.Style; s != nil {
		for name, c := range map[string]string{"style.color": s.Color, "style.fillColor": s.FillColor} {
			if c != "" && !hexColor.MatchString(c) {
				return bad(name + ": a CSS hex color (#rgb, #rrggbb)")
			}
		}
		if s.Weight != nil && (*s.Weight < 0 || *s.Weight > 50) {
			return bad("style.weight: 0 to 50")
		}
		if s.FillOpacity != nil && (*s.FillOpacity < 0 || *s.FillOpacity > 1) {
			return bad("style.fillOpacity: 0 to 1")
		}
	}
	return nil
}

// checkURL: an absolute http(s) URL (tile templates keep their braces).
func checkURL(s string) error {
	if len(s) > 2000 {
		return errors.New("at most 2000 characters")
	}
	u, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("an http or https URL")
	}
	return nil
}

// loadLayers reads the configured layers ([] when none).
func loadLayers(ctx context.Context, a *apps.App) ([]Layer, error) {
	v, ok, err := a.Setting(ctx, settingLayers)
	if err != nil || !ok || v == "" {
		return []Layer{}, err
	}
	out := []Layer{}
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		return nil, fmt.Errorf("geoface layers: %w", err)
	}
	return out, nil
}

func saveLayers(ctx context.Context, a *apps.App, ls []Layer) error {
	b, err := json.Marshal(ls)
	if err != nil {
		return err
	}
	return a.SetSettings(ctx, map[string]string{settingLayers: string(b)})
}

// geofileNames lists the uploaded geofiles, by name.
func geofileNames(ctx context.Context, db *store.DB) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT name FROM `+db.Sys("geofiles")+` ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("geofiles: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// mapLayers are the layers as the map of a request shows them: a local
// layer's path is the geofile's URL, signed for the caller (a browser
// fetches it without the Authorization header).
func mapLayers(c *gin.Context) ([]Layer, error) {
	a := api.AppOf(c)
	ls, err := loadLayers(c.Request.Context(), a)
	if err != nil {
		return nil, err
	}
	for i := range ls {
		if ls[i].Type == "local" {
			ls[i].Path = auth.SignedURL(c.Request.Context(), "/"+a.Name+"/api/geofile/"+url.PathEscape(ls[i].Path))
		}
	}
	return ls, nil
}

func layerRoutes(api.Host) []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/config/geoface", Access: auth.SuperAdminOnly, Handler: getConfig},
		{Scope: api.App, Method: http.MethodPut, Path: "/config/geoface", Access: auth.SuperAdminOnly, Handler: putConfig},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/geofile", Access: auth.SuperAdminOnly, Handler: uploadGeofile,
			BodyLimit: MaxGeofileSize + 1<<20, BodyTimeout: 10 * time.Minute},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/geofile", Access: auth.SuperAdminOnly, Handler: deleteGeofile},
		{Scope: api.App, Method: http.MethodGet, Path: "/geofile/:name", Access: auth.Read, Handler: serveGeofile, SignedLink: true},
	}
}

// GET /config/geoface — {layers, local_files, config: {layers}}.
func getConfig(c *gin.Context) {
	a := api.AppOf(c)
	ls, err := loadLayers(c.Request.Context(), a)
	if err != nil {
		api.Fail(c, err)
		return
	}
	names, err := geofileNames(c.Request.Context(), a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"layers": ls, "local_files": names, "config": gin.H{"layers": ls}})
}

// PUT /config/geoface [layer, …] (or {layers}, {config: {layers}}) —
// {code: ok_geoface_updated, layers}: every layer checked, or none saved.
func putConfig(c *gin.Context) {
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		api.Fail(c, api.BodyReadErr(err))
		return
	}
	raw = bytes.TrimSpace(raw)
	var ls []Layer
	if len(raw) > 0 && raw[0] == '{' {
		var b struct {
			Layers []Layer `json:"layers"`
			Config *struct {
				Layers []Layer `json:"layers"`
			} `json:"config"`
		}
		if err := api.DecodeErr(wire.Decode(raw, &b, wire.Options{})); err != nil {
			api.Fail(c, err)
			return
		}
		ls = b.Layers
		if b.Config != nil {
			ls = b.Config.Layers
		}
	} else if err := api.DecodeErr(wire.Decode(raw, &ls, wire.Options{})); err != nil {
		api.Fail(c, err)
		return
	}
	if ls == nil {
		ls = []Layer{}
	}
	if len(ls) > MaxLayers {
		api.Fail(c, errInvalidLayer.With("detail", fmt.Sprintf("at most %d layers", MaxLayers)))
		return
	}
	a := api.AppOf(c)
	names, err := geofileNames(c.Request.Context(), a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	for i := range ls {
		if err := ls[i].validate(i, known); err != nil {
			api.Fail(c, err)
			return
		}
	}
	if err := saveLayers(c.Request.Context(), a, ls); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_geoface_updated", "layers": ls})
}

// POST /config/geofile (multipart "file") — {code: ok_geofile_uploaded,
// filename}: a GeoJSON (every geometry checked), KML or GPX file kept by
// its name (replacing one of the same name).
func uploadGeofile(c *gin.Context) {
	fh, err := c.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			api.Fail(c, api.ErrTooLarge.With("limit", MaxGeofileSize))
			return
		}
		api.Fail(c, errMissing.With("detail", "a file (multipart field \"file\") is required"))
		return
	}
	name := path.Base(strings.ReplaceAll(fh.Filename, `\`, "/"))
	ext := strings.ToLower(path.Ext(name))
	mime, ok := geofileTypes[ext]
	if !ok || !geofileName.MatchString(name) {
		api.Fail(c, errGeofileName.With("filename", clip(name)))
		return
	}
	f, err := fh.Open()
	if err != nil {
		api.Fail(c, err)
		return
	}
	data, err := io.ReadAll(files.CapReader(f, MaxGeofileSize))
	f.Close()
	if err != nil {
		api.Fail(c, api.BodyReadErr(err))
		return
	}
	if err := checkGeofile(ext, data); err != nil {
		api.Fail(c, err)
		return
	}
	a := api.AppOf(c)
	_, err = a.DB.Exec(c.Request.Context(), `INSERT INTO `+a.DB.Sys("geofiles")+` (name, mime, content, size, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET mime = excluded.mime, content = excluded.content, size = excluded.size, created_at = excluded.created_at`,
		name, mime, string(data), len(data), time.Now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_geofile_uploaded", "filename": name})
}

// checkGeofile: GeoJSON whose every geometry is valid, or XML whose root
// is kml or gpx.
func checkGeofile(ext string, data []byte) error {
	if ext == ".kml" || ext == ".gpx" {
		root := strings.TrimPrefix(ext, ".")
		if !bytes.Contains(data[:min(len(data), 4096)], []byte("<"+root)) {
			return errGeofile.With("detail", "no <"+root+"> root element")
		}
		return nil
	}
	if _, err := ParseCollection(data); err != nil {
		return err
	}
	return nil
}

type geofileBody struct {
	File     string `json:"file"`
	Filename string `json:"filename"`
}

// DELETE /config/geofile {file} (or {filename}) — {code:
// ok_geofile_deleted}; the layers showing it go with it.
func deleteGeofile(c *gin.Context) {
	var b geofileBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	name := strings.TrimSpace(b.File)
	if name == "" {
		name = strings.TrimSpace(b.Filename)
	}
	if name == "" {
		api.Fail(c, errMissing.With("parameter", "file"))
		return
	}
	a := api.AppOf(c)
	ctx := c.Request.Context()
	res, err := a.DB.Exec(ctx, `DELETE FROM `+a.DB.Sys("geofiles")+` WHERE name = ?`, name)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		api.Fail(c, errNoGeofile.With("filename", clip(name)))
		return
	}
	ls, err := loadLayers(ctx, a)
	if err == nil {
		kept := ls[:0]
		for _, l := range ls {
			if !(l.Type == "local" && l.Path == name) {
				kept = append(kept, l)
			}
		}
		err = saveLayers(ctx, a, kept)
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_geofile_deleted"})
}

// GET /geofile/{name} — the file, for the map (signed links accepted).
func serveGeofile(c *gin.Context) {
	a := api.AppOf(c)
	var mime, content string
	err := a.DB.QueryRow(c.Request.Context(), `SELECT mime, content FROM `+a.DB.Sys("geofiles")+` WHERE name = ?`, c.Param("name")).Scan(&mime, &content)
	if errors.Is(err, sql.ErrNoRows) {
		api.Fail(c, errNoGeofile.With("filename", clip(c.Param("name"))))
		return
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "sandbox")
	c.Data(http.StatusOK, mime, []byte(content))
}
