package server

import (
	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
)

var (
	errInvalidJSON = api.ErrInvalidJSON
	errTooLarge    = api.ErrTooLarge
)

// bindJSON decodes the request body with the one liberal decoding layer
// (api.Bind).
func bindJSON(c *gin.Context, dst any) error { return api.Bind(c, dst) }

// decodeBody is bindJSON keeping numbers exact, for record values.
func decodeBody(c *gin.Context, dst any) error { return api.BindExact(c, dst) }

// decodeErr maps a wire error to the API's invalid_json answer.
func decodeErr(err error) error { return api.DecodeErr(err) }
