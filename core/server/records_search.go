package server

import (
	"math"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// searchRoutes are the helpers of search forms and record editors, the
// table list and the export (SPEC §4.4, CONTRACT §5). gin matches the
// static segments (field-options, check-unique, link-candidates) before
// the :id of /record/:tb/:id.
func (s *Server) searchRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/search/:tb/config", Access: auth.Read, Handler: s.handleSearchConfig},
		{Scope: App, Method: http.MethodGet, Path: "/search/:tb/values", Access: auth.Read, Handler: s.handleSearchValues},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/field-options", Access: auth.Read, Handler: s.handleFieldOptions},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/check-unique", Access: auth.Read, Handler: s.handleCheckUnique},
		{Scope: App, Method: http.MethodGet, Path: "/record/:tb/link-candidates", Access: auth.Read, Handler: s.handleLinkCandidates},
		{Scope: App, Method: http.MethodGet, Path: "/tables", Access: auth.Enter, Handler: s.handleTables},
		{Scope: App, Method: http.MethodGet, Path: "/records/:tb/export", Access: auth.Read, Handler: s.handleExport},
	}
}

// limitParam reads an optional positive limit (0 when absent).
func limitParam(c *gin.Context) (int, error) {
	v := strings.TrimSpace(c.Query("limit"))
	if v == "" {
		return 0, nil
	}
	n, err := wire.Int(v)
	if err != nil || n < 1 || n > math.MaxInt32 {
		return 0, records.ErrInvalidParameter.With("parameter", "limit").With("detail", "a positive integer")
	}
	return int(n), nil
}

// GET /search/{tb}/config — the fields an advanced search may name (the
// table's and its plugin tables') and the filter operators.
func (s *Server) handleSearchConfig(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"fields": records.SearchFields(sc), "operators": filter.BuiltinOperators(),
		"connectors": []string{"AND", "OR"}})
}

// GET /search/{tb}/values?fld=&q=&limit= — distinct values of a field.
func (s *Server) handleSearchValues(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := limitParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	vals, err := records.Values(c.Request.Context(), sc, records.ValuesQuery{Field: c.Query("fld"), Q: c.Query("q"), Limit: limit})
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"values": vals})
}

// GET /record/{tb}/field-options?fld=&q=&limit= — the choices of a select
// field, read from its source table as the caller.
func (s *Server) handleFieldOptions(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := limitParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	scopeOf := func(table string) (*records.Scope, error) { return s.recordScope(c, table) }
	source, opts, err := records.FieldOptions(c.Request.Context(), sc,
		records.FieldOptionsQuery{Field: c.Query("fld"), Q: c.Query("q"), Limit: limit}, scopeOf)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"source": source, "options": opts})
}

// GET /record/{tb}/check-unique?field=&value=[&id=] — whether no other
// record has the value.
func (s *Server) handleCheckUnique(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	field, hasField := c.GetQuery("field")
	value, hasValue := c.GetQuery("value")
	switch {
	case !hasField || strings.TrimSpace(field) == "":
		s.fail(c, schema.ErrParameterMissing.With("parameter", "field"))
		return
	case !hasValue:
		s.fail(c, schema.ErrParameterMissing.With("parameter", "value"))
		return
	}
	id, err := parseID(c.Query("id")) // absent or empty: a record not saved yet
	if err != nil {
		s.fail(c, records.ErrInvalidID.With("parameter", "id"))
		return
	}
	unique, err := records.CheckUnique(c.Request.Context(), sc, field, value, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"unique": unique})
}

// GET /record/{tb}/link-candidates?q=&limit= — records whose label
// contains q, to link to.
func (s *Server) handleLinkCandidates(c *gin.Context) {
	sc, err := s.recordScope(c, c.Param("tb"))
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := limitParam(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	data, err := records.LinkCandidates(c.Request.Context(), sc, c.Query("q"), limit)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"data": data})
}

// GET /tables — the tables the caller may read, in display order.
func (s *Server) handleTables(c *gin.Context) {
	ctx := c.Request.Context()
	a := appOf(c)
	cat, err := s.recordCatalog(ctx, a)
	if err != nil {
		s.fail(c, err)
		return
	}
	acc, err := s.callerAccess(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	success(c, http.StatusOK, gin.H{"tables": records.ReadableTables(cat, acc.level)})
}
