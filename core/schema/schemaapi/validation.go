package schemaapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/schema"
)

// GET /config/validation — the configuration check in BraDypUS's report
// shape: {report:[{status, text, suggest?, fix?, check?}]}.
func (h handlers) validation(c *gin.Context) {
	report, err := schema.CheckConfiguration(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	problems := 0
	for _, it := range report {
		if it.Status == schema.CheckDanger || it.Status == schema.CheckWarning {
			problems++
		}
	}
	api.Success(c, http.StatusOK, gin.H{"report": report, "problems": problems})
}

// POST /config/validation/fix — {action, tb, col}: mends one problem of
// the report (its fix array, posted back as BraDypUS's screen does). The
// query string may carry them instead, as BraDypUS's fix reads them.
func (h handlers) validationFix(c *gin.Context) {
	var body struct {
		Action string `json:"action"`
		Tb     string `json:"tb"`
		Col    string `json:"col"`
	}
	if c.Request.ContentLength != 0 {
		if err := api.Bind(c, &body); err != nil {
			api.Fail(c, err)
			return
		}
	}
	for _, p := range []struct {
		dst *string
		key string
	}{{&body.Action, "action"}, {&body.Tb, "tb"}, {&body.Col, "col"}} {
		if *p.dst == "" {
			*p.dst = c.Query(p.key)
		}
	}
	if body.Action == "" {
		api.Fail(c, schema.ErrParameterMissing.With("parameter", "action"))
		return
	}
	res, err := schema.FixConfiguration(c.Request.Context(), api.AppOf(c).DB, body.Action, body.Tb, body.Col, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := gin.H{"code": res.Code, "action": body.Action, "tb": body.Tb}
	if body.Col != "" {
		out["col"] = body.Col
	}
	if res.Removed != nil {
		out["removed"] = res.Removed
	}
	api.Success(c, http.StatusOK, out)
}
