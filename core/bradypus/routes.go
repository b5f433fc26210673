package bradypus

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// CtxFolder is the context key under which the server puts the BraDypUS
// folder an app route names when no Strata application has that name (for
// routes marked AwaitingUpgrade).
const CtxFolder = "strata.bradypus_folder"

// ErrUpgradeRequired answers every other route of such an application.
var ErrUpgradeRequired = errs.New(errs.Conflict, "major_upgrade_required",
	"this is a BraDypUS application: a super-admin runs its major upgrade (POST /api/upgrade/major) before it can be used")

// FolderOf is the BraDypUS folder of the request, if it names one.
func FolderOf(c *gin.Context) (*Folder, bool) {
	v, ok := c.Get(CtxFolder)
	if !ok {
		return nil, false
	}
	f, ok := v.(*Folder)
	return f, ok
}

// Routes is the major upgrade (SPEC §4.8): no session (the application
// has none yet), a super-admin's email and password in the body.
func Routes(d Deps) []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodPost, Path: "/upgrade/major", AwaitingUpgrade: true, Handler: func(c *gin.Context) { major(c, d) }},
	}
}

// POST /<app>/api/upgrade/major — {email, password} (user for email too).
func major(c *gin.Context, d Deps) {
	f, ok := FolderOf(c)
	if !ok {
		api.Fail(c, ErrNoUpgrade)
		return
	}
	var body struct {
		Email    string `json:"email"`
		User     string `json:"user"`
		Password string `json:"password"`
	}
	if err := api.Bind(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	if body.Email == "" {
		body.Email = body.User
	}
	// The password is checked under the sign-in limits and lock, before
	// anything else is done: without them this route would be an
	// unlimited password oracle for the folder's super-admins.
	email := auth.NormalizeEmail(body.Email)
	if d.Limits != nil {
		if err := d.Limits.FolderSignIn(c.Request, f.Name, email); err != nil {
			api.Fail(c, err)
			return
		}
	}
	rep, err := Upgrade(c.Request.Context(), d, f, body.Email, body.Password)
	if err != nil {
		if d.Limits != nil && errs.CodeOf(err) == ErrAuthFailed.Code {
			d.Limits.FolderFailed(c.Request, f.Name, email)
		}
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "upgrade_complete", "app": rep.App, "verified": rep.Verified,
		"counts": rep.Counts, "dir": rep.Dir, "snapshot": rep.Snapshot, "warnings": rep.Warnings, "refused": rep.Refused})
}
