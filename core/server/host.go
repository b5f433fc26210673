package server

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// The server is the areas' api.Host: what they need from its caches and
// the caller's grants, through two methods rather than its internals.

// RecordScope is the caller's scope on table (recordScope).
func (s *Server) RecordScope(c *gin.Context, table string) (*records.Scope, error) {
	return s.recordScope(c, table)
}

// Catalog is the app's catalog as the API shows it (recordCatalog).
func (s *Server) Catalog(ctx context.Context, a *apps.App) (*schema.Catalog, error) {
	return s.recordCatalog(ctx, a)
}
