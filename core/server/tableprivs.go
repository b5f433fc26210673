package server

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/schema"
)

// GET /user/{id}/privileges — the account's per-table overrides.
func (s *Server) handleListTablePrivileges(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	privs, err := auth.UserTablePrivileges(c.Request.Context(), appOf(c).DB, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"data": privs})
}

// POST /user/{id}/privileges — upsert the override of (user, table).
func (s *Server) handleSaveTablePrivilege(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		s.fail(c, err)
		return
	}
	var table string
	var priv adminInt
	if _, err := decodeAdminField(raw, "table_name", "a string", &table); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := decodeAdminField(raw, "privilege", "an integer", &priv); err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	a := appOf(c)
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	// A subset is checked against the catalog now, so a bad one is refused
	// at save time, never discovered on someone's next list.
	check := func(table string, subset json.RawMessage) (bool, error) {
		if _, ok := cat.Table(table); !ok {
			return false, schema.ErrTableNotFound.With("table", table)
		}
		_, sqlForm, err := filter.ParseSubset(cat, table, subset)
		return sqlForm, err
	}
	tp, err := auth.GrantTablePrivilege(ctx, a.DB, actorOf(c), id, table, int(priv.Value), raw["subset"], s.now().UTC(), check)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "privilege_saved", "id": tp.ID})
}

// DELETE /privilege/{id}
func (s *Server) handleDeleteTablePrivilege(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.RemoveTablePrivilege(c.Request.Context(), appOf(c).DB, actorOf(c), id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "privilege_deleted", "id": id})
}
