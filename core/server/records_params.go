package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/wire"
)

// listParams reads the list's parameters (SPEC §4.4, CONTRACT §5 and §8):
// page, per_page, sort_field, sort_dir, columns, search, ids_only and the
// filter, from the query string and, for POST, from the JSON body, which
// wins. The list and the export share it, so an export takes exactly the
// list's parameters.
func (s *Server) listParams(c *gin.Context, sc *records.Scope) (records.ListQuery, error) {
	var body listBody
	if c.Request.Method == http.MethodPost && c.Request.ContentLength != 0 {
		if err := decodeBody(c, &body); err != nil {
			return records.ListQuery{}, err
		}
	}
	return s.listParamsFrom(c, sc, body, c.Request.URL.Query())
}

// listParamsFrom is listParams over a given body and query string (a
// saved query's definition and the run's paging).
func (s *Server) listParamsFrom(c *gin.Context, sc *records.Scope, body listBody, qv url.Values) (records.ListQuery, error) {
	pick := func(key string, fromBody any) string {
		switch x := fromBody.(type) {
		case json.Number:
			return x.String()
		case string:
			return x
		case *string:
			if x != nil {
				return *x
			}
		case bool:
			if x {
				return "1"
			}
			return "0"
		}
		return qv.Get(key)
	}
	q := records.ListQuery{SortField: pick("sort_field", body.SortField), SortDir: pick("sort_dir", body.SortDir)}
	for key, dst := range map[string]*int{"page": &q.Page, "per_page": &q.PerPage} {
		src := body.Page
		if key == "per_page" {
			src = body.PerPage
		}
		n, err := pageParam(key, pick(key, src))
		if err != nil {
			return records.ListQuery{}, err
		}
		*dst = n
	}
	if v := pick("ids_only", body.IDsOnly); v != "" {
		b, err := wire.Bool(v)
		if err != nil && !errors.Is(err, wire.ErrEmpty) {
			return records.ListQuery{}, records.ErrInvalidParameter.With("parameter", "ids_only").With("detail", "a boolean")
		}
		q.IDsOnly = b
	}
	if v := pick("total", body.Total); v != "" {
		b, err := wire.Bool(v)
		if err != nil && !errors.Is(err, wire.ErrEmpty) {
			return records.ListQuery{}, records.ErrInvalidParameter.With("parameter", "total").With("detail", "a boolean")
		}
		q.NoTotal = err == nil && !b
	}
	q.Columns = columnsParam(body.Columns, qv["columns"])
	where, err := s.listWhere(c, sc, body.Filter, pick("search", body.Search))
	if err != nil {
		return records.ListQuery{}, err
	}
	q.Where = where
	return q, nil
}

// pageParam reads page or per_page: a positive integer up to 2^31-1 (0
// when absent or empty, for the default).
func pageParam(key, v string) (int, error) { return api.PageParam(key, v) }
