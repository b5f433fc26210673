package recordsapi

import (
	"math"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/filter"
	"github.com/strata-archaeo/strata/core/records"
	"github.com/strata-archaeo/strata/core/schema"
	"github.com/strata-archaeo/strata/core/wire"
)

// GET /search/{tb}/config — the fields an advanced search may name (the
// table's and its plugin tables') and the filter operators.
func (s handlers) handleSearchConfig(c *gin.Context) {
	sc, err := s.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"fields": records.SearchFields(sc), "operators": filter.BuiltinOperators(),
		"connectors": []string{"AND", "OR"}})
}

// GET /search/{tb}/values?fld=&q=&limit= — distinct values of a field.
func (s handlers) handleSearchValues(c *gin.Context) {
	sc, limit, ok := s.scopeAndLimit(c)
	if !ok {
		return
	}
	vals, err := records.Values(c.Request.Context(), sc, records.ValuesQuery{Field: c.Query("fld"), Q: c.Query("q"), Limit: limit})
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"values": vals})
}

// GET /record/{tb}/field-options?fld=&q=&limit= — the choices of a select
// field, read from its source table as the caller.
func (s handlers) handleFieldOptions(c *gin.Context) {
	sc, limit, ok := s.scopeAndLimit(c)
	if !ok {
		return
	}
	scopeOf := func(table string) (*records.Scope, error) { return s.host.RecordScope(c, table) }
	source, opts, err := records.FieldOptions(c.Request.Context(), sc,
		records.FieldOptionsQuery{Field: c.Query("fld"), Q: c.Query("q"), Limit: limit}, scopeOf)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"source": source, "options": opts})
}

// GET /record/{tb}/check-unique?field=&value=[&id=] — whether no other
// record has the value.
func (s handlers) handleCheckUnique(c *gin.Context) {
	sc, err := s.host.RecordScope(c, c.Param("tb"))
	if err != nil {
		api.Fail(c, err)
		return
	}
	field, hasField := c.GetQuery("field")
	value, hasValue := c.GetQuery("value")
	switch {
	case !hasField || strings.TrimSpace(field) == "":
		api.Fail(c, schema.ErrParameterMissing.With("parameter", "field"))
		return
	case !hasValue:
		api.Fail(c, schema.ErrParameterMissing.With("parameter", "value"))
		return
	}
	id, err := api.ParseID(c.Query("id")) // absent or empty: a record not saved yet
	if err != nil {
		api.Fail(c, records.ErrInvalidID.With("parameter", "id"))
		return
	}
	unique, err := records.CheckUnique(c.Request.Context(), sc, field, value, id)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"unique": unique})
}

// GET /record/{tb}/link-candidates?q=&limit= — records whose label
// contains q, to link to.
func (s handlers) handleLinkCandidates(c *gin.Context) {
	sc, limit, ok := s.scopeAndLimit(c)
	if !ok {
		return
	}
	data, err := records.LinkCandidates(c.Request.Context(), sc, c.Query("q"), limit)
	if err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"data": data})
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

// scopeAndLimit is the caller's scope on the path's table and the limit
// parameter; on failure it has answered, and ok is false.
func (s handlers) scopeAndLimit(c *gin.Context) (*records.Scope, int, bool) {
	sc, err := s.host.RecordScope(c, c.Param("tb"))
	if err == nil {
		var limit int
		if limit, err = limitParam(c); err == nil {
			return sc, limit, true
		}
	}
	api.Fail(c, err)
	return nil, 0, false
}
