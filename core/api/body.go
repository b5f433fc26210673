package api

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/wire"
)

var (
	// ErrBodyTimeout: the body trickled in slower than the route allows.
	ErrBodyTimeout = errs.New(errs.ClientTimeout, "body_timeout", "the request body was not sent in time")
	// ErrInvalidJSON: the body is not one JSON value of the expected shape.
	ErrInvalidJSON = errs.New(errs.Invalid, "invalid_json", "the request body is not valid JSON")
	// ErrTooLarge: the body is over the route's cap.
	ErrTooLarge = errs.New(errs.TooLarge, "too_large", "the request body is larger than allowed")
)

// Bind decodes the request body into dst with the one liberal decoding
// layer (core/wire): unknown keys are ignored, "1" is true and "12" is 12;
// anything else that is not one JSON value of the expected shape is
// invalid_json naming the field, and a body over the cap is too_large.
func Bind(c *gin.Context, dst any) error {
	return readBody(c, dst, wire.Options{})
}

// BindExact is Bind keeping numbers that land in an interface exact
// (json.Number), for record values.
func BindExact(c *gin.Context, dst any) error {
	return readBody(c, dst, wire.Options{ExactNumbers: true})
}

func readBody(c *gin.Context, dst any, opt wire.Options) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return BodyReadErr(err)
	}
	return DecodeErr(wire.Decode(body, dst, opt))
}

// BodyReadErr maps a failed read of the request body (over the cap, past
// the deadline, cut) to the API's error.
func BodyReadErr(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return ErrTooLarge.With("limit", tooBig.Limit)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ErrBodyTimeout
	}
	return ErrInvalidJSON.Wrap(err)
}

// DecodeErr maps a wire error to the API's invalid_json answer.
func DecodeErr(err error) error {
	if err == nil {
		return nil
	}
	var fe *wire.FieldError
	if errors.As(err, &fe) {
		e := errs.New(errs.Invalid, ErrInvalidJSON.Code, fe.Error()).With("detail", fe.Error())
		if fe.Path != "" {
			e = e.With("field", fe.Path)
		}
		return e
	}
	var se *wire.SyntaxError
	if errors.As(err, &se) {
		return ErrInvalidJSON.With("detail", se.Detail)
	}
	if _, ok := errs.As(err); ok {
		return err // already an API error (an invalid id, ...)
	}
	return ErrInvalidJSON.Wrap(err)
}

// ParseID reads a positive integer id given as a number or numeric
// string; nil and "" are 0 (no id). Anything else is records.ErrInvalidID.
func ParseID(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		return ParseIDString(x.String())
	case string:
		if strings.TrimSpace(x) == "" {
			return 0, nil
		}
		return ParseIDString(x)
	case float64:
		if x == float64(int64(x)) && x >= 0 {
			return int64(x), nil
		}
	}
	return 0, records.ErrInvalidID
}

// ParseIDString reads an id of a path or query parameter.
func ParseIDString(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return 0, records.ErrInvalidID
	}
	return n, nil
}

// PathID reads a positive id from the path parameter name; a missing or
// malformed one names nothing, so it is answered as notFound and ok is
// false.
func PathID(c *gin.Context, name string, notFound *errs.Error) (id int64, ok bool) {
	id, err := ParseIDString(c.Param(name))
	if err != nil || id == 0 {
		Fail(c, notFound.With("id", c.Param(name)))
		return 0, false
	}
	return id, true
}

// PageParam reads a page or per_page parameter: "" is 0 (the default),
// else a whole number from 0.
func PageParam(key, v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := wire.Int(v)
	if errors.Is(err, wire.ErrEmpty) {
		return 0, nil
	}
	if err != nil || n < 0 || n > math.MaxInt32 {
		return 0, records.ErrInvalidParameter.With("parameter", key).With("detail", "a positive integer")
	}
	return int(n), nil
}
