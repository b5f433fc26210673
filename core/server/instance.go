package server

import (
	"context"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/bradypus"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/store"
	"github.com/strata-archaeo/strata/core/version"
)

// GET /api/info — public.
func (s *Server) handleInfo(c *gin.Context) {
	success(c, http.StatusOK, gin.H{
		"version":    version.Version,
		"go_version": version.GoVersion(),
		"engine":     s.apps.Engine(),
		"plugins":    s.pluginSummary(), // name, version, state of each loaded plugin
	})
}

// GET /api/new-app/status — whether creating an app is permitted and
// whether this is a fresh installation.
func (s *Server) handleNewAppStatus(c *gin.Context) {
	names, err := s.apps.List(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{
		"permitted": s.cfg.AllowNewApp,
		"needed":    len(names) == 0,
		"engines":   store.Engines,
		"engine":    s.apps.Engine(),
	})
}

var errNewAppNotAllowed = errs.New(errs.Forbidden, "not_allowed_app_create",
	"creating applications is disabled on this instance (SERVICE_ALLOW_NEW_APP=1 enables it)")

type newAppRequest struct {
	Name        string `json:"name"`
	Definition  string `json:"definition"`
	Email       string `json:"email"`
	Password    string `json:"password"`
	NameOfAdmin string `json:"name_of_admin"`
}

// POST /api/new-app — create an application and its first super_admin.
func (s *Server) handleNewApp(c *gin.Context) {
	if !s.cfg.AllowNewApp {
		s.fail(c, errNewAppNotAllowed)
		return
	}
	var req newAppRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	a, err := s.apps.Create(c.Request.Context(), apps.CreateParams{
		Name: req.Name, Definition: req.Definition, Email: req.Email,
		Password: req.Password, AdminName: req.NameOfAdmin,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	summary, err := s.appSummary(c.Request.Context(), a)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_app_created", "app": summary})
}

// GET /api/auth/apps — the applications a client may sign in to.
func (s *Server) handleAuthApps(c *gin.Context) {
	ctx := c.Request.Context()
	names, err := s.apps.List(ctx)
	if err != nil {
		s.fail(c, err)
		return
	}
	list := make([]gin.H, 0, len(names))
	for _, n := range names {
		a, err := s.apps.Get(ctx, n)
		if err != nil {
			s.fail(c, err)
			return
		}
		summary, err := s.appSummary(ctx, a)
		if err != nil {
			s.fail(c, err)
			return
		}
		list = append(list, summary)
	}
	// BraDypUS folders awaiting their major upgrade (core/bradypus).
	folders, err := bradypus.Find(s.cfg.DataDir)
	if err != nil {
		s.fail(c, err)
		return
	}
	for _, f := range folders {
		if !slices.Contains(names, f.Name) {
			list = append(list, gin.H{"name": f.Name, "db": f.Name, "definition": f.Definition, "upgrade": "major", "oauth": []string{}})
		}
	}
	success(c, http.StatusOK, gin.H{"apps": list})
}

// appSummary is the public description of an app (CONTRACT §2): `db`
// repeats the name for older clients; `oauth` lists only providers whose
// credentials are both set.
func (s *Server) appSummary(ctx context.Context, a *apps.App) (gin.H, error) {
	settings, err := a.Settings(ctx)
	if err != nil {
		return nil, err
	}
	upgrade, err := upgradeStatus(ctx, a)
	if err != nil {
		return nil, err
	}
	return gin.H{
		"name":       a.Name,
		"db":         a.Name,
		"definition": settings[apps.SettingDefinition],
		"upgrade":    upgrade,
		"oauth":      s.offeredOAuthProviders(ctx, a, settings),
	}, nil
}
