package schemaapi

import (
	"net/http"
	"time"

	"github.com/strata-archaeo/strata/core/api"
	"github.com/strata-archaeo/strata/core/auth"
)

// Routes lists the table, field, relation and index configuration routes
// (SPEC §4.5, CONTRACT §6). All are super_admin only: they change the
// database's structure. now stamps the catalog's changes.
func Routes(now func() time.Time) []api.Route {
	h := handlers{now: now}
	return []api.Route{
		{Scope: api.App, Method: http.MethodGet, Path: "/config/tables", Access: auth.SuperAdminOnly, Handler: h.listTables},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/tables", Access: auth.SuperAdminOnly, Handler: h.createTable},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/tables/sort", Access: auth.SuperAdminOnly, Handler: h.sortTables},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: h.getTable},
		{Scope: api.App, Method: http.MethodPut, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: h.putTable},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: h.deleteTable},
		{Scope: api.App, Method: http.MethodPatch, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: h.renameTable},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/table/:tb/deletion", Access: auth.SuperAdminOnly, Handler: h.previewDeletion},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/table/:tb/validation", Access: auth.SuperAdminOnly, Handler: h.validateTable},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/validation", Access: auth.SuperAdminOnly, Handler: h.validation},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/validation/fix", Access: auth.SuperAdminOnly, Handler: h.validationFix},

		{Scope: api.App, Method: http.MethodGet, Path: "/config/field-structure", Access: auth.SuperAdminOnly, Handler: h.fieldStructure},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/table/:tb/fields", Access: auth.SuperAdminOnly, Handler: h.listFields},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/table/:tb/fields/sort", Access: auth.SuperAdminOnly, Handler: h.sortFields},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/table/:tb/field", Access: auth.SuperAdminOnly, Handler: h.addField},
		{Scope: api.App, Method: http.MethodPut, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: h.putField},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: h.deleteField},
		{Scope: api.App, Method: http.MethodPatch, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: h.renameField},

		{Scope: api.App, Method: http.MethodGet, Path: "/config/relations", Access: auth.SuperAdminOnly, Handler: h.listRelations},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/relations", Access: auth.SuperAdminOnly, Handler: h.addRelation},
		{Scope: api.App, Method: http.MethodPut, Path: "/config/relations/:id", Access: auth.SuperAdminOnly, Handler: h.updateRelation},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/relations/:id", Access: auth.SuperAdminOnly, Handler: h.deleteRelation},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/apply-constraints", Access: auth.SuperAdminOnly, Handler: h.applyConstraints},
		{Scope: api.App, Method: http.MethodGet, Path: "/config/table/:tb/indexes", Access: auth.SuperAdminOnly, Handler: h.listIndexes},
		{Scope: api.App, Method: http.MethodPost, Path: "/config/table/:tb/indexes", Access: auth.SuperAdminOnly, Handler: h.createIndex},
		{Scope: api.App, Method: http.MethodDelete, Path: "/config/table/:tb/indexes/:name", Access: auth.SuperAdminOnly, Handler: h.deleteIndex},
	}
}

type handlers struct {
	now func() time.Time
}
