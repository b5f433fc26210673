package server

import (
	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
)

var errInternal = api.ErrInternal

// success writes {"status":"success", ...body}.
func success(c *gin.Context, status int, body gin.H) { api.Success(c, status, body) }

// fail writes the error envelope for err and aborts the chain (api.Fail);
// an internal error is logged by logRequests with its cause.
func (s *Server) fail(c *gin.Context, err error) { api.Fail(c, err) }
