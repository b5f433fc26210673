package publish

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
)

// The landing pages answer from what snapshots published (their frozen
// setting and sys_publish_items), never from the live tables: a page
// shows exactly what was published, and nothing a later edit made
// private can appear in it.

var (
	ErrNothingPublished = errs.New(errs.NotFound, "nothing_published", "this application has published nothing yet")
	ErrRecordNotFound   = errs.New(errs.NotFound, "record_not_published", "no such published record")
	ErrRecordWithdrawn  = errs.New(errs.Gone, "record_withdrawn", "this record was published before and is no longer")
)

// wantsLD reports content negotiation for JSON-LD: an Accept naming
// application/ld+json or application/json (before text/html), or
// ?format=jsonld.
func wantsLD(c *gin.Context) bool {
	if f := c.Query("format"); f != "" {
		return f == "jsonld" || f == "json"
	}
	accept := strings.ToLower(c.GetHeader("Accept"))
	ld := strings.Index(accept, "application/ld+json")
	if ld < 0 {
		ld = strings.Index(accept, "application/json")
	}
	if ld < 0 {
		return false
	}
	html := strings.Index(accept, "text/html")
	return html < 0 || ld < html
}

// GET /<app>/data — the latest version's landing page.
func (h handlers) siteHome(c *gin.Context) {
	if s, ok := latestOf(c); ok {
		h.snapshotPage(c, s)
	}
}

// latestOf reads the latest done snapshot, or answers the error
// (nothing_published before the first).
func latestOf(c *gin.Context) (*Snapshot, bool) {
	s, err := latestDone(c.Request.Context(), api.AppOf(c).DB)
	if err == nil && s == nil {
		err = ErrNothingPublished
	}
	if err != nil {
		api.Fail(c, err)
		return nil, false
	}
	return s, true
}

// GET /<app>/data/snapshot/{version}.
func (h handlers) siteSnapshot(c *gin.Context) {
	s, ok := h.versionParam(c)
	if ok {
		h.snapshotPage(c, s)
	}
}

// GET /<app>/data/snapshot/{version}/download — the crate, for anyone.
func (h handlers) siteDownload(c *gin.Context) {
	s, ok := h.versionParam(c)
	if ok {
		h.sendCrate(c, s)
	}
}

func (h handlers) versionParam(c *gin.Context) (*Snapshot, bool) {
	v, err := strconv.ParseInt(strings.TrimPrefix(c.Param("version"), "v"), 10, 64)
	if err != nil || v <= 0 {
		api.Fail(c, ErrSnapshotNotFound.With("version", c.Param("version")))
		return nil, false
	}
	s, err := snapshotByVersion(c.Request.Context(), api.AppOf(c).DB, v)
	if err != nil {
		api.Fail(c, err)
		return nil, false
	}
	return s, true
}

// snapshotView is what a version's landing page shows.
type snapshotView struct {
	App       string
	Snap      *Snapshot
	Config    Config
	Licence   Licence
	URL       string
	Download  string
	CiteLink  string
	Citation  Citation
	Tables    []tableCount
	Versions  []*Snapshot
	BaseURL   string
	Published string
}

type tableCount struct {
	Name, Label, Kind string
	Records           int64
}

func (h handlers) snapshotPage(c *gin.Context, s *Snapshot) {
	ctx := c.Request.Context()
	app := api.AppOf(c)
	fr := s.Frozen()
	v := snapshotView{App: app.Name, Snap: s, Config: fr.Config, BaseURL: fr.BaseURL, URL: SnapshotURI(fr.BaseURL, *s.Version)}
	v.Licence, _ = LicenceOf(fr.Config.Licence)
	v.Download = v.URL + "/download"
	v.CiteLink = v.URL
	if s.DOI != nil && *s.DOI != "" {
		v.CiteLink = "https://doi.org/" + *s.DOI
	}
	v.Published = s.PublishedAt.Format("2006-01-02")
	v.Citation = citationOf(app.Name, fr.Config, *s.Version, *s.PublishedAt, v.CiteLink)
	if wantsLD(c) {
		c.Header("Vary", "Accept")
		c.Data(http.StatusOK, "application/ld+json", datasetLD(v))
		return
	}
	counts, err := itemCounts(ctx, app.DB, s.ID)
	if err != nil {
		api.Fail(c, err)
		return
	}
	for _, t := range fr.Config.Tables {
		label := counts[t.Name].label
		if label == "" {
			label = t.Name
		}
		v.Tables = append(v.Tables, tableCount{Name: t.Name, Kind: t.Kind, Label: label, Records: counts[t.Name].n})
	}
	if v.Versions, err = listSnapshots(ctx, app.DB, true); err != nil {
		api.Fail(c, err)
		return
	}
	h.page(c, snapshotTemplate, v)
}

