package server

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
)

// ctxAccess caches the caller's grants for one request.
const ctxAccess = "strata.access"

// callerAccess loads the caller's grants once per request (one query,
// none when authenticate already read the overrides with the account).
func (s *Server) callerAccess(c *gin.Context) (*records.Grants, error) {
	if v, ok := c.Get(ctxAccess); ok {
		return v.(*records.Grants), nil
	}
	actor := actorOf(c)
	var list []auth.TablePrivilege
	if actor.UserID != 0 {
		if g, ok := c.Get(ctxGrants); ok && g.(*auth.Grants).User.ID == actor.UserID {
			list = g.(*auth.Grants).Overrides // read with the account (authenticate)
		} else {
			var err error
			if list, err = auth.ListTablePrivileges(c.Request.Context(), appOf(c).DB, actor.UserID); err != nil {
				return nil, err
			}
		}
	}
	acc := records.NewGrants(actor, list)
	c.Set(ctxAccess, acc)
	return acc, nil
}

// recordCatalog is the catalog as records see it: the columns and child
// tables of plugin features that are inactive on their table are left out
// (kept in the database, shown again on reactivation).
func (s *Server) recordCatalog(ctx context.Context, a *apps.App) (*schema.Catalog, error) {
	cat, err := s.catalogs.Get(ctx, a.Name, a.DB)
	if err != nil {
		return nil, err
	}
	return cat.Visible(), nil
}
