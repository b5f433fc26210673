package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// enforced says whether relations are real constraints on this app's
// engine: PostgreSQL yes; SQLite records them in the catalog only, since
// it cannot add a constraint to an existing table without a rebuild.
func enforced(c *gin.Context) bool { return appOf(c).DB.Engine == store.Postgres }

// GET /config/relations
func (s *Server) handleConfigListRelations(c *gin.Context) {
	rels, err := schema.ListRelations(c.Request.Context(), appOf(c).DB)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"relations": rels, "enforced": enforced(c)})
}

// POST /config/relations — {from_tb, from_col, to_tb, to_col?, on_delete?, on_update?}
func (s *Server) handleConfigAddRelation(c *gin.Context) {
	var in schema.RelationInput
	if err := bindJSON(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	r, err := schema.AddRelation(c.Request.Context(), appOf(c).DB, in, s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "relation_created", "relation": r, "enforced": r.Enforced})
}

// PUT /config/relations/{id} — the keys sent change.
func (s *Server) handleConfigUpdateRelation(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var in schema.RelationInput
	if err := bindJSON(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	r, err := schema.UpdateRelation(c.Request.Context(), appOf(c).DB, id, in, s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "relation_saved", "relation": r, "enforced": r.Enforced})
}

// DELETE /config/relations/{id}
func (s *Server) handleConfigDeleteRelation(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := schema.DeleteRelation(c.Request.Context(), appOf(c).DB, id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "relation_deleted", "id": id})
}

// GET /config/table/{tb}/indexes — user-defined indexes (not the ones
// unique and lookup fields imply).
func (s *Server) handleConfigListIndexes(c *gin.Context) {
	list, err := schema.ListIndexes(c.Request.Context(), appOf(c).DB, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"indexes": list})
}

// POST /config/table/{tb}/indexes — {columns:[...], unique?}
func (s *Server) handleConfigCreateIndex(c *gin.Context) {
	var in schema.IndexInput
	if err := bindJSON(c, &in); err != nil {
		s.fail(c, err)
		return
	}
	ix, err := schema.CreateIndex(c.Request.Context(), appOf(c).DB, c.Param("tb"), in, s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "index_created", "index": ix})
}

// DELETE /config/table/{tb}/indexes/{name}
func (s *Server) handleConfigDeleteIndex(c *gin.Context) {
	if err := schema.DeleteIndex(c.Request.Context(), appOf(c).DB, c.Param("tb"), c.Param("name")); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "index_deleted", "name": c.Param("name")})
}
