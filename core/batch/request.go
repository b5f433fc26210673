package batch

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/strata-archaeo/strata/core/errs"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/wire"
)

// DefaultMaxRequests is how many requests a batch holds at most unless
// the instance configures another cap.
const DefaultMaxRequests = 1000

// Kind is what a request of the batch does.
type Kind int

const (
	Create Kind = iota
	Update
	Delete
)

// Op is one request of a batch, decoded and checked for shape.
type Op struct {
	Index int // position in the batch, as errors and results name it
	Kind  Kind
	Table string
	ID    int64             // Update, Delete
	Input records.SaveInput // Create, Update
}

// Errors of the batch's shape; each names the request's index when one is
// at fault.
var (
	ErrEmpty    = errs.New(errs.Invalid, "batch_empty", "the batch holds no request")
	ErrTooLarge = errs.New(errs.TooLarge, "batch_too_large", "the batch holds more requests than allowed")
	ErrRequest  = errs.New(errs.Invalid, "invalid_batch_request",
		"a request of the batch is not a supported record creation, update or deletion")
	ErrBothForms = errs.New(errs.Invalid, "invalid_batch_request",
		"send either requests or the create/update/delete form, not both")
	errShape = errs.New(errs.Invalid, "invalid_json", "the request body is not valid JSON")
)

// request is one entry of {"requests":[...]}: PocketBase's form, with the
// url relative to /<app>/api.
type request struct {
	Method string         `json:"method"`
	URL    string         `json:"url"`
	Body   map[string]any `json:"body"`
}

// Parse reads a batch body, decoded as JSON with exact numbers:
//
//	{"requests":[{"method":"POST","url":"/record/finds","body":{...}}, ...]}
//
// or the compact form, applied as creations, then updates, then
// deletions, each in table-name order:
//
//	{"create":{"finds":[{...}]}, "update":{"finds":[{"id":12,...}]}, "delete":{"finds":[12]}}
//
// Bodies are read like POST /record/{tb}: {id?, core, plugins} or the
// fields at the top level. app, when set, lets urls carry the full
// "/<app>/api" prefix too. More than max requests (0: DefaultMaxRequests)
// is ErrTooLarge.
func Parse(raw map[string]any, app string, max int) ([]Op, error) {
	if max <= 0 {
		max = DefaultMaxRequests
	}
	reqs, hasReqs := raw["requests"]
	compact := raw["create"] != nil || raw["update"] != nil || raw["delete"] != nil
	if hasReqs && reqs != nil && compact {
		return nil, ErrBothForms
	}
	var ops []Op
	var err error
	if compact {
		ops, err = parseCompact(raw, max)
	} else {
		ops, err = parseRequests(reqs, app, max)
	}
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, ErrEmpty
	}
	return ops, nil
}

func tooLarge(n, max int) error {
	return ErrTooLarge.With("max_requests", max).With("requests", n)
}

