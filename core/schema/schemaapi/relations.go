package schemaapi

import (
	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/errs"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/store"
)

// enforced says whether relations can be constraints on this app's
// engine: PostgreSQL yes; SQLite records them in the catalog only, since
// it cannot add a constraint to an existing table without a rebuild.
func enforced(c *gin.Context) bool { return api.AppOf(c).DB.Engine == store.Postgres }

// notEnforcedMessage explains a relation the database does not enforce.
var notEnforcedMessage = map[string]string{
	schema.NotEnforcedEngine: "SQLite cannot add a constraint to an existing table without rebuilding it, which Strata never does: " +
		"the relation is recorded in the catalog only and the database does not enforce it",
	schema.NotEnforcedNotUnique: "PostgreSQL enforces a relation only towards id or a unique field: to_col is not unique, " +
		"so the relation is recorded in the catalog only",
	schema.NotEnforcedLookup:  "the relation is implied by a lookup field; the server checks the field's values when records are saved",
	schema.NotEnforcedMissing: "the constraint is missing; POST /config/apply-constraints adds it when the data allows",
}

// GET /config/relations — {code, data, relations (the same list), enforced}
func (h handlers) listRelations(c *gin.Context) {
	rels, err := schema.ListAllRelations(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "relations", "data": rels, "relations": rels, "enforced": enforced(c)})
}

// relationSaved answers a created or updated relation.
func relationSaved(c *gin.Context, r *schema.Relation) {
	out := gin.H{"code": "relation_saved", "id": r.ID, "relation": r, "enforced": r.Enforced}
	if m := notEnforcedMessage[r.NotEnforced]; m != "" {
		out["message"] = "relation saved; " + m
	}
	api.Success(c, http.StatusOK, out)
}

// POST /config/relations — {from_tb, from_col, to_tb, to_col, on_delete?, on_update?}
func (h handlers) addRelation(c *gin.Context) {
	var in schema.RelationInput
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	r, err := schema.AddRelation(c.Request.Context(), api.AppOf(c).DB, in, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	relationSaved(c, r)
}

var errBadRelationID = errs.New(errs.Invalid, "invalid_id", "the id in the path must be a non-zero integer")

// relationIDParam reads a relation id: a recorded relation's (positive) or
// the one a lookup field implies (negative).
func relationIDParam(c *gin.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, errBadRelationID.With("id", c.Param("id"))
	}
	return id, nil
}

// PUT /config/relations/{id} — the keys sent change.
func (h handlers) updateRelation(c *gin.Context) {
	id, err := relationIDParam(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	var in schema.RelationInput
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	r, err := schema.UpdateRelation(c.Request.Context(), api.AppOf(c).DB, id, in, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	relationSaved(c, r)
}

// DELETE /config/relations/{id}
func (h handlers) deleteRelation(c *gin.Context) {
	id, err := relationIDParam(c)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := schema.DeleteRelation(c.Request.Context(), api.AppOf(c).DB, id); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "relation_deleted", "id": id})
}

// POST /config/apply-constraints — adds the missing constraints of the
// recorded relations where the engine and the data allow.
func (h handlers) applyConstraints(c *gin.Context) {
	rep, err := schema.ApplyConstraints(c.Request.Context(), api.AppOf(c).DB)
	if err != nil {
		api.Fail(c, err)
		return
	}
	status, msg := "success", "every relation the database can enforce is a constraint"
	if rep.Skipped > 0 {
		status, msg = "warning", "some constraints could not be added: see errors"
	}
	if !enforced(c) {
		msg = notEnforcedMessage[schema.NotEnforcedEngine] + "; lookup fields' values are checked by the server when records are saved"
	}
	c.PureJSON(http.StatusOK, gin.H{"status": status, "code": "constraints_applied", "message": msg, "enforced": enforced(c),
		"applied": rep.Applied, "already_enforced": rep.AlreadyEnforced, "skipped": rep.Skipped,
		"errors": rep.Errors, "not_enforced": rep.NotEnforced})
}

// GET /config/table/{tb}/indexes — user-defined indexes (not the ones
// unique and lookup fields imply).
func (h handlers) listIndexes(c *gin.Context) {
	list, err := schema.ListIndexes(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"indexes": list, "data": indexEntries(list)})
}

// indexEntries are indexes as BraDypUS's clients read them (tb,
// is_unique) beside Strata's names (table, unique).
func indexEntries(list []*schema.Index) []gin.H {
	out := make([]gin.H, 0, len(list))
	for _, ix := range list {
		out = append(out, gin.H{"id": ix.ID, "name": ix.Name, "tb": ix.Table, "table": ix.Table, "columns": ix.Columns,
			"is_unique": ix.Unique, "unique": ix.Unique})
	}
	return out
}

// POST /config/table/{tb}/indexes — {name, columns:[...], unique?}. The
// name is required over HTTP, as BraDypUS's API and clients have it; the
// ids-based name schema.CreateIndex makes is for the server's own callers.
func (h handlers) createIndex(c *gin.Context) {
	var in schema.IndexInput
	if err := api.Bind(c, &in); err != nil {
		api.Fail(c, err)
		return
	}
	if strings.TrimSpace(in.Name) == "" {
		api.Fail(c, schema.ErrParameterMissing.With("parameter", "name"))
		return
	}
	ix, err := schema.CreateIndex(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), in, h.now().UTC())
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "index_saved", "id": ix.ID, "index": ix})
}

// DELETE /config/table/{tb}/indexes/{name}
func (h handlers) deleteIndex(c *gin.Context) {
	if err := schema.DeleteIndex(c.Request.Context(), api.AppOf(c).DB, c.Param("tb"), c.Param("name")); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"code": "index_deleted", "name": c.Param("name")})
}
