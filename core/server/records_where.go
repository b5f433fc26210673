package server

import (
	"encoding/json"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/records"
)

// listWhere turns the list's filter (query brackets, a JSON string, or the
// body's object) and quick search into one condition.
func (s *Server) listWhere(c *gin.Context, sc *records.Scope, bodyFilter json.RawMessage, search string) (*records.Cond, error) {
	return nil, nil
}
