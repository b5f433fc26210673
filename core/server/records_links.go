package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
)

// scopeAt is recordScope with the privilege check the gate could not make
// (the table is not in the path): the caller's level on that table.
func (s *Server) scopeAt(c *gin.Context, table string, access auth.Access) (*records.Scope, error) {
	sc, err := s.recordScope(c, table)
	if err != nil {
		return nil, err
	}
	if !access.Allows(sc.Level) {
		return nil, auth.ErrNotEnoughPrivilege.With("required", access.String())
	}
	return sc, nil
}

type relationBody struct {
	First    any `json:"first"`
	Relation any `json:"relation"`
	Second   any `json:"second"`
	// BraDypUS's seed scripts name the ends id_first and id_second.
	IDFirst  any `json:"id_first"`
	IDSecond any `json:"id_second"`
}

// POST /record/{tb}/rs — add a stratigraphic relation.
func (s *Server) handleAddRelation(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	var body relationBody
	if err := decodeBody(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if body.First == nil {
		body.First = body.IDFirst
	}
	if body.Second == nil {
		body.Second = body.IDSecond
	}
	var ids [3]int64
	for i, v := range []any{body.First, body.Relation, body.Second} {
		if ids[i], err = parseID(v); err != nil || ids[i] == 0 {
			s.fail(c, records.ErrInvalidParameter.With("detail", "first, relation and second are required integers"))
			return
		}
	}
	id, err := records.AddRelation(c.Request.Context(), sc, ids[0], ids[1], ids[2])
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_relation_add", "id": id})
}

// DELETE /rs/{id} — remove a stratigraphic relation.
func (s *Server) handleDeleteRelation(c *gin.Context) {
	id, err := parseIDString(c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	tb, err := records.RelationTable(c.Request.Context(), appOf(c).DB, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	sc, err := s.scopeAt(c, tb, auth.Edit)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := records.DeleteRelation(c.Request.Context(), sc, id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_relation_deleted"})
}

// GET /rs/matrix?tb= — nodes and relations of a table's stratigraphy.
func (s *Server) handleMatrix(c *gin.Context) {
	tb := c.Query("tb")
	if tb == "" {
		s.fail(c, records.ErrInvalidParameter.With("parameter", "tb"))
		return
	}
	sc, err := s.scopeAt(c, tb, auth.Read)
	if err != nil {
		s.fail(c, err)
		return
	}
	m, err := records.Matrix(c.Request.Context(), sc)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, m)
}

type manualLinkBody struct {
	TbOne string `json:"tb_one"`
	IDOne any    `json:"id_one"`
	TbTwo string `json:"tb_two"`
	IDTwo any    `json:"id_two"`
	Label string `json:"label"`
}

// POST /manual-link — link two records of any tables.
func (s *Server) handleAddManualLink(c *gin.Context) {
	var body manualLinkBody
	if err := decodeBody(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	for _, p := range []struct {
		name    string
		missing bool
	}{{"tb_one", body.TbOne == ""}, {"id_one", body.IDOne == nil}, {"tb_two", body.TbTwo == ""}, {"id_two", body.IDTwo == nil}} {
		if p.missing {
			s.fail(c, errs.New(errs.Invalid, "parameter_missing", "tb_one, id_one, tb_two and id_two are required").With("parameter", p.name))
			return
		}
	}
	one, err := s.scopeAt(c, body.TbOne, auth.Edit)
	if err != nil {
		s.fail(c, err)
		return
	}
	two, err := s.scopeAt(c, body.TbTwo, auth.Read)
	if err != nil {
		s.fail(c, err)
		return
	}
	idOne, err1 := parseID(body.IDOne)
	idTwo, err2 := parseID(body.IDTwo)
	if err1 != nil || err2 != nil || idOne == 0 || idTwo == 0 {
		s.fail(c, records.ErrInvalidID)
		return
	}
	id, err := records.AddManualLink(c.Request.Context(), appOf(c).DB,
		records.Endpoint{Scope: one, ID: idOne}, records.Endpoint{Scope: two, ID: idTwo}, body.Label)
	if err != nil {
		s.fail(c, err)
		return
	}
	// The link as the full record lists it among the first record's
	// manualLinks (key is the id DELETE /manual-link/{id} takes).
	success(c, http.StatusOK, gin.H{"code": "all_links_saved", "link": gin.H{"id": id, "key": id,
		"tb_id": two.Table.Name, "tb_label": two.Table.Label, "ref_id": idTwo, "label": body.Label}})
}

// DELETE /manual-link/{id}
func (s *Server) handleDeleteManualLink(c *gin.Context) {
	id, err := parseIDString(c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	ctx := c.Request.Context()
	tbOne, _, _, _, err := records.ManualLinkEnds(ctx, appOf(c).DB, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := s.scopeAt(c, tbOne, auth.Edit); err != nil {
		s.fail(c, err)
		return
	}
	if err := records.DeleteManualLink(ctx, appOf(c).DB, id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_userlink_erased"})
}
