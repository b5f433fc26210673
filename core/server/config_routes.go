package server

import (
	"net/http"

	"github.com/strata-archaeo/strata/core/auth"
)

// configRoutes lists the table, field, relation and index configuration
// routes (SPEC §4.5, CONTRACT §6). All are super_admin only: they change
// the database's structure.
func (s *Server) configRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/config/tables", Access: auth.SuperAdminOnly, Handler: s.handleConfigListTables},
		{Scope: App, Method: http.MethodPost, Path: "/config/tables", Access: auth.SuperAdminOnly, Handler: s.handleConfigCreateTable},
		{Scope: App, Method: http.MethodPost, Path: "/config/tables/sort", Access: auth.SuperAdminOnly, Handler: s.handleConfigSortTables},
		{Scope: App, Method: http.MethodGet, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: s.handleConfigGetTable},
		{Scope: App, Method: http.MethodPut, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: s.handleConfigPutTable},
		{Scope: App, Method: http.MethodDelete, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: s.handleConfigDeleteTable},
		{Scope: App, Method: http.MethodPatch, Path: "/config/table/:tb", Access: auth.SuperAdminOnly, Handler: s.handleConfigRenameTable},
		{Scope: App, Method: http.MethodGet, Path: "/config/table/:tb/validation", Access: auth.SuperAdminOnly, Handler: s.handleConfigValidateTable},

		{Scope: App, Method: http.MethodGet, Path: "/config/field-structure", Access: auth.SuperAdminOnly, Handler: s.handleConfigFieldStructure},
		{Scope: App, Method: http.MethodGet, Path: "/config/table/:tb/fields", Access: auth.SuperAdminOnly, Handler: s.handleConfigListFields},
		{Scope: App, Method: http.MethodPost, Path: "/config/table/:tb/fields/sort", Access: auth.SuperAdminOnly, Handler: s.handleConfigSortFields},
		{Scope: App, Method: http.MethodPost, Path: "/config/table/:tb/field", Access: auth.SuperAdminOnly, Handler: s.handleConfigAddField},
		{Scope: App, Method: http.MethodPut, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: s.handleConfigPutField},
		{Scope: App, Method: http.MethodDelete, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: s.handleConfigDeleteField},
		{Scope: App, Method: http.MethodPatch, Path: "/config/table/:tb/field/:fld", Access: auth.SuperAdminOnly, Handler: s.handleConfigRenameField},

		{Scope: App, Method: http.MethodGet, Path: "/config/relations", Access: auth.SuperAdminOnly, Handler: s.handleConfigListRelations},
		{Scope: App, Method: http.MethodPost, Path: "/config/relations", Access: auth.SuperAdminOnly, Handler: s.handleConfigAddRelation},
		{Scope: App, Method: http.MethodPut, Path: "/config/relations/:id", Access: auth.SuperAdminOnly, Handler: s.handleConfigUpdateRelation},
		{Scope: App, Method: http.MethodDelete, Path: "/config/relations/:id", Access: auth.SuperAdminOnly, Handler: s.handleConfigDeleteRelation},
		{Scope: App, Method: http.MethodPost, Path: "/config/apply-constraints", Access: auth.SuperAdminOnly, Handler: s.handleConfigApplyConstraints},
		{Scope: App, Method: http.MethodGet, Path: "/config/table/:tb/indexes", Access: auth.SuperAdminOnly, Handler: s.handleConfigListIndexes},
		{Scope: App, Method: http.MethodPost, Path: "/config/table/:tb/indexes", Access: auth.SuperAdminOnly, Handler: s.handleConfigCreateIndex},
		{Scope: App, Method: http.MethodDelete, Path: "/config/table/:tb/indexes/:name", Access: auth.SuperAdminOnly, Handler: s.handleConfigDeleteIndex},
	}
}
