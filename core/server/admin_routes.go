package server

import (
	"net/http"

	"github.com/strata-archaeo/strata/core/auth"
)

// adminRoutes lists the user, table-privilege and API-key administration
// routes (CONTRACT §4). All are admin-only at the gate; the handlers add
// the finer rules (no one acts above their own level).
func (s *Server) adminRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/users", Access: auth.AdminOnly, Handler: s.handleListUsers},
		{Scope: App, Method: http.MethodGet, Path: "/user", Access: auth.AdminOnly, Handler: s.handleListUsers},
		{Scope: App, Method: http.MethodGet, Path: "/user/:id", Access: auth.AdminOnly, Handler: s.handleGetUser},
		{Scope: App, Method: http.MethodPost, Path: "/user", Access: auth.Enter, Handler: s.handleSaveUser}, // admin, or one's own profile (auth.SaveUser)
		{Scope: App, Method: http.MethodDelete, Path: "/user/:id", Access: auth.AdminOnly, Handler: s.handleDeleteUser},
		{Scope: App, Method: http.MethodPost, Path: "/user/:id/revoke", Access: auth.AdminOnly, Handler: s.handleRevokeUserTokens},

		{Scope: App, Method: http.MethodGet, Path: "/user/:id/privileges", Access: auth.AdminOnly, Handler: s.handleListTablePrivileges},
		{Scope: App, Method: http.MethodPost, Path: "/user/:id/privileges", Access: auth.AdminOnly, Handler: s.handleSaveTablePrivilege},
		{Scope: App, Method: http.MethodDelete, Path: "/privilege/:id", Access: auth.AdminOnly, Handler: s.handleDeleteTablePrivilege},

		{Scope: App, Method: http.MethodGet, Path: "/api-keys", Access: auth.AdminOnly, Handler: s.handleListAPIKeys},
		{Scope: App, Method: http.MethodPost, Path: "/api-keys", Access: auth.AdminOnly, Handler: s.handleCreateAPIKey},
		{Scope: App, Method: http.MethodPost, Path: "/api-key/:id/revoke", Access: auth.AdminOnly, Handler: s.handleRevokeAPIKey},
		{Scope: App, Method: http.MethodDelete, Path: "/api-key/:id", Access: auth.AdminOnly, Handler: s.handleDeleteAPIKey},
	}
}
