// Package dbmlapi is the application's schema as DBML text (SPEC §4.5):
// export of the user tables, fields, indexes, relations and vocabularies
// with their configuration in BraDypUS's bdus:* notes, a preview of an
// import that writes nothing, and the import itself, made of the same
// catalog operations the configuration routes use (core/schema, core/vocab).
package dbmlapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/dbml"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

var (
	// ErrEmpty: no text, or a text with no table, enum or ref in it.
	ErrEmpty = errs.New(errs.Invalid, "dbml_empty", `the DBML text is empty: send {"dbml": "Table ..."}`)
	// ErrSyntax: the text is not DBML; line and column say where.
	ErrSyntax = errs.New(errs.Invalid, "dbml_syntax_error", "the DBML text cannot be read")
)

// Routes are the DBML endpoints, super_admin only (they change the
// database's structure). features finds the plugin features a table's
// bdus:features can activate (nil: none).
func Routes(features FeatureLookup, now func() time.Time) []api.Route {
	h := handlers{features: features, now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/config/dbml", Access: auth.SuperAdminOnly, Handler: h.export},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/dbml/preview", Access: auth.SuperAdminOnly, Handler: h.preview},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/dbml/apply", Access: auth.SuperAdminOnly, Handler: h.apply},
	}
}

type handlers struct {
	features FeatureLookup
	now      func() time.Time
}

// GET /config/dbml — the schema as a .dbml download (what BraDypUS's
// client saves); ?format=json answers {dbml} (BraDypUS's openapi).
func (h handlers) export(c *gin.Context) {
	a := api.AppOf(c)
	text, err := Export(c.Request.Context(), a.DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if strings.EqualFold(c.Query("format"), "json") {
		api.Success(c, http.StatusOK, gin.H{"dbml": text})
		return
	}
	c.Header("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Name + ".dbml"}))
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(text))
}

// readText reads the DBML of a request: {dbml} as JSON, or the body
// itself when it is sent as text (text/plain, or a .dbml file's bytes).
func readText(c *gin.Context) (*dbml.Schema, error) {
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, api.BodyReadErr(err)
	}
	text := string(b)
	ct, _, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if ct != "text/plain" && ct != "application/octet-stream" && ct != "text/x-dbml" && strings.TrimSpace(text) != "" {
		var body struct {
			DBML string `json:"dbml"`
		}
		if err := api.DecodeErr(wire.Decode(b, &body, wire.Options{})); err != nil {
			return nil, err
		}
		text = body.DBML
	}
	if strings.TrimSpace(text) == "" {
		return nil, ErrEmpty
	}
	s, err := dbml.Parse(text)
	var pe *dbml.Error
	if errors.As(err, &pe) {
		return nil, ErrSyntax.With("line", pe.Line).With("column", pe.Column).With("detail", pe.Message).Wrap(err)
	}
	if err != nil {
		return nil, err
	}
	if len(s.Tables) == 0 && len(s.Enums) == 0 && len(s.Refs) == 0 {
		return nil, ErrEmpty
	}
	return s, nil
}

// POST /config/dbml/preview — {dbml} → {preview: Plan}; nothing written.
func (h handlers) preview(c *gin.Context) {
	s, err := readText(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	p, err := MakePlan(c.Request.Context(), api.AppOf(c).DB, s)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"preview": p})
}

// POST /config/dbml/apply — {dbml} → {result: Result}. Tables with errors
// are skipped (listed with their errors); the others are created.
func (h handlers) apply(c *gin.Context) {
	s, err := readText(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	res, err := Apply(c.Request.Context(), api.AppOf(c).DB, s, h.features, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	for _, e := range res.Internal {
		_ = c.Error(e) // logged with the request, never shown
	}
	code := "dbml_applied"
	if len(res.Skipped) > 0 {
		code = "dbml_applied_with_skipped"
	}
	api.Success(c, http.StatusOK, gin.H{"code": code, "result": res, "created": res.Created, "skipped": res.Skipped})
}