// itemCounts are the published records of each table in snapshot id,
// with the table's label as published (zero for a version whose rows a
// later version replaced).
func itemCounts(ctx context.Context, db *store.DB, id int64) (map[string]tableItems, error) {
	rows, err := db.Query(ctx, `SELECT tb, COUNT(*), MIN(summary) FROM `+db.Sys("publish_items")+` WHERE snapshot = ? AND deleted = ? GROUP BY tb`, id, false)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]tableItems{}
	for rows.Next() {
		var tb, raw string
		var n int64
		if err := rows.Scan(&tb, &n, &raw); err != nil {
			return nil, err
		}
		var sum summary
		_ = json.Unmarshal([]byte(raw), &sum) // a label is a nicety: the name stands in
		out[tb] = tableItems{n: n, label: sum.TableLabel}
	}
	return out, rows.Err()
}

type tableItems struct {
	n     int64
	label string
}

// datasetLD is a version as schema.org JSON-LD (the root of its crate).
func datasetLD(v snapshotView) []byte {
	authors := make([]map[string]any, len(v.Config.Authors))
	for i, a := range v.Config.Authors {
		p := map[string]any{"@type": "Person", "name": a.Name}
		if a.ORCID != "" {
			p["@id"] = "https://orcid.org/" + a.ORCID
		}
		authors[i] = p
	}
	doc := map[string]any{
		"@context": "https://schema.org/", "@type": "Dataset", "@id": v.URL, "url": v.URL,
		"name": v.Config.Title, "description": v.Config.Description, "version": strconv.FormatInt(*v.Snap.Version, 10),
		"datePublished": v.Published, "license": v.Licence.URL, "author": authors, "keywords": v.Config.Keywords,
		"distribution": map[string]any{"@type": "DataDownload", "contentUrl": v.Download, "encodingFormat": "application/zip"},
		"citation":     v.Citation.APA,
	}
	if v.CiteLink != v.URL {
		doc["identifier"] = v.CiteLink
	}
	return mustJSON(doc)
}

// recordView is what a record's landing page shows.
type recordView struct {
	App      string
	URI      string
	Sum      summary
	Snap     *Snapshot
	Config   Config
	Licence  Licence
	Citation Citation
	Dataset  string
}

// GET /<app>/data/record/{tb}/{id} — a published record, from the latest
// version: HTML, or its Linked Art JSON-LD.
func (h handlers) siteRecord(c *gin.Context) {
	ctx := c.Request.Context()
	app := api.AppOf(c)
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		api.Fail(c, ErrRecordNotFound)
		return
	}
	s, ok := latestOf(c)
	if !ok {
		return
	}
	var deleted bool
	var sumRaw string
	var doc sql.NullString
	err = app.DB.QueryRow(ctx, `SELECT deleted, summary, doc FROM `+app.DB.Sys("publish_items")+` WHERE snapshot = ? AND tb = ? AND rid = ?`,
		s.ID, c.Param("tb"), id).Scan(&deleted, &sumRaw, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		api.Fail(c, ErrRecordNotFound)
		return
	}
	if err != nil {
		api.Fail(c, err)
		return
	}
	if deleted {
		api.Fail(c, ErrRecordWithdrawn)
		return
	}
	c.Header("Vary", "Accept")
	if wantsLD(c) {
		c.Data(http.StatusOK, "application/ld+json", []byte(doc.String))
		return
	}
	fr := s.Frozen()
	v := recordView{App: app.Name, URI: RecordURI(fr.BaseURL, c.Param("tb"), id), Snap: s, Config: fr.Config, Dataset: SnapshotURI(fr.BaseURL, *s.Version)}
	if err := json.Unmarshal([]byte(sumRaw), &v.Sum); err != nil {
		api.Fail(c, err)
		return
	}
	v.Licence, _ = LicenceOf(fr.Config.Licence)
	link := v.Dataset
	if s.DOI != nil && *s.DOI != "" {
		link = "https://doi.org/" + *s.DOI
	}
	v.Citation = citationOf(app.Name, fr.Config, *s.Version, *s.PublishedAt, link)
	h.page(c, recordTemplate, v)
}

func (h handlers) page(c *gin.Context, t *template.Template, v any) {
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		api.Fail(c, err)
		return
	}
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
	c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(b.String()))
}

