// Package welcome is the app's welcome page (CONTRACT §10): Markdown, HTML
// allowed, sanitised when saved and again when rendered, shown to every
// signed-in user and edited by admins.
package welcome

import (
	"bytes"
	"html"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// settingKey is where the page is kept (sys_settings).
const settingKey = "welcome"

// MaxLen bounds the page (bytes).
const MaxLen = 256 << 10

var (
	policy = bluemonday.UGCPolicy()
	// Raw HTML in the Markdown is rendered (HTML is allowed), then the
	// whole result sanitised.
	renderer = goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
)

// Clean is what is stored of a page: its markup sanitised (scripts,
// handlers, processing instructions such as <?php ?> removed) and its
// text left as typed (the sanitiser's escapes undone, so Markdown's > and
// & stay Markdown).
func Clean(src string) string { return html.UnescapeString(policy.Sanitize(src)) }

// Render is the page as sanitised HTML.
func Render(src string) string {
	var buf bytes.Buffer
	if err := renderer.Convert([]byte(src), &buf); err != nil {
		return policy.Sanitize(html.EscapeString(src))
	}
	return policy.Sanitize(buf.String())
}

// Routes: every signed-in user reads, admins (10) and above write.
func Routes() []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/welcome", Access: auth.Enter, Handler: get},
		{Scope: api.App, Method: http.MethodPut, Path: "/welcome", Access: auth.AdminOnly, Handler: put},
	}
}

// GET /welcome — {content, html}.
func get(c *gin.Context) {
	src, _, err := api.AppOf(c).Setting(c.Request.Context(), settingKey)
	if err != nil {
		api.Fail(c, err)
		return
	}
	src = Clean(src) // and on output, whatever wrote it
	api.Success(c, http.StatusOK, gin.H{"content": src, "html": Render(src)})
}

type putBody struct {
	Content *string `json:"content"`
}

// PUT /welcome {content} — {code: "ok_save", content, html}.
func put(c *gin.Context) {
	var b putBody
	if err := api.Bind(c, &b); err != nil {
		api.Fail(c, err)
		return
	}
	if b.Content == nil {
		api.Fail(c, errs.New(errs.Invalid, "parameter_missing", "content is required"))
		return
	}
	if len(*b.Content) > MaxLen {
		api.Fail(c, api.ErrTooLarge.With("limit", MaxLen))
		return
	}
	src := Clean(*b.Content)
	if err := api.AppOf(c).SetSettings(c.Request.Context(), map[string]string{settingKey: src}); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "ok_save", "content": src, "html": Render(src)})
}
