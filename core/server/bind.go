package server

import (
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/wire"
)

var (
	errBodyTimeout = errs.New(errs.ClientTimeout, "body_timeout", "the request body was not sent in time")
	errInvalidJSON = errs.New(errs.Invalid, "invalid_json", "the request body is not valid JSON")
	errTooLarge    = errs.New(errs.TooLarge, "too_large", "the request body is larger than allowed")
)

// bindJSON decodes the request body into dst with the one liberal decoding
// layer (core/wire): unknown keys are ignored, "1" is true and "12" is 12;
// anything else that is not one JSON value of the expected shape is
// invalid_json naming the field, and a body over the cap is too_large.
func bindJSON(c *gin.Context, dst any) error {
	return readBody(c, dst, wire.Options{})
}

// decodeBody is bindJSON keeping numbers that land in an interface exact
// (json.Number), for record values.
func decodeBody(c *gin.Context, dst any) error {
	return readBody(c, dst, wire.Options{ExactNumbers: true})
}

func readBody(c *gin.Context, dst any, opt wire.Options) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errTooLarge.With("limit", tooBig.Limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return errBodyTimeout
		}
		return errInvalidJSON.Wrap(err)
	}
	return decodeErr(wire.Decode(body, dst, opt))
}

// decodeErr maps a wire error to the API's invalid_json answer.
func decodeErr(err error) error {
	if err == nil {
		return nil
	}
	var fe *wire.FieldError
	if errors.As(err, &fe) {
		e := errs.New(errs.Invalid, errInvalidJSON.Code, fe.Error()).With("detail", fe.Error())
		if fe.Path != "" {
			e = e.With("field", fe.Path)
		}
		return e
	}
	var se *wire.SyntaxError
	if errors.As(err, &se) {
		return errInvalidJSON.With("detail", se.Detail)
	}
	if _, ok := errs.As(err); ok {
		return err // already an API error (an invalid id, ...)
	}
	return errInvalidJSON.Wrap(err)
}