func parseRequests(v any, app string, max int) ([]Op, error) {
	var list []any
	if err := wire.Assign(v, &list, wire.Options{ExactNumbers: true}); err != nil {
		return nil, shapeError(err, "requests")
	}
	if len(list) > max {
		return nil, tooLarge(len(list), max)
	}
	ops := make([]Op, 0, len(list))
	for i, e := range list {
		var r request
		if err := wire.Assign(e, &r, wire.Options{ExactNumbers: true}); err != nil {
			return nil, shapeError(err, fmt.Sprintf("requests[%d]", i)).With("index", i)
		}
		op, err := opOf(i, r, app)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// opOf maps one request to its operation, as the router would.
func opOf(i int, r request, app string) (Op, error) {
	bad := func(detail string) error { return ErrRequest.With("index", i).With("detail", detail) }
	path := strings.TrimSpace(r.URL)
	if app != "" {
		path = strings.TrimPrefix(path, "/"+app+"/api")
	}
	if strings.ContainsAny(path, "?#") {
		return Op{}, bad("the url may not carry a query")
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if !strings.HasPrefix(path, "/") || len(parts) < 2 || len(parts) > 3 || parts[0] != "record" || parts[1] == "" {
		return Op{}, bad(fmt.Sprintf("url %q: want /record/{tb} or /record/{tb}/{id}", r.URL))
	}
	op := Op{Index: i, Table: parts[1]}
	if len(parts) == 3 {
		id, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil || id <= 0 {
			return Op{}, records.ErrInvalidID.With("index", i).With("detail", parts[2])
		}
		op.ID = id
	}
	switch strings.ToUpper(strings.TrimSpace(r.Method)) {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		in, err := saveInput(r.Body, op.ID)
		if err != nil {
			return Op{}, withIndex(err, i)
		}
		op.Input, op.ID, op.Kind = in, in.ID, Create
		if in.ID != 0 {
			op.Kind = Update
		}
	case http.MethodDelete:
		if op.ID == 0 {
			return Op{}, bad("DELETE needs /record/{tb}/{id}")
		}
		op.Kind = Delete
	default:
		return Op{}, bad(fmt.Sprintf("method %q: want POST, PUT, PATCH or DELETE", r.Method))
	}
	return op, nil
}

// saveInput reads a record body; pathID (0: none) is the url's id, which
// a body id must match.
func saveInput(raw map[string]any, pathID int64) (records.SaveInput, error) {
	in, err := records.SaveInputOf(raw, pathID)
	if fe, ok := err.(*wire.FieldError); ok {
		return records.SaveInput{}, shapeError(fe, "body")
	}
	return in, err
}

func parseCompact(raw map[string]any, max int) ([]Op, error) {
	var body struct {
		Create map[string][]map[string]any `json:"create"`
		Update map[string][]map[string]any `json:"update"`
		Delete map[string][]any            `json:"delete"`
	}
	if err := wire.Assign(raw, &body, wire.Options{ExactNumbers: true}); err != nil {
		return nil, shapeError(err, "")
	}
	n := 0
	for _, m := range []map[string][]map[string]any{body.Create, body.Update} {
		for _, rows := range m {
			n += len(rows)
		}
	}
	for _, ids := range body.Delete {
		n += len(ids)
	}
	if n > max {
		return nil, tooLarge(n, max)
	}
	ops := make([]Op, 0, n)
	for _, kind := range []Kind{Create, Update} {
		m := body.Create
		if kind == Update {
			m = body.Update
		}
		for _, tb := range sortedKeys(m) {
			for _, row := range m[tb] {
				i := len(ops)
				in, err := saveInput(row, 0)
				if err != nil {
					return nil, withIndex(err, i)
				}
				switch {
				case kind == Create && in.ID != 0:
					return nil, ErrRequest.With("index", i).With("detail", "a creation has no id")
				case kind == Update && in.ID == 0:
					return nil, ErrRequest.With("index", i).With("detail", "an update needs the record's id")
				}
				ops = append(ops, Op{Index: i, Kind: kind, Table: tb, ID: in.ID, Input: in})
			}
		}
	}
	for _, tb := range sortedKeys(body.Delete) {
		for _, v := range body.Delete[tb] {
			i := len(ops)
			id, err := records.IDOf(v)
			if err != nil || id == 0 {
				return nil, records.ErrInvalidID.With("index", i).With("detail", fmt.Sprint(v))
			}
			ops = append(ops, Op{Index: i, Kind: Delete, Table: tb, ID: id})
		}
	}
	return ops, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shapeError is the invalid_json answer for a value of the wrong shape,
// naming where it is in the body (prefix, then the decoder's path).
func shapeError(err error, prefix string) *errs.Error {
	fe, ok := err.(*wire.FieldError)
	if !ok {
		return errShape.Wrap(err)
	}
	field := fe.Path
	switch {
	case prefix != "" && field != "":
		field = prefix + "." + field
	case prefix != "":
		field = prefix
	}
	c := *fe
	c.Path = field
	e := errs.New(errs.Invalid, errShape.Code, c.Error()).With("detail", c.Error())
	if field != "" {
		e = e.With("field", field)
	}
	return e
}

// withIndex names the request an error belongs to.
func withIndex(err error, i int) error {
	if e, ok := errs.As(err); ok {
		return e.With("index", i)
	}
	return err
}
