package fieldsync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/apps"
	"github.com/strata-archaeo/strata/core/auth"
	"github.com/strata-archaeo/strata/core/errs"
)

// MaxOfflineTables bounds the application's default offline tables.
const MaxOfflineTables = 100

var errBadOfflineTables = errs.New(errs.Invalid, "sync_invalid_offline_tables", "the offline tables are not valid")

// offlineTable is one table every device keeps offline by default, with
// the filter (the filter language, JSON) that narrows what it keeps.
type offlineTable struct {
	Table  string          `json:"table"`
	Filter json.RawMessage `json:"filter,omitempty"`
}

func (h *handlers) offlineTableRoutes() []api.Route {
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/sync/offline-tables", Access: auth.Enter, Handler: h.getOfflineTables, ReadOnly: true},
		{Scope: api.App, Method: http.MethodPut, Path: "/sync/offline-tables", Access: auth.AdminOnly, Handler: h.putOfflineTables},
	}
}

// GET /sync/offline-tables — the application's default offline tables
// the caller may read (a table whose scope the gate refuses, or whose
// filter is no longer valid for the caller, is left out, as if it were
// not a default: the device's pull of it would be refused).
func (h *handlers) getOfflineTables(c *gin.Context) {
	list, err := readOfflineTables(c, api.AppOf(c))
	if err != nil {
		api.Fail(c, err)
		return
	}
	out := []offlineTable{}
	for _, t := range list {
		sc, err := h.Host.RecordScope(c, t.Table)
		if err == nil && t.Filter != nil {
			// A filter the caller's pull would refuse (a field they may
			// not see, or one dropped since): not a default for them.
			_, err = h.Host.Condition(c, sc, t.Filter, "")
		}
		if err != nil {
			if e, ok := errs.As(err); ok && (e.Kind == errs.Forbidden || e.Kind == errs.NotFound || e.Kind == errs.Invalid) {
				continue // not readable by the caller, or dropped since it was set
			}
			api.Fail(c, err)
			return
		}
		out = append(out, t)
	}
	api.Success(c, http.StatusOK, gin.H{"tables": out})
}

// PUT /sync/offline-tables {"tables": [{"table", "filter"?}]} — replaces
// the defaults; every table must exist and every filter be a valid list
// filter on it, or nothing is stored.
func (h *handlers) putOfflineTables(c *gin.Context) {
	var body struct {
		Tables []offlineTable `json:"tables"`
	}
	if err := api.Bind(c, &body); err != nil {
		api.Fail(c, err)
		return
	}
	if len(body.Tables) > MaxOfflineTables {
		api.Fail(c, errBadOfflineTables.With("detail", fmt.Sprintf("at most %d tables", MaxOfflineTables)))
		return
	}
	seen := map[string]bool{}
	clean := make([]offlineTable, 0, len(body.Tables))
	for i, t := range body.Tables {
		bad := func(detail string) { api.Fail(c, errBadOfflineTables.With("index", i).With("detail", detail)) }
		if t.Table == "" || len(t.Table) > maxNameLen {
			bad("table: a table's name is required")
			return
		}
		if seen[t.Table] {
			bad("table " + t.Table + " is named twice")
			return
		}
		seen[t.Table] = true
		sc, err := h.Host.RecordScope(c, t.Table)
		if err != nil {
			api.Fail(c, withIndex(err, i)) // table_not_found, or a table the admin may not read
			return
		}
		if t.Filter = compactFilter(t.Filter); t.Filter != nil {
			if _, err := h.Host.Condition(c, sc, t.Filter, ""); err != nil {
				api.Fail(c, withIndex(err, i))
				return
			}
		}
		clean = append(clean, offlineTable{Table: sc.Table.Name, Filter: t.Filter})
	}
	b, err := json.Marshal(clean)
	if err != nil {
		api.Fail(c, err)
		return
	}
	if err := api.AppOf(c).UpdateSettings(c.Request.Context(), map[string]string{apps.SettingOfflineTables: string(b)}, nil); err != nil {
		api.Fail(c, err)
		return
	}
	api.Success(c, http.StatusOK, gin.H{"tables": clean})
}

// compactFilter is a filter as stored: compact JSON, nil when absent,
// null or empty.
func compactFilter(f json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if len(f) == 0 || json.Compact(&buf, f) != nil {
		return f
	}
	switch buf.String() {
	case "null", "{}", `""`:
		return nil
	}
	return buf.Bytes()
}

// withIndex names the entry a filter error belongs to.
func withIndex(err error, i int) error {
	if e, ok := errs.As(err); ok {
		return e.With("index", i)
	}
	return err
}

// readOfflineTables are the stored defaults (none when unset).
func readOfflineTables(c *gin.Context, a *apps.App) ([]offlineTable, error) {
	v, ok, err := a.Setting(c.Request.Context(), apps.SettingOfflineTables)
	if err != nil || !ok || v == "" {
		return nil, err
	}
	var list []offlineTable
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("setting %s: %w", apps.SettingOfflineTables, err)
	}
	return list, nil
}