var pageFuncs = template.FuncMap{
	"date": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format("2006-01-02")
	},
	"value": func(v any) string {
		switch x := v.(type) {
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		case nil:
			return ""
		}
		b, _ := json.Marshal(v)
		s := string(b)
		if strings.HasPrefix(s, `"`) {
			var out string
			_ = json.Unmarshal(b, &out)
			return out
		}
		return s
	},
	"deref": func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	},
}

const pageStyle = `<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5;color:#1a1a1a}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.25rem .75rem;text-align:left;vertical-align:top}
pre{background:#f4f4f4;padding:.75rem;overflow-x:auto;white-space:pre-wrap}a{color:#0b5394}.muted{color:#555}</style>`

var snapshotTemplate = template.Must(template.New("snapshot").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Config.Title}} (version {{deref .Snap.Version}})</title>
<link rel="alternate" type="application/ld+json" href="{{.URL}}?format=jsonld">` + pageStyle + `</head>
<body><main>
<h1>{{.Config.Title}}</h1>
<p class="muted">Version {{deref .Snap.Version}}, published {{.Published}}{{if .Snap.DOI}} · DOI <a href="https://doi.org/{{.Snap.DOI}}">{{.Snap.DOI}}</a>{{end}}</p>
<p>{{range $i, $a := .Config.Authors}}{{if $i}}; {{end}}{{$a.Name}}{{if $a.ORCID}} (<a href="https://orcid.org/{{$a.ORCID}}">ORCID {{$a.ORCID}}</a>){{end}}{{end}}</p>
{{if .Config.Description}}<p>{{.Config.Description}}</p>{{end}}
<p>Licence: <a href="{{.Licence.URL}}" rel="license">{{.Licence.Name}}</a></p>
<p><a href="{{.Download}}" download>Download the dataset</a> (RO-Crate zip{{if .Snap.Size}}, {{deref .Snap.Size}} bytes{{end}}{{if .Snap.Records}}, {{deref .Snap.Records}} records{{end}})</p>
{{if .Tables}}<h2>Tables</h2><table><thead><tr><th>Table</th><th>Kind</th><th>Records</th></tr></thead><tbody>
{{range .Tables}}<tr><td>{{.Label}}</td><td>{{.Kind}}</td><td>{{.Records}}</td></tr>{{end}}</tbody></table>{{end}}
<h2>Cite as</h2>
<p>{{.Citation.APA}}</p>
<details><summary>Chicago</summary><p>{{.Citation.Chicago}}</p></details>
<details><summary>BibTeX</summary><pre>{{.Citation.BibTeX}}</pre></details>
<details><summary>RIS</summary><pre>{{.Citation.RIS}}</pre></details>
{{if gt (len .Versions) 1}}<h2>Versions</h2><ul>{{range .Versions}}<li><a href="{{$.BaseURL}}/data/snapshot/{{deref .Version}}">Version {{deref .Version}}</a>, {{date .PublishedAt}}</li>{{end}}</ul>{{end}}
<p class="muted">Harvest: <a href="{{.BaseURL}}/oai?verb=Identify">OAI-PMH</a></p>
</main></body></html>`))

var recordTemplate = template.Must(template.New("record").Funcs(pageFuncs).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Sum.Label}} · {{.Config.Title}}</title>
<link rel="alternate" type="application/ld+json" href="{{.URI}}?format=jsonld">` + pageStyle + `</head>
<body><main>
<p class="muted"><a href="{{.Dataset}}">{{.Config.Title}}</a> · {{.Sum.TableLabel}}</p>
<h1>{{.Sum.Label}}</h1>
<p class="muted">{{.Sum.Kind}}{{if .Sum.Term}} · <a href="{{.Sum.Term.ID}}">{{.Sum.Term.Label}}</a>{{end}}</p>
<table><tbody>{{range .Sum.Fields}}<tr><th scope="row">{{.Label}}</th><td>{{if .Link}}<a href="{{.Link}}">{{value .Value}}</a>{{else}}{{value .Value}}{{end}}</td></tr>{{end}}</tbody></table>
{{if .Sum.Relations}}<h2>Stratigraphic relations</h2><ul>{{range .Sum.Relations}}<li>{{.Relation}} <a href="{{.Target}}">{{.Label}}</a></li>{{end}}</ul>{{end}}
<p>Licence: <a href="{{.Licence.URL}}" rel="license">{{.Licence.Name}}</a> · <a href="{{.URI}}?format=jsonld">JSON-LD (Linked Art)</a></p>
<h2>Cite the dataset</h2><p>{{.Citation.APA}}</p>
</main></body></html>`))
