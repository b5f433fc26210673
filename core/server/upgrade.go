package server

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
)

// upgradeStatus is "minor" while system-table migrations are pending, else
// nil (JSON null). Strata has no version-4 databases, so "major" arises only
// from imported legacy data, which the upgrade issue handles.
func upgradeStatus(ctx context.Context, a *apps.App) (any, error) {
	pending, err := a.DB.PendingMigrations(ctx)
	if err != nil {
		return nil, err
	}
	if len(pending) > 0 {
		return "minor", nil
	}
	return nil, nil
}

// GET /<app>/api/upgrade/status — no authentication (SPEC §4.8).
func (s *Server) handleUpgradeStatus(c *gin.Context) {
	status, err := upgradeStatus(c.Request.Context(), appOf(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"upgrade": status})
}
