package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/bradypus"
)

// upgradeStatus is "minor" while system-table migrations are pending, else
// nil (JSON null). Strata has no version-4 databases, so "major" arises only
// from imported legacy data, which the upgrade issue handles.
func upgradeStatus(ctx context.Context, a *apps.App) (any, error) {
	pending, err := a.PendingUpgrade(ctx)
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		return "minor", nil
	}
	return nil, nil
}

// GET /<app>/api/upgrade/status — no authentication (SPEC §4.8). `type`
// is BraDypUS's name for `upgrade`; while a minor upgrade is pending the
// answer also names the steps (pending) and says whether they touch files
// (Strata's system migrations never do).
func (s *Server) handleUpgradeStatus(c *gin.Context) {
	if _, ok := bradypus.FolderOf(c); ok {
		success(c, http.StatusOK, gin.H{"upgrade": "major", "type": "major"})
		return
	}
	pending, err := appOf(c).PendingUpgrade(c.Request.Context())
	if err != nil {
		s.fail(c, err)
		return
	}
	if len(pending) == 0 {
		success(c, http.StatusOK, gin.H{"upgrade": nil, "type": nil})
		return
	}
	success(c, http.StatusOK, gin.H{"upgrade": "minor", "type": "minor", "pending": pending, "affects_files": false})
}

// POST /<app>/api/upgrade/minor (admin) — applies the app's pending system
// migrations → {code:"upgrade_complete", applied:[names]}.
func (s *Server) handleUpgradeMinor(c *gin.Context) {
	a := appOf(c)
	applied, err := a.UpgradeMinor(c.Request.Context(), s.now)
	if err != nil {
		// 500 internal_error; the steps before the failing one stay applied.
		s.log.Error("minor upgrade failed", "app", a.Name, "applied", applied, "err", err)
		s.fail(c, err)
		return
	}
	if len(applied) > 0 {
		s.log.Info("minor upgrade applied", "app", a.Name, "user", actorOf(c).UserID, "applied", applied)
	}
	success(c, http.StatusOK, gin.H{"code": "upgrade_complete", "applied": applied})
}
