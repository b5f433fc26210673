package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
)

var (
	errInvalidJSON = errs.New(errs.Invalid, "invalid_json", "the request body is not valid JSON")
	errTooLarge    = errs.New(errs.TooLarge, "too_large", "the request body is larger than allowed")
)

// bindJSON decodes the request body into dst. Unknown keys are ignored (be
// liberal in what clients send); anything else that is not one JSON value of
// the expected shape is invalid_json, and a body over the cap is too_large.
func bindJSON(c *gin.Context, dst any) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errTooLarge.With("limit", tooBig.Limit)
		}
		return errInvalidJSON.Wrap(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errInvalidJSON.With("detail", "the body is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		return errInvalidJSON.With("detail", describeJSONError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errInvalidJSON.With("detail", "unexpected data after the JSON value")
	}
	return nil
}

func describeJSONError(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax error at byte %d", syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("%s must be %s, not %s", typ.Field, typ.Type, typ.Value)
		}
		return fmt.Sprintf("the body must be %s, not %s", typ.Type, typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends in the middle of a value"
	}
	return "malformed JSON"
}
