package server

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// apiKeyView is a key as administration lists it: never its hash.
type apiKeyView struct {
	ID         int64      `json:"id"`
	Label      string     `json:"label"`
	Privilege  int        `json:"privilege"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	IsActive   bool       `json:"is_active"`
}

// GET /api-keys
func (s *Server) handleListAPIKeys(c *gin.Context) {
	keys, err := auth.ListAPIKeys(c.Request.Context(), appOf(c).DB)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]apiKeyView, len(keys))
	for i, k := range keys {
		out[i] = apiKeyView{ID: k.ID, Label: k.Label, Privilege: k.Privilege, CreatedAt: k.CreatedAt,
			LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, IsActive: k.Active()}
	}
	success(c, http.StatusOK, gin.H{"keys": out})
}

// POST /api-keys — the plain key is in this answer only; the database keeps
// its SHA-256.
func (s *Server) handleCreateAPIKey(c *gin.Context) {
	var raw map[string]json.RawMessage
	if err := bindJSON(c, &raw); err != nil {
		s.fail(c, err)
		return
	}
	var label string
	priv := adminInt{names: true}
	if _, err := decodeAdminField(raw, "label", "a string", &label); err != nil {
		s.fail(c, err)
		return
	}
	if _, err := decodeAdminField(raw, "privilege", "a level (10, 20, 25, 30) or its name", &priv); err != nil {
		s.fail(c, err)
		return
	}
	if !priv.Set {
		s.fail(c, errs.New(errs.Invalid, "parameter_missing", "privilege is required: 10, 20, 25 or 30").With("parameter", "privilege"))
		return
	}
	k, plain, err := auth.IssueAPIKey(c.Request.Context(), appOf(c).DB, actorOf(c), label, int(priv.Value), s.now().UTC())
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_api_key_created", "id": k.ID, "label": k.Label, "privilege": k.Privilege, "key": plain})
}

// POST /api-key/{id}/revoke — the key is refused from the next request on.
func (s *Server) handleRevokeAPIKey(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if _, err := auth.RevokeAPIKey(c.Request.Context(), appOf(c).DB, id, s.now().UTC()); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_api_key_revoked", "id": id})
}

// DELETE /api-key/{id}
func (s *Server) handleDeleteAPIKey(c *gin.Context) {
	id, err := adminIDParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	if err := auth.DeleteAPIKey(c.Request.Context(), appOf(c).DB, id); err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"code": "ok_api_key_deleted", "id": id})
}
