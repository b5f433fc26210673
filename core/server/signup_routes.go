package server

import (
	"net/http"

	"github.com/strata-archaeo/strata/core/auth"
)

// signupRoutes are app properties, self-registration and password reset
// (SPEC §3.2, §3.4, §5.3, §5.4; CONTRACT §3).
func (s *Server) signupRoutes() []Route {
	return []Route{
		{Scope: App, Method: http.MethodGet, Path: "/config/app", Access: auth.SuperAdminOnly, Handler: s.handleGetAppProperties},
		{Scope: App, Method: http.MethodPut, Path: "/config/app", Access: auth.SuperAdminOnly, Handler: s.handlePutAppProperties},
		{Scope: App, Method: http.MethodPost, Path: "/auth/register", Handler: s.handleRegister},
		{Scope: App, Method: http.MethodPost, Path: "/auth/password-reset/request", Handler: s.handleResetRequest},
		{Scope: App, Method: http.MethodPost, Path: "/auth/password-reset/confirm", Handler: s.handleResetConfirm},
	}
}
